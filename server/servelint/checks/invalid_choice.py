"""SL007 invalid-choice: a value outside the option's choices."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.fixes import fix
from servelint.model import Edit, Finding, Related, Severity
from servelint.successors import retired_value, table
from servelint.suggest import VALUES, close_matches
from servelint.valuetypes import CHECKS, convert


def run(parsed, ctx):
    launch = parsed.launch
    for use in parsed.uses:
        opt = use.option
        if not opt.choices or opt.removed:
            continue
        typecheck = CHECKS.get(opt.type or "")
        for v in use.values:
            if v.text is None or (typecheck and typecheck(v.text)):
                continue
            try:
                value = convert(opt.type, v.text)
            except ValueError:
                continue
            if value in opt.choices:
                continue
            shown = ", ".join(repr(c) for c in opt.choices)
            words = [str(c) for c in opt.choices]
            close = close_matches(v.text, words, cutoff=VALUES)
            lowered = [w for w in words if w.lower() == v.text.lower()]
            if lowered:
                close = lowered + [c for c in close if c not in lowered]
            hint = f"; did you mean {close[0]!r}?" if close else ""
            left = retired_value(opt.names, v.text, parsed.catalog)
            if left is not None:
                # A value of an earlier release: when it left, and its replacement only.
                close = [left["replacement"]] if left["replacement"] else []
                hint = f"; {_history(left, v.text, opt.name)}"
            fixes = []
            for k, c in enumerate(close):
                edit = _replace_value(launch, use, v, c)
                fixes += fix(f"Use {c!r}", edit, preferred=(k == 0), safe=False)
            yield Finding(
                CHECK.code, CHECK.severity,
                f"argument {'/'.join(opt.names)}: invalid choice: {v.text!r} (choose from {shown}){hint}",
                v.span, related=[Related(use.name_span, f"the value of {opt.name}")], fixes=fixes)


def _history(left: dict, value: str, name: str) -> str:
    """"'qwen3' was accepted until SGLang 0.4.9.post3; SGLang 0.4.9.post4 renamed it
    'qwen3_coder'"."""
    versions = table()["versions"]
    after = versions[versions.index(left["last"]) + 1] if left["last"] in versions[:-1] else None
    text = f"{value!r} was accepted by {name} until SGLang {left['last']}"
    if left["replacement"]:
        text += (f"; SGLang {after} renamed it {left['replacement']!r}" if after
                 else f"; its replacement is {left['replacement']!r}")
    else:
        text += ", and no value replaced it"
    return text


def _replace_value(launch, use, v, new):
    if use.explicit and v.span != v.token.span:
        return Edit(v.span, launch.host.quote(new) or new) if launch.host.quote(new) else None
    return launch.host.replace(v.token, new) if not use.explicit else None


CHECK = register(Check(
    code="SL007", name="invalid-choice", severity=Severity.ERROR,
    title="Value not among the option's choices",
    what="Reports a value that is not one of the values the option accepts, and suggests the "
         "closest ones. A value that an earlier release accepted says until which release, "
         "and what replaced it where SGLang's own text or a rename in the same release shows "
         "it (`--tool-call-parser qwen3` became `qwen3_coder` in 0.4.9.post4).",
    why="argparse stops with `invalid choice` and a list of what it accepts. Backend names are "
        "easy to misspell (`flashinfer` vs `flash_infer`, `fa3` vs `fa-3`), and choices change "
        "between releases.",
    example="python -m sglang.launch_server --model-path m --attention-backend flash_infer",
    instead="python -m sglang.launch_server --model-path m --attention-backend flashinfer",
    fix_safety="The closest choice is offered as a quick fix, never applied by fix-all: a "
               "different backend is a different deployment.",
    run=run,
))
