"""SL010 duplicate-option: the same option set twice; the last one wins."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.fixes import fix, remove_use
from servelint.model import Finding, Related, Severity


def _shown(use):
    vals = [v.text if v.text is not None else "<unknown>" for v in use.values]
    return " ".join([use.written] + vals) if use.written else " ".join(vals)


def run(parsed, ctx):
    index = parsed.launch.host.index
    seen = {}
    for use in parsed.uses:
        opt = use.option
        if opt.repeatable or opt.removed or opt.dest == "config":
            continue  # a second --config is SL091's: SGLang refuses it outright
        earlier = seen.get(opt.dest)
        seen[opt.dest] = use
        if earlier is None or earlier.token.origin:
            continue  # the command line overriding a --config file is the intended use
        line = index.line_of(earlier.token.span.start) + 1
        yield Finding(
            CHECK.code, CHECK.severity,
            f"{use.written or opt.name} sets {opt.dest} again: the earlier '{_shown(earlier)}' "
            f"(line {line}) is ignored and '{_shown(use)}' wins",
            use.name_span,
            related=[Related(earlier.span, f"ignored: '{_shown(earlier)}'")],
            fixes=fix(f"Remove the ignored '{_shown(earlier)}'", remove_use(parsed.launch, earlier),
                      preferred=True))


CHECK = register(Check(
    code="SL010", name="duplicate-option", severity=Severity.WARNING,
    title="Option given more than once",
    what="Reports an option (under any of its spellings) that is set again later in the same "
         "launch.",
    why="argparse keeps the last value without a word, so the earlier one is silently "
        "ignored. In long launch scripts the two often disagree (`--tp 4` near the top, "
        "`--tp-size 8` added later), and the one that reads as the setting is not the one used.",
    example="python -m sglang.launch_server --model-path m --tp 4 --mem-fraction-static 0.8 --tp-size 8",
    instead="python -m sglang.launch_server --model-path m --mem-fraction-static 0.8 --tp-size 8",
    fix_safety="Safe: removing the earlier occurrence keeps what SGLang uses today.",
    run=run,
))
