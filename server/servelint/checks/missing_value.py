"""SL005 missing-value: an option that needs a value and has none."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Finding, Severity


def run(parsed, ctx):
    for p in parsed.problems:
        if p.kind != "missing_value":
            continue
        opt = p.option
        meta = opt.metavar if isinstance(opt.metavar, str) else opt.dest.upper()
        choices = f" (one of: {', '.join(map(str, opt.choices))})" if opt.choices else ""
        yield Finding(CHECK.code, CHECK.severity,
                      f"argument {'/'.join(opt.names)}: {p.detail}: {p.written} needs a {meta} "
                      f"value{choices}",
                      p.span or p.token.span)


CHECK = register(Check(
    code="SL005", name="missing-value", severity=Severity.ERROR,
    title="Option without its value",
    what="Reports an option that takes a value but is followed by another option or by the "
         "end of the command.",
    why="argparse stops with `expected one argument`. When the value was meant to come from a "
        "variable that expanded to nothing, the launch fails the same way.",
    example="python -m sglang.launch_server --model-path m --tp-size --port 30000",
    instead="python -m sglang.launch_server --model-path m --tp-size 2 --port 30000",
    fix_safety="No automatic fix: only the author knows the value.",
    run=run,
))
