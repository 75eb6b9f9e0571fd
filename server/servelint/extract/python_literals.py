"""Python string literals read with their source positions (for the Python launch
extractor, `python_launch.py`).

- `PySource`: offsets into the source string from ast positions (1-based lines, UTF-8
  byte columns), with Python's own line breaks.
- `scan_literals` / `decode_literals`: the literals of one string expression (implicit
  concatenation, raw, triple quoted, f-strings) and its value decoded into a `Decoded`,
  a table from each value character to the source characters it comes from. `FIELD`
  stands for one f-string replacement field.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

# --- positions --------------------------------------------------------------------------


class PySource:
    """Offsets into the source string from ast positions (1-based lines, UTF-8 byte
    columns), with Python's own line breaks (\\r\\n, \\r, \\n)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        self.ascii = text.isascii()
        self._lines: dict[int, bytes] = {}

    def offset(self, lineno: int, col: int) -> int:
        if lineno - 1 >= len(self.starts):
            return len(self.text)
        start = self.starts[lineno - 1]
        if self.ascii:
            return start + col
        line = self._lines.get(lineno)
        if line is None:
            end = self.starts[lineno] if lineno < len(self.starts) else len(self.text)
            line = self.text[start:end].encode("utf-8")
            self._lines[lineno] = line
        return start + len(line[:col].decode("utf-8", errors="ignore"))

    def span(self, node) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),
                self.offset(node.end_lineno, node.end_col_offset))


# --- string literals ------------------------------------------------------------------------

_STR_START = re.compile(r"([rRbBuUfF]{0,2})('''|\"\"\"|'|\")")
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
                   "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
FIELD = "\ue000"  # stands for one f-string replacement field in a decoded value


@dataclass
class Lit:
    start: int  # the literal, prefix and quotes included
    end: int
    body_start: int
    body_end: int
    prefix: str
    quote: str


@dataclass
class Decoded:
    """A string's value with, for each character, the source range it comes from.
    A FIELD character stands for an f-string replacement field (its range is the field)."""

    chars: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    parts: list[Lit] = field(default_factory=list)
    fields: list[tuple[int, int]] = field(default_factory=list)

    @property
    def value(self) -> str:
        return "".join(self.chars)

    def add(self, c: str, s: int, e: int) -> None:
        self.chars.append(c)
        self.starts.append(s)
        self.ends.append(e)

    def span(self, a: int, b: int) -> tuple[int, int]:
        """Source range of value characters a..b-1."""
        return self.starts[a], self.ends[b - 1]

    @property
    def verbatim_lines(self) -> bool:
        """One triple-quoted \"\"\" literal without fields: the script's lines are the
        source's lines, and shell quoting with ' cannot end the literal."""
        return len(self.parts) == 1 and self.parts[0].quote == '"""' and not self.fields


def scan_literals(text: str, start: int, end: int) -> list[Lit] | None:
    """The string literals between start and end (implicit concatenation), or None."""
    out = []
    i = start
    while i < end:
        c = text[i]
        if c.isspace() or c in "\\()":
            i += 1
            continue
        if c == "#":
            nl = text.find("\n", i, end)
            i = end if nl < 0 else nl
            continue
        m = _STR_START.match(text, i)
        if not m:
            return None
        prefix = m.group(1).lower()
        q = m.group(2)
        if "b" in prefix:
            return None
        j = m.end()
        fstr = "f" in prefix
        depth = 0
        while True:
            if j >= len(text):
                return None
            ch = text[j]
            if depth == 0 and text.startswith(q, j):
                break
            if ch == "\\":
                j += 2
                continue
            if len(q) == 1 and ch in "\r\n" and depth == 0:
                return None
            if fstr:
                if ch == "{":
                    if depth == 0 and text.startswith("{{", j):
                        j += 2
                        continue
                    depth += 1
                elif ch == "}" and depth > 0:
                    depth -= 1
                elif depth > 0 and ch in "'\"":
                    k = _skip_string(text, j)
                    if k is None:
                        return None
                    j = k
                    continue
            j += 1
        out.append(Lit(i, j + len(q), m.end(), j, prefix, q))
        i = j + len(q)
    return out


def _skip_string(text: str, i: int) -> int | None:
    """End of the (nested, simple) string literal starting at i."""
    q = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else text[i]
    j = i + len(q)
    while j < len(text):
        if text.startswith(q, j):
            return j + len(q)
        if text[j] == "\\":
            j += 2
            continue
        j += 1
    return None


def _field_end(text: str, i: int, end: int) -> int:
    """End (after '}') of the replacement field starting with '{' at i."""
    depth = 0
    j = i
    while j < end:
        ch = text[j]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return j + 1
        elif ch in "'\"" and depth > 0:
            k = _skip_string(text, j)
            if k is None:
                return end
            j = k
            continue
        j += 1
    return end


def decode_literals(text: str, parts: list[Lit], out: Decoded | None = None) -> Decoded:
    out = out or Decoded()
    out.parts.extend(parts)
    for lit in parts:
        raw = "r" in lit.prefix
        fstr = "f" in lit.prefix
        i, end = lit.body_start, lit.body_end
        while i < end:
            c = text[i]
            if fstr and c in "{}":
                if text.startswith(c * 2, i):
                    out.add(c, i, i + 2)
                    i += 2
                    continue
                if c == "{":
                    j = _field_end(text, i, end)
                    out.fields.append((i, j))
                    out.add(FIELD, i, j)
                    i = j
                    continue
            if c == "\r":  # Python reads every line break in a literal as \n
                n = 2 if text.startswith("\r\n", i) else 1
                out.add("\n", i, i + n)
                i += n
                continue
            if c == "\\" and not raw and i + 1 < end:
                e = text[i + 1]
                if e == "\n":
                    i += 2
                    continue
                if e == "\r":
                    i += 3 if text.startswith("\r\n", i + 1) else 2
                    continue
                if e in _SIMPLE_ESCAPES:
                    out.add(_SIMPLE_ESCAPES[e], i, i + 2)
                    i += 2
                    continue
                if e in "01234567":
                    j = i + 1
                    while j < min(i + 4, end) and text[j] in "01234567":
                        j += 1
                    out.add(chr(int(text[i + 1:j], 8)), i, j)
                    i = j
                    continue
                width = {"x": 2, "u": 4, "U": 8}.get(e)
                if width:
                    digits = text[i + 2:i + 2 + width]
                    try:
                        out.add(chr(int(digits, 16)), i, i + 2 + width)
                    except (ValueError, OverflowError):
                        out.add("\\", i, i + 1)
                        i += 1
                        continue
                    i += 2 + width
                    continue
                if e == "N" and text.startswith("{", i + 2):
                    close = text.find("}", i + 3, end)
                    if close > 0:
                        try:
                            out.add(unicodedata.lookup(text[i + 3:close]), i, close + 1)
                            i = close + 1
                            continue
                        except KeyError:
                            pass
                out.add("\\", i, i + 1)  # an unknown escape keeps its backslash
                i += 1
                continue
            out.add(c, i, i + 1)
            i += 1
    return out

