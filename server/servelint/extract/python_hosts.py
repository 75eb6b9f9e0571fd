"""Hosts of Python launches: the objects that write a fix into Python source (quote a
word as a Python string, replace, insert or remove words, list items and keyword
arguments), for the Python launch extractor (`python_launch.py`).

- `_Ctx`: one Python text being read (positions, document mapping, the hosts' shared
  state, the result).
- `PyArgvHost`: words that are items of Python lists (or call arguments).
- `PyWordsHost`: words split from a string on whitespace (`launch_server_cmd`).
- `EngineHost`: `Engine(...)` / `ServerArgs(...)` keyword arguments.
- `_NoEdits`, `_PartsGuard`, `_Composite`: no edits, edits kept inside one of
  implicitly concatenated literals, edits delegated to the host owning the tokens.
"""

from __future__ import annotations

import ast
import re
from typing import Callable

from servelint.extract.common import ExtractResult, ReadOnlyHost
from servelint.extract.python_literals import Decoded, PySource
from servelint.extract.shell import remove_words
from servelint.lintcache import ShiftedHost
from servelint.model import Edit, Host, LineIndex, Span, Token, write_all


# Field -> option tables by catalog (id -> (catalog, table)): a module read in chunks makes
# one _Ctx per chunk, and the table is the same for all.
_FIELDS: dict[int, tuple[object, dict]] = {}


class _Ctx:
    """One Python text being read: positions, document mapping, hosts' shared state."""

    def __init__(self, text: str, to_doc: Callable[[int], int] | None, doc_text: str | None,
                 doc_index: LineIndex | None, escape: Callable[[str], str] | None, catalog):
        self.text = text
        self.src = PySource(text)
        self.index = LineIndex(text)
        self.to_doc = to_doc
        self.doc_text = text if doc_text is None else doc_text
        self.doc_index = doc_index if doc_index is not None else (
            self.index if doc_text is None else LineIndex(self.doc_text))
        self.escape = escape
        # The source's lines are the document's own (a notebook cell's are not).
        self.plain = to_doc is None and escape is None
        self.catalog = catalog
        self.result = ExtractResult([], [])
        self._fields: dict | None = None

    def field(self, name: str):
        """The option a ServerArgs field sets: among the options with that dest, the one
        spelled like the field and not deprecated (a deprecated spelling of the same field,
        such as --monokernel-backend for enable_amd_monokernel, is the command line's)."""
        if self._fields is None:
            known = _FIELDS.get(id(self.catalog))
            if known is not None and known[0] is self.catalog:
                self._fields = known[1]
            else:
                best: dict = {}
                for opt in self.catalog.options:
                    rank = (opt.removed, opt.deprecated, opt.name != "--" + opt.dest.replace("_", "-"))
                    if opt.dest not in best or rank < best[opt.dest][0]:
                        best[opt.dest] = (rank, opt)
                self._fields = {k: v[1] for k, v in best.items()}
                _FIELDS[id(self.catalog)] = (self.catalog, self._fields)
        return self._fields.get(name)

    def doc(self, offset: int) -> int:
        return offset if self.to_doc is None else self.to_doc(offset)

    def dspan(self, s: int, e: int) -> Span:
        return Span(self.doc(s), self.doc(e))

    def edit(self, s: int, e: int, new: str) -> Edit:
        if self.escape is not None:
            new = self.escape(new)
        return Edit(self.dspan(s, e), new)

    def table(self, dec: Decoded, a: int = 0, b: int | None = None) -> list[int]:
        b = len(dec.chars) if b is None else b
        t = [self.doc(s) for s in dec.starts[a:b]]
        t.append(self.doc(dec.ends[b - 1]) if b > a else self.doc(dec.parts[-1].body_end))
        return t


# --- hosts --------------------------------------------------------------------------------


def py_string(value: str, quote: str = '"') -> str:
    """A Python string literal for value, in the given quote when that needs no escape."""
    if quote not in value and "\\" not in value and value.isprintable():
        return quote + value + quote
    return repr(value)


