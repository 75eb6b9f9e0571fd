"""Cold start (issue 16): a run compiles only the bundled rules its launches can trigger,
from an index kept in the cache folder; a missing, corrupt or unwritable cache only
costs the full build; no PyYAML for a shell file's rules; project folders are listed once.

The counts come from `servelint.rules.STATS` in a fresh interpreter for each run (the
cache is per process otherwise). No test here measures time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bad_eagle.sh"

# One run: the bundled rules for the newest release, the rules one launch can trigger
# applied to it, and what was done (compiled records, cache files read and written).
RUN = r"""
import json, sys
from servelint.catalog import load_catalog
from servelint.args import Reader
from servelint.extract.shell import extract_shell
from servelint.model import LineIndex
from servelint.rules import STATS, rule_set
from servelint.rules.apply import apply_rules
catalog = load_catalog()
rules = rule_set(catalog.version, include_project=False)
codes = []
for args in sys.argv[1:]:
    text = "python3 -m sglang.launch_server " + args + "\n"
    (launch,) = extract_shell(text, LineIndex(text)).launches
    parsed = Reader(catalog).read(launch)
    codes.append([f.code for f in apply_rules(parsed, rules, "sm90")])
print(json.dumps({"stats": STATS, "codes": codes, "total": len(rules.codes),
                  "yaml": "yaml" in sys.modules, "tomllib": "tomllib" in sys.modules}))
