"""The command line: output formats, exit codes, folder walking, bad input."""

import json
import os
import subprocess
import sys
from pathlib import Path

from servelint.cli import main

BAD = "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp_size 2 --dtype fp16\n"
OK = "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp-size 2\n"


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def test_text_output_and_exit_codes(tmp_path, capsys):
    bad = write(tmp_path, "bad.sh", BAD)
    ok = write(tmp_path, "ok.sh", OK)
    assert main(["check", str(ok)]) == 0
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{bad}:2:48: error SL002 unrecognized arguments: --tp_size (SGLang spells it --tp-size)",
        f"{bad}:2:68: error SL007 argument --dtype: invalid choice: 'fp16' (choose from 'auto', "
        "'half', 'float16', 'bfloat16', 'float', 'float32')",
    ]


def test_fail_on_threshold(tmp_path):
    p = write(tmp_path, "w.sh", "python3 -m sglang.launch_server --model-path m --tp 2\n")
    assert main(["check", str(p)]) == 0          # only a hint
    assert main(["check", "--fail-on", "hint", str(p)]) == 1


def test_json_output(tmp_path, capsys):
    text = "#!/bin/bash\n# é 😀\npython3 -m sglang.launch_server --served-model-name '😀x' --tp_size 2\n"
    p = write(tmp_path, "u.sh", text)
    assert main(["check", "--format", "json-lines", str(p)]) == 1
    lines = capsys.readouterr().out.splitlines()
    objs = [json.loads(l) for l in lines]
    assert [o["code"] for o in objs] == ["SL011", "SL002"]
    o = next(o for o in objs if o["code"] == "SL002")
    assert set(o) == {"path", "range", "severity", "code", "message", "fixes", "url", "release"}
    # '😀' is two UTF-16 code units: the column counts them so.
    line = text.splitlines()[2]
    col16 = len(line[:line.index("--tp_size")].encode("utf-16-le")) // 2
    assert o["range"] == {"start": {"line": 2, "character": col16},
                          "end": {"line": 2, "character": col16 + 9}}
    assert o["severity"] == "error"
    assert o["fixes"][0]["title"] == "Replace --tp_size with --tp-size"
    assert o["fixes"][0]["edits"][0]["newText"] == "--tp-size"
    assert o["fixes"][0]["safe"] is True and o["fixes"][0]["preferred"] is True
    assert o["url"].startswith("file://") and o["url"].endswith("/rules/pages/SL002.md")


def test_folders_skip_vcs_venvs_and_node_modules(tmp_path, capsys):
    write(tmp_path, "a/run.sh", BAD)
    write(tmp_path, ".git/hooks/x.sh", BAD)
    write(tmp_path, "node_modules/pkg/x.sh", BAD)
    write(tmp_path, "venv2/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "venv2/bin/x.sh", BAD)
    write(tmp_path, "notes.txt", "python3 -m sglang.launch_server --tp_size 2\n")
    write(tmp_path, "noext", "#!/bin/sh\n" + BAD.split("\n", 1)[1])
    assert main(["check", str(tmp_path)]) == 1
    paths = {l.split(":")[0] for l in capsys.readouterr().out.splitlines()}
    assert paths == {str(tmp_path / "a" / "run.sh"), str(tmp_path / "noext")}


def test_missing_path_is_an_io_error(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.sh")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_usage_error_exits_2():
    proc = subprocess.run([sys.executable, "-m", "servelint", "check", "--format", "xml", "x"],
                          capture_output=True, text=True)
    assert proc.returncode == 2


def test_bad_input_never_crashes(tmp_path, capsys):
    write(tmp_path, "binary.sh", "")
    (tmp_path / "binary.sh").write_bytes(b"\x00\x01\xffsglang\x00")
    (tmp_path / "latin1.sh").write_bytes(b"python3 -m sglang.launch_server --model-path \xe9 --tp_size 2\n")
    half = "python3 -m sglang.launch_server --model-path \"unterminated --tp $(\n"
    write(tmp_path, "half.sh", half)
    big = "echo hi\n" * (3 * 1024 * 1024)  # 24 MB
    write(tmp_path, "big.sh", big + BAD)
    code = main(["check", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 1  # latin1.sh still has its real finding
    assert "latin1.sh:1:" in captured.out and "SL002" in captured.out
    assert "big.sh: note: not linted" in captured.err


def test_fix_rewrites_safe_fixes(tmp_path):
    p = write(tmp_path, "f.sh", BAD)
    assert main(["check", "--fix", str(p)]) == 1  # the invalid choice has no safe fix
    assert p.read_text() == BAD.replace("--tp_size", "--tp-size")


def test_rule_and_rules(capsys):
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "SL001" in out and "SL020" in out


def test_a_named_file_in_no_known_format_is_an_error(tmp_path, capsys):
    """Named on the command line, a file servelint cannot read is said so (exit 2); found
    by walking a folder, it is skipped quietly."""
    notes = write(tmp_path, "notes.txt", "python3 -m sglang.launch_server --tp_size 2\n")
    toml = write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n")
    assert main(["check", str(notes)]) == 2
    err = capsys.readouterr().err
    assert f"servelint: error: {notes}: not linted: servelint does not recognise this file's " \
           "format" in err
    assert "0 finding(s) in 0 file(s)" in err
    # With another file that has findings: those are still reported, the exit stays 2.
    bad = write(tmp_path, "bad.sh", BAD)
    assert main(["check", str(bad), str(toml)]) == 2
    captured = capsys.readouterr()
    assert "SL002" in captured.out and f"{toml}: not linted" in captured.err
    # The folder: quiet about both.
    assert main(["check", "--ignore", "SL002,SL007", str(tmp_path)]) == 0
    assert "not linted" not in capsys.readouterr().err


def test_a_named_binary_file_is_an_error(tmp_path, capsys):
    p = tmp_path / "model.bin"
    p.write_bytes(b"\x00\x01sglang\x00")
    assert main(["check", str(p)]) == 2
    assert f"{p}: not linted: the file is binary" in capsys.readouterr().err


def test_a_dockerfile_by_content_is_linted_whatever_its_name(tmp_path, capsys):
    text = ("FROM lmsysorg/sglang:latest\n"
            'CMD ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"]\n')
    p = write(tmp_path, "docker/sglang-serving", text)
    write(tmp_path, "docker/notes", "FROM here on, read this\n")
    assert main(["check", str(p)]) == 1
    assert main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{p}:2:68: error SL002 unrecognized arguments: --tp_size (SGLang spells it "
                   "--tp-size)"] * 2


def test_fix_writes_atomically_keeping_mode_and_links(tmp_path):
    real = write(tmp_path, "real/f.sh", BAD.replace("\n", "\r\n"))
    real.chmod(0o750)
    link = tmp_path / "link.sh"
    link.symlink_to(real)
    assert main(["check", "--fix", str(link)]) == 1
    assert link.is_symlink()  # the link still points at the file, which was rewritten
    assert real.read_bytes() == BAD.replace("\n", "\r\n").replace("--tp_size", "--tp-size").encode()
    assert (real.stat().st_mode & 0o777) == 0o750
    assert [p.name for p in real.parent.iterdir()] == ["f.sh"]  # no temporary file left