def remove_items(text: str, index: LineIndex, items: list[tuple[int, int]], i: int, j: int,
                 close: int) -> tuple[int, int]:
    """The range to delete to remove items i..j of a comma-separated list (a list literal,
    a call's arguments) so that it stays valid: whole lines when the items fill them,
    else the items with one separator. `close` is the offset of the closing bracket."""
    s, e = items[i][0], items[j][1]
    l1, l2 = index.line_of(s), index.line_of(e)
    ls, le = index.line_start(l1), index.line_end(l2)
    before, after = text[ls:s], text[e:le]
    if not before.strip() and re.fullmatch(r"\s*,?\s*(#.*)?", after.rstrip("\r")) and (
            j + 1 < len(items) or "," in after or index.line_of(close) > l2):
        return ls, min(le + 1, len(text))
    if j + 1 < len(items) and (index.line_of(items[j + 1][0]) == l2 or i == 0):
        return s, items[j + 1][0]
    if i > 0:
        return items[i - 1][1], e  # keeps the separator (and line break) after the items
    m = re.match(r"\s*,", text[e:close])
    return s, e + (m.end() if m else 0)


class PyArgvHost:
    """Edits of a launch whose words are items of Python lists (or call arguments)."""

    name = "python-list"
    quote_context = ""

    def __init__(self, ctx: _Ctx):
        self.ctx = ctx
        self.text = ctx.doc_text
        self.index = ctx.doc_index
        # token key -> (container, item index); container = (items, close, quote)
        self.where: dict[tuple[int, int], tuple[int, int]] = {}
        self.containers: list[tuple[list[tuple[int, int]], int, str]] = []

    def add_container(self, items: list[tuple[int, int]], close: int, quote: str,
                      whole: bool = True) -> int:
        """`whole`: every item may go (a list literal); not for a call's arguments."""
        self.containers.append((items, close if whole else -1 - close, quote))
        return len(self.containers) - 1

    def register(self, token: Token, container: int, item: int) -> Token:
        self.where[(token.span.start, token.span.end)] = (container, item)
        return token

    def _loc(self, token: Token):
        return self.where.get((token.span.start, token.span.end))

    def quote(self, value: str) -> str | None:
        return py_string(value)

    def _write(self, token: Token, value: str) -> str:
        loc = self._loc(token)
        q = self.containers[loc[0]][2] if loc else '"'
        return py_string(value, q)

    def replace(self, token: Token, value: str) -> Edit | None:
        loc = self._loc(token)
        if loc is None:
            return None
        s, e = self.containers[loc[0]][0][loc[1]]
        return self.ctx.edit(s, e, self._write(token, value))

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        a, b = self._loc(first), self._loc(last)
        if a is None or b is None or a[0] != b[0]:
            return None
        items = self.containers[a[0]][0]
        return self.ctx.edit(items[a[1]][0], items[b[1]][1],
                             ", ".join(self._write(first, w) for w in words))

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        loc = self._loc(token)
        if loc is None:
            return None
        e = self.containers[loc[0]][0][loc[1]][1]
        return self.ctx.edit(e, e, "".join(", " + self._write(token, w) for w in words))

    def remove(self, first: Token, last: Token) -> Edit | None:
        a, b = self._loc(first), self._loc(last)
        if a is None or b is None or a[0] != b[0]:
            return None
        items, close, _ = self.containers[a[0]]
        if close < 0:
            if a[1] == 0 and b[1] == len(items) - 1:
                return None  # every argument of an .append(): no clean edit
            close = -1 - close
        s, e = remove_items(self.ctx.text, self.ctx.index, items, a[1], b[1], close)
        return self.ctx.edit(s, e, "")


class PyWordsHost:
    """Edits of a launch split from a string on whitespace (launch_server_cmd): words are
    written as they are (no shell quoting), inside the Python literal."""

    name = "python-words"
    quote_context = "'"

    def __init__(self, ctx: _Ctx, dec: Decoded):
        self.ctx = ctx
        self.text = ctx.doc_text
        self.index = ctx.doc_index
        self.dec = dec
        self.cell: dict[tuple[int, int], tuple[int, int]] = {}
        self.synthetic: set[tuple[int, int]] = set()
        q = dec.parts[0].quote if dec.parts else '"'
        self.bad = set(q[0]) | {"\\", "{", "}"} if dec.fields else set(q[0]) | {"\\"}

    def register(self, token: Token, s: int, e: int) -> Token:
        self.cell[(token.span.start, token.span.end)] = (s, e)
        return token

    def quote(self, value: str) -> str | None:
        if not value or any(c.isspace() or c in self.bad for c in value) or not value.isprintable():
            return None
        return value

    def _c(self, token: Token):
        return self.cell.get((token.span.start, token.span.end))

    def replace(self, token: Token, value: str) -> Edit | None:
        c, q = self._c(token), self.quote(value)
        if c is None or q is None:
            return None
        return self.ctx.edit(c[0], c[1], q)

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        a, b = self._c(first), self._c(last)
        qs = write_all(self.quote, words)
        if a is None or b is None or qs is None:
            return None
        return self.ctx.edit(a[0], b[1], " ".join(qs))

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        c = self._c(token)
        qs = write_all(self.quote, words)
        if c is None or qs is None:
            return None
        return self.ctx.edit(c[1], c[1], "".join(" " + q for q in qs))

    def remove(self, first: Token, last: Token) -> Edit | None:
        a, b = self._c(first), self._c(last)
        if a is None or b is None:
            return None
        ed = remove_words(self.ctx.text, self.ctx.index, a[0], b[1])
        s, e = ed.span.start, ed.span.end
        # Stay inside the literal: never touch its quotes.
        lit = next((p for p in self.dec.parts if p.body_start <= a[0] <= p.body_end), None)
        if lit is None or s < lit.body_start or e > lit.body_end:
            return None
        return self.ctx.edit(s, e, "")


