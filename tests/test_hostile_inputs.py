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


def lint_time(text: str, path: str = "x.sh") -> tuple[list[str], float]:
    """The codes a lint of `text` (read as the file `path`) reports, and its best time of
    three runs."""
    import time
    from servelint.engine import lint
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        result = lint(text, path=path)
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


def extracted_notices(text: str, fmt: str, path: str) -> list[str]:
    """What the format's extractor says it did not read (engine.lint shows these)."""
    from servelint.extract import by_name
    from servelint.model import LineIndex
    extractor = by_name(fmt)
    assert extractor is not None
    return list(getattr(extractor.extract(text, LineIndex(text), path, None), "notices", []))


POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
       "    image: lmsysorg/sglang:latest\n"
       "    command: [python3, -m, sglang.launch_server, --model-path, m, --tp_size, '2']\n")


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{a: ", "}")])
def test_yaml_flow_nesting_costs_linear_time(opening, closing):
    """libyaml looks at every open flow collection for each token: 64k levels of `[` took
    16 s, and deeper ones raised RecursionError. servelint stops reading a document where
    a collection opens more than 200 deep (the line is blanked and the document read
    again), and says so; the launch beside it is still linted."""
    def took(n: int) -> float:
        text = POD + "    args: " + opening * n + "x" + closing * n + "\n"
        codes, best = lint_time(text, "pod.yaml")
        assert "SL002" in codes
        return best

    took(500)
    small, large = took(4000), took(32000)
    assert large < small * 24, (small, large)
    said = extracted_notices(POD + "    args: " + "[" * 300 + "]" * 300 + "\n", "yaml", "pod.yaml")
    assert said == ["line 9: YAML nested more than 200 levels deep; that line is not read"]


def test_yaml_nesting_below_the_limit_is_read():
    """A document nested 150 deep is read as before: no notice, its words checked."""
    text = POD + "    args: " + "[" * 150 + "]" * 150 + "\n"
    assert extracted_notices(text, "yaml", "pod.yaml") == []


def test_a_notebook_of_many_cells_costs_linear_time():
    """A notebook of 8,000 launching cells took 15 s; each cell's launch costs the same
    whatever the number of cells (8x the cells at most 24x the time) and all are linted."""
    import json

    def took(n: int) -> float:
        cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                  "source": ["!python -m sglang.launch_server --model-path m --tp_size 2\n"]}
                 for _ in range(n)]
        text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        codes, best = lint_time(text, "x.ipynb")
        assert codes.count("SL002") == n
        return best

    took(20)
    small, large = took(60), took(480)
    assert large < small * 24, (small, large)


def test_json_nested_deeper_than_the_limit_is_skipped_not_the_rest():
    """A JSON value nested more than 256 deep ended the parse: a notebook's cells after
    it were not read (no launch, no word why). It is now passed over in one scan, the
    cells after it are linted, and a notice names its line."""
    def notebook(n: int) -> str:
        return ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {"x": ' + "[" * n + "]" * n
                + '},\n "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], '
                '"execution_count": null, "source": ["!python -m sglang.launch_server --tp_size 2"]}]}')

    def took(n: int) -> float:
        codes, best = lint_time(notebook(n), "x.ipynb")
        assert "SL002" in codes
        return best

    took(1000)
    small, large = took(8000), took(64000)
    assert large < small * 24, (small, large)
    assert extracted_notices(notebook(300), "notebook", "x.ipynb") == [
        "line 1: JSON nested more than 256 levels deep; that value is not read"]


def test_launch_json_nested_deeper_than_the_limit_still_lints_its_configurations():
    text = ('{"version": "0.2.0", "x": ' + "[" * 5000 + "]" * 5000 + ', "configurations": '
            '[{"name": "c", "type": "debugpy", "request": "launch", '
            '"module": "sglang.launch_server", "args": ["--model-path", "m", "--tp_size", "2"]}]}')
    codes, _ = lint_time(text, ".vscode/launch.json")
    assert "SL002" in codes


def test_a_deeply_nested_sglang_config_is_one_finding():
    """An SGLang `--config` YAML nested 64k deep raised RecursionError ("internal error");
    past 200 levels it is now one SL091 finding, found in linear time."""
    from servelint.engine import lint

    def took(n: int) -> float:
        codes, best = lint_time("tp-size: 2\nmodel-path: " + "[" * n + "]" * n + "\n", "cfg.yaml")
        assert codes == ["SL091"]
        return best

    took(1000)
    small, large = took(8000), took(64000)
    assert large < small * 24, (small, large)
    result = lint("tp-size: 2\nmodel-path: " + "[" * 64000 + "]" * 64000 + "\n", path="cfg.yaml")
    assert not result.notices
    assert "more than 200 levels deep" in result.findings[0].message


def test_a_dockerfile_of_many_stages_costs_linear_time():
    """Each launch looked through every stage for its image (launches x stages: 16,000
    stages took 12 s in that loop alone); the stage is now found by bisection."""
    def took(n: int) -> float:
        text = "".join(f"FROM lmsysorg/sglang:v0.4.9 AS s{i}\n"
                       f"CMD python3 -m sglang.launch_server --model-path m --tp_size 2\n"
                       for i in range(n))
        codes, best = lint_time(text, "Dockerfile")
        assert codes.count("SL002") == n
        return best

    took(20)
    small, large = took(60), took(480)
    assert large < small * 24, (small, large)


def test_an_extractors_notice_reaches_the_lint_result():
    """What an extractor did not read, and why, is told by the lint (the CLI prints it as a
    note, the server logs it)."""
    from servelint.engine import lint
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n"
            "    command: [python3, -m, sglang.launch_server, --tp_size, \"2\"]\n"
            "    args: " + "[" * 300 + "]" * 300 + "\n")
    result = lint(text, "/tmp/servelint-hostile/pod.yaml")
    assert "line 7: YAML nested more than 200 levels deep; that line is not read" in result.notices
    assert "SL002" in [f.code for f in result.findings]
