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
    """One edit that turns `old` into `new`, covering only the part that differs (the
    common ends found by comparing blocks of text: a 20k-line document's fix-all costs
    about a millisecond here, not most of a second of comparing character by character)."""
    if old == new:
        return None
    start = common_prefix(old, new)
    same = common_suffix(old, new, min(len(old), len(new)) - start)
    return Edit(Span(start, len(old) - same), new[start:len(new) - same])


def common_prefix(a: str, b: str) -> int:
    """How many characters `a` and `b` share at the start (compared in growing blocks:
    string comparison, not a Python loop per character)."""
    limit = min(len(a), len(b))
    lo, step = 0, 64
    while lo < limit:  # find a differing block
        hi = min(lo + step, limit)
        if a[lo:hi] != b[lo:hi]:
            while hi - lo > 1:  # bisect inside it: a[lo:...] agrees up to the difference
                mid = (lo + hi) // 2
                if a[lo:mid] == b[lo:mid]:
                    lo = mid
                else:
                    hi = mid
            return lo
        lo = hi
        step *= 2
    return limit


def common_suffix(a: str, b: str, limit: int) -> int:
    """How many characters `a` and `b` share at the end, at most `limit`."""
    n, m = len(a), len(b)
    got, step = 0, 64
    while got < limit:
        want = min(got + step, limit)
        if a[n - want:n - got] != b[m - want:m - got]:
            lo, hi = got, want
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a[n - mid:n - lo] == b[m - mid:m - lo]:
                    lo = mid
                else:
                    hi = mid
            return lo
        got = want
        step *= 2
    return limit


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
