"""SL009 removed-option: an option SGLang keeps only to stop with a message."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.fixes import fix, remove_use
from servelint.model import Finding, Severity


def run(parsed, ctx):
    for use in parsed.uses:
        opt = use.option
        if not opt.removed:
            continue
        msg = opt.message or f"{use.written} has been removed"
        yield Finding(CHECK.code, CHECK.severity, msg, use.name_span,
                      fixes=fix(f"Remove {use.written}", remove_use(parsed.launch, use), safe=False),
                      deprecated=True)


CHECK = register(Check(
    code="SL009", name="removed-option", severity=Severity.ERROR,
    title="Removed option",
    what="Reports an option that SGLang still recognises only to stop the launch with a message "
         "naming what replaced it.",
    why="The launch exits at argument parsing with SGLang's message; the replacement usually "
        "needs a decision (a value, a different option) that no tool can make.",
    example="python -m sglang.launch_server --model-path m --<removed-option>",
    instead="python -m sglang.launch_server --model-path m --<its-replacement> <value>",
    fix_safety="Removing the option is offered as a quick fix, never applied by fix-all.",
    run=run,
))