"""

LAUNCHES = [
    "--model-path m --tp-size 2 --speculative-algorithm EAGLE --speculative-num-steps 3",
    "--model-path m --enable-dp-attention --dp-size 2 --tp-size 1",
    "--model-path m --kv-cache-dtype fp8_e5m2 --attention-backend fa3",
    "--model-path m --enable-hisparse --prefill-only-disable-kv-cache --is-embedding",
]


def _env(cache: Path | str) -> dict:
    env = dict(os.environ)
    env["SERVELINT_CACHE_DIR"] = str(cache)
    return env


def _run(cache: Path | str) -> dict:
    out = subprocess.run([sys.executable, "-c", RUN, *LAUNCHES], env=_env(cache), check=True,
                         capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout)


def _index_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("rules-*.idx"))


def test_second_run_compiles_only_the_triggered_rules(tmp_path):
    first = _run(tmp_path)
    assert first["stats"]["cache_read"] == 0 and first["stats"]["cache_written"] == 1
    assert first["stats"]["built"] >= first["total"] > 300  # the full build, once
    assert len(_index_files(tmp_path)) == 1
    second = _run(tmp_path)
    assert second["stats"] == {"built": second["stats"]["built"], "cache_read": 1,
                               "cache_written": 0}
    assert 0 < second["stats"]["built"] < first["total"] // 4
    assert second["codes"] == first["codes"]  # the same findings from the cached index
    assert any(first["codes"])  # the launches do trigger rules


def test_rules_need_neither_yaml_nor_toml(tmp_path):
    _run(tmp_path)
    warm = _run(tmp_path)
    assert warm["yaml"] is False and warm["tomllib"] is False


def test_corrupt_cache_is_ignored_and_rebuilt(tmp_path):
    good = _run(tmp_path)
    (index,) = _index_files(tmp_path)
    data = index.read_bytes()
    corruptions = [
        b"",  # empty
        b"not json at all\n" + data,  # a header that does not read
        data[: len(data) // 2],  # cut short
        data[:-50] + b"x" * 50,  # the records changed under a good header (checksum)
        data.replace(b'"format":1', b'"format":999', 1),  # another format
    ]
    for bad in corruptions:
        index.write_bytes(bad)
        again = _run(tmp_path)
        assert again["stats"]["cache_read"] == 0, bad[:40]
        assert again["stats"]["cache_written"] == 1
        assert again["stats"]["built"] >= again["total"]
        assert again["codes"] == good["codes"]
        assert index.read_bytes() == data  # rewritten as it was
    assert _run(tmp_path)["stats"]["cache_read"] == 1


def test_unwritable_or_disabled_cache_still_lints(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    first = _run(blocked / "sub")
    assert first["stats"]["cache_written"] == 0 and first["stats"]["cache_read"] == 0
    off = _run("")  # SERVELINT_CACHE_DIR= (empty): no cache at all
    assert off["stats"]["cache_written"] == 0 and off["stats"]["cache_read"] == 0
    assert first["codes"] == off["codes"] and any(off["codes"])


def test_cli_findings_are_the_same_with_and_without_the_cache(tmp_path):
    def check(cache) -> str:
        out = subprocess.run([sys.executable, "-m", "servelint", "check", "--format", "json",
                              str(EXAMPLE)], env=_env(cache), capture_output=True, text=True,
                             cwd=ROOT)
        assert out.returncode in (0, 1), out.stderr
        return out.stdout

    cold = check(tmp_path)
    assert _index_files(tmp_path)
    assert check(tmp_path) == cold == check("")
    assert json.loads(cold)  # findings were reported


def test_a_stale_cache_of_another_key_is_not_used(tmp_path):
    _run(tmp_path)
    (index,) = _index_files(tmp_path)
    head, _, body = index.read_bytes().partition(b"\n")
    meta = json.loads(head)
    meta["key"] = meta["key"] + "|changed"
    index.write_bytes(json.dumps(meta).encode() + b"\n" + body)
    again = _run(tmp_path)
    assert again["stats"]["cache_read"] == 0 and again["stats"]["cache_written"] == 1


def test_project_folder_is_listed_once_for_many_files(tmp_path, monkeypatch):
    from servelint import release

    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / ".git").mkdir()
    (folder / "requirements.txt").write_text("sglang==0.5.3\n")
    for i in range(50):
        (folder / f"run{i}.sh").write_text("python3 -m sglang.launch_server --model-path m\n")
    calls = []
    real = release._candidates
    monkeypatch.setattr(release, "_candidates", lambda names: calls.append(1) or real(names))
    release._DIRS.clear()
    found = {release.project_release(str(folder / f"run{i}.sh"))[0][0].exact for i in range(50)}
    assert found == {"0.5.3"}
    assert len(calls) == 1  # one folder, listed once
    (folder / "constraints.txt").write_text("sglang==0.5.4\n")  # the folder changed: listed again
    os.utime(folder, ns=(1, 1))
    assert release.project_release(str(folder / "run0.sh"))[0][0].exact == "0.5.3"
    assert len(calls) == 2


def test_checks_are_imported_once(monkeypatch):
    import importlib

    from servelint import checks

    checks.load_checks()
    seen = []
    real = importlib.import_module
    monkeypatch.setattr(importlib, "import_module", lambda name, *a: seen.append(name) or real(name, *a))
    for _ in range(100):
        assert checks.load_checks() is checks.REGISTRY
    assert seen == []


def test_settings_copy_shares_nothing_mutable():
    import copy

    from servelint.model import Severity
    from servelint.settings import Settings

    s = Settings(select=["SL1"], severity={"SL0": Severity.ERROR}, rule_packs=["p.yaml"],
                 explicit=frozenset({"select"}))
    c = s.copy()
    assert c == s == copy.deepcopy(s) and type(c.severity) is type(s.severity)
    assert c.severity.get("SL012") == Severity.ERROR  # still matches prefixes
    for attr in ("select", "ignore", "severity", "rule_packs", "file_ignores"):
        assert getattr(c, attr) is not getattr(s, attr), attr
    c.select.append("SL2")
    c.severity["SL9"] = Severity.HINT
    assert s.select == ["SL1"] and "SL9" not in dict(s.severity)


def test_no_cache_folder_without_a_home(monkeypatch, tmp_path):
    from servelint import rules

    monkeypatch.delenv("SERVELINT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.chdir(tmp_path)
    if sys.platform not in ("win32", "darwin"):
        assert rules.cache_dir() is None
        assert rules.write_cache("x.json", b"{}") is False
        assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("SERVELINT_CACHE_DIR", str(tmp_path / "c"))
    assert rules.write_cache("x.json", b"{}") is True
    assert rules.read_cache("x.json") == b"{}"


CHECK = r"""
import sys
from servelint.cli import main
main(["check", "--isolated", "-q", sys.argv[1]])
sys.stdout.flush()
sys.stderr.write("YAML-IMPORTED=%s\n" % ("yaml" in sys.modules))
"""


def test_checking_a_shell_file_never_imports_yaml(tmp_path):
    """The whole `servelint check` of a shell script, format detection included: the YAML
    formats' modules import PyYAML only when they read YAML (servelint/lazy.py). Run
    twice: the first run with an empty cache folder reads normalize.yaml to fill it."""
    subprocess.run([sys.executable, "-c", CHECK, str(EXAMPLE)], env=_env(tmp_path),
                   capture_output=True, text=True, cwd=ROOT)
    out = subprocess.run([sys.executable, "-c", CHECK, str(EXAMPLE)], env=_env(tmp_path),
                         capture_output=True, text=True, cwd=ROOT)
    assert "SL013" in out.stdout  # it did lint the file
    assert "YAML-IMPORTED=False" in out.stderr, out.stderr
    yaml_file = ROOT / "examples" / "bad_compose.yaml"  # a YAML file does import it
    out = subprocess.run([sys.executable, "-c", CHECK, str(yaml_file)], env=_env(tmp_path),
                         capture_output=True, text=True, cwd=ROOT)
    assert "error SL" in out.stdout and "YAML-IMPORTED=True" in out.stderr, out.stderr


def test_the_lazy_module_forwards_and_imports_once():
    from servelint.lazy import LazyModule
    m = LazyModule("json")
    assert "imported" not in repr(m)
    assert m.dumps([1]) == "[1]"
    assert "(imported)" in repr(m)
    import json as real
    assert m.loads is real.loads


def test_the_format_module_table_matches_the_modules():
    from servelint.extract import MODULE_OF, formats
    assert {f.name: f.detect.__module__.rsplit(".", 1)[-1] for f in formats()} == MODULE_OF


NAMES = ["run.sh", "a/b/serve.bash", "x.zsh", "t.bats", "k.ksh", "RUN.SH", "Dockerfile.sh",
         "dockerfile-cu12.sh", "containerfile.sh", "nb.ipynb", "nb.ipynb.sh", ".sh", "sh",
         "run.sh.txt", "serve.yaml", "launch.json", "README.md", "x.py", "deploy/Dockerfile",
         "C:\\work\\run.sh", "notes.txt", "run"]
LANGS = [None, "", "plaintext", "shellscript", "bash", "yaml", "python", "dockerfile",
         "markdown", "json"]


def test_the_shell_shortcut_never_disagrees_with_the_formats():
    """Where the name alone says shell, asking every format (in priority order, as without
    the shortcut) says shell too, for every name, editor language and a few texts."""
    from servelint.extract import formats, shell_by_name
    texts = ["python3 -m sglang.launch_server --tp 2\n", "#!/bin/bash\nsglang serve --tp 2\n",
             "FROM lmsysorg/sglang\nCMD python3 -m sglang.launch_server\n",
             '{"cells": []}', "services:\n  a:\n    command: sglang serve\n"]
    said = 0
    for name in NAMES + [str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.sh")]:
        for lang in LANGS:
            if not shell_by_name(name, lang):
                continue
            said += 1
            for text in texts:
                first = next((f.name for f in formats() if f.detect(name, lang, text)), None)
                assert first == "shell", (name, lang, text, first)
    assert said > 20


PY_NAMES = ["x.py", "a/b/serve.PY", "w.pyw", ".py", "..py", ".pyrc.py", "py", "x.py.txt",
            "Dockerfile.py", "dockerfile-cu12.py", "containerfile.py", "nb.ipynb", "nb.ipynb.py",
            "launch.json", "README.md", "C:\\work\\serve.py", "x.pyi", "run.sh"]


def test_the_python_shortcut_never_disagrees_with_the_formats():
    """Where the name alone says Python, asking every format in priority order says
    Python too, for every name, editor language and a few texts."""
    from servelint.extract import formats, python_by_name
    texts = ["import subprocess\nsubprocess.run(['python3', '-m', 'sglang.launch_server'])\n",
             "#!/bin/bash\npython3 -m sglang.launch_server --tp 2\n", '{"cells": []}',
             "FROM lmsysorg/sglang\n", "# Title\n```bash\nsglang serve\n```\n"]
    said = 0
    for name in PY_NAMES + [str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.py")]:
        for lang in LANGS:
            if not python_by_name(name, lang):
                continue
            said += 1
            for text in texts:
                first = next((f.name for f in formats() if f.detect(name, lang, text)), None)
                assert first == "python", (name, lang, text, first)
    assert said > 100


def test_plain_check_reads_as_the_parser_does():
    """`check PATH...` without options skips argparse (cli.plain_check): the arguments are
    the parser's, every default included; anything with an option goes to the parser."""
    from servelint.cli import build_parser, cmd_check, plain_check
    for argv in (["check", "a.sh"], ["check", "a.sh", "dir", "b c.py", "check"]):
        fast = plain_check(argv)
        assert fast is not None and fast.func is cmd_check
        assert vars(fast) == vars(build_parser().parse_args(argv))
        assert vars(fast) == vars(build_parser("check").parse_args(argv))
    for argv in (["check"], ["check", "-"], ["check", "a.sh", "-q"], ["check", "--", "a"],
                 ["rules"], ["check", "--format=json", "a"], ["lsp", "x"], []):
        assert plain_check(argv) is None, argv


