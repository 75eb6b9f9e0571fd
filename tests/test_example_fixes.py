"""Every bundled rule's exampleFix is a real before/after of its own rule: servelint reports
the rule on "# before" and nothing on "# after", and SGLang (its recorded verdict in
tests/data/conformance/verdicts.jsonl, from `make conformance`) accepts "# after" wherever
its validator can judge it here."""

import json
from pathlib import Path

import pytest

from servelint.engine import lint
from servelint.rules import bundled_packs, split_example
from servelint.rules.derive import example_fix_args
from servelint.settings import Settings

from rule_examples import has_prefix, settled_example

RULES = [r for p in bundled_packs("0.5.23") for r in p.rules]
DATA = Path(__file__).parent / "data" / "conformance" / "verdicts.jsonl"
VERDICTS = {(row["source"], row["args"]): row for row in map(json.loads, DATA.read_text().splitlines())
            if row["source"].startswith("fix:")}


def findings(args: str, tmp_path):
    """The findings of the line; `[env=..]`, `[model=..]`, `[gpu=..]` prefixes settle what
    a dependent rule hangs on (tests/rule_examples.py)."""
    gpu, text = settled_example(args, tmp_path)
    return lint(text, path=str(tmp_path / "fix.sh"), settings=Settings(gpu=gpu)).findings


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_example_fix_is_a_before_and_after_of_its_rule(rule, tmp_path):
    pair = example_fix_args(rule.record)
    assert pair is not None, f"{rule.code}: exampleFix needs a '# before' and an '# after' line"
    before, after = pair
    assert rule.code in [f.code for f in findings(before, tmp_path)], (rule.code, before)
    left = [(f.code, f.message) for f in findings(after, tmp_path) if f.code == rule.code or f.severity == 1]
    assert left == [], (rule.code, after)


_CLASSES: dict[str, str] = {}


def site_class(where: str | None) -> str | None:
    """The coverage inventory's class of the raise site SGLang stopped at."""
    if not _CLASSES:
        import sys
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
        from agreement import site_classes
        _CLASSES.update(site_classes())
    return _CLASSES.get(where or "")


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_sglang_accepts_the_after_line(rule):
    before, after = example_fix_args(rule.record)
    gpu, after = split_example(after)  # a [gpu=..] line was judged on that GPU
    if has_prefix(after) or gpu not in (None, "sm90", "sm100"):
        # settled by an environment variable, a model or a GPU SGLang's validator here
        # cannot be given (it pretends an sm90 or an sm100)
        assert rule.dependencies, f"{rule.code}: a prefixed after line, but the rule depends on nothing"
        return
    row = VERDICTS.get((f"fix:{rule.code}:after", after))
    assert row is not None, f"{rule.code}: the after line was not judged; run `make conformance`"
    # "environment": SGLang stopped on something outside the flags (a hub download, a
    # missing package). An after line the tiny Llama the validator runs with cannot serve
    # (--encoder-only needs a multimodal model) may be refused at a site the coverage
    # inventory classes as model- or hardware-dependent, never at a flag-decided one.
    if row["verdict"] == "rejected":
        assert site_class(row.get("where")) in ("model", "hardware"), (rule.code, after, row["error"])
        return
    assert row["verdict"] in ("accepted", "environment"), (rule.code, after, row["error"])
