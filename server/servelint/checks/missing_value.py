"""SL005 missing-value: an option that needs a value and has none."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Finding, Severity


def run(parsed, ctx):
    for p in parsed.problems:
        if p.kind != "missing_value":
            continue
        opt = p.option
        tokens = parsed.launch.tokens
        if p.token.text is not None and "=" in p.token.text:
            why = "a value after '=' is one word"
        elif p.index + 1 < len(tokens) and tokens[p.index + 1].literal_start.startswith("-"):
            why = f"it is followed by the option {tokens[p.index + 1].literal_start.split('=')[0]}"
        else:
            why = "nothing follows it"
        choices = f"; one of: {', '.join(map(str, opt.choices))}" if opt.choices and len(opt.choices) <= 12 else ""
        yield Finding(CHECK.code, CHECK.severity,
                      f"argument {'/'.join(opt.names)}: {p.detail} ({p.written} needs a value and "
                      f"{why}{choices})",
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
