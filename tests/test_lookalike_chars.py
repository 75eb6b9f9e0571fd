"""Invisible and look-alike characters (SL014): a no-break space joining an option and its
value, an en dash for `--`, smart quotes around a value, zero-width characters. The
message names the character and says what SGLang makes of the word; the fix writes a plain
space, `--` or ASCII quotes and keeps the value; the rest of the launch is read as meant."""

import json
from pathlib import Path

import pytest

from servelint.edits import apply_edits, fix_all_edits
from servelint.engine import lint
from servelint.model import Severity

NBSP, EN, EM, MINUS, ZWSP = "\u00a0", "\u2013", "\u2014", "\u2212", "\u200b"
LDQ, RDQ, LSQ, RSQ = "\u201c", "\u201d", "\u2018", "\u2019"
VERDICTS = Path(__file__).parent / "data" / "real" / "shell" / "lookalike-verdicts.jsonl"


def run(text, name="run.sh"):
    return lint(text, path=f"/tmp/servelint-test/{name}")


def only(text, code="SL014", name="run.sh"):
    found = [f for f in run(text, name).findings if f.code == code]
    assert len(found) == 1, [(f.code, f.message) for f in run(text, name).findings]
    return found[0]


def fixed(text, name="run.sh"):
    return apply_edits(text, fix_all_edits(run(text, name).findings))


def launch(words):
    return "python3 -m sglang.launch_server --model-path m " + words + "\n"


def test_a_no_break_space_joining_an_option_and_its_value():
    text = launch(f"--tool-call-parser{NBSP}qwen3_coder --port 30000")
    result = run(text)
    assert [f.code for f in result.findings] == ["SL014"]  # no SL001 "did you mean" any more
    f = result.findings[0]
    assert f.severity == Severity.ERROR
    assert "no-break space (U+00A0)" in f.message
    assert "joins --tool-call-parser and qwen3_coder" in f.message
    assert "unrecognized arguments: --tool-call-parser<U+00A0>qwen3_coder" in f.message
    assert text[f.span.start:f.span.end] == f"--tool-call-parser{NBSP}qwen3_coder"
    # the fix writes a plain space and keeps the value
    assert fixed(text) == launch("--tool-call-parser qwen3_coder --port 30000")
    assert run(fixed(text)).findings == []


def test_the_value_after_a_no_break_space_is_checked_as_the_value():
    text = launch(f"--tool-call-parser{NBSP}qwen9")
    codes = sorted(f.code for f in run(text).findings)
    assert codes == ["SL007", "SL014"]
    (choice,) = [f for f in run(text).findings if f.code == "SL007"]
    assert text[choice.span.start:choice.span.end] == "qwen9"  # only the value


@pytest.mark.parametrize("dash, name", [(EN, "en dash (U+2013)"), (EM, "em dash (U+2014)"),
                                        (MINUS + MINUS, "minus sign (U+2212)"),
                                        (EN + "-", "en dash (U+2013)")])
def test_a_dash_look_alike_for_double_hyphen(dash, name):
    text = launch(f"{dash}tp-size 2 --port 30000")
    f = only(text)
    assert f.severity == Severity.ERROR
    assert name in f.message and "not '--'" in f.message
    # argparse takes the word for a positional one, and its value is left over with it
    assert f"unrecognized arguments: {dash}tp-size 2" in f.message
    assert not [g for g in run(text).findings if g.code == "SL013"]
    assert fixed(text) == launch("--tp-size 2 --port 30000")


def test_the_option_after_an_en_dash_is_checked_as_that_option():
    text = launch(f"{EN}tp-size two")
    assert sorted(f.code for f in run(text).findings) == ["SL006", "SL014"]


@pytest.mark.parametrize("value, severity", [
    (f"{LDQ}qwen3_coder{RDQ}", Severity.ERROR),   # an invalid choice with the quotes in it
    (f"{LSQ}qwen3_coder{RSQ}", Severity.ERROR),
])
def test_smart_quotes_around_a_choice(value, severity):
    text = launch(f"--tool-call-parser {value}")
    f = only(text)
    assert f.severity == severity
    assert "smart quotes" in f.message and "invalid choice" in f.message
    assert not [g for g in run(text).findings if g.code == "SL007"]
    assert fixed(text) in (launch('--tool-call-parser "qwen3_coder"'),
                           launch("--tool-call-parser 'qwen3_coder'"))
    assert run(fixed(text)).findings == []


