"""SL008 deprecated-option: an option SGLang still accepts but has retired."""

from __future__ import annotations

import re

from servelint.checks import Check, register
from servelint.model import Finding, Fix, Severity

_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


def replacement_words(catalog, replacement: str | None) -> list[str] | None:
    """The words that replace a deprecated option, when SGLang names them exactly
    (`--x`, `--x=v`, `--x-{a,b}=v`); None for prose such as `--attn-dp-size <dp-size>`."""
    if not replacement or "<" in replacement or " " in replacement.strip():
        return None
    words = [replacement.strip()]
    m = _BRACES.search(words[0])
    if m:
        words = [words[0][:m.start()] + alt + words[0][m.end():] for alt in m.group(1).split(",")]
    for w in words:
        name = w.split("=", 1)[0]
        if catalog.lookup(name) is None:
            return None
    return words


def run(parsed, ctx):
    launch = parsed.launch
    for use in parsed.uses:
        opt = use.option
        if not opt.deprecated or opt.removed:
            continue
        repl = opt.replacement
        advice = f" Use {repl} instead." if repl else ""
        fixes = []
        words = replacement_words(parsed.catalog, repl)
        if words is not None:
            edit = launch.host.replace_words(use.token, launch.tokens[use.last_index], words)
            if edit is not None:
                fixes.append(Fix(f"Replace with {' '.join(words)}", [edit], preferred=True,
                                 safe=True))
        yield Finding(
            CHECK.code, CHECK.severity,
            f"'{use.written}' is deprecated and will be removed in a future release.{advice}",
            use.name_span, fixes=fixes, deprecated=True)


CHECK = register(Check(
    code="SL008", name="deprecated-option", severity=Severity.WARNING,
    title="Deprecated option",
    what="Reports an option that SGLang marks as deprecated, with the replacement SGLang names.",
    why="SGLang still accepts it and prints a warning at start-up, but a later release removes "
        "it, and the launch then fails with `unrecognized arguments`.",
    example="python -m sglang.launch_server --model-path m --disable-cuda-graph",
    instead=("python -m sglang.launch_server --model-path m \\\n"
             "  --cuda-graph-backend-decode=disabled --cuda-graph-backend-prefill=disabled"),
    fix_safety="Safe where SGLang names an exact replacement (an option and its value): the "
               "replacement sets what the deprecated spelling set. No fix where the replacement "
               "needs a value only the author knows.",
    run=run,
))
