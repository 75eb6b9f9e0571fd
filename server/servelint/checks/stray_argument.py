"""SL013 stray-argument: a word no option takes."""

from __future__ import annotations

import re

from servelint.checks import Check, register
from servelint.checks.value_on_flag import FALSE, TRUE
from servelint.fixes import fix, remove_tokens
from servelint.lazy import LazyPattern
from servelint.model import Edit, Finding, Fix, Related, Severity, Span

_STAR = LazyPattern(r'^"\$\{([A-Za-z_][A-Za-z0-9_]*)\[\*\]\}"$')


def run(parsed, ctx):
    launch = parsed.launch
    by_last = {u.last_index: u for u in parsed.uses}
    for p in parsed.problems:
        if p.kind != "stray":
            continue
        word = p.written
        prev = by_last.get(p.index - 1)
        related = []
        fixes = []
        if p.token.raw.startswith("\\") and not word.strip():
            text = launch.host.text
            end = text.find("\n", p.token.span.start)
            end = len(text) if end == -1 else end
            msg = ("unrecognized arguments: ' ' (a backslash followed by a space escapes the space "
                   "instead of continuing the line; the rest of the line and the lines after it "
                   "are not part of this launch)")
            if launch.host.name == "shell" and not launch.host.quote_context:
                fixes.append(Fix("Make it a line continuation",
                                 [Edit(Span(p.token.span.start, end), "\\")], preferred=True, safe=False))
        elif prev is not None and prev.option.is_boolean:
            msg = (f"unrecognized arguments: {word} ({prev.written} takes no value, so "
                   f"{word!r} is left over)")
            related.append(Related(prev.name_span, f"{prev.written} is a switch"))
            low = word.lower()
            if low in TRUE:
                fixes += fix(f"Remove {word!r}", remove_tokens(launch, p.index, p.index), preferred=True)
            elif low in FALSE:
                fixes += fix(f"Remove {prev.written} {word}", remove_tokens(launch, prev.index, p.index),
                             preferred=True, safe=False)
        elif (star := _STAR.match(p.token.raw)) is not None and launch.host.name == "shell":
            # `"${A[*]}"` is the array's words joined into one.
            name = star.group(1)
            msg = (f"unrecognized arguments: {word} (\"${{{name}[*]}}\" joins the array's words "
                   f"into one word; \"${{{name}[@]}}\" passes each as its own word)")
            fixes += fix(f"Write \"${{{name}[@]}}\"",
                         Edit(p.token.span, f'"${{{name}[@]}}"'), preferred=True, safe=False)
        else:
            where = " after --" if p.detail == "after --" else ""
            msg = f"unrecognized arguments: {word} (no option takes this word{where})"
            last = max(p.index, p.last_index)  # a word the shell split (`“my model”`) is several
            fixes += fix(f"Remove {word!r}", remove_tokens(launch, p.index, last), safe=False)
        yield Finding(CHECK.code, CHECK.severity, msg, p.token.span, related=related, fixes=fixes)


CHECK = register(Check(
    code="SL013", name="stray-argument", severity=Severity.ERROR,
    title="Word that no option takes",
    what="Reports a word in a launch that is neither an option nor the value of one.",
    why="argparse stops with `unrecognized arguments`. The usual causes are a value after a "
        "switch (`--trust-remote-code true`), a value with a space in it that lost its quotes, "
        "and a backslash followed by a space at the end of a line.",
    example="python -m sglang.launch_server --model-path m --trust-remote-code true",
    instead="python -m sglang.launch_server --model-path m --trust-remote-code",
    fix_safety="Removing `true` after a switch is safe. Other removals are offered as quick fixes "
               "only.",
    run=run,
))
