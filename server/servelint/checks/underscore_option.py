"""SL002 underscore-option: `--tp_size` written for `--tp-size`."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.fixes import fix, rename_option
from servelint.model import Finding, Severity


def run(parsed, ctx):
    launch = parsed.launch
    cat = parsed.catalog
    for p in parsed.problems:
        if p.kind != "unknown" or "_" not in p.written.lstrip("-"):
            continue
        dashed = p.written[:2] + p.written[2:].replace("_", "-")
        opt = cat.lookup(dashed)
        target = dashed
        if opt is None:
            matches = cat.prefix_matches(dashed)
            if len(matches) == 1:
                target = matches[0]
                opt = cat.lookup(target)
        if opt is None:
            from servelint.checks.unknown_option import suggestions
            guesses = suggestions(cat, dashed)
            hint = f"; did you mean {guesses[0]}?" if guesses else ""
            fixes = fix(f"Replace {p.written} with {guesses[0]}",
                        rename_option(launch, p.token, p.written, p.span, guesses[0]),
                        preferred=True, safe=False) if len(guesses) == 1 else []
            yield Finding(CHECK.code, CHECK.severity,
                          f"unrecognized arguments: {p.written} (SGLang options are spelled with "
                          f"dashes, and {dashed} is not one either{hint})",
                          p.span or p.token.span, fixes=fixes)
            continue
        yield Finding(
            CHECK.code, CHECK.severity,
            f"unrecognized arguments: {p.written} (SGLang spells it {target})",
            p.span or p.token.span,
            fixes=fix(f"Replace {p.written} with {target}",
                      rename_option(launch, p.token, p.written, p.span, target), preferred=True))


CHECK = register(Check(
    code="SL002", name="underscore-option", severity=Severity.ERROR,
    title="Option written with underscores",
    what="Reports an option written with underscores (`--tp_size`) where SGLang's option is "
         "spelled with dashes (`--tp-size`).",
    why="argparse matches option strings exactly, so the underscore spelling is "
        "`unrecognized`. The Python field name (`tp_size`) is valid in SGLang's `--config` "
        "YAML and as an `Engine(...)` keyword, which is where the habit comes from.",
    example="python -m sglang.launch_server --model-path m --tp_size 2",
    instead="python -m sglang.launch_server --model-path m --tp-size 2",
    fix_safety="Safe: the dashed spelling is the option the underscore spelling names.",
    run=run,
))
