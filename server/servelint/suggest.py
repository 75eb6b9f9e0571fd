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
