"""SL012 value-on-flag: `--flag=value` on an option that takes no value."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.fixes import fix, remove_use, rename_option
from servelint.model import Edit, Finding, Severity, Span

TRUE = {"true", "1", "yes", "on", "y"}
FALSE = {"false", "0", "no", "off", "n"}


def run(parsed, ctx):
    launch = parsed.launch
    for p in parsed.problems:
        if p.kind != "explicit_on_flag":
            continue
        opt = p.option
        value = p.detail
        if opt.removed:
            continue  # kept only to stop the launch: SL009 reports it
        fixes = []
        use = next((u for u in parsed.uses if u.index == p.index), None)
        low = value.lower()
        if use is not None and use.name_span != p.token.span:
            drop = Edit(Span(use.name_span.end, p.token.span.end), "")
            if low in TRUE:
                fixes.append(_one(f"Remove '={value}'", drop, True, True))
            elif low in FALSE:
                neg = "--no-" + opt.name[2:]
                if opt.kind == "bool_optional" and neg in opt.names:
                    fixes += fix(f"Use {neg}", rename_option(launch, p.token, p.token.text or "",
                                                             p.token.span, neg), preferred=True)
                else:
                    fixes += fix(f"Remove {p.written}={value}", remove_use(launch, use),
                                 preferred=True, safe=False)
        yield Finding(
            CHECK.code, CHECK.severity,
            f"argument {'/'.join(opt.names)}: ignored explicit argument {value!r} "
            f"({opt.name} takes no value: write it to turn the setting on, leave it out to keep it off)",
            p.token.span, fixes=fixes)


def _one(title, edit, preferred, safe):
    from servelint.model import Fix
    return Fix(title, [edit], preferred=preferred, safe=safe)


CHECK = register(Check(
    code="SL012", name="value-on-flag", severity=Severity.ERROR,
    title="Value given to an option that takes none",
    what="Reports `--flag=value` where the option is a switch that takes no value.",
    why="argparse stops with `ignored explicit argument`. `--trust-remote-code=true` reads "
        "naturally but is an error; `--enable-x=false` would not even mean what it says.",
    example="python -m sglang.launch_server --model-path m --trust-remote-code=true",
    instead="python -m sglang.launch_server --model-path m --trust-remote-code",
    fix_safety="Safe for a true-like value (the switch alone means true). For a false-like value "
               "the fix removes the switch (or uses its `--no-` form), offered but not applied by "
               "fix-all.",
    run=run,
))
