"""JSON with comments, with exact positions.

A small tolerant parser for JSONC (VS Code's `launch.json`, Jupyter notebooks): `//` and
`/* */` comments and trailing commas are allowed, and broken input (a half-typed file)
still yields every node read up to the problem, with the problems listed.

Every node knows its document span. Objects keep each key's span, arrays their elements
and the position of the comma after each element, and strings their decoded value plus,
for every decoded character, the document offsets where its source text starts and ends
(`\\"`, `\\n`, `\\u00e9` and surrogate pairs `\\ud83d\\ude00` are one character each). A
string whose escapes are invalid has no value (None): its content is not what any
reader would see, so nothing inside it is trusted.

The second half of the module edits text that lives inside JSON strings: `InnerText`
is such a text (one string, or the concatenation of a notebook cell's source lines) with
its offset table, and `MappedHost` lets an extractor of the inner text (shell, Python)
edit it in inner coordinates while every edit lands in the document, JSON-escaped.

Offsets are code-point offsets into the document string.
"""

from __future__ import annotations

import json
import re
from array import array
from dataclasses import dataclass, field
from typing import Callable, Sequence

from servelint.model import Edit, Finding, Host, LineIndex, Span, Token, write_all

MAX_DEPTH = 256
_HEX = set("0123456789abcdefABCDEF")
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_STOP = re.compile(r'["\\\\\n]')
_WS = re.compile(r"[ \t\r\n\ufeff]+")
_NESTING = re.compile(r'[\[{]+|[\]}]+|["/]')
_WORD_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-")


# --- nodes ------------------------------------------------------------------------------


@dataclass(eq=False)
class Node:
    start: int
    end: int

    @property
    def span(self) -> Span:
        return Span(self.start, self.end)


class JString(Node):
    """A string literal. `value` is the decoded text, or None when an escape is invalid.
    `starts[i]`/`ends[i]` are the document offsets of decoded character i's source text;
    `starts` has one more entry: the offset of the closing quote (or of the end of the
    broken string). The value and the tables are computed when first asked for, so the
    large strings of a notebook's outputs cost one scan."""

    __slots__ = ("_doc", "content_end", "closed", "_value", "_value_known", "_starts", "_ends")

    def __init__(self, start: int, end: int, doc: str, content_end: int, closed: bool = True):
        super().__init__(start, end)
        self._doc = doc
        self.content_end = content_end
        self.closed = closed
        self._value: str | None = None
        self._value_known = False
        self._starts: Sequence[int] | None = None
        self._ends: Sequence[int] | None = None

    @property
    def content(self) -> Span:
        return Span(self.start + 1, self.content_end)

    @property
    def value(self) -> str | None:
        if not self._value_known:
            raw = self._doc[self.start + 1:self.content_end]
            if "\\" not in raw:
                self._value = raw
            elif self.closed:
                try:
                    # typeshed leaves out json.decoder.scanstring, which every CPython has
                    self._value = json.decoder.scanstring(  # type: ignore[attr-defined]
                        self._doc, self.start + 1, False)[0]
                except ValueError:
                    self._value = None
            else:
                self._decode()
            self._value_known = True
        return self._value

    @property
    def starts(self) -> Sequence[int]:
        return self._tables()[0]

    @property
    def ends(self) -> Sequence[int]:
        return self._tables()[1]

    def _tables(self) -> tuple[Sequence[int], Sequence[int]]:
        if self._starts is not None and self._ends is not None:
            return self._starts, self._ends
        i, n = self.start + 1, self.content_end
        value = self.value
        if value is not None and len(value) == n - i:
            # No escape (every escape is longer than what it decodes to): character k
            # sits at i + k. Ranges made when asked, not lists kept: a list holds an int
            # object per character (36 bytes), and a notebook's sources are most of it.
            return range(i, n + 1), range(i + 1, n + 1)
        return self._decode()

    def _decode(self) -> tuple[Sequence[int], Sequence[int]]:
        t = self._doc
        i, n = self.start + 1, self.content_end
        chars: list[str] = []
        starts = array("q")
        ends = array("q")
        ok = True
        while i < n:
            c = t[i]
            if c != "\\":
                chars.append(c)
                starts.append(i)
                ends.append(i + 1)
                i += 1
                continue
            e = t[i + 1] if i + 1 < n else ""
            if e in _SIMPLE:
                chars.append(_SIMPLE[e])
                starts.append(i)
                ends.append(i + 2)
                i += 2
                continue
            cp = _hex4(t, i + 2) if e == "u" and i + 6 <= n else None
            if cp is None:
                ok = False
                i += 2
                continue
            end = i + 6
            if 0xD800 <= cp <= 0xDBFF and end + 6 <= n and t.startswith("\\u", end):
                low = _hex4(t, end + 2)
                if low is not None and 0xDC00 <= low <= 0xDFFF:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                    end += 6
            chars.append(chr(cp))
            starts.append(i)
            ends.append(end)
            i = end
        starts.append(n)
        self._starts, self._ends = starts, ends
        if not self._value_known:
            self._value = "".join(chars) if ok else None
            self._value_known = True
        return starts, ends


