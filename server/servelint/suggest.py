"""The one "did you mean" of servelint: option names, choice values, Python keywords,
configuration keys and rule codes are all suggested by `close_matches`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

from servelint.lazy import LazyModule

if TYPE_CHECKING:
    import difflib
else:
    difflib = LazyModule("difflib")  # imported when a suggestion is first looked for

# How alike a suggestion must be (difflib's ratio): close for names a person typed from
# memory, looser for choice values, where the list is short and known.
NAMES = 0.75
VALUES = 0.6


def close_matches(word: str, candidates: Iterable[str], n: int = 3,
                  cutoff: float = NAMES) -> list[str]:
    """Up to `n` candidates most like `word`, best first; none below `cutoff`.

    A rule code (`SL02`, `ACME-7`: capital letters, then digits) is matched as a code
    (`close_codes`): by its letters and the number its digits make, not as a string."""
    pool = list(candidates)
    if _code(word) is not None and any(_code(c) is not None for c in pool):
        return close_codes(word, pool, n, cutoff)
    return difflib.get_close_matches(word, pool, n=n, cutoff=cutoff)


_CODE = re.compile(r"([A-Z]+)-?([0-9]+)")


def _code(text: str) -> tuple[str, str] | None:
    """A rule code's letters and digits (`ACME-7`: ACME, 7), or None."""
    m = _CODE.fullmatch(text)
    return (m[1], m[2]) if m else None


def close_codes(word: str, candidates: Iterable[str], n: int = 3,
                cutoff: float = VALUES) -> list[str]:
    """Up to `n` rule codes `word` may stand for, best first. With the same letters: the
    same number written with more or fewer leading zeros (SL2, SL02 and SL0002 for SL002),
    then the codes `word` begins (SL020 for SL02, the prefix a selector names), then one
    digit added, dropped, changed or two swapped (SL012, SL020 for SL002), nearest number
    first. Then one letter off with the same digits (SK002). Only after those, codes alike
    as strings (difflib's ratio, at least `cutoff`), the nearest number first among equals,
    so that SL02 is not read as SL802."""
    parts = _code(word)
    pool = [c for c in dict.fromkeys(candidates)]
    if parts is None:
        return difflib.get_close_matches(word, pool, n=n, cutoff=cutoff)
    letters, digits = parts
    number = int(digits)
    ranked: list[tuple[tuple, str]] = []
    rest: list[str] = []
    for cand in pool:
        other = _code(cand)
        if other is None:
            rest.append(cand)
            continue
        cl, cd = other
        gap = abs(int(cd) - number)
        if cl == letters:
            if int(cd) == number:
                tier = 0
            elif cd.startswith(digits):
                tier, gap = 1, int(cd)
            elif min(edit_distance(digits, cd), edit_distance(digits.zfill(len(cd)), cd)) <= 1:
                tier = 2
            else:
                rest.append(cand)
                continue
        elif int(cd) == number and edit_distance(letters, cl) <= 1:
            tier = 3
        else:
            rest.append(cand)
            continue
        ranked.append(((tier, gap, cand), cand))
    ranked.sort()
    out = [cand for _, cand in ranked[:n]]
    if len(out) < n and rest:
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(word)
        alike = []
        for cand in rest:
            matcher.set_seq1(cand)
            if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
                ratio = matcher.ratio()
                if ratio >= cutoff:
                    other = _code(cand)
                    gap = abs(int(other[1]) - number) if other else 1 << 62
                    alike.append((-ratio, other is None or other[0] != letters, gap, cand))
        alike.sort()
        out += [cand for *_, cand in alike[:n - len(out)]]
    return out


def edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def _words(option: str) -> list[str]:
    return [w for w in option.lstrip("-").split("-") if w]


def same_feature(written: str, candidate: str) -> bool:
    """Whether option string `candidate` can be what `written` meant: the two differ only
    inside the words where they differ, by a typo (a few edits, two words run together)
    or by a shortened word (`--mem-frac-static`), never by a word more or less
    (`--cuda-graph-bs`, `--cuda-graph-max-bs`) nor by a different word that merely shares
    the rest of the name (`--enable-ep-moe`, `--enable-eplb`; `--tensor-paralel-size`,
    `--expert-parallel-size`)."""
    a, b = _words(written), _words(candidate)
    while a and b and a[0] == b[0]:
        a, b = a[1:], b[1:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    if not a or not b:
        return not a and not b
    if len(a) == len(b) and all(len(x) >= 3 and y.startswith(x) for x, y in zip(a, b)):
        return True  # shortened words
    x, y = "".join(a), "".join(b)
    limit = max(1, min(len(x), len(y)) // 4)
    if abs(len(x) - len(y)) > limit:
        return False  # no fewer edits than the difference in length
    return edit_distance(x, y) <= limit


def close_options(written: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` option strings that `written` may be a misspelling of (`same_feature`),
    most alike first."""
    same = [c for c in candidates if same_feature(written, c)]
    return difflib.get_close_matches(written, same, n=n, cutoff=0.5)