def test_a_check_imports_neither_argparse_nor_hashlib(tmp_path):
    """The modules a plain `servelint check FILE` of a shell script never needs (the second
    run: the first, with an empty cache folder, reads normalize.yaml to fill it)."""
    code = ("import sys, runpy; sys.argv = ['servelint', 'check', sys.argv[1]]\n"
            "try:\n    runpy.run_module('servelint', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('argparse', 'hashlib', 'yaml', 'xml.etree.ElementTree')"
            " if m in sys.modules))")
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code, str(EXAMPLE)], env=_env(tmp_path),
                             capture_output=True, text=True, cwd=ROOT)
    assert "SL013" in out.stdout  # it did lint the file
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


PACK_RUN = r"""
import json, zlib
from servelint import catalog
doc = catalog._pack()
plain = json.loads(zlib.decompress(catalog._read_pack(), 31))
cat = catalog.load_catalog()
decoded, args = catalog._decoded(catalog._read_pack())
made = catalog._Pack(plain)
same = decoded == plain and args == [made.option_args(r) for r in range(len(made.records))]
print(json.dumps({"stats": catalog.PACK_STATS, "same": same,
                  "versions": list(catalog.known_versions()), "options": len(cat.options),
                  "first": repr(cat.options[0])}))
"""


def _pack_run(cache: Path | str) -> dict:
    out = subprocess.run([sys.executable, "-c", PACK_RUN], env=_env(cache), check=True,
                         capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout)


