"""How docker compose reads a `command`/`entrypoint` string: variable interpolation
(`$VAR`, `${VAR:-x}`; `$$` is a `$`) and the split into words (quotes and backslashes, no
shell), each word with where it is written in the string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMPOSE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def compose_interpolations(s: str) -> list[tuple[int, int]]:
    """Where compose substitutes variables in `s` ([start, end) pairs), `$$` excluded."""
    out = []
    i = 0
    while i < len(s):
        if s[i] != "$":
            i += 1
            continue
        if s.startswith("$$", i):
            i += 2
            continue
        if s.startswith("${", i):
            depth = 0
            j = i + 1
            while j < len(s):
                if s[j] == "{":
                    depth += 1
                elif s[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            out.append((i, min(j + 1, len(s))))
            i = j + 1
            continue
        m = _COMPOSE_NAME.match(s, i + 1)
        if m:
            out.append((i, m.end()))
            i = m.end()
            continue
        i += 1
    return out


def compose_value(s: str) -> tuple[str | None, str]:
    if "$" not in s:
        return s, ""
    spans = compose_interpolations(s)
    head = s[:spans[0][0]] if spans else s
    head = head.replace("$$", "$")
    return (None, head) if spans else (head, "")



@dataclass
class Word:
    chars: list[tuple[str, int]]  # (character of the value, index in the string)
    start: int  # [start, end): where the word is written in the string, quotes included
    end: int
    unknown: bool = False
    prefix: str = ""
    splat: bool = False

    @property
    def text(self) -> str | None:
        return None if self.unknown else "".join(c for c, _ in self.chars)


def compose_words(s: str) -> list[Word]:
    """Split a compose `command`/`entrypoint` string into words. Compose first
    substitutes variables (`$$` is a `$`), then splits like a shell without running
    one: quotes and backslashes; `;`, `&`, `|`, `<`, `>` end what is read (the rest
    becomes one unknown stretch). A word holding a substitution is unknown; an unquoted
    word that is only a substitution may become any number of words."""
    interp = compose_interpolations(s) if "$" in s else []
    # (character, index, unknown?) after interpolation
    seq: list[tuple[str, int, bool]] = []
    k = 0
    spans = iter(interp)
    nxt = next(spans, None)
    while k < len(s):
        if nxt is not None and k == nxt[0]:
            for j in range(nxt[0], nxt[1]):
                seq.append((s[j], j, True))
            k = nxt[1]
            nxt = next(spans, None)
            continue
        if s.startswith("$$", k):
            seq.append(("$", k, False))
            k += 2
            continue
        seq.append((s[k], k, False))
        k += 1
    words: list[Word] = []
    i, n = 0, len(seq)

    def idx(p: int) -> int:
        return seq[p][1] if p < n else len(s)

    while i < n:
        while i < n and seq[i][0] in " \t\r\n" and not seq[i][2]:
            i += 1
        if i >= n:
            break
        begin = i
        w = Word([], idx(i), idx(i))
        quoted = False
        only_interp = True
        stop = False
        while i < n and not (seq[i][0] in " \t\r\n" and not seq[i][2]):
            c, at, unk = seq[i]
            if unk:
                if not w.unknown:
                    w.unknown, w.prefix = True, "".join(x for x, _ in w.chars)
                w.chars.append((c, at))
                i += 1
                continue
            only_interp = False
            if c == "'":
                quoted = True
                i += 1
                while i < n and seq[i][0] != "'":
                    if seq[i][2] and not w.unknown:
                        w.unknown, w.prefix = True, "".join(x for x, _ in w.chars)
                    w.chars.append(seq[i][:2])
                    i += 1
                i += 1
            elif c == '"':
                quoted = True
                i += 1
                while i < n and seq[i][0] != '"':
                    if seq[i][0] == "\\" and i + 1 < n and not seq[i][2]:
                        i += 1
                    if seq[i][2] and not w.unknown:
                        w.unknown, w.prefix = True, "".join(x for x, _ in w.chars)
                    w.chars.append(seq[i][:2])
                    i += 1
                i += 1
            elif c == "\\" and i + 1 < n:
                w.chars.append(seq[i + 1][:2])
                i += 2
            elif c in ";&|<>":
                stop = True
                break
            else:
                w.chars.append((c, at))
                i += 1
        if i > begin:
            w.end = idx(min(i, n)) if i < n else len(s)
            w.splat = w.unknown and only_interp and not quoted
            words.append(w)
        if stop:
            words.append(Word([], idx(i), len(s), unknown=True, splat=True))
            break
    return words