class EngineHost:
    """Edits of `Engine(...)` keyword arguments: each option is one `name=value`."""

    name = "python-kwargs"
    quote_context = ""

    def __init__(self, ctx: _Ctx, items: list[tuple[int, int]], close: int):
        self.ctx = ctx
        self.text = ctx.doc_text
        self.index = ctx.doc_index
        self.items = items  # every argument of the call, in source order
        self.close = close
        self.names: dict[str, int] = {}  # keyword -> item index (Python refuses a repeat)
        # token key -> (item index, role, value node)
        self.where: dict[tuple[int, int], tuple[int, str, object]] = {}

    def register(self, token: Token, item: int, role: str, node=None) -> Token:
        self.where[(token.span.start, token.span.end)] = (item, role, node)
        return token

    def _loc(self, token: Token):
        return self.where.get((token.span.start, token.span.end))

    def quote(self, value: str) -> str | None:
        return py_string(value)

    def _value(self, opt, value: str, like=None) -> str:
        if isinstance(like, ast.Constant) and isinstance(like.value, str):
            return py_string(value)
        t = opt.type if opt is not None else None
        if t in ("int", "human_readable_int") and re.fullmatch(r"-?\d+", value):
            return value
        if t == "float":
            try:
                float(value)
                return value
            except ValueError:
                pass
        return py_string(value)

    def _clash(self, kws: list[str] | None, replaced: range = range(0)) -> bool:
        """Would these `name=value`s repeat a keyword the call keeps?"""
        if kws is None:
            return True
        names = [k.split("=", 1)[0] for k in kws]
        if len(set(names)) != len(names):
            return True
        return any(self.names.get(n, -1) >= 0 and self.names[n] not in replaced for n in names)

    def kwargs(self, words: list[str]) -> list[str] | None:
        """`name=value` source for command-line words, or None."""
        cat = self.ctx.catalog
        out = []
        i = 0
        while i < len(words):
            w = words[i]
            name, eq, explicit = w.partition("=")
            opt = cat.lookup(name) if name.startswith("--") else None
            if opt is None:
                return None
            i += 1
            if opt.kind in ("flag", "bool_optional") or opt.nargs == 0:
                val = "False" if name.startswith("--no-") and opt.kind == "bool_optional" else "True"
                out.append(f"{opt.dest}={val}")
                continue
            vals = [explicit] if eq else []
            while not eq and i < len(words) and not words[i].startswith("--"):
                vals.append(words[i])
                i += 1
                if opt.kind != "list":
                    break
            if not vals:
                return None
            if opt.kind == "list":
                out.append(f"{opt.dest}=[{', '.join(self._value(opt, v) for v in vals)}]")
            else:
                out.append(f"{opt.dest}={self._value(opt, vals[0])}")
        return out

    def replace(self, token: Token, value: str) -> Edit | None:
        loc = self._loc(token)
        if loc is None:
            return None
        item, role, node = loc
        if role == "value":
            opt = self._option_of(item)
            return self.ctx.edit(*self._cell(node), self._value(opt, value, node))
        # The keyword itself: an option name becomes its field name.
        opt = self.ctx.catalog.lookup(value.split("=", 1)[0])
        if opt is None or "=" in value:
            return None
        s, e = self._cell(node)
        if self.names.get(opt.dest, item) != item:
            return None  # the call already has that keyword
        if opt.kind == "bool_optional" and value.startswith("--no-"):
            return self.ctx.edit(self.items[item][0], self.items[item][1], f"{opt.dest}=False")
        return self.ctx.edit(s, e, opt.dest)

    def _cell(self, node) -> tuple[int, int]:
        if isinstance(node, tuple):
            return node
        return self.ctx.src.span(node)

    def _option_of(self, item: int):
        for (_, _), (i, role, node) in self.where.items():
            if i == item and role == "name":
                return self.ctx.field(self._name_of(node))
        return None

    def _name_of(self, node) -> str:
        s, e = self._cell(node)
        return self.ctx.text[s:e]

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        a, b = self._loc(first), self._loc(last)
        kws = self.kwargs(words)
        if a is None or b is None or kws is None or self._clash(kws, range(a[0], b[0] + 1)):
            return None
        return self.ctx.edit(self.items[a[0]][0], self.items[b[0]][1], ", ".join(kws))

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        loc = self._loc(token)
        kws = self.kwargs(words)
        if loc is None or kws is None or self._clash(kws):
            return None
        e = self.items[loc[0]][1]
        return self.ctx.edit(e, e, "".join(", " + k for k in kws))

    def remove(self, first: Token, last: Token) -> Edit | None:
        a, b = self._loc(first), self._loc(last)
        if a is None or b is None:
            return None
        s, e = remove_items(self.ctx.text, self.ctx.index, self.items, a[0], b[0], self.close)
        return self.ctx.edit(s, e, "")


