"""SL006 invalid-value: a value SGLang's `type=` conversion rejects."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Finding, Severity
from servelint.valuetypes import CHECKS


def run(parsed, ctx):
    for use in parsed.uses:
        check = CHECKS.get(use.option.type or "")
        if check is None:
            continue
        for v in use.values:
            if v.text is None:
                continue
            bad = check(v.text)
            if bad is None:
                continue
            yield Finding(
                CHECK.code, CHECK.severity,
                f"argument {'/'.join(use.option.names)}: {bad}",
                v.span,
                related=[_related(use)])


def _related(use):
    from servelint.model import Related
    return Related(use.name_span, f"the value of {use.option.name}")


CHECK = register(Check(
    code="SL006", name="invalid-value", severity=Severity.ERROR,
    title="Value of the wrong type",
    what="Reports a value that the option's type conversion rejects: a word where SGLang "
         "wants an integer, a number that is not a float, text that is not JSON.",
    why="argparse stops with `invalid int value` before anything else runs. A value such as "
        "`0.8` for an integer option or `8GB` for a count is the usual slip.",
    example="python -m sglang.launch_server --model-path m --tp-size two",
    instead="python -m sglang.launch_server --model-path m --tp-size 2",
    fix_safety="No automatic fix: the intended number is the author's.",
    run=run,
))