@dataclass(eq=False)
class JScalar(Node):
    """A number, true/false/null, or a bare word (`kind` "invalid")."""

    kind: str = "invalid"
    value: object = None


@dataclass(eq=False)
class JArray(Node):
    elements: list[Node] = field(default_factory=list)
    commas: list[int | None] = field(default_factory=list)  # the comma after each element
    closed: bool = True


@dataclass(eq=False)
class Member:
    key: JString
    value: Node | None
    comma: int | None = None


@dataclass(eq=False)
class JObject(Node):
    members: list[Member] = field(default_factory=list)
    closed: bool = True

    def get(self, key: str) -> Node | None:
        """The value of the last member named `key` (the one a JSON reader keeps)."""
        found = None
        for m in self.members:
            if m.key.value == key and m.value is not None:
                found = m.value
        return found

    def member(self, key: str) -> Member | None:
        found = None
        for m in self.members:
            if m.key.value == key:
                found = m
        return found


@dataclass
class JsonDoc:
    root: Node | None
    errors: list[tuple[int, str]]


# --- parsing -----------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str):
        self.t = text
        self.n = len(text)
        self.pos = 0
        self.errors: list[tuple[int, str]] = []

    def err(self, at: int, msg: str) -> None:
        if len(self.errors) < 100:
            self.errors.append((at, msg))

    def ws(self) -> None:
        t, n, i = self.t, self.n, self.pos
        ws = _WS.match
        while i < n:
            c = t[i]
            if c in " \t\r\n\ufeff":
                m = ws(t, i)
                assert m is not None  # t[i] is a blank
                i = m.end()
            elif c == "/" and i + 1 < n and t[i + 1] == "/":
                j = t.find("\n", i)
                i = n if j < 0 else j
            elif c == "/" and i + 1 < n and t[i + 1] == "*":
                j = t.find("*/", i + 2)
                if j < 0:
                    self.err(i, "unterminated comment")
                    i = n
                else:
                    i = j + 2
            else:
                break
        self.pos = i

    def value(self, depth: int) -> Node | None:
        self.ws()
        if self.pos >= self.n:
            return None
        c = self.t[self.pos]
        if depth > MAX_DEPTH and c in "[{":
            return self.skip_nested()
        if c == "{":
            return self.obj(depth)
        if c == "[":
            return self.arr(depth)
        if c == '"':
            return self.string()
        if c in _WORD_CHARS:
            return self.word()
        return None

    def skip_nested(self) -> JScalar:
        """An array or object opening deeper than MAX_DEPTH: passed over to where its
        brackets close (strings read as strings), in one scan, and kept as an "invalid"
        scalar. The parser recurses once per level, so it cannot descend further, and the
        members after it (a notebook's cells, a launch configuration) are still read."""
        t, n = self.t, self.n
        start = self.pos
        self.err(start, "nested too deeply")
        depth = 0
        i = start
        search = _NESTING.search
        while True:
            m = search(t, i)
            if m is None:
                i = n
                break
            i = m.start()
            c = t[i]
            if c == '"':
                self.pos = i
                self.string()
                i = self.pos
                continue
            if c == "/":  # a comment, or a lone slash
                self.pos = i
                self.ws()
                i = self.pos if self.pos > i else i + 1
                continue
            run = m.end() - i  # a run of openings or of closings: `[[[[` is one match
            if c in "[{":
                depth += run
                i += run
            elif run < depth:
                depth -= run
                i += run
            else:
                i += depth
                break
        self.pos = i
        return JScalar(start, i, "invalid", None)

    def word(self) -> JScalar:
        t, i = self.t, self.pos
        j = i
        while j < self.n and t[j] in _WORD_CHARS:
            j += 1
        self.pos = j
        raw = t[i:j]
        if raw in ("true", "false", "null"):
            return JScalar(i, j, raw, {"true": True, "false": False, "null": None}[raw])
        try:
            num = json.loads(raw)
        except ValueError:
            num = None
        if isinstance(num, (int, float)) and not isinstance(num, bool):
            return JScalar(i, j, "number", num)
        self.err(i, f"unexpected word {raw[:20]!r}")
        return JScalar(i, j, "invalid", raw)

    def string(self) -> JString:
        t, n = self.t, self.n
        start = self.pos
        i = start + 1
        closed = False
        search = _STOP.search
        while True:
            m = search(t, i)
            if m is None:
                i = n
                break
            i = m.start()
            c = t[i]
            if c == '"':
                closed = True
                break
            if c == "\n":
                break  # a string never spans lines: the file is being typed
            # a backslash: skip the escaped character, unless it ends the line
            if i + 1 >= n:
                i = n
                break
            if t[i + 1] == "\n":
                i += 1
                break
            i += 2
        if not closed:
            self.err(start, "unterminated string")
        self.pos = i + 1 if closed else i
        node = JString(start, self.pos, t, i, closed)
        if closed and t.find("\\", start + 1, i) >= 0 and node.value is None:
            self.err(start, "invalid escape in string")
        return node

    def arr(self, depth: int) -> JArray:
        t = self.t
        node = JArray(self.pos, self.pos)
        self.pos += 1
        while True:
            self.ws()
            if self.pos >= self.n:
                self.err(node.start, "unclosed array")
                node.closed = False
                break
            c = t[self.pos]
            if c == "]":
                self.pos += 1
                break
            if c == "}":
                self.err(self.pos, "unexpected '}' in an array")
                node.closed = False
                break
            if c == ",":
                if node.elements and node.commas[-1] is None:
                    node.commas[-1] = self.pos
                else:
                    self.err(self.pos, "missing element before ','")
                self.pos += 1
                continue
            if node.elements and node.commas[-1] is None:
                self.err(self.pos, "missing ',' between elements")
            v = self.value(depth + 1)
            if v is None:
                if self.pos < self.n:
                    self.err(self.pos, f"unexpected {t[self.pos]!r}")
                    self.pos += 1
                continue
            node.elements.append(v)
            node.commas.append(None)
        node.end = self.pos
        return node

    def obj(self, depth: int) -> JObject:
        t = self.t
        node = JObject(self.pos, self.pos)
        self.pos += 1
        while True:
            self.ws()
            if self.pos >= self.n:
                self.err(node.start, "unclosed object")
                node.closed = False
                break
            c = t[self.pos]
            if c == "}":
                self.pos += 1
                break
            if c == "]":
                self.err(self.pos, "unexpected ']' in an object")
                node.closed = False
                break
            if c == ",":
                if node.members and node.members[-1].comma is None:
                    node.members[-1].comma = self.pos
                else:
                    self.err(self.pos, "missing member before ','")
                self.pos += 1
                continue
            if c != '"':
                self.err(self.pos, f"unexpected {c!r}: a key must be a string")
                self.pos += 1
                continue
            if node.members and node.members[-1].comma is None:
                self.err(self.pos, "missing ',' between members")
            key = self.string()
            self.ws()
            value = None
            if self.pos < self.n and t[self.pos] == ":":
                self.pos += 1
                value = self.value(depth + 1)
                if value is None:
                    self.err(self.pos, "missing value")
            else:
                self.err(self.pos, "missing ':' after key")
            node.members.append(Member(key, value))
        node.end = self.pos
        return node


