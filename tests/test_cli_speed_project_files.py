"""A pyproject.toml that cannot hold [tool.servelint] or a requirement on sglang is not
parsed (issue 16 point 5: the TOML parser's import and two parses were a sixth of a cold
check inside such a project), and the shortcut never disagrees with the parse."""

import itertools
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from servelint import config, release

ROOT = Path(__file__).resolve().parents[1]

# Pieces of pyproject.toml files: each alone, and in pairs.
PIECES = [
    '[project]\nname = "x"\nkeywords = ["sglang", "servelint"]\n',
    '[project]\ndependencies = ["sglang[all]>=0.4.9", "torch"]\n',
    '[project]\ndependencies = ["SGLang == 0.4.6.post1"]\n',
    '[project]\ndependencies = ["sglang\n>=0.5"]\n',
    '[project]\ndependencies = ["""sglang[srt] ~= 0.4.6"""]\n',
    "[project]\ndependencies = ['sglang @ git+https://github.com/sgl-project/sglang@v0.4.6']\n",
    '[project.optional-dependencies]\nserve = ["sglang<0.6,>=0.5"]\n',
    '[dependency-groups]\nserve = ["sglang!=0.4.7,>=0.4"]\n',
    '[tool.uv]\nconstraint-dependencies = ["sglang==0.5.1"]\n',
    '[tool.poetry.dependencies]\nsglang = "^0.4.6"\n',
    '[tool.poetry.dependencies]\n"SGLang" = {version = "0.4.6", extras = ["all"]}\n',
    '[tool.poetry.dependencies]\nsglang.version = "~0.4.6"\n',
    '[tool.poetry.dependencies.sglang]\nversion = "0.4.6"\n',
    '[tool.poetry.group.dev.dependencies]\nsglang = {git = "https://github.com/sgl-project/sglang", tag = "v0.4.6"}\n',
    '[tool.pdm.dev-dependencies]\nserve = ["sglang>=0.4"]\n',
    '[project]\ndependencies = ["sgl\\u0061ng>=0.4"]\n',
    '[project]\ndescription = "runs sglang, see servelint"\n[project.scripts]\nservelint = "servelint.cli:main"\n',
    '[tool.servelint]\nignore = ["SL002"]\n',
    '[tool.servelint.severity]\nSL002 = "warning"\n',
    '[ tool . "servelint" ]\nselect = ["SL0"]\n',
    "[tool]\nservelint = { ignore = [\"SL002\"] }\n",
    'tool.servelint.ignore = ["SL002"]\n',
    'tool = { servelint = { ignore = ["SL002"] } }\n',
    '[tool.setuptools.package-data]\nservelint = ["*.json"]\n',
    '["tool"."\\u0073ervelint"]\nignore = ["SL002"]\n',
    '[tool.ruff]\nline-length = 100\n',
]


def _texts():
    for piece in PIECES:
        yield piece
    for a, b in itertools.combinations(PIECES, 2):
        yield a + b


def test_the_shortcuts_never_disagree_with_the_parse():
    skipped_servelint = skipped_sglang = 0
    for text in _texts():
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue  # a table defined twice, say: the parse is what reports it
        has_table = isinstance(doc.get("tool"), dict) and "servelint" in doc["tool"]
        if not config.may_hold_servelint_table(text.encode()):
            assert not has_table, text
            skipped_servelint += 1
        reqs = release._parse_pyproject(text).reqs
        if not release.may_require_sglang(text):
            assert not reqs, text
            skipped_sglang += 1
    assert skipped_servelint > 100 and skipped_sglang > 40
    # Each piece that requires sglang is read as doing so (the pieces are not vacuous).
    assert sum(bool(release._parse_pyproject(p).reqs) for p in PIECES) >= 13


def test_a_project_that_only_mentions_sglang_is_not_parsed(tmp_path):
    """servelint's own pyproject.toml names the servelint script and sglang as a keyword:
    a check beside such a file reads it without importing tomllib, and finds the same."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(PIECES[0] + PIECES[16].replace("[project]\n", "")
                                             + PIECES[23])
    script = tmp_path / "run.sh"
    script.write_text("python3 -m sglang.launch_server --model-path m --tp_size 2\n")
    code = ("import sys\nfrom servelint.cli import main\n"
            "code = main(['check', sys.argv[1]])\n"
            "print('tomllib' in sys.modules, code)")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    out = subprocess.run([sys.executable, "-c", code, str(script)], capture_output=True,
                         text=True, cwd=tmp_path, env=env, check=True)
    assert "SL002" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "False 1"
    # With a requirement, it is read (and judged by it).
    (tmp_path / "pyproject.toml").write_text(PIECES[0] + PIECES[2].replace("[project]\n", ""))
    out = subprocess.run([sys.executable, "-c", code, str(script)], capture_output=True,
                         text=True, cwd=tmp_path, env=env, check=True)
    assert out.stdout.strip().splitlines()[-1] == "True 1"
