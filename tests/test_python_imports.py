"""Python launchers as real notebooks and scripts write them (issue 13): a helper imported
under a condition, and command strings written for a shell that the helper splits on blanks."""

import pytest

from servelint.engine import lint


def codes(text, path="serve.py"):
    r = lint(text, path)
    return [(r.index.position(f.span.start)[0] + 1, f.code) for f in r.findings]


CI_IMPORT = """\
from sglang.test.test_utils import is_in_ci

if is_in_ci():
    from patch import launch_server_cmd
else:
    from sglang.utils import launch_server_cmd

server_process, port = launch_server_cmd(
    "python3 -m sglang.launch_server --model-path m --tp_size 2"
)
"""


def test_helper_imported_in_either_branch():
    assert codes(CI_IMPORT) == [(9, "SL002")]
    # the other order, and inside a function (a pytest fixture in RL frameworks)
    swapped = CI_IMPORT.replace("from patch import", "from X import").replace(
        "from sglang.utils import", "from patch import").replace("from X import", "from sglang.utils import")
    assert codes(swapped) == [(9, "SL002")]
    fixture = ("import pytest\n\n@pytest.fixture\ndef client(request):\n"
               "    from sglang.test.test_utils import is_in_ci\n\n"
               "    if is_in_ci():\n        from patch import launch_server_cmd\n"
               "    else:\n        from sglang.utils import launch_server_cmd\n\n"
               "    proc, port = launch_server_cmd(\n"
               "        f\"python -m sglang.launch_server --model-path {request.param} --tp_size 2\"\n"
               "    )\n")
    assert codes(fixture) == [(13, "SL002")]


def test_try_except_import_counts_too():
    text = ("try:\n    from sglang.utils import launch_server_cmd\n"
            "except ImportError:\n    from mylib import launch_server_cmd\n\n"
            "launch_server_cmd('python3 -m sglang.launch_server --model-path m --tp_size 2')\n")
    assert codes(text) == [(6, "SL002")]


def test_a_helper_that_is_never_sglangs_is_not_read():
    """Both branches import someone else's function: its splitting rules are unknown."""
    text = ("import os\nif os.environ.get('CI'):\n    from patch import launch_server_cmd\n"
            "else:\n    from mylib import launch_server_cmd\n\n"
            "launch_server_cmd('python3 -m sglang.launch_server --model-path m --tp_size 2')\n")
    assert codes(text) == []
    # nor an unconditional import that replaces SGLang's: the later import is the name
    later = ("from sglang.utils import launch_server_cmd\nfrom mylib import launch_server_cmd\n\n"
             "launch_server_cmd('python3 -m sglang.launch_server --model-path m --tp_size 2')\n")
    assert codes(later) == []


def test_the_condition_itself_is_not_a_branch():
    """An import in an `if` test does not exist; one in the body does (sanity of _in_branch)."""
    text = ("import sys\nif sys.version_info >= (3, 8):\n    from sglang.utils import launch_server_cmd\n"
            "launch_server_cmd('python3 -m sglang.launch_server --model-path m --tp_size 2')\n")
    assert codes(text) == [(4, "SL002")]


@pytest.mark.parametrize("prefix", [
    "export HF_TOKEN= ;",
    "export HF_TOKEN=;",
    "FOO=bar ;",
    "cd /workspace &&",
    "source .venv/bin/activate &&",
    "export A=1 ; cd x &&",
])
def test_launch_after_a_shell_prefix(prefix):
    text = ("from sglang.utils import launch_server_cmd\n\n"
            "server_process, port = launch_server_cmd(\n"
            f'    """\n{prefix}\npython3 -m sglang.launch_server --model-path m --tp_size 2\n"""\n)\n')
    assert codes(text) == [(6, "SL002")], prefix


def test_prefix_exports_are_the_launch_environment():
    text = ("from sglang.utils import launch_server_cmd\n"
            "launch_server_cmd('export HF_TOKEN=abc ; python3 -m sglang.launch_server --model-path m')\n")
    r = lint(text, "serve.py")
    assert len(r.launches) == 1 and r.launches[0].env == {"HF_TOKEN": "abc"}
    assert r.launches[0].entry.text == "sglang.launch_server"


def test_the_issue_notebook_idiom():
    """The shape the issue found in a public tutorial (written here in our own words): a
    triple-quoted command whose first line exports a token. Every flag after the prefix is
    checked (SGLang rejects the schedule policy and the unknown `--Q`)."""
    text = ('from sglang.test.doc_patch import launch_server_cmd\n\n'
            'proc, port = launch_server_cmd(\n    """\nexport HF_TOKEN= ;\n'
            'python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct '
            '--log-level info --schedule-policy lpm_x --Q 100  --dtype float16\n'
            '"""\n)\n')
    assert sorted(c for _, c in codes(text)) == ["SL001", "SL007"]


def test_no_launch_after_the_separator_is_no_launch():
    text = ("from sglang.utils import launch_server_cmd\n"
            "launch_server_cmd('echo sglang ; ls -l && true')\n")
    assert codes(text) == []


def test_shell_strings_already_read_prefixes():
    text = ("import os, subprocess\n"
            "os.system('export HF_TOKEN= ; python3 -m sglang.launch_server --model-path m --tp_size 2')\n"
            "subprocess.Popen('cd x && python3 -m sglang.launch_server --model-path m --tp_size 2', shell=True)\n")
    assert codes(text) == [(2, "SL002"), (3, "SL002")]


# --- real public files (tests/data/real/code, with SGLang's verdicts) ----------------------------

import json  # noqa: E402
import os  # noqa: E402

from servelint.model import Severity  # noqa: E402
from servelint.settings import Settings  # noqa: E402

REAL = os.path.join(os.path.dirname(__file__), "data", "real", "code")


def real_verdicts():
    with open(os.path.join(REAL, "verdicts.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.mark.parametrize("record", real_verdicts(), ids=lambda r: f"{r['file']}#{r['launch']}")
def test_real_code_files_agree_with_sglang(record):
    """servelint reads the words SGLang was asked about, and reports an error exactly where
    SGLang 0.5.23 rejects the launch."""
    path = os.path.join(REAL, record["file"])
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    r = lint(text, path, settings=Settings(sglang_version="0.5.23"))
    launch = r.launches[record["launch"]]
    assert r.index.position(launch.entry.span.start)[0] + 1 == record["line"]
    assert [t.text for t in launch.tokens] == record["read"]
    errors = [f for f in r.findings if f.severity == Severity.ERROR
              and (f.launch_index == record["launch"] or f.span.start in range(
                  launch.span.start, launch.span.end + 1))]
    assert record["verdict"] in ("accepted", "rejected"), record
    if record["verdict"] == "accepted":
        assert errors == [], [(f.code, f.message) for f in errors]
    else:
        assert errors, record.get("error")


def test_real_corpus_is_attributed():
    """Every file of the corpus is in the README's table with its commit and license, and
    has its verdicts."""
    with open(os.path.join(REAL, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    files = sorted(os.path.join(d, f) for d in ("python", "dockerfile")
                   for f in os.listdir(os.path.join(REAL, d)))
    judged = {r["file"] for r in real_verdicts()}
    for rel in files:
        assert f"`{rel}`" in readme and rel in judged, rel
    row_licenses = [line for line in readme.splitlines() if line.startswith("| `")]
    assert len(row_licenses) == len(files)
    for row in row_licenses:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells[3].strip("`")) == 40  # a full commit
        lic = cells[4].split("`")[1]
        assert os.path.isfile(os.path.join(REAL, lic)), lic
