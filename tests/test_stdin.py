"""`servelint check -`: standard input, `--stdin-filename`, `--fix` to stdout (issue 13).
Run as a subprocess, as a pipeline runs it."""

import json
import os
import subprocess
import sys
from pathlib import Path

BAD_SH = "python3 -m sglang.launch_server --model-path m --tp_size 2\n"
HELM_OUT = """\
---
# Source: sglang/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang
spec:
  template:
    spec:
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.2-cu126
          command:
            - python3
            - -m
            - sglang.launch_server
            - --model-path
            - Qwen/Qwen3-8B
            - --tp_size
            - "2"
---
# Source: sglang/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: sglang
"""


def run(args, stdin, cwd=None):
    env = dict(os.environ)
    env.pop("SERVELINT_CONFIG", None)
    data = stdin if isinstance(stdin, bytes) else stdin.encode("utf-8")
    return subprocess.run([sys.executable, "-m", "servelint", "check", *args], input=data,
                          capture_output=True, cwd=cwd, env=env, timeout=120)


def lines(b: bytes) -> list[str]:
    return b.decode("utf-8").splitlines()


def test_helm_template_output_piped_in(tmp_path):
    p = run(["-"], HELM_OUT, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert lines(p.stdout) == [
        "-:19:15: error SL002 unrecognized arguments: --tp_size (SGLang spells it --tp-size)"]
    assert "1 finding(s) in 1 file(s)" in p.stderr.decode()


def test_stdin_filename_chooses_format_and_shown_path(tmp_path):
    # Without a name this one line is still a launch (sniffed as shell) ...
    p = run(["-"], BAD_SH, cwd=tmp_path)
    assert lines(p.stdout) == ["-:1:48: error SL002 unrecognized arguments: --tp_size "
                               "(SGLang spells it --tp-size)"]
    # ... and with one, the name is what the output shows.
    p = run(["--stdin-filename", "deploy/run.sh", "-"], BAD_SH, cwd=tmp_path)
    assert p.returncode == 1
    assert lines(p.stdout)[0].startswith("deploy/run.sh:1:48: error SL002")
    # The name chooses the format: the same text named .txt is no format servelint reads.
    p = run(["--stdin-filename", "notes.txt", "-"], BAD_SH, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == b""
    assert "notes.txt: not linted: servelint does not recognise" in p.stderr.decode()
    # A Dockerfile by name ...
    docker = 'FROM lmsysorg/sglang:latest\nCMD ["python3", "-m", "sglang.launch_server", "--tp_size", "2"]\n'
    p = run(["--stdin-filename", "docker/Dockerfile.rocm", "--format", "json-lines", "-"], docker,
            cwd=tmp_path)
    recs = [json.loads(l) for l in lines(p.stdout)]
    assert {r["path"] for r in recs} == {"docker/Dockerfile.rocm"}
    assert "SL002" in [r["code"] for r in recs]
    # ... and by content.
    p = run(["-"], docker, cwd=tmp_path)
    assert any(" SL002 " in l for l in lines(p.stdout))


def test_json_formats_sniffed(tmp_path):
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["!python -m sglang.launch_server --model-path m --tp_size 2"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    p = run(["-"], json.dumps(nb), cwd=tmp_path)
    assert p.returncode == 1 and " SL002 " in p.stdout.decode()


def test_fix_prints_the_fixed_text_to_stdout(tmp_path):
    text = "#!/bin/bash\r\npython3 -m sglang.launch_server --model-path m --tp_size 2 --dtype fp16\r\n"
    p = run(["--fix", "-"], text, cwd=tmp_path)
    # The fixed text, byte for byte (CRLF kept), and only it on stdout ...
    assert p.stdout == text.replace("--tp_size", "--tp-size").encode()
    # ... while what is left (an invalid choice has no safe fix) goes to stderr.
    err = p.stderr.decode()
    assert "-: applied 1 fix edit(s)" in err
    assert "-:2:68: error SL007" in err
    assert p.returncode == 1
    # Nothing to fix: the text comes back unchanged, exit 0.
    ok = "python3 -m sglang.launch_server --model-path m --tp-size 2\n"
    p = run(["--fix", "--stdin-filename", "run.sh", "-"], ok, cwd=tmp_path)
    assert p.stdout == ok.encode() and p.returncode == 0


def test_fix_never_loses_input(tmp_path):
    """A pipeline `servelint check --fix - < a > b` must not empty b: input servelint cannot
    read comes back unchanged (with an error on stderr and exit 2)."""
    for data in (b"\x00\x01binary sglang\x00", "just words about sglang\n".encode(),
                 b"python3 -m sglang.launch_server --model-path \xe9 --tp_size 2\n"):
        p = run(["--fix", "-"], data, cwd=tmp_path)
        assert p.stdout == data
        assert p.returncode == 2, p.stderr


def test_binary_input_has_a_clear_message(tmp_path):
    p = run(["-"], b"\x7fELF\x00\x00sglang", cwd=tmp_path)
    assert p.returncode == 2
    assert "standard input is binary" in p.stderr.decode()


def test_invalid_utf8_is_read_like_a_file(tmp_path):
    p = run(["--stdin-filename", "run.sh", "-"],
            b"python3 -m sglang.launch_server --model-path \xe9 --tp_size 2\n", cwd=tmp_path)
    assert p.returncode == 1 and " SL002 " in p.stdout.decode()


def test_size_cap_as_for_files(tmp_path):
    (tmp_path / ".servelint.toml").write_text("max-file-bytes = 1000\n")
    big = "#!/bin/bash\n" + "echo hi\n" * 200 + BAD_SH
    p = run(["-"], big, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == b""
    assert "not linted: standard input has more than the 1,000 bytes" in p.stderr.decode()
    p = run(["--fix", "-"], big, cwd=tmp_path)
    assert p.stdout == big.encode()  # passed through whole


def test_configuration_from_the_stdin_filename_folder(tmp_path):
    proj = tmp_path / "proj"
    (proj / "deploy").mkdir(parents=True)
    (proj / ".servelint.toml").write_text('ignore = ["SL002"]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Named into the project: its configuration applies (SL002 ignored) ...
    p = run(["--stdin-filename", str(proj / "deploy" / "run.sh"), "-"], BAD_SH, cwd=elsewhere)
    assert p.returncode == 0 and p.stdout == b"", p.stderr
    # ... named elsewhere it does not; and without a name, the working folder's.
    p = run(["--stdin-filename", str(elsewhere / "run.sh"), "-"], BAD_SH, cwd=proj)
    assert p.returncode == 1
    p = run(["-"], BAD_SH, cwd=proj)
    assert p.returncode == 0, p.stdout


def test_release_from_the_named_project(tmp_path):
    """The name is the file's place: release pins next to it are read."""
    (tmp_path / "requirements.txt").write_text("sglang==0.4.9.post2\n")
    p = run(["--format", "json-lines", "--stdin-filename", str(tmp_path / "run.sh"), "-"], BAD_SH)
    rec = json.loads(lines(p.stdout)[0])
    assert rec["release"]["version"] == "0.4.9.post2"


def test_usage_errors(tmp_path):
    (tmp_path / "a.sh").write_text(BAD_SH)
    p = run(["-", str(tmp_path / "a.sh")], BAD_SH)
    assert p.returncode == 2 and "cannot be checked together with files" in p.stderr.decode()
    p = run(["--stdin-filename", "x.sh", str(tmp_path / "a.sh")], "")
    assert p.returncode == 2 and "give `-` as the path" in p.stderr.decode()


def test_empty_input_is_clean(tmp_path):
    p = run(["-"], b"", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == b""
