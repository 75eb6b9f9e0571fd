"""SL004 abbreviated-option: a unique prefix that argparse expands."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.fixes import fix, rename_option
from servelint.model import Finding, Severity
from servelint.successors import plan, retired


def run(parsed, ctx):
    launch = parsed.launch
    for use in parsed.uses:
        if not use.abbreviated:
            continue
        full = use.option.name if use.matched in use.option.names else use.matched
        if use.matched.startswith("--no-"):
            full = use.matched
        note = ""
        info = retired(use.written, parsed.catalog) if use.written.startswith("--") else None
        if info is not None:
            succ = plan(info, parsed.catalog, [], lambda name: None)
            if succ.rename is None or succ.rename not in use.option.names:
                continue  # a removed option read as a different one: SL009's
            note = (f" (it was an option of its own until SGLang {info.last}; {full} is its "
                    f"successor)" if info.last else f" ({full} is its successor)")
        yield Finding(
            CHECK.code, CHECK.severity,
            f"{use.written} is an abbreviation of {full}{note}; spell the option out so that a "
            f"future SGLang option does not make it ambiguous",
            use.name_span,
            fixes=fix(f"Expand to {full}",
                      rename_option(launch, use.token, use.written, use.name_span, full),
                      preferred=True))


CHECK = register(Check(
    code="SL004", name="abbreviated-option", severity=Severity.HINT,
    title="Abbreviated option",
    what="Points out an option written as a unique prefix of a longer option "
         "(`--speculative-algo` for `--speculative-algorithm`). An option string that an "
         "earlier release had as an option of its own and that is now read as a different "
         "option is reported by SL009 (removed-option) instead.",
    why="SGLang accepts it today, because argparse expands unique prefixes. The next release "
        "that adds an option starting the same way turns the launch into an `ambiguous "
        "option` error (see SL003).",
    example="python -m sglang.launch_server --model-path m --speculative-algo EAGLE",
    instead="python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE",
    fix_safety="Safe: the full name is exactly what argparse resolves the prefix to.",
    run=run,
))
