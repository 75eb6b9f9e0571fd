"""YAML scalars decoded with a position table.

`decode(text, start, end, value)` reads the scalar written at `text[start:end]` (the
marks PyYAML/libyaml report for it, tag and anchor included) the way PyYAML's scanner
does, and returns its value together with `table`: `table[i]` is the document offset
of the value's character `i`, plus one last entry for the end. Each character maps to
where it is written:

- a character written as itself maps to itself;
- an escape (`\\t`, `\\"`, `\\x41`, `''`) maps to its first character;
- a space made by folding a line break maps to the end of the text before the break
  (so a word that ends a line ends where it is written, not at the next line);
- a line break kept in the value maps to the line break in the document.

The decoded value is always compared with the value the YAML parser produced; when the
two differ (a construct this module does not model), `decode` returns a result with
`exact=False` and no table, and callers put everything found in that scalar on the
whole scalar rather than on a guessed position.

Offsets are code points into `text` (the document), as everywhere in servelint.
"""

from __future__ import annotations

from dataclasses import dataclass

BREAKS = "\r\n\x85\u2028\u2029"
_TABLES: list[dict] = []  # PyYAML's scanner's escape tables, read on first use


def _escape_tables() -> tuple[dict, dict]:
    """The double-quoted escapes as PyYAML's scanner reads them (`\\n`, `\\x41`), taken
    from PyYAML itself the first time a quoted scalar with an escape is decoded."""
    if not _TABLES:
        from yaml.scanner import Scanner
        _TABLES[:] = [dict(Scanner.ESCAPE_REPLACEMENTS), dict(Scanner.ESCAPE_CODES)]
    return _TABLES[0], _TABLES[1]
_HEX = set("0123456789abcdefABCDEF")


class _Fail(Exception):
    pass


@dataclass
class Decoded:
    value: str
    table: list[int] | None  # None when not exact
    style: str  # "plain", "'", '"', "|", ">"
    start: int  # where the scalar itself starts (after any tag/anchor), quotes included
    end: int  # end of the scalar as written (after the closing quote / last content)
    exact: bool = True

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end

    def offset(self, i: int) -> int:
        """Document offset of value character i (i == len(value): the end)."""
        assert self.table is not None
        if i < len(self.table):
            return self.table[i]
        return self.table[-1]


class _Out:
    __slots__ = ("chars", "offs")

    def __init__(self):
        self.chars: list[str] = []
        self.offs: list[int] = []

    def add(self, s: str, off: int) -> None:
        for c in s:
            self.chars.append(c)
            self.offs.append(off)

    def run(self, text: str, i: int, j: int) -> None:
        self.chars.extend(text[i:j])
        self.offs.extend(range(i, j))


def _peek(t: str, i: int) -> str:
    return t[i] if i < len(t) else "\0"


def _line_break(t: str, i: int) -> tuple[str, int]:
    """PyYAML's scan_line_break: (normalised break, index after it), or ('', i)."""
    c = _peek(t, i)
    if c in "\r\n\x85":
        if t[i:i + 2] == "\r\n":
            return "\n", i + 2
        return "\n", i + 1
    if c in "\u2028\u2029":
        return c, i + 1
    return "", i


def skip_properties(t: str, i: int, end: int) -> int:
    """Skip a tag (`!!str`, `!x`, `!<...>`) and an anchor (`&a`) before a node."""
    while i < end and t[i] in "!&":
        if t.startswith("!<", i):
            j = t.find(">", i)
            i = end if j == -1 else j + 1
        else:
            while i < end and t[i] not in " \t" + BREAKS:
                i += 1
        while i < end:
            c = t[i]
            if c in " \t" or c in BREAKS:
                i += 1
            elif c == "#":
                while i < end and t[i] not in BREAKS:
                    i += 1
            else:
                break
    return i


# --- plain ------------------------------------------------------------------------------


def _plain(t: str, start: int, end: int) -> tuple[_Out, int]:
    out = _Out()
    i = start
    pending: list[tuple[str, int]] = []
    while i < end:
        j = i
        while j < end and t[j] not in " \t" and t[j] not in BREAKS:
            j += 1
        if j == i:
            raise _Fail("plain: empty chunk")
        for c, o in pending:
            out.add(c, o)
        pending = []
        out.run(t, i, j)
        i = j
        if i >= end:
            break
        k = i
        while _peek(t, k) == " ":
            k += 1
        if _peek(t, k) in BREAKS:
            ws = i
            lb, k = _line_break(t, k)
            breaks: list[tuple[str, int]] = []
            while _peek(t, k) == " " or _peek(t, k) in BREAKS:
                if t[k] == " ":
                    k += 1
                else:
                    b, k2 = _line_break(t, k)
                    breaks.append((b, k))
                    k = k2
            if lb != "\n":
                pending.append((lb, ws))
            elif not breaks:
                pending.append((" ", ws))
            pending.extend(breaks)
        elif k > i:
            pending = [(" ", p) for p in range(i, k)]
        else:
            raise _Fail("plain: unexpected character")
        i = k
    return out, end


