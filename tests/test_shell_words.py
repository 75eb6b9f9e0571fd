"""The shell reader never drops words: a `$` that starts no expansion is a literal `$`, and
a word tree-sitter cannot read is an unknown word, not nothing."""

import pytest

from servelint.engine import lint
from servelint.extract.shell import extract_shell
from servelint.model import LineIndex

# As written in a vendor's deployment guide: `$PREFILL_NODE0$:5757` has a stray `$`.
GUIDE = ("python -m sglang.launch_server --model-path $MODEL_PATH \\\n"
         "--trust-remote-code --disaggregation-mode prefill --dist-init-addr $PREFILL_NODE0$:5757 "
         "--tp-size 32 --dp-size 32 --enable-dp-attention --host $LOCAL_IP --decode-log-interval 1 "
         "--nnodes 4 --node-rank $RANK\n")


def values(text):
    (l,) = extract_shell(text, LineIndex(text)).launches
    return [t.text for t in l.tokens], l


def test_the_words_after_a_stray_dollar_are_read():
    got, l = values(GUIDE)
    assert got == ["--model-path", None, "--trust-remote-code", "--disaggregation-mode", "prefill",
                   "--dist-init-addr", None, "--tp-size", "32", "--dp-size", "32",
                   "--enable-dp-attention", "--host", None, "--decode-log-interval", "1",
                   "--nnodes", "4", "--node-rank", None]
    addr = l.tokens[6]
    assert GUIDE[addr.span.start:addr.span.end] == "$PREFILL_NODE0$:5757"
    assert not addr.splat  # glued to literal text: exactly one word


def test_no_wrong_divisibility_finding_once_tp_is_read():
    codes = [f.code for f in lint(GUIDE, path="/tmp/servelint-test/guide.sh").findings]
    # before: SL200 "tp_size must be divisible by number of nodes", with tp taken as 1
    assert "SL200" not in codes


@pytest.mark.parametrize("glue", [":", "%", "/", ".", ",", "=", "+", "]", "^", "~", "}", "\\"])
def test_a_literal_dollar_before_any_character_keeps_the_words_after_it(glue):
    text = f"python3 -m sglang.launch_server --host a${glue}b --tp-size 2 --port 3\n"
    got, l = values(text)
    assert got[2:] == ["--tp-size", "2", "--port", "3"]
    assert text[l.tokens[1].span.start:l.tokens[1].span.end] == f"a${glue}b"


def test_the_value_keeps_its_dollar():
    got, _ = values("python3 -m sglang.launch_server --api-key 'x' --served-model-name a$:b --port 1\n")
    assert got == ["--api-key", "x", "--served-model-name", "a$:b", "--port", "1"]


def test_the_pid_and_expansions_are_not_literal():
    got, l = values('python3 -m sglang.launch_server --served-model-name m$$ --port "$P" --host $H\n')
    assert got == ["--served-model-name", None, "--port", None, "--host", None]


def test_a_word_that_cannot_be_read_becomes_unknown_words_not_nothing():
    # `$[` opens bash's old arithmetic form and is never closed here: tree-sitter makes one
    # ERROR of the rest of the line. The plain words in it are kept, the rest is unknown.
    text = "python3 -m sglang.launch_server --model-path m --host a$[x --tp-size 2 --port 3\n"
    got, l = values(text)
    assert got[:3] == ["--model-path", "m", "--host"]
    assert "--tp-size" in got and "2" in got and "--port" in got
    assert len(got) >= 7
    spans = [text[t.span.start:t.span.end] for t in l.tokens]
    assert "--tp-size" in spans and "3" in spans
