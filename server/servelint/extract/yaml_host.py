"""The YAML host: how fixes edit the words of a launch where a YAML document writes them
(a block or flow sequence, a compose command string), quoting what they write so that
YAML reads it back as the same string; `FixedHost` for launches whose positions are not
exact. Also the YAML loader the extractor parses with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml
else:
    from servelint.lazy import yaml  # PyYAML on first use: a shell file never imports it

from servelint.extract.common import ReadOnlyHost
from servelint.extract.shell import remove_words
from servelint.model import Edit, LineIndex, Span, Token, write_all

def loader() -> type[yaml.CSafeLoader] | type[yaml.SafeLoader]:
    """libyaml's safe loader, or PyYAML's own where it is built without libyaml."""
    return getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


# --- writing YAML ---------------------------------------------------------------------------

_PLAIN_OK = re.compile(r"^(?:-(?=\S)|[A-Za-z0-9_./])[A-Za-z0-9_./=+:@%-]*$")
_WORD_OK = re.compile(r"^[A-Za-z0-9_./=+@%-][A-Za-z0-9_./=+:@%-]*$")


def _resolves_to_itself(value: str) -> bool:
    try:
        return yaml.load(value, Loader=loader()) == value
    except yaml.YAMLError:
        return False


def yaml_scalar(value: str, style: str = "") -> str:
    """Source text of a list element whose value is the string `value`, in the quoting
    style of its neighbour (`style`: '"', "'" or "" for plain): plain only when YAML reads
    it back as that same string (in block and flow context), else quoted."""
    if style not in ("'", '"') and _PLAIN_OK.match(value) and not value.endswith(":") \
            and _resolves_to_itself(value):
        return value
    if style == "'" and value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    out = ['"']
    for c in value:
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 0x20 or ord(c) == 0x7F or 0x80 <= ord(c) < 0xA0 or c in "\u2028\u2029\ufeff":
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def plain_word(value: str) -> str | None:
    """A word written inside an existing scalar (a compose command string, a script in a
    quoted scalar): only words that need no quoting in the shell or in YAML."""
    if value and _WORD_OK.match(value) and not value.endswith(":"):
        return value
    return None


# --- the host: editing lists and strings in a YAML document ----------------------------------


@dataclass
class Part:
    """One place the words of a launch are written: a block or flow sequence (each word
    an element), or a string split into words (`words`), or `fixed` (no edits)."""

    kind: str  # "block", "flow", "words", "fixed"
    spans: list[Span]  # the elements' spans (words: every word's span)
    dashes: list[int | None] = field(default_factory=list)  # block: offset of each item's '-'
    indent: int = 0  # block: column of the '-'


class YamlHost:
    name = "yaml"
    quote_context = ""

    def __init__(self, text: str, index: LineIndex, parts: list[Part]):
        self.text = text
        self.index = index
        self.parts = parts
        self._nl: str | None = None
        self._where: dict[tuple[int, int], tuple[int, int]] = {}
        for p, part in enumerate(parts):
            for i, s in enumerate(part.spans):
                self._where[(s.start, s.end)] = (p, i)

    @property
    def nl(self) -> str:
        """The document's line break, for new lines."""
        if self._nl is None:
            self._nl = "\r\n" if "\r\n" in self.text else \
                "\r" if "\r" in self.text and "\n" not in self.text else "\n"
        return self._nl

    def _find(self, token: Token) -> tuple[Part, int, int] | None:
        hit = self._where.get((token.span.start, token.span.end))
        if hit is None:
            return None
        p, i = hit
        return self.parts[p], p, i

    def quote(self, value: str) -> str | None:
        # Used for text written inside an existing word (`--opt=VALUE`): plain only.
        return plain_word(value)

    def _write(self, part: Part, value: str, like: Token | None = None) -> str | None:
        if part.kind in ("block", "flow"):
            return yaml_scalar(value, like.raw[:1] if like is not None else "")
        if part.kind == "words":
            return plain_word(value)
        return None

    def replace(self, token: Token, value: str) -> Edit | None:
        found = self._find(token)
        if found is None:
            return None
        new = self._write(found[0], value, token)
        return None if new is None else Edit(token.span, new)

    def _join(self, part: Part, words: list[str], like: Token | None = None) -> str | None:
        parts = write_all(lambda w: self._write(part, w, like), words)
        if parts is None:
            return None
        if part.kind == "block":
            return (self.nl + " " * part.indent + "- ").join(parts)
        if part.kind == "flow":
            return ", ".join(parts)
        return " ".join(parts)

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        a, b = self._find(first), self._find(last)
        if a is None or b is None or a[1] != b[1] or not words:
            return None
        new = self._join(a[0], words, first)
        return None if new is None else Edit(Span(first.span.start, last.span.end), new)

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        found = self._find(token)
        if found is None or not words:
            return None
        part = found[0]
        new = self._join(part, words, token)
        if new is None:
            return None
        if part.kind == "block":
            # the end of the item's last line (YAML ends a line at \r\n, \r or \n)
            last = max(token.span.start, token.span.end - 1)
            ends = [i for i in (self.text.find("\r", last), self.text.find("\n", last)) if i >= 0]
            at = min(ends) if ends else len(self.text)
            return Edit(Span(at, at), self.nl + " " * part.indent + "- " + new)
        sep = ", " if part.kind == "flow" else " "
        return Edit(Span(token.span.end, token.span.end), sep + new)

    def remove(self, first: Token, last: Token) -> Edit | None:
        a, b = self._find(first), self._find(last)
        if a is None or b is None:
            return None
        (pa, ia, ja), (pb, ib, jb) = (a[0], a[1], a[2]), (b[0], b[1], b[2])
        if ia == ib:
            return self._remove_in(pa, ja, jb)
        if ia > ib:
            return None
        # Words from several lists (compose entrypoint + command): one edit that keeps
        # the text between the lists.
        removals = [self._remove_in(pa, ja, len(pa.spans) - 1)]
        for k in range(ia + 1, ib):
            removals.append(self._remove_in(self.parts[k], 0, len(self.parts[k].spans) - 1))
        removals.append(self._remove_in(pb, 0, jb))
        pieces = [p for p in removals if p is not None]
        if len(pieces) < len(removals):
            return None
        pieces.sort(key=lambda e: e.span.start)
        for x, y in zip(pieces, pieces[1:]):
            if x.span.end > y.span.start:
                return None
        out = [pieces[0].new_text]
        for x, y in zip(pieces, pieces[1:]):
            out.append(self.text[x.span.end:y.span.start])
            out.append(y.new_text)
        return Edit(Span(pieces[0].span.start, pieces[-1].span.end), "".join(out))

    def _remove_in(self, part: Part, i: int, j: int) -> Edit | None:
        spans = part.spans
        if part.kind == "fixed" or not (0 <= i <= j < len(spans)):
            return None
        if part.kind == "words":
            return remove_words(self.text, self.index, spans[i].start, spans[j].end)
        if part.kind == "flow":
            # With the comma before the elements (the line breaks after them stay), or,
            # for the first elements, with the comma after them.
            if i > 0:
                return Edit(Span(spans[i - 1].end, spans[j].end), "")
            if j + 1 < len(spans):
                return Edit(Span(spans[i].start, spans[j + 1].start), "")
            return Edit(Span(spans[i].start, spans[j].end), "")
        # Block sequence: whole lines, from the first item's '-' to the end of the last
        # item's line, when nothing else shares those lines.
        dash = part.dashes[i]
        start = dash if dash is not None else spans[i].start
        index, text = self.index, self.text
        ls = index.line_start(index.line_of(start))
        end_line = index.line_of(max(spans[j].start, spans[j].end - 1))
        le = index.line_end(end_line)
        nxt = (part.dashes[j + 1] if j + 1 < len(spans) else None)
        if not text[ls:start].strip() and (nxt is None or nxt > le):
            return Edit(Span(ls, min(le + 1, len(text))), "")
        stop = nxt if nxt is not None else spans[j].end
        return Edit(Span(start, stop), "")


def FixedHost(text: str, index: LineIndex) -> "ReadOnlyHost":
    """The host of a launch whose positions are not exact: nothing is edited."""
    return ReadOnlyHost(text, index, "yaml")