# --- quoted ---------------------------------------------------------------------------


def _flow_breaks(t: str, k: int, out: _Out) -> int:
    while True:
        if t.startswith(("---", "..."), k) and _peek(t, k + 3) in "\0 \t" + BREAKS:
            col_start = k == 0 or t[k - 1] in BREAKS
            if col_start:
                raise _Fail("document marker inside a quoted scalar")
        while _peek(t, k) in " \t":
            k += 1
        if _peek(t, k) in BREAKS:
            b, k2 = _line_break(t, k)
            out.add(b, k)
            k = k2
        else:
            return k


def _quoted(t: str, start: int, end: int) -> tuple[_Out, int]:
    q = t[start]
    double = q == '"'
    out = _Out()
    i = start + 1
    n = len(t)
    stop = "'\"\\\0 \t" + BREAKS
    while True:
        # non-spaces
        while True:
            j = i
            while j < n and t[j] not in stop:
                j += 1
            if j > i:
                out.run(t, i, j)
                i = j
            c = _peek(t, i)
            if not double and c == "'" and _peek(t, i + 1) == "'":
                out.add("'", i)
                i += 2
            elif (double and c == "'") or (not double and c in '"\\'):
                out.add(c, i)
                i += 1
            elif double and c == "\\":
                c2 = _peek(t, i + 1)
                _ESCAPES, _CODES = _escape_tables()
                if c2 in _ESCAPES:
                    out.add(_ESCAPES[c2], i)
                    i += 2
                elif c2 in _CODES:
                    length = _CODES[c2]
                    digits = t[i + 2:i + 2 + length]
                    if len(digits) != length or any(d not in _HEX for d in digits):
                        raise _Fail("bad escape")
                    out.add(chr(int(digits, 16)), i)
                    i += 2 + length
                elif c2 in BREAKS:
                    _, k = _line_break(t, i + 1)
                    i = _flow_breaks(t, k, out)
                else:
                    raise _Fail("unknown escape")
            else:
                break
        c = _peek(t, i)
        if c == q:
            break
        if c == "\0" and i >= n:
            raise _Fail("unterminated")
        # spaces
        k = i
        while _peek(t, k) in " \t":
            k += 1
        c = _peek(t, k)
        if k >= n:
            raise _Fail("unterminated")
        if c in BREAKS:
            lb, k2 = _line_break(t, k)
            mark = len(out.chars)
            k3 = _flow_breaks(t, k2, out)
            breaks_added = len(out.chars) > mark
            if lb != "\n":
                out.chars.insert(mark, lb)
                out.offs.insert(mark, i)
            elif not breaks_added:
                out.add(" ", i)
            i = k3
        else:
            out.run(t, i, k)
            i = k
    if i + 1 != end:
        raise _Fail("quoted scalar does not end at its mark")
    return out, i


# --- block ----------------------------------------------------------------------------


def _block_header(t: str, start: int) -> tuple[bool, bool | None, int | None, int]:
    folded = t[start] == ">"
    i = start + 1
    chomping: bool | None = None
    increment: int | None = None
    c = _peek(t, i)
    if c in "+-":
        chomping = c == "+"
        i += 1
        if _peek(t, i) in "123456789":
            increment = int(t[i])
            i += 1
    elif c in "123456789":
        increment = int(c)
        i += 1
        if _peek(t, i) in "+-":
            chomping = t[i] == "+"
            i += 1
    while _peek(t, i) == " ":
        i += 1
    if _peek(t, i) == "#":
        while _peek(t, i) not in "\0" + BREAKS:
            i += 1
    if _peek(t, i) not in "\0" + BREAKS:
        raise _Fail("block header")
    _, i = _line_break(t, i)
    return folded, chomping, increment, i


def _column(t: str, i: int) -> int:
    j = i
    while j > 0 and t[j - 1] not in BREAKS:
        j -= 1
    return i - j


