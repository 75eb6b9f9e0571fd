"""`servelint check` in several processes (cli.run_parallel) prints what one process prints,
byte for byte, and --fix / --diff / --add-noqa make the same edits (issue 16 point 5)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from servelint import cli

ROOT = Path(__file__).resolve().parent.parent

BAD_PACK = """\
- id: broken
  errorMessage: x
  condition: {present: --nope}
"""


def _script(i: int) -> str:
    """A script with findings that vary by file: a safe fix (--tp_size), a bad choice, a
    value that is not a number, and an upgrade note under --target-version."""
    lines = ["#!/bin/bash", f"# job {i}", "set -e"]
    flags = [f"--model-path m{i}", f"--tp-size {1 + i % 4}"]
    if i % 3 == 0:
        flags.append("--tp_size 2")
    if i % 4 == 1:
        flags.append("--dtype fp16")
    if i % 5 == 2:
        flags.append("--port 3OOO1")
    if i % 7 == 3:
        flags.append("--enable_metrics")
    lines.append("python3 -m sglang.launch_server " + " ".join(flags))
    if i % 6 == 4:
        lines.append("python3 -m sglang.launch_server --model-path x --mem-fraction-static 0.8 "
                     "--tp_size 4")
    return "\n".join(lines) + "\n"


def _module(i: int) -> str:
    return ("import subprocess\n\n\n"
            f"def launch_{i}():\n"
            "    subprocess.Popen([\"python3\", \"-m\", \"sglang.launch_server\", "
            f"\"--model-path\", \"m{i}\", \"--tp_size\", \"{1 + i % 3}\"])\n")


def make_tree(top: Path) -> list[str]:
    """A tree with what a run can say: findings with and without fixes in three formats,
    binary and unknown files (skipped quietly), a missing path named between two folders
    (its error stays between theirs), an unknown file named on the command line, a
    configuration file with a problem (said once), and broken rule packs: one first loaded
    by a launch far from the first file, one named on the command line before the
    launches that load it. Returns the paths to check."""
    for i in range(40):
        (top / "a").mkdir(parents=True, exist_ok=True)
        (top / "a" / f"s{i:03d}.sh").write_text(_script(i))
    (top / "a" / "blob.sh").write_bytes(b"\x00\x01binary")
    (top / "a" / "notes.txt").write_text("nothing to lint\n")
    b = top / "b"
    (b / ".servelint" / "rules").mkdir(parents=True)
    (b / ".servelint" / "rules" / "team.yaml").write_text(BAD_PACK)
    (b / ".servelint.toml").write_text("ignore = 3\n")
    for i in range(25):
        (b / f"m{i:03d}.py").write_text(_module(i))
        (b / f"r{i:03d}.sh").write_text(_script(100 + i))
    c = top / "c"
    (c / ".servelint" / "rules").mkdir(parents=True)
    (c / ".servelint" / "rules" / "x.yaml").write_text(BAD_PACK)
    for i in range(20):
        (c / f"t{i:03d}.sh").write_text(_script(200 + i))
    (top / "odd.txt").write_text("not a format servelint reads\n")
    return [str(top / "a"), str(top / "missing.sh"), str(b),
            str(c / ".servelint" / "rules" / "x.yaml"), str(c), str(top / "odd.txt")]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "servelint", "check", *args], cwd=cwd,
                          env=env, capture_output=True, timeout=300)


def same_run(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess) -> None:
    assert a.stdout == b.stdout
    assert a.stderr == b.stderr
    assert a.returncode == b.returncode


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork: --jobs checks in one process")
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "gitlab"])
def test_parallel_output_is_the_single_process_output(tmp_path, fmt):
    paths = make_tree(tmp_path)
    extra = ["--target-version", "0.5.23"] if fmt == "text" else []
    one = run(["--format", fmt, "-j", "1", *extra, *paths], tmp_path)
    assert one.returncode == 2  # the missing path, the unknown file, the configuration
    assert b"SL090" in one.stdout and b"missing.sh" in one.stderr
    for jobs in ("2", "3"):
        same_run(one, run(["--format", fmt, "-j", jobs, *extra, *paths], tmp_path))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork: --jobs checks in one process")
@pytest.mark.parametrize("mode", [["--fix"], ["--diff"], ["--add-noqa"], ["--fix", "--show-fixes"]])
def test_parallel_edits_are_the_single_process_edits(tmp_path, mode):
    make_tree(tmp_path / "pristine")
    top = tmp_path / "work"  # the same place for both runs: messages name absolute paths
    runs = []
    for jobs in ("1", "2"):
        paths = [os.path.relpath(p, top) for p in make_tree(top)]
        runs.append(run([*mode, "-j", jobs, *paths], top))
        top.rename(tmp_path / f"j{jobs}")
    top1, top2 = tmp_path / "j1", tmp_path / "j2"
    same_run(*runs)

    def files(top: Path) -> dict:
        return {p.relative_to(top): p.read_bytes() for p in top.rglob("*") if p.is_file()}
    pristine, after1, after2 = files(tmp_path / "pristine"), files(top1), files(top2)
    assert after1 == after2
    changed = sum(after1[rel] != pristine[rel] for rel in pristine)
    assert set(after1) == set(pristine)
    assert changed == 0 if mode == ["--diff"] else changed > 20


def test_jobs_and_the_threshold(monkeypatch):
    """The default goes parallel only with enough files per CPU; --jobs N asks for N (at
    most one per file); without os.fork there is one process."""
    monkeypatch.setattr(cli, "available_cpus", lambda: 2)
    small = cli.PARALLEL_MIN_FILES
    assert cli.parallel_workers(None, 2 * small - 1) == 1
    assert cli.parallel_workers(None, 2 * small) == 2
    assert cli.parallel_workers(None, 100 * small) == 2
    assert cli.parallel_workers(1, 1000) == 1
    assert cli.parallel_workers(4, 3) == 3
    assert cli.parallel_workers(4, 1) == 1
    monkeypatch.delattr(os, "fork", raising=False)
    assert cli.parallel_workers(4, 1000) == 1
    assert cli.parallel_workers(None, 1000) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_run_parallel_keeps_the_order_and_reaps_its_workers():
    """Results come back in the order asked, whatever worker made them; a worker's
    exception is raised in the parent with its traceback; closing early ends the workers."""
    import time

    def work(i, memo):
        memo["n"] = memo.get("n", 0) + 1
        if i % 5 == 0:
            time.sleep(0.01)  # one worker falls behind: the order still holds
        return (i, os.getpid(), memo["n"])

    got = list(cli.run_parallel(range(20), 3, work))
    assert [g[0] for g in got] == list(range(20))
    assert [r[0] for _, r in got] == list(range(20))
    pids = {r[1] for _, r in got}
    assert len(pids) == 3 and os.getpid() not in pids
    for pid in pids:  # each worker keeps its memo across its calls
        counts = sorted(r[2] for _, r in got if r[1] == pid)
        assert counts == list(range(1, len(counts) + 1))

    def boom(i, memo):
        if i == 7:
            raise ValueError("file seven")
        return i

    seen = []
    with pytest.raises(cli.WorkerFailed, match="ValueError: file seven"):
        for i, r in cli.run_parallel(range(12), 2, boom):
            seen.append(r)
    assert seen == list(range(7))

    gen = cli.run_parallel(range(1000), 2, lambda i, memo: time.sleep(0.001) or i)
    assert next(gen) == (0, 0)
    gen.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # every worker was reaped


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_slow_worker_takes_fewer_files():
    """The files are handed out as the workers ask for them: while one worker is held up
    (by a large file, or the machine's other programs), the other takes the rest."""
    import time

    def work(i, memo):
        if i == 0:
            time.sleep(1.0)
        return os.getpid()

    got = [pid for _, pid in cli.run_parallel(range(40), 2, work)]
    assert got.count(got[0]) < 10


def test_rule_info_pickles():
    import pickle

    from servelint.report import rule_info
    info = rule_info("SL002")
    assert pickle.loads(pickle.dumps(info)) == info
