"""The one "did you mean" of servelint: option names, choice values, Python keywords,
configuration keys and rule codes are all suggested by `close_matches`."""

from __future__ import annotations

import difflib
from typing import Iterable

# How alike a suggestion must be (difflib's ratio): close for names a person typed from
# memory, looser for choice values, where the list is short and known.
NAMES = 0.75
VALUES = 0.6


def close_matches(word: str, candidates: Iterable[str], n: int = 3,
                  cutoff: float = NAMES) -> list[str]:
    """Up to `n` candidates most like `word`, best first; none below `cutoff`."""
    return difflib.get_close_matches(word, list(candidates), n=n, cutoff=cutoff)


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
    return edit_distance(x, y) <= max(1, min(len(x), len(y)) // 4)


def close_options(written: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` option strings that `written` may be a misspelling of (`same_feature`),
    most alike first."""
    same = [c for c in candidates if same_feature(written, c)]
    return difflib.get_close_matches(written, same, n=n, cutoff=0.5)