class _Cursor:
    """A position in the text with PyYAML's notion of a column."""

    __slots__ = ("t", "i", "col")

    def __init__(self, t: str, i: int, col: int):
        self.t, self.i, self.col = t, i, col

    def peek(self) -> str:
        return _peek(self.t, self.i)

    def forward(self, n: int = 1) -> None:
        for _ in range(n):
            c = self.t[self.i]
            if c in BREAKS and not (c == "\r" and _peek(self.t, self.i + 1) == "\n"):
                self.col = 0
            elif c != "\ufeff":
                self.col += 1
            self.i += 1

    def line_break(self) -> tuple[str, int]:
        at = self.i
        b, j = _line_break(self.t, self.i)
        if b:
            self.i = j
            self.col = 0
        return b, at


def _block_breaks(cur: _Cursor, indent: int) -> list[tuple[str, int]]:
    chunks = []
    while cur.col < indent and cur.peek() == " ":
        cur.forward()
    while cur.peek() in BREAKS and cur.i < len(cur.t):
        chunks.append(cur.line_break())
        while cur.col < indent and cur.peek() == " ":
            cur.forward()
    return chunks


def _block_with(t: str, body: int, folded: bool, chomping: bool | None,
                indent: int | None, min_indent: int) -> tuple[_Out, int]:
    out = _Out()
    cur = _Cursor(t, body, 0)
    if indent is None:
        breaks: list[tuple[str, int]] = []
        max_indent = 0
        while cur.peek() == " " or (cur.peek() in BREAKS and cur.i < len(t)):
            if cur.peek() != " ":
                breaks.append(cur.line_break())
            else:
                cur.forward()
                max_indent = max(max_indent, cur.col)
        indent = max(min_indent, max_indent)
    else:
        breaks = _block_breaks(cur, indent)
    line_break: tuple[str, int] = ("", cur.i)
    last_end = body
    while cur.col == indent and cur.i < len(t):
        for b, o in breaks:
            out.add(b, o)
        leading_non_space = cur.peek() not in " \t"
        j = cur.i
        while j < len(t) and t[j] not in BREAKS:
            j += 1
        out.run(t, cur.i, j)
        cur.col += j - cur.i
        cur.i = j
        last_end = j
        line_break = cur.line_break()
        breaks = _block_breaks(cur, indent)
        if cur.col == indent and cur.i < len(t):
            if folded and line_break[0] == "\n" and leading_non_space and cur.peek() not in " \t":
                if not breaks:
                    out.add(" ", line_break[1])
            else:
                out.add(*line_break)
        else:
            break
    if chomping is not False and line_break[0]:
        out.add(*line_break)
    if chomping is True:
        for b, o in breaks:
            out.add(b, o)
    return out, last_end


def _block_candidates(t: str, start: int, body: int, increment: int | None) -> list[tuple[int | None, int]]:
    """(indent, min_indent) pairs to try: the parent's indentation is not in the marks."""
    col = _column(t, start)
    if increment is None:
        return [(None, m) for m in range(1, col + 2)]
    return [(m + increment - 1, m) for m in range(1, col + 2)]


# --- entry point ------------------------------------------------------------------------


def decode(text: str, start: int, end: int, value: str) -> Decoded:
    """Decode the scalar at text[start:end] (marks from the parser, properties included),
    whose value the parser says is `value`."""
    s = skip_properties(text, start, end)
    c = _peek(text, s)
    style = {"'": "'", '"': '"', "|": "|", ">": ">"}.get(c, "plain")
    try:
        if style == "plain":
            if s >= end:
                return Decoded("", [s], style, s, s) if value == "" else _inexact(value, style, s, end)
            out, stop = _plain(text, s, end)
            result = _finish(out, style, s, stop, value)
            if result is not None:
                return result
        elif style in ("'", '"'):
            out, close = _quoted(text, s, end)
            out_end = close  # the end entry: the closing quote
            result = _finish(out, style, s, close + 1, value, out_end)
            if result is not None:
                return result
        else:
            folded, chomping, increment, body = _block_header(text, s)
            for indent, min_indent in _block_candidates(text, s, body, increment):
                out, last = _block_with(text, body, folded, chomping, indent, min_indent)
                result = _finish(out, style, s, last, value)
                if result is not None:
                    return result
    except (_Fail, IndexError):
        pass
    return _inexact(value, style, s, end)


def _finish(out: _Out, style: str, start: int, end: int, value: str,
            end_entry: int | None = None) -> Decoded | None:
    decoded = "".join(out.chars)
    if decoded != value:
        return None
    table = out.offs + [end if end_entry is None else end_entry]
    return Decoded(value, table, style, start, end)


def _inexact(value: str, style: str, start: int, end: int) -> Decoded:
    return Decoded(value, None, style, start, end, exact=False)
