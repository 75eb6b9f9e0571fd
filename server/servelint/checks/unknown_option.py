"""SL001 unknown-option: an option SGLang's parser does not have."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.fixes import fix, remove_tokens, rename_option
from servelint.model import Finding, Severity
from servelint.suggest import close_matches


def suggestions(catalog, written: str, n: int = 3) -> list[str]:
    names = [x for x in catalog.long_names() if not catalog.lookup(x).hidden]
    return close_matches(written, names, n=n)


def run(parsed, ctx):
    launch = parsed.launch
    for p in parsed.problems:
        if p.kind != "unknown" or "_" in p.written.lstrip("-"):
            continue
        if ctx.ignore_unknown(p.written, launch):
            continue
        guesses = suggestions(parsed.catalog, p.written)
        hint = f"; did you mean {guesses[0]}?" if guesses else ""
        fixes = []
        for k, g in enumerate(guesses):
            fixes += fix(f"Replace {p.written} with {g}",
                         rename_option(launch, p.token, p.written, p.span, g),
                         preferred=(k == 0 and len(guesses) == 1), safe=False)
        # Values after an unknown option are unrecognized with it.
        fixes += fix(f"Remove {p.written}", remove_tokens(launch, p.index, p.last_index), safe=False)
        yield Finding(
            code=CHECK.code, severity=CHECK.severity,
            message=(f"unrecognized arguments: {p.written} (SGLang {parsed.catalog.version} has no "
                     f"such option{hint})"),
            span=p.span or p.token.span, fixes=fixes)


CHECK = register(Check(
    code="SL001", name="unknown-option", severity=Severity.ERROR,
    title="Option not known to SGLang",
    what="Reports an option that SGLang's launch parser does not define, with the closest "
         "known spellings.",
    why="SGLang stops with `error: unrecognized arguments` before it starts, after the "
        "imports have already taken their time. Options that were renamed or removed in a "
        "release are the usual cause.",
    example="python -m sglang.launch_server --model-path m --enable-ep-moe",
    instead="python -m sglang.launch_server --model-path m --ep-size 8",
    fix_safety="The replacement with a close spelling changes which option is set, so it is "
               "offered as a quick fix but never applied by fix-all.",
    run=run,
))
