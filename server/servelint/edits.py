"""Edit algebra: choosing the safe fixes that can be applied together, applying edits to
a text, and the one edit between two texts. No lint here (engine.fix_all_text loops)."""

from __future__ import annotations

from servelint.model import Edit, Finding, Span


def fix_all_edits(findings: list[Finding], text: str | None = None,
                  fmt: str | None = None) -> list:
    """Every safe fix of a document, each applied whole or not at all, no two touching
    the same text. Earlier findings win a conflict.

    Given the document's `text` and format `fmt`, only fixes that leave the text parsing
    in its own syntax (servelint.fixcheck, issue 17): the fixes together are checked with
    one parse; only when together they break it is each fix checked, on top of the ones
    kept before it, and a fix that breaks the syntax is left out."""
    groups: list[list[Edit]] = []
    taken: list[Span] = []
    for f in findings:
        fixes = [x for x in f.fixes if x.safe]
        if not fixes:
            continue
        fx = next((x for x in fixes if x.preferred), fixes[0])
        spans = [e.span for e in fx.edits]
        if any(_clash(s, t) for s in spans for t in taken):
            continue
        taken.extend(spans)
        groups.append(list(fx.edits))
    chosen = [e for g in groups for e in g]
    if text is not None and fmt is not None and chosen:
        from servelint.fixcheck import breaks_syntax
        if breaks_syntax(fmt, text, apply_edits(text, chosen)) is not None:
            chosen = []
            for g in groups:
                if breaks_syntax(fmt, text, apply_edits(text, chosen + g)) is None:
                    chosen.extend(g)
    chosen.sort(key=lambda e: e.span.start)
    return chosen


def minimal_edit(old: str, new: str) -> Edit | None:
    """One edit that turns `old` into `new`, covering only the part that differs."""
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return Edit(Span(start, end_old), new[start:end_new])


def _clash(a: Span, b: Span) -> bool:
    if a.overlaps(b):
        return True
    # Two insertions at one place, or an insertion at the edge of a deletion.
    return a.start == b.start or (a.start == a.end and b.start <= a.start <= b.end) or (
        b.start == b.end and a.start <= b.start <= a.end)


def apply_edits(text: str, edits: list) -> str:
    out = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        if e.span.start < pos:
            continue
        out.append(text[pos:e.span.start])
        out.append(e.new_text)
        pos = e.span.end
    out.append(text[pos:])
    return "".join(out)