class _DocView:
    """A document's newest text and line index, kept between lints (python_launch's chunk
    memory): the hosts of launches placed in an earlier lint read the document through it."""

    text: str = ""
    index: LineIndex | None = None


class _PlacedHost(ShiftedHost):
    """Edits of a launch read in a chunk of the document (its offsets relative to the
    chunk): asked of the chunk's host at chunk offsets and moved `d` characters on (the
    forwarding is lintcache.ShiftedHost's). `text` and `index` are the document's newest,
    read through `view` when asked."""

    def __init__(self, inner: Host, d: int, view: _DocView):
        self.inner = inner
        self.d = d
        self.view = view
        self.name = inner.name
        self.quote_context = inner.quote_context

    @property
    def text(self) -> str:  # type: ignore[override]
        return self.view.text

    @property
    def index(self) -> LineIndex:  # type: ignore[override]
        assert self.view.index is not None
        return self.view.index


def _NoEdits(ctx) -> "ReadOnlyHost":
    """A host for launches no edit can be made in (a helper's own words)."""
    return ReadOnlyHost(ctx.doc_text, ctx.doc_index, "python")


class _PartsGuard:
    """A shell launch in implicitly concatenated literals (`"a " 'b'`): an edit that spans
    from one literal into another keeps the code valid only when both use the same quotes
    (the quotes it removes pair up), so other such edits are refused."""

    def __init__(self, host: Host, parts: list[Span]):
        self.inner = host
        self.parts = parts
        self.name = host.name
        self.text = host.text
        self.index = host.index
        self.quote_context = host.quote_context

    def _ok(self, edit: Edit | None) -> Edit | None:
        if edit is None:
            return None
        s, e = edit.span.start, edit.span.end
        if any(p.start <= s and e <= p.end for p in self.parts):
            return edit
        return None

    def quote(self, value: str) -> str | None:
        return self.inner.quote(value)

    def replace(self, token: Token, value: str) -> Edit | None:
        return self._ok(self.inner.replace(token, value))

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        return self._ok(self.inner.replace_words(first, last, words))

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        return self._ok(self.inner.insert_after(token, words))

    def remove(self, first: Token, last: Token) -> Edit | None:
        return self._ok(self.inner.remove(first, last))


class _Composite:
    """Delegates each edit to the host that owns the tokens (a popen_launch_server launch:
    the helper's own words, and the other_args list)."""

    name = "python"
    quote_context = ""

    def __init__(self, ctx: _Ctx, hosts: list[Host], default: Host):
        self.text = ctx.doc_text
        self.index = ctx.doc_index
        self.hosts = hosts
        self.default = default
        self.owner: dict[tuple[int, int], Host] = {}

    def own(self, token: Token, host: Host) -> Token:
        self.owner[(token.span.start, token.span.end)] = host
        return token

    def _h(self, token: Token) -> Host:
        return self.owner.get((token.span.start, token.span.end), self.default)

    def quote(self, value: str) -> str | None:
        return self.default.quote(value)

    def replace(self, token: Token, value: str) -> Edit | None:
        return self._h(token).replace(token, value)

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        h = self._h(first)
        return h.replace_words(first, last, words) if h is self._h(last) else None

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        return self._h(token).insert_after(token, words)

    def remove(self, first: Token, last: Token) -> Edit | None:
        h = self._h(first)
        return h.remove(first, last) if h is self._h(last) else None

