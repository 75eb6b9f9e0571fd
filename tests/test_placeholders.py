"""Documentation placeholders (`[other parameters]`, `<model-path>`, `<...>`, `...`,
`[options]`, `$ARGS`) stand for any arguments: nothing around them is certain, so they
are neither errors themselves nor make anything "missing"."""

import pytest

from servelint.engine import lint
from servelint.extract.shell import extract_shell
from servelint.model import LineIndex


def findings(text, name):
    return lint(text, path=f"/tmp/servelint-test/{name}").findings


def codes(text, name="doc.md"):
    return [f.code for f in findings(text, name)]


def md(command):
    return f"# Serving\n\n```bash\n{command}\n```\n"


@pytest.mark.parametrize("command", [
    "python3 -m sglang.launch_server [other parameters]",
    "python3 -m sglang.launch_server [options]",
    "python3 -m sglang.launch_server [OPTIONS]",
    "python3 -m sglang.launch_server [...]",
    "python3 -m sglang.launch_server <...>",
    "python3 -m sglang.launch_server <…>",
    "python3 -m sglang.launch_server ...",
    "python3 -m sglang.launch_server $ARGS",
    "python3 -m sglang.launch_server ${EXTRA_ARGS}",
    "python3 -m sglang.launch_server <server args>",
    "python3 -m sglang.launch_server --port <...>",
    "python3 -m sglang.launch_server --port 30000 [--tp-size N] [--enable-metrics]",
    "docker run -p 30000:30000 --env \"HF_TOKEN=hf_xxx\" [other OPTIONS] <image-name> "
    "python3 -m sglang.launch_server [other parameters]",
    "sglang serve --model-path <model-path> [options]",
])
def test_a_placeholder_is_not_an_error_and_nothing_is_missing_around_it(command):
    assert codes(md(command)) == []


def test_the_issue_example_used_to_give_three_errors():
    # before: SL011 (no --model-path) and SL013 on `[other` and on `parameters]`
    text = md("python3 -m sglang.launch_server [other parameters]")
    (launch,) = lint(text, path="/tmp/servelint-test/doc.md").launches
    (tok,) = launch.tokens
    assert text[tok.span.start:tok.span.end] == "[other parameters]"
    assert tok.text is None and tok.splat and tok.placeholder


def test_what_is_certain_next_to_a_placeholder_is_still_checked():
    text = md("python3 -m sglang.launch_server --model-path <model> --tp-sise 2 [options]")
    assert codes(text) == ["SL001"]
    text = md("python3 -m sglang.launch_server [options] --attention-backend flash_infer")
    assert codes(text) == ["SL007"]


def test_a_placeholder_as_a_value_still_leaves_the_rest_uncertain():
    # `--port <...>`: the placeholder may stand for more than the port
    text = md("python3 -m sglang.launch_server --port <...>")
    assert codes(text) == []
    text = md("python3 -m sglang.launch_server --port 30000")
    assert codes(text) == ["SL011"]  # without a placeholder the model is missing


def test_values_in_brackets_are_not_placeholders():
    text = "python3 -m sglang.launch_server --model-path m --json-model-override-args [1,2]\n"
    (l,) = extract_shell(text, LineIndex(text)).launches
    assert [t.text for t in l.tokens][-1] == "[1,2]"


@pytest.mark.parametrize("line, expected", [
    ("python3 -m sglang.launch_server --model-path <model-path> --port 30000 [options]",
     ["--model-path", None, "--port", "30000", None]),
    ("python3 -m sglang.launch_server --model-path=<path> --tp-size <N> ...",
     ["--model-path=<path>", "--tp-size", None, None]),
    ("python3 -m sglang.launch_server <...>", [None]),
])
def test_placeholders_in_shell_scripts(line, expected):
    text = "#!/bin/bash\n" + line + "\n"
    (l,) = extract_shell(text, LineIndex(text)).launches
    got = [t.text if t.text is not None else (text[t.span.start:t.span.end] if t.prefix else None)
           for t in l.tokens]
    assert got == expected
    assert all(t.placeholder for t in l.tokens if t.text is None)
    assert codes(text, "run.sh") == []


def test_redirections_are_not_placeholders():
    text = "python3 -m sglang.launch_server --model-path m < input.txt > out.log 2>&1\n"
    (l,) = extract_shell(text, LineIndex(text)).launches
    assert [t.text for t in l.tokens] == ["--model-path", "m"]
    assert not any(t.placeholder for t in l.tokens)
