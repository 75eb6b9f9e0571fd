"""`servelint check` --diff, --exit-zero, --statistics, --show-fixes and --add-noqa (issue 15)."""

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from servelint import cli
from servelint.cli import main
from servelint.engine import lint
from servelint.report import unified_diff

BAD = "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp_size 2 --dtype fp16\n"
FIXED = BAD.replace("--tp_size", "--tp-size")
OK = "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp-size 2\n"
TWO = ("#!/bin/bash\n"
       "python3 -m sglang.launch_server --model-path m --tp_size 2 --tp 2 --dtype fp16\n"
       "python3 -m sglang.launch_server --model-path m --dp_size 2\n")


def check(capsys, *args) -> tuple[int, str, str]:
    code = main(["check", "--isolated", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def has_patch() -> bool:
    return shutil.which("patch") is not None


def apply_patch(folder: Path, diff: str) -> None:
    subprocess.run(["patch", "-s", "-p0", "-d", str(folder)], input=diff, text=True, check=True)


# --- --diff ------------------------------------------------------------------------------------

def test_diff_shows_what_fix_would_write_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("bad.sh").write_text(BAD)
    Path("two.sh").write_text(TWO)
    Path("ok.sh").write_text(OK)
    code, out, err = check(capsys, "--diff", "bad.sh", "two.sh", "ok.sh")
    assert code == 1
    assert Path("bad.sh").read_text() == BAD and Path("two.sh").read_text() == TWO
    assert out.startswith("--- bad.sh\n+++ bad.sh\n@@ -1,2 +1,2 @@\n #!/bin/bash\n-python3")
    assert "--- ok.sh" not in out
    assert "bad.sh: --fix would apply 1 fix edit(s)" in err
    assert err.splitlines()[-1].startswith("--fix would change 2 file(s)")
    assert "SL007" not in out  # findings are not printed: stdout is the diff alone
    # What the diff says is what --fix does.
    if has_patch():
        copy = tmp_path / "copy"
        copy.mkdir()
        for name in ("bad.sh", "two.sh"):
            shutil.copy(name, copy / name)
        apply_patch(copy, out)
        assert check(capsys, "--fix", "bad.sh", "two.sh")[0] == 1
        assert (copy / "bad.sh").read_text() == Path("bad.sh").read_text() == FIXED
        assert (copy / "two.sh").read_text() == Path("two.sh").read_text() != TWO


def test_diff_exit_codes(tmp_path, capsys):
    ok = tmp_path / "ok.sh"
    ok.write_text(OK)
    nofix = tmp_path / "nofix.sh"
    nofix.write_text(OK.replace("--tp-size 2", "--dtype fp16"))  # an error without a safe fix
    code, out, err = check(capsys, "--diff", str(ok), str(nofix))
    assert (code, out) == (0, "")
    assert "--fix would change nothing in 2 file(s)" in err
    bad = tmp_path / "bad.sh"
    bad.write_text(BAD)
    assert check(capsys, "--diff", str(bad))[0] == 1
    assert check(capsys, "--diff", "--exit-zero", str(bad))[0] == 0
    assert bad.read_text() == BAD


def test_diff_of_standard_input(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "servelint", "check", "--isolated", "--diff",
                           "--stdin-filename", "deploy/run.sh", "-"], input=BAD, text=True,
                          capture_output=True, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == unified_diff(BAD, FIXED, "deploy/run.sh")


def test_diff_mode_excludes_fix_and_add_noqa(tmp_path, capsys):
    p = tmp_path / "bad.sh"
    p.write_text(BAD)
    code, _, err = check(capsys, "--diff", "--fix", str(p))
    assert code == 2 and "--fix and --diff cannot be used together" in err
    code, _, err = check(capsys, "--diff", "--add-noqa", str(p))
    assert code == 2 and "cannot be used together" in err
    assert p.read_text() == BAD


def test_unified_diff_format():
    assert unified_diff("a\n", "a\n", "f") == ""
    assert unified_diff("a\nb\nc\n", "a\nB\nc\n", "x.sh") == (
        "--- x.sh\n+++ x.sh\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    # A last line without its newline is marked as diff marks it.
    assert unified_diff("a\nb", "a\nc", "f") == (
        "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
        "\\ No newline at end of file\n")
    # Empty to something: the old range starts before line 1.
    assert unified_diff("", "x\n", "f") == "--- f\n+++ f\n@@ -0,0 +1 @@\n+x\n"
    # Changes far apart are separate hunks with three lines of context.
    old = "".join(f"{n}\n" for n in range(20))
    new = old.replace("1\n", "one\n", 1).replace("18\n", "eighteen\n")
    hunks = [l for l in unified_diff(old, new, "f").splitlines() if l.startswith("@@")]
    assert hunks == ["@@ -1,5 +1,5 @@", "@@ -16,5 +16,5 @@"]


@pytest.mark.skipif(not has_patch(), reason="needs the `patch` program as the oracle")
def test_unified_diff_is_what_patch_applies(tmp_path):
    """Random edits of random texts: `patch` turns the old text into the new one with the
    diff (CRLF lines and a missing last newline included)."""
    rnd = random.Random(15)
    for trial in range(150):
        a = [rnd.choice(["x", "y", "z", "w\r", ""]) + "\n" for _ in range(rnd.randint(0, 25))]
        b = list(a)
        for _ in range(rnd.randint(1, 5)):
            r = rnd.random()
            if r < 0.35 and b:
                del b[rnd.randrange(len(b))]
            elif r < 0.7:
                b.insert(rnd.randint(0, len(b)), rnd.choice("pqrx") + "\n")
            elif b:
                b[rnd.randrange(len(b))] = rnd.choice("stu") + "\n"
        old, new = "".join(a), "".join(b)
        if rnd.random() < 0.2:
            old = old.rstrip("\n")
        if rnd.random() < 0.2:
            new = new.rstrip("\n")
        f = tmp_path / "f"
        f.write_bytes(old.encode())
        diff = unified_diff(old, new, "f")
        if old == new:
            assert diff == ""
            continue
        subprocess.run(["patch", "-s", "-p0", "--binary", "-d", str(tmp_path)],
                       input=diff.encode(), check=True)
        assert f.read_bytes() == new.encode(), (trial, old, new, diff)


# --- --exit-zero and --statistics ------------------------------------------------------------

def test_exit_zero(tmp_path, capsys):
    p = tmp_path / "bad.sh"
    p.write_text(BAD)
    code, out, _ = check(capsys, "--exit-zero", str(p))
    assert code == 0 and "SL002" in out  # the findings are still reported
    assert check(capsys, "--exit-zero", "--fail-on", "hint", str(p))[0] == 0
    assert main(["check", "--exit-zero", "--config", str(tmp_path / "none.toml"), str(p)]) == 2
    assert "no such file" in capsys.readouterr().err


def test_statistics(tmp_path, capsys):
    a = tmp_path / "a.sh"
    a.write_text(TWO)
    b = tmp_path / "b.sh"
    b.write_text(BAD)
    code, out, err = check(capsys, "--statistics", str(a), str(b))
    assert code == 1
    assert out.splitlines() == [
        "3  SL002  underscore-option  (3 fixable with --fix)",
        "2  SL007  invalid-choice",
        "1  SL004  abbreviated-option  (1 fixable with --fix)",
    ]
    assert "6 finding(s) in 2 file(s)" in err
    code, out, _ = check(capsys, "--statistics", "--format", "json", str(a), str(b))
    assert json.loads(out) == [
        {"code": "SL002", "name": "underscore-option", "count": 3, "fixable": 3},
        {"code": "SL007", "name": "invalid-choice", "count": 2, "fixable": 0},
        {"code": "SL004", "name": "abbreviated-option", "count": 1, "fixable": 1},
    ]
    ok = tmp_path / "ok.sh"
    ok.write_text(OK)
    assert check(capsys, "--statistics", str(ok))[:2] == (0, "")


# --- --show-fixes ----------------------------------------------------------------------------

def test_show_fixes_lists_each_findings_fixes(tmp_path, capsys):
    p = tmp_path / "bad.sh"
    p.write_text(BAD.replace("fp16", "bfloat"))
    code, out, _ = check(capsys, "--show-fixes", str(p))
    assert out.splitlines() == [
        f"{p}:2:48: error SL002 unrecognized arguments: --tp_size (SGLang spells it --tp-size)",
        "    fix (safe): Replace --tp_size with --tp-size",
        f"{p}:2:68: error SL007 argument --dtype: invalid choice: 'bfloat' (choose from 'auto', "
        "'half', 'float16', 'bfloat16', 'float', 'float32'); did you mean 'float'?",
        "    fix (unsafe): Use 'float'",
        "    fix (unsafe): Use 'bfloat16'",
        "    fix (unsafe): Use 'float32'",
    ]
    # Without --show-fixes: the finding lines alone.
    _, plain, _ = check(capsys, str(p))
    assert plain.splitlines() == [l for l in out.splitlines() if not l.startswith("    fix")]


def test_show_fixes_with_fix_lists_what_was_applied(tmp_path, capsys):
    p = tmp_path / "two.sh"
    p.write_text(TWO)
    code, out, err = check(capsys, "--fix", "--show-fixes", str(p))
    assert code == 1  # the invalid choice stays
    # Four edits: the first pass's three make `--tp-size 2 --tp-size 2`, whose repeat the
    # second pass removes (that finding was not there to list before --fix).
    assert f"{p}: applied 4 fix edit(s)" in err
    applied = [l.strip() for l in err.splitlines() if l.startswith("  ")]
    assert applied == [
        f"{p}:2:48: SL002 Replace --tp_size with --tp-size",
        f"{p}:2:60: SL004 Expand to --tp-size",
        f"{p}:3:48: SL002 Replace --dp_size with --dp-size",
    ]
    assert "SL007" in out and "SL002" not in out
    # --diff --show-fixes lists what --fix would apply, the same way.
    q = tmp_path / "again.sh"
    q.write_text(TWO)
    _, _, err = check(capsys, "--diff", "--show-fixes", str(q))
    assert [l.strip() for l in err.splitlines() if l.startswith("  ")] == [
        a.replace(str(p), str(q)) for a in applied]


# --- --add-noqa ---------------------------------------------------------------------------------

FILES = {
    "run.sh": TWO,
    "compose.yaml": "services:\n  s:\n    image: lmsysorg/sglang:latest\n"
                    "    command: python3 -m sglang.launch_server --model-path m --tp_size 2 --dtype fp16\n",
    "launch.py": "import sglang as sgl\n\n\ndef main():\n    llm = sgl.Engine(model_path='m', tp_sizes=2, dtype='fp16')\n",
    "Dockerfile": "FROM lmsysorg/sglang:latest\n"
                  'CMD ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"]\n',
    ".vscode/launch.json": '{\n  "configurations": [\n    {\n      "name": "s",\n      "type": "debugpy",\n'
                           '      "request": "launch",\n      "module": "sglang.launch_server",\n'
                           '      "args": ["--model-path", "m", "--tp_size", "2"]\n    }\n  ]\n}\n',
    "DEPLOY.md": "# Deploy\n\n```bash\npython3 -m sglang.launch_server --model-path m --tp_size 2\n```\n",
}
COMMENT = {"run.sh": "# servelint:", "compose.yaml": "    # servelint:", "launch.py": "    # servelint:",
           "Dockerfile": "# servelint:", ".vscode/launch.json": "    // servelint:",
           "DEPLOY.md": "# servelint:"}


def make(root: Path) -> None:
    for name, text in FILES.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def findings(path: Path) -> list[str]:
    return [f.code for f in lint(path.read_text(encoding="utf-8"), path=str(path)).findings]


def test_add_noqa_silences_every_finding_in_each_comment_syntax(tmp_path, capsys, monkeypatch):
    make(tmp_path)
    for name in FILES:
        assert findings(tmp_path / name), name  # each file has something to silence
    monkeypatch.chdir(tmp_path)
    code, out, err = check(capsys, "--add-noqa", ".")
    assert (code, out) == (0, "")
    assert err.splitlines()[-1] == f"0 finding(s) in {len(FILES)} file(s)"
    for name in FILES:
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert findings(tmp_path / name) == [], name
        comments = [l for l in text.splitlines() if "servelint:" in l]
        assert comments, name
        for line in comments:
            assert line.startswith(COMMENT[name]), (name, line)
            assert line.endswith("-- TODO: reason"), (name, line)
    # One comment per launch, holding every code of that launch.
    script = (tmp_path / "run.sh").read_text().splitlines()
    assert script[1] == "# servelint: disable=SL002,SL004,SL007 -- TODO: reason"
    assert script[3] == "# servelint: disable=SL002 -- TODO: reason"
    assert script[2] == TWO.splitlines()[1] and script[4] == TWO.splitlines()[2]


def test_add_noqa_is_idempotent(tmp_path, capsys, monkeypatch):
    make(tmp_path)
    monkeypatch.chdir(tmp_path)
    check(capsys, "--add-noqa", ".")
    first = {name: (tmp_path / name).read_bytes() for name in FILES}
    writes = []
    monkeypatch.setattr(cli, "write_atomically", lambda path, text: writes.append(path))
    code, _, err = check(capsys, "--add-noqa", ".")
    assert code == 0 and writes == []
    assert "added 0 suppression(s) to 0 file(s)" in err
    assert {name: (tmp_path / name).read_bytes() for name in FILES} == first


def test_add_noqa_reason_and_atomic_writes(tmp_path, capsys, monkeypatch):
    p = tmp_path / "run.sh"
    p.write_text(BAD)
    writes = []
    real = cli.write_atomically

    def spy(path, text):
        writes.append(path)
        real(path, text)

    monkeypatch.setattr(cli, "write_atomically", spy)
    code, _, err = check(capsys, "--add-noqa=vendored launcher, see #12", str(p))
    assert code == 0 and writes == [str(p)]
    assert p.read_text().splitlines()[1] == \
        "# servelint: disable=SL002,SL007 -- vendored launcher, see #12"
    assert f"{p}: added 2 suppression(s)" in err


def test_add_noqa_without_a_value_does_not_take_the_path(tmp_path, capsys):
    p = tmp_path / "run.sh"
    p.write_text(BAD)
    assert check(capsys, "--add-noqa", str(p))[0] == 0
    assert "-- TODO: reason" in p.read_text()


def test_add_noqa_leaves_what_no_comment_can_silence(tmp_path, capsys):
    """A notebook's comments live inside JSON strings: its findings stay, reported."""
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": ["!python3 -m sglang.launch_server --model-path m --tp_size 2\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    p = tmp_path / "serve.ipynb"
    text = json.dumps(nb, indent=1)
    p.write_text(text)
    code, out, _ = check(capsys, "--add-noqa", str(p))
    assert code == 1 and "SL002" in out
    assert p.read_text() == text


def test_add_noqa_usage_errors(tmp_path, capsys):
    p = tmp_path / "run.sh"
    p.write_text(BAD)
    code, _, err = check(capsys, "--add-noqa", "-")
    assert code == 2 and "name the files, not `-`" in err
    code, _, err = check(capsys, "--add-noqa=two\nlines", str(p))
    assert code == 2 and "cannot hold a line break" in err
    code, _, err = check(capsys, "--add-noqa", "--fix", str(p))
    assert code == 2 and "cannot be used together" in err
    assert p.read_text() == BAD