def _hex4(t: str, i: int) -> int | None:
    h = t[i:i + 4]
    if len(h) == 4 and all(c in _HEX for c in h):
        return int(h, 16)
    return None


def parse(text: str) -> JsonDoc:
    """Parse JSONC, tolerating errors. Never raises."""
    p = _Parser(text)
    root = p.value(0)
    if root is None and p.pos < p.n:
        p.err(p.pos, f"unexpected {text[p.pos]!r}")
    p.ws()
    if root is not None and p.pos < p.n:
        p.err(p.pos, "text after the end of the document")
    return JsonDoc(root, p.errors)


def parse_value_at(text: str, start: int, depth: int) -> tuple[Node | None, int, list]:
    """The value starting at `start` of `text`, read as `parse` reads a value found at
    that place and nesting `depth`: (the node, the offset after it, the problems met).
    The incremental readers (launch_json) read one edited member again with it."""
    p = _Parser(text)
    p.pos = start
    node = p.value(depth)
    return node, p.pos, p.errors


def deep_notices(doc: JsonDoc, index: LineIndex) -> list[str]:
    """What to tell the user about values skipped for nesting deeper than MAX_DEPTH
    (their launches, if any, are not read): the first three, by line."""
    lines = [index.line_of(at) + 1 for at, msg in doc.errors if msg == "nested too deeply"]
    return [f"line {line}: JSON nested more than {MAX_DEPTH} levels deep; that value is not read"
            for line in lines[:3]]


