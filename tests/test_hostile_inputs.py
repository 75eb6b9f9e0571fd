"""Project files that would crash or block servelint give one clear message instead
(issue 17, point 5): a configuration nested too deeply for Python's TOML reader, one that is
a FIFO, one beyond the size cap. The command line says so and lints with the defaults; the
language server gets the same ProjectConfig problem from config.parse_file."""

import os
import subprocess
import sys

import pytest

from servelint import config

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp_size 2\n"


def check(folder):
    return subprocess.run([sys.executable, "-m", "servelint", "check", "."], cwd=folder,
                          capture_output=True, text=True, timeout=120)


def test_a_configuration_nested_too_deeply_is_one_message(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.servelint]\nignore = " + "[" * 50000 + "]" * 50000 + "\n")
    (tmp_path / "run.sh").write_text(LAUNCH)
    got = config.parse_file(str(tmp_path / "pyproject.toml"))
    assert got is not None and got.problems == ["invalid TOML: values nested too deeply to read"]
    proc = check(tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert "nested too deeply" in proc.stderr
    assert "SL002" in proc.stdout  # and the launch is still linted, with the defaults


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_configuration_that_is_a_fifo_is_not_opened(tmp_path):
    os.mkfifo(tmp_path / ".servelint.toml")
    (tmp_path / "run.sh").write_text(LAUNCH)
    proc = check(tmp_path)  # a timeout here (120 s) is the regression: it used to block
    assert proc.returncode == 2
    assert ".servelint.toml: invalid servelint configuration: not a regular file" in proc.stderr
    assert "SL002" in proc.stdout


def test_a_configuration_beyond_the_cap_is_not_read(tmp_path):
    with open(tmp_path / ".servelint.toml", "w") as fh:
        fh.write("ignore = []\n" + "# filler\n" * (config.CONFIG_MAX_BYTES // 9 + 10))
    got = config.parse_file(str(tmp_path / ".servelint.toml"))
    assert got is not None and len(got.problems) == 1 and "not read" in got.problems[0]


def lint_time(text: str) -> tuple[list[str], float]:
    """The codes a shell script's lint reports, and its best time of three runs."""
    import time
    from servelint.engine import lint
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        result = lint(text, path="x.sh")
        best = min(best, time.perf_counter() - start)
    return [f.code for f in result.findings], best


def test_unclosed_dollar_braces_cost_linear_time():
    """tree-sitter-bash parses unclosed `${` in quadratic time (128 KB took 26 s); servelint
    reads such a text's `${` as `$_`, so doubling the input about doubles the time. Wide
    margins (a quadratic parse would be 4x per doubling, 64x over three); times, not asserted
    in absolute terms; the launch is still linted."""
    def took(n: int) -> float:
        codes, best = lint_time("python3 -m sglang.launch_server --tp_size 2 " + "${" * n + "\n")
        assert "SL002" in codes
        return best

    took(1000)  # warm up
    small, large = took(8000), took(64000)
    assert large < small * 24, (small, large)


def test_a_long_run_of_suppression_lines_costs_linear_time():
    """Each `disable` comment looked down past every comment below it: 4,000 in a row took
    10 s. Wide margins, as above: 8x the lines may cost at most 24x the time."""
    def took(n: int) -> float:
        codes, best = lint_time("#!/bin/bash\n" + "# servelint: disable=SL004 -- x\n" * n
                                + "python3 -m sglang.launch_server --tp 2\n")
        assert "SL004" not in codes  # still silenced
        return best

    took(100)
    small, large = took(500), took(4000)
    assert large < small * 24, (small, large)
