"""SL008 deprecated-option: an option SGLang still accepts but has retired."""

from __future__ import annotations

import re

from servelint.checks import Check, register
from servelint.fixes import rename_option
from servelint.lazy import LazyPattern
from servelint.model import Finding, Fix, Severity
from servelint.successors import Retired, deprecation, plan

_BRACES = LazyPattern(r"\{([^{}]*,[^{}]*)\}")


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
            new = parsed.catalog.lookup(words[0])
            if (opt.takes_value and len(words) == 1 and "=" not in words[0]
                    and new is not None and new.kind == opt.kind):
                # An alias of a value option: the new name takes the same value(s).
                edit = rename_option(launch, use.token, use.written, use.name_span, words[0])
            else:
                edit = launch.host.replace_words(use.token, launch.tokens[use.last_index], words)
            if edit is not None:
                fixes.append(Fix(f"Replace with {' '.join(words)}", [edit], preferred=True,
                                 safe=True))
        since = ""
        record = deprecation(use.written, parsed.catalog) or deprecation(use.matched, parsed.catalog)
        if record is not None:
            if record.get("deprecated"):
                since = f" since SGLang {record['deprecated']}"
            if not fixes and record.get("successor"):
                fixes += _successor_fix(parsed, use, record)
        yield Finding(
            CHECK.code, CHECK.severity,
            f"'{use.written}' is deprecated{since} and will be removed in a future release.{advice}",
            use.name_span, fixes=fixes, deprecated=True)


def _successor_fix(parsed, use, record) -> list[Fix]:
    """The successor the deprecation text names, when SGLang's `replacement` is prose: a
    judgement (unsafe), offered only when the words are valid in the launch's release."""
    from servelint.checks.removed_option import value_of
    info = Retired(use.written, record["kind"], None, parsed.catalog.version,
                   record.get("deprecated"), record["successor"], record.get("evidence"))
    values = [v.text for v in use.values]
    the_plan = plan(info, parsed.catalog, values, value_of(parsed))
    if not the_plan.fixable or not the_plan.words:
        return []
    launch = parsed.launch
    edit = launch.host.replace_words(use.token, launch.tokens[use.last_index], the_plan.words)
    if edit is None:
        return []
    return [Fix(f"Replace with {' '.join(the_plan.words)}", [edit], preferred=True, safe=False)]


CHECK = register(Check(
    code="SL008", name="deprecated-option", severity=Severity.WARNING,
    title="Deprecated option",
    what="Reports an option that SGLang marks as deprecated, with the replacement SGLang names "
         "and the first release that called it deprecated.",
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