def parse_string_literal(text: str, start: int = 0) -> JString:
    """Decode the string literal starting at `text[start]` (a double quote)."""
    p = _Parser(text)
    p.pos = start
    return p.string()


def to_python(node: Node | None):
    """The plain Python value of a node (broken strings become None)."""
    if node is None:
        return None
    if isinstance(node, JString):
        return node.value
    if isinstance(node, JScalar):
        return node.value
    if isinstance(node, JArray):
        return [to_python(e) for e in node.elements]
    if isinstance(node, JObject):
        return {m.key.value: to_python(m.value) for m in node.members}
    return None


def loads_jsonc(text: str):
    """Load JSON with comments and trailing commas, strictly (raises ValueError on any
    problem): used to check that a fixed file is still valid."""
    doc = parse(text)
    if doc.errors or doc.root is None:
        raise ValueError(f"invalid JSONC: {doc.errors[:3] or 'empty document'}")
    return to_python(doc.root)


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """`\\ud800` alone decodes to a lone surrogate, which no encoding can write out."""
    return _SURROGATE.search(text) is not None


def escape(text: str) -> str:
    """`text` written inside a JSON string (without the quotes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def write_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- removing array elements ---------------------------------------------------------------


def _blank_or_comment(s: str) -> bool:
    s = s.strip()
    return not s or s.startswith("//")


def remove_elements(text: str, index: LineIndex, arr: JArray, i: int, j: int) -> Edit:
    """The edit deleting elements i..j of `arr` so the array stays valid: the commas
    are right (removing the last elements also removes the comma before them) and
    elements alone on their lines take their lines with them."""
    els = arr.elements
    n = len(els)
    s, e = els[i].start, els[j].end
    line_s = index.line_of(s)
    alone = not text[index.line_start(line_s):s].strip()
    if j < n - 1:  # an element follows
        c = arr.commas[j]
        cut = c + 1 if c is not None else e
        nxt = els[j + 1].start
        cut_line = index.line_of(max(cut - 1, s))
        if index.line_of(nxt) > cut_line:
            if alone and _blank_or_comment(text[cut:index.line_end(cut_line)]):
                return Edit(Span(index.line_start(line_s),
                                 min(index.line_end(cut_line) + 1, len(text))), "")
            start = s
            while start > 0 and text[start - 1] in " \t":
                start -= 1
            return Edit(Span(start, cut), "")
        return Edit(Span(s, nxt), "")
    # The last elements: also remove a trailing comma after them.
    c = arr.commas[j]
    end = c + 1 if c is not None else e
    rest_blank = not text[end:index.line_end(index.line_of(end))].strip()
    pc = arr.commas[i - 1] if i > 0 else None
    if pc is not None:
        between = text[pc + 1:s]
        if not between.strip():
            return Edit(Span(pc, end), "")
        # Keep comments that sat between the previous element and the removed ones.
        return Edit(Span(pc, end), between.rstrip() if rest_blank else between)
    if alone and rest_blank:
        end_line = index.line_of(end)
        return Edit(Span(index.line_start(line_s), min(index.line_end(end_line) + 1, len(text))), "")
    start = s
    while start > 0 and text[start - 1] in " \t" and not alone:
        start -= 1
    return Edit(Span(start, end), "")


# --- text inside JSON strings ---------------------------------------------------------------


@dataclass
class InnerText:
    """A text made of the decoded content of one or more JSON strings (a notebook cell's
    source lines), with where each character sits in the document.

    `starts` has one entry per character plus one for the end; `ends` one per character.
    `pieces` are the inner ranges of the strings it was made of, and `remove_pieces(i, j)`
    the document edit deleting strings i..j whole (array elements with their commas)."""

    text: str
    starts: Sequence[int]  # arrays of machine integers: 8 bytes a character, not 36
    ends: Sequence[int]
    pieces: list[tuple[int, int]] = field(default_factory=list)
    remove_pieces: Callable[[int, int], Edit] | None = None

    @classmethod
    def of_strings(cls, strings: list[JString],
                   remove_pieces: Callable[[int, int], Edit] | None = None) -> InnerText | None:
        chars: list[str] = []
        starts = array("q")
        ends = array("q")
        pieces = []
        a = 0
        for s in strings:
            if s.value is None or not s.closed:
                return None
            chars.append(s.value)
            starts.extend(s.starts[:-1])
            ends.extend(s.ends)
            pieces.append((a, a + len(s.value)))
            a += len(s.value)
        total = "".join(chars)
        if not strings or len(starts) != len(total) or len(ends) != len(total):
            return None
        if has_lone_surrogate(total):
            return None  # no program receives such a text: not read
        starts.append(strings[-1].starts[-1])  # the end: where the last string's content ends
        return cls(total, starts, ends, pieces, remove_pieces)

    def span(self, s: int, e: int) -> Span:
        n = len(self.text)
        s = max(0, min(s, n))
        e = max(s, min(e, n))
        if e > s:
            return Span(self.starts[s], self.ends[e - 1])
        return Span(self.starts[s], self.starts[s])

    def edit(self, edit: Edit) -> Edit:
        """An edit of the inner text as an edit of the document."""
        a, b = edit.span.start, edit.span.end
        if not edit.new_text and b > a and self.remove_pieces is not None:
            first = next((k for k, (ps, pe) in enumerate(self.pieces) if ps == a and pe > ps), None)
            last = next((k for k, (ps, pe) in enumerate(self.pieces) if pe == b and pe > ps), None)
            if first is not None and last is not None and first <= last:
                return self.remove_pieces(first, last)
        return Edit(self.span(a, b), escape(edit.new_text))


def map_token(tok: Token, inner: InnerText, doc_text: str) -> Token:
    span = inner.span(tok.span.start, tok.span.end)
    # `raw` is the document's text of the word: argparse positions inside the word
    # (`--name=value`) are then only computed when the document writes it verbatim.
    return Token(span, tok.text, tok.prefix, tok.splat, doc_text[span.start:span.end])


class MappedHost:
    """The host of a launch found in an inner text: edits are made by the inner text's
    own host (shell, Python) and moved into the document, JSON-escaped."""

    def __init__(self, doc_text: str, doc_index: LineIndex, inner_host: Host, inner: InnerText,
                 tokens: dict[int, tuple[Token, Token]], head: tuple[int, str, str] | None = None, name: str = "json-string"):
        self.text = doc_text
        self.index = doc_index
        self.inner_host = inner_host
        self.inner = inner
        # the launch's tokens -> the inner tokens: by identity (several words may share a
        # span, such as words a helper adds on its call), else by span
        self.tokens = tokens
        self._by_span: dict[tuple[int, int], Token] = {}
        # For a token that is not in the inner text (the `module` of a launch.json whose
        # args are one string): where words inserted after it go, and their separators.
        self.head = head
        self.name = name
        self.quote_context = inner_host.quote_context

    def bind(self, token: Token, inner_token: Token) -> None:
        self.tokens[id(token)] = (token, inner_token)
        self._by_span.setdefault((token.span.start, token.span.end), inner_token)

    def _inner(self, token: Token) -> Token | None:
        found = self.tokens.get(id(token))
        if found is not None and found[0] is token:
            return found[1]
        return self._by_span.get((token.span.start, token.span.end))

    def _out(self, edit: Edit | None) -> Edit | None:
        return None if edit is None else self.inner.edit(edit)

    def quote(self, value: str) -> str | None:
        q = self.inner_host.quote(value)
        return None if q is None else escape(q)

    def replace(self, token: Token, value: str) -> Edit | None:
        t = self._inner(token)
        return None if t is None else self._out(self.inner_host.replace(t, value))

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        a, b = self._inner(first), self._inner(last)
        if a is None or b is None:
            return None
        return self._out(self.inner_host.replace_words(a, b, words))

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        t = self._inner(token)
        if t is None:
            if self.head is None:
                return None
            at, before, after = self.head
            quoted = write_all(self.inner_host.quote, words)
            if quoted is None:
                return None
            return self._out(Edit(Span(at, at), before + " ".join(quoted) + after))
        return self._out(self.inner_host.insert_after(t, words))

    def remove(self, first: Token, last: Token) -> Edit | None:
        a, b = self._inner(first), self._inner(last)
        if a is None or b is None:  # never for tokens of this launch
            return Edit(Span(first.span.start, last.span.end), "")
        return self._out(self.inner_host.remove(a, b))


def map_launch(launch, inner: InnerText, doc_text: str, doc_index: LineIndex, **host_args):
    """A launch found in the inner text, moved into the document."""
    from servelint.model import Launch
    host = MappedHost(doc_text, doc_index, launch.host, inner, {}, **host_args)
    entry = map_token(launch.entry, inner, doc_text)
    host.bind(entry, launch.entry)
    tokens = []
    for t in launch.tokens:
        m = map_token(t, inner, doc_text)
        host.bind(m, t)
        tokens.append(m)
    span = inner.span(launch.span.start, launch.span.end)
    anchor = doc_index.line_start(doc_index.line_of(span.start))
    return Launch(kind=launch.kind, entry=entry, tokens=tokens, host=host, span=span,
                  env=dict(launch.env), anchor=anchor)


_LINE_REF = re.compile(r"\b(line|lines) (\d+)\b")


def map_finding(f: Finding, inner: InnerText, doc_index: LineIndex | None = None) -> Finding:
    """A finding about the inner text (a broken continuation), moved into the document.
    With `doc_index`, the line numbers its message names become document lines."""
    if doc_index is not None:
        inner_index = LineIndex(inner.text)

        def doc_line(m: re.Match) -> str:
            row = int(m.group(2)) - 1
            if not 0 <= row < len(inner_index.starts):
                return m.group(0)
            at = inner.span(inner_index.line_start(row), inner_index.line_start(row)).start
            return f"{m.group(1)} {doc_index.line_of(at) + 1}"

        f.message = _LINE_REF.sub(doc_line, f.message)
    f.span = inner.span(f.span.start, f.span.end)
    for r in f.related:
        if r.path is None:
            r.span = inner.span(r.span.start, r.span.end)
    for fx in f.fixes:
        fx.edits = [inner.edit(e) for e in fx.edits]
    return f
