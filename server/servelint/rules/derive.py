"""A condition and fixes for a record that has none, derived from its exampleFix.

The exampleFix of a record reads

    # before
    --prefill-only-disable-kv-cache --enable-hisparse
    # after
    --prefill-only-disable-kv-cache

The options of the `# before` line, all written (and, for options with a value, with
that value), are the condition. The difference to the `# after` line is the preferred
fix: an option that disappears is removed, one that appears is added, one whose value
changes is set. When the condition is only options being written, removing each other
option of the `# before` line is offered as an alternative quick fix (not preferred, not
applied by fix-all): "remove the other flag" is the other way out of a conflict.

Lines may start with the entrypoint (`python -m sglang.launch_server ...`); a
backslash at the end of a line continues it. Anything the reader cannot read as options
(an unknown option, a stray word) makes the derivation fail with a message naming it.
"""

from __future__ import annotations

import re
import shlex

from servelint.args import Reader
from servelint.catalog import Catalog
from servelint.model import Launch, LineIndex, Span, Token
from servelint.rules.condition import All, Compare, ConditionError, Present


def _sections(text: str) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        stripped = line.strip()
        low = stripped.lower()
        if low.startswith("#") and low.lstrip("# ").rstrip(":") in ("before", "after"):
            current = low.lstrip("# ").rstrip(":")
            out[current] = []
            continue
        if current and stripped and not stripped.startswith("#"):
            out[current].append(stripped[:-1] if stripped.endswith("\\") else stripped)
    return {k: " ".join(v) for k, v in out.items()}


_TAG = re.compile(r"^\[(?:gpu|env|model|model-type)=[^\]]+\]\s+")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def example_fix_args(rec: dict) -> tuple[str, str] | None:
    """The argument lists (after the entrypoint) of a record's exampleFix "# before" and
    "# after" lines, or None when it has not both. What settles a dependent rule comes
    first, as in examples.dependent: `[gpu=..]`/`[model=..]`/`[model-type=..]` tags as
    written, and a shell assignment before the command (`SGLANG_X=1 python -m ...`) as
    `[env=SGLANG_X=1]`."""
    sections = _sections(rec.get("exampleFix") or "")
    if "before" not in sections or "after" not in sections:
        return None
    out = []
    for label in ("before", "after"):
        text = sections[label]
        tags = []
        while (m := _TAG.match(text)):
            tags.append(m.group(0).strip())
            text = text[m.end():]
        try:
            words = shlex.split(text)
        except ValueError:
            return None
        for i, w in enumerate(words):
            if w in ("sglang.launch_server", "sglang_router.launch_server", "serve"):
                tags += [f"[env={a}]" for a in words[:i] if _ASSIGN.match(a)]
                words = words[i + 1:]
                break
        out.append(" ".join(tags + [shlex.join(words)]))
    return out[0], out[1]


def read_args(text: str, catalog: Catalog, label: str):
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ConditionError(f"exampleFix: cannot split the {label} line: {exc}") from None
    for i, w in enumerate(words):
        if w in ("sglang.launch_server", "sglang_router.launch_server", "serve"):
            words = words[i + 1:]
            break
    from servelint.extract.common import ReadOnlyHost
    tokens = [Token(Span(0, 0), w, raw=w) for w in words]
    host = ReadOnlyHost(text, LineIndex(text), "rule-example")  # words with no document to edit
    launch = Launch("launch_server", Token(Span(0, 0), "sglang.launch_server"), tokens, host, Span(0, 0))
    parsed = Reader(catalog).read(launch)
    bad = parsed.problems
    if bad:
        p = bad[0]
        raise ConditionError(f"exampleFix: the {label} line has {p.kind.replace('_', ' ')} "
                             f"{p.written or p.token.text!r}")
    state = {}
    for use in parsed.uses:
        state[use.option.dest] = (use.option, use.written, [v.text for v in use.values],
                                  use.matched)
    return state


def _typed(opt, texts):
    from servelint.valuetypes import convert
    vals = []
    for t in texts:
        try:
            vals.append(convert(opt.type, t))
        except ValueError:
            vals.append(t)
    if opt.kind == "list":
        return vals
    return vals[0] if vals else None


def derive(rec: dict, catalog: Catalog):
    from servelint.rules import FixEdit, RuleFix

    fix_text = rec.get("exampleFix") or ""
    sections = _sections(fix_text)
    if "before" not in sections or "after" not in sections:
        raise ConditionError("exampleFix: expected a '# before' line and an '# after' line")
    before = read_args(sections["before"], catalog, "before")
    after = read_args(sections["after"], catalog, "after")
    if not before:
        raise ConditionError("exampleFix: the before line names no option")
    items: list[Compare | Present] = []
    for dest, (opt, written, values, matched) in before.items():
        name = opt.name
        if opt.kind == "bool_optional":
            items.append(Compare(opt, name, "eq", not matched.startswith("--no-")))
        elif values:
            items.append(Compare(opt, name, "eq", _typed(opt, values)))
        else:
            items.append(Present(opt, name))
    condition = All(tuple(items))
    edits = []
    for dest, (opt, _, values, _) in before.items():
        if dest not in after:
            edits.append(FixEdit("remove", opt, opt.name))
    for dest, (opt, _, values, _) in after.items():
        if dest not in before:
            edits.append(FixEdit("add", opt, opt.name, _typed(opt, values) if values else None))
        elif before[dest][2] != values:
            edits.append(FixEdit("set", opt, opt.name, _typed(opt, values)))
    if not edits:
        raise ConditionError("exampleFix: the before and after lines set the same options")
    from servelint.rules import _edit_title
    fixes = [RuleFix("; ".join(_edit_title(e) for e in edits), tuple(edits), preferred=True, safe=True)]
    removed = {e.option.dest for e in edits if e.op == "remove"}
    if all(isinstance(c, Present) for c in items):
        for c in items:
            if c.option.dest not in removed:
                fixes.append(RuleFix(f"Remove {c.option.name}",
                                     (FixEdit("remove", c.option, c.option.name),), False, False))
    return condition, fixes