def test_catalog_pack_cache_is_used_checked_and_rebuilt(tmp_path):
    import zlib

    """The decoded catalog pack is kept as marshal data in the cache folder: the second run
    reads it; a cut, changed, empty or foreign file is never trusted (the pack is decoded
    again and the file rewritten), and the catalogs are the same every time."""
    first = _pack_run(tmp_path)
    # written by the first _decoded() call, read by the second one in PACK_RUN
    assert first["stats"] == {"cache_read": 1, "cache_written": 1} and first["same"]
    cache_file = tmp_path / "catalogs.marshal"
    data = cache_file.read_bytes()
    second = _pack_run(tmp_path)
    assert second["stats"] == {"cache_read": 2, "cache_written": 0}
    assert {k: second[k] for k in ("same", "versions", "options", "first")} == \
        {k: first[k] for k in ("same", "versions", "options", "first")}
    head, _, body = data.partition(b"\n")
    corruptions = [
        b"",
        data[: len(data) // 2],  # cut short: its CRC does not match
        head + b"\n" + body[:-40] + b"\x00" * 40,  # changed under a good header
        head.replace(b"servelint-catalogs/2", b"servelint-catalogs/0", 1) + b"\n" + body,
        head[:-8] + b"%08x" % zlib.crc32(b"x") + b"\nx",  # a good CRC of data not marshal
        b"x" * 100 + b"\n" + body,  # a header that is not this key
    ]
    for bad in corruptions:
        cache_file.write_bytes(bad)
        again = _pack_run(tmp_path)
        assert again["stats"]["cache_written"] == 1, bad[:40]
        assert again["same"] and again["versions"] == first["versions"]
        assert again["first"] == first["first"] and again["options"] == first["options"]
        assert cache_file.read_bytes() == data  # written again as it was


def test_catalog_pack_without_a_writable_cache(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    for cache in (blocked / "sub", ""):
        run = _pack_run(cache)
        assert run["stats"] == {"cache_read": 0, "cache_written": 0} and run["same"]
        assert run["options"] > 100


def test_lazy_pattern_and_logger_forward(caplog):
    import logging
    import re

    from servelint.lazy import LazyLogger, LazyPattern
    p = LazyPattern(r"(a+)b", re.I)
    assert "lazy pattern" in repr(p)
    assert p.match("AAb").group(1) == "AA" and p.fullmatch("ab") and not p.search("xyz")
    assert [m.group(0) for m in p.finditer("ab aab")] == ["ab", "aab"]
    assert p.sub("x", "ab-ab") == "x-x" and p.pattern == r"(a+)b" and p.flags & re.I
    log = LazyLogger("servelint.test_lazy")
    with caplog.at_level(logging.WARNING, logger="servelint.test_lazy"):
        log.warning("said %s", "once")
    assert [r.getMessage() for r in caplog.records] == ["said once"]


def test_records_need_no_dataclasses_module():
    """servelint.lazy.Record and its field() work without importing dataclasses (so that a
    module converted to records stops paying for that import), and dataclasses.field is
    accepted as well."""
    code = ("import sys\nfrom servelint.lazy import Record, field\n"
            "class R(Record, frozen=True):\n    a: int\n    b: tuple = field(default_factory=tuple)\n"
            "    c: int = field(default=0, compare=False, repr=False)\n"
            "r = R(1)\nprint(r, r == R(1, c=5), hash(r) == hash(R(1)), 'dataclasses' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "R(a=1, b=()) True True False"
