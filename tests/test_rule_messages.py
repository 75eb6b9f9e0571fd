"""Every bundled rule speaks for the launch at hand: its message (messageTemplate) is
servelint's own, says what is wrong and what to do, is rendered from the launch's values
(never an example's), and shows no Python; SGLang's own text stays in sglangMessage."""

import re

import pytest

from servelint.engine import lint
from servelint.rules import bundled_packs
from servelint.rules.condition import options_of
from servelint.settings import Settings

from rule_examples import has_prefix, settled_example

RULES = [r for p in bundled_packs("0.5.23") for r in p.rules]
PLACEHOLDER = re.compile(r"\{(--[A-Za-z0-9-]+)\}")
PYTHON = re.compile(r"\bassert\b|\bcfg\.|\bself\.|server_args|resolved_view|resolving_view|\bview\.|"
                    r"\w+\(\)|==|!=|\bis not None\b|\bisinstance\b|\bNone\b")
ACTION = re.compile(r"(^|[.;:!?]\s+|\s—\s|, or\s+|\bthen\s+)(Remove|Set|Use|Add|Drop|Pick|Choose|Lower|Raise|"
                    r"Write|Pass|Give|Turn|Enable|Disable|Leave|Keep|Make|Run|Launch|Start|Switch|Change|"
                    r"Increase|Decrease|Reduce|Select|Install|Point|Name|Put|Replace|Omit|Specify|Move|"
                    r"Upgrade|Spell|Provide|Unset|Fix|Align|Either|Serve|Take|Split|Match|Apply|Export|"
                    r"Quote|Clear|Restore|List|Shorten|Rename|Update|Stay|Stop|Check)\b")


def findings(rule, example, tmp_path):
    gpu, text = settled_example(example, tmp_path)
    return [f for f in lint(text, path=str(tmp_path / "x.sh"), settings=Settings(gpu=gpu)).findings
            if f.code == rule.code]


def render(rule, example, tmp_path):
    got = findings(rule, example, tmp_path)
    assert got, (rule.code, example)
    return got[0]


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_message_is_servelints_own_and_from_the_launch(rule):
    template = rule.record.get("messageTemplate")
    assert template, f"{rule.code}: no messageTemplate"
    assert template.strip() != rule.message.strip(), f"{rule.code}: the message is SGLang's text"
    assert not PYTHON.search(template), (rule.code, PYTHON.search(template).group(0))
    # A value SGLang "got" is the launch's, never a literal from an example.
    for m in re.finditer(r"\bgot\b\s*[:=]?\s*(\S+)", template):
        assert m.group(1).startswith(("{", "'{", '"{', "--")), (rule.code, m.group(0))
    read = {o.name for o in options_of(rule.condition)}
    for name in PLACEHOLDER.findall(template):
        assert name in read, f"{rule.code}: {{{name}}} is not an option the condition reads"
    assert ACTION.search(template), f"{rule.code}: the message does not say what to do: {template}"
    assert len(template) <= 600, rule.code


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_message_renders_for_every_trigger(rule, tmp_path):
    dependent = rule.examples.get("dependent", [])
    for example in rule.examples.get("trigger", []) + dependent:
        if example in dependent and not has_prefix(example):
            got = findings(rule, example, tmp_path)  # a warning, or nothing for the unusual
            if not got:
                continue
        f = render(rule, example, tmp_path)
        assert "<unknown>" not in f.message, (rule.code, example, f.message)
        assert f.sglang, rule.code
        if "sglangTemplate" in rule.record:
            assert "<unknown>" not in f.sglang, (rule.code, example, f.sglang)


def test_messages_change_with_the_launchs_values(tmp_path):
    """The same rule on two launches with different values: each message quotes its own."""
    checked = 0
    for rule in RULES:
        names = PLACEHOLDER.findall(rule.record.get("messageTemplate", ""))
        triggers = rule.examples.get("trigger", [])
        if not names or len(triggers) < 2:
            continue
        messages = {render(rule, ex, tmp_path).message for ex in triggers}
        if len(messages) > 1:
            checked += 1
    assert checked >= 20