def test_smart_quotes_around_a_free_text_value_are_a_warning():
    text = launch(f"--served-model-name {LDQ}mymodel{RDQ}")
    f = only(text)
    assert f.severity == Severity.WARNING  # SGLang accepts it, with the quotes in the name
    assert "accepts it" in f.message
    assert fixed(text) == launch('--served-model-name "mymodel"')


def test_smart_quotes_around_two_words_are_one_value_split_by_the_shell():
    text = launch(f"--served-model-name {LDQ}my model{RDQ} --port 30000")
    f = only(text)
    assert f.severity == Severity.ERROR
    assert f"unrecognized arguments: model{RDQ}" in f.message
    assert not [g for g in run(text).findings if g.code == "SL013"]
    assert fixed(text) == launch('--served-model-name "my model" --port 30000')


def test_smart_quotes_around_an_expansion():
    text = launch(f"--served-model-name {LDQ}$NAME{RDQ}")
    f = only(text)
    assert fixed(text) == launch('--served-model-name "$NAME"')
    assert f.severity == Severity.WARNING


def test_zero_width_characters():
    text = launch(f"--tp{ZWSP}-size 2")
    f = only(text)
    assert "zero-width space (U+200B)" in f.message and f.severity == Severity.ERROR
    assert fixed(text) == launch("--tp-size 2")
    text = launch(f"--port 3000{ZWSP}1")
    f = only(text)
    assert "invalid int value" in f.message
    assert fixed(text) == launch("--port 30001")


def test_a_unicode_space_inside_a_value_keeps_the_value_one_word():
    text = launch(f"--served-model-name my{NBSP}model")
    f = only(text)
    assert f.severity == Severity.WARNING
    (fix,) = f.fixes
    assert not fix.safe  # two words may have been meant
    assert apply_edits(text, fix.edits) == launch("--served-model-name 'my model'")


def test_inside_a_double_quoted_bash_c_script_quotes_are_escaped():
    text = f'bash -c "python3 -m sglang.launch_server --model-path m --tool-call-parser {LDQ}qwen3_coder{RDQ}"\n'
    out = fixed(text)
    assert out == 'bash -c "python3 -m sglang.launch_server --model-path m --tool-call-parser \\"qwen3_coder\\""\n'


def test_in_a_yaml_list_the_fix_makes_two_items():
    text = ("services:\n  s:\n    image: lmsysorg/sglang:v0.5.4\n    command:\n"
            "      - python3\n      - -m\n      - sglang.launch_server\n      - --model-path\n"
            f"      - m\n      - \"--tool-call-parser{NBSP}qwen3_coder\"\n")
    out = fixed(text, "compose.yaml")
    assert '      - "--tool-call-parser"\n      - "qwen3_coder"\n' in out
    assert run(out, "compose.yaml").findings == []


def test_markdown_blocks_and_the_en_dash_from_a_word_processor():
    text = f"```bash\npython3 -m sglang.launch_server --model-path m {EN}tp-size 2\n```\n"
    f = only(text, name="doc.md")
    assert "en dash" in f.message
    assert fixed(text, "doc.md") == "```bash\npython3 -m sglang.launch_server --model-path m --tp-size 2\n```\n"


def test_an_apostrophe_inside_a_word_is_left_alone():
    text = launch(f"--served-model-name Bob{RSQ}s-model")
    assert run(text).findings == []


def _records():
    return [json.loads(line) for line in VERDICTS.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("record", _records(), ids=lambda r: " ".join(r["argv"]).encode("unicode_escape").decode())
def test_severity_agrees_with_sglang(record):
    """tests/data/real/shell/lookalike-verdicts.jsonl: SGLang 0.5.23's own verdicts
    (tools/sglang_oracle.py) on each argv. Rejected: servelint reports an error that
    names the character; accepted: no error (a warning that names it)."""
    argv = record["argv"]
    assert all(" " not in w for w in argv)  # each word is one plain shell word
    text = "python3 -m sglang.launch_server " + " ".join(argv) + "\n"
    found = run(text).findings
    errors = [f for f in found if f.severity == Severity.ERROR]
    sl014 = [f for f in found if f.code == "SL014"]
    assert sl014, found
    if record["verdict"] == "rejected":
        assert any(f.code == "SL014" for f in errors)
    else:
        assert record["verdict"] == "accepted"
        assert errors == []
