"""Pieces every extractor shares.

- `ExtractResult`: what an extractor returns (launches, and findings it makes itself).
- `launch_from_tokens`: a Launch from the words of a command given as a list (a JSON or
  YAML array, a Python list, a Dockerfile exec form), when they start an SGLang launch.
- `script_launches`: the launches in a shell script embedded in a string (a YAML block
  scalar, `bash -c` in a list, a Markdown fence), mapped into the document through an
  offset table.
- `ListHost`: edits of an argv list whose elements are separate strings in the document.
  A format supplies how to delete one element and how to write one.

Offsets are always document offsets (code points into the document string).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from servelint.extract.shell import (OffsetMap, ShellResult, container_image, extract_shell,
                                     find_entry, find_shell_script)
from servelint.model import Edit, Host, Launch, LineIndex, Span, Token, write_all

ExtractResult = ShellResult  # launches: list[Launch], findings: list[Finding]


def empty() -> ExtractResult:
    return ExtractResult([], [])


def add_notice(result: ExtractResult, said: str) -> None:
    """Tell the user that part of the file was not read, and why (a nesting beyond a
    limit): kept in `result.notices`, which engine.lint shows with the file's notices."""
    notices = getattr(result, "notices", None)
    if notices is None:
        notices = []
        result.notices = notices  # type: ignore[attr-defined]
    if said not in notices:
        notices.append(said)


def launch_from_tokens(tokens: list[Token], host: Host, span: Span, env: dict | None = None,
                       anchor: int | None = None) -> Launch | None:
    """The launch that a command's words start, or None. `tokens` are the command's words
    in order (program first), each with its document span and value."""
    entry = find_entry(tokens)
    if entry is None:
        return None
    kind, at = entry
    if anchor is None:
        anchor = host.index.line_start(host.index.line_of(span.start))
    return Launch(kind=kind, entry=tokens[at], tokens=tokens[at + 1:], host=host, span=span,
                  env=dict(env or {}), anchor=anchor, image=container_image(tokens[:at]),
                  env_complete=getattr(env, "complete", False))


def script_word(tokens: list[Token]) -> int | None:
    """Index of the script in `bash -c SCRIPT` among a command's words, or None."""
    return find_shell_script(tokens)


def script_launches(script: str, table: list[int] | None, base: int, doc_text: str,
                    doc_index: LineIndex, quote: str = "'") -> ExtractResult:
    """Launches in a shell script that sits inside a string of the document.

    `table[i]` is the document offset of the script's character i (with one more entry
    for the end), or None when the script is copied verbatim starting at `base`. `quote`
    says that fixes inside may only write plain words ("'" or '"'), or "" when the
    script's lines are the document's own lines (a literal block, a Markdown fence)."""
    mapping = OffsetMap(base) if table is None else OffsetMap(table=table)
    return extract_shell(script, None, mapping, doc_text, doc_index, quote, depth=1)


@dataclass
class ListHost:
    """Edits of a launch whose words are elements of a list in the document.

    `elements` are the spans of every element of the list (the launch's tokens are a
    subset, in order); `remove_element(i, j)` returns the edit deleting elements i..j
    (with their separators and, where the format wants, their lines); `write(value)`
    returns the source text of a new element, or None when it cannot be written."""

    text: str
    index: LineIndex
    elements: list[Span]
    remove_elements: Callable[[int, int], Edit]
    write: Callable[[str], str | None]
    separator: str = ", "
    name: str = "list"
    quote_context: str = ""
    _pos: dict = field(default_factory=dict)

    def _at(self, token: Token) -> int:
        key = (token.span.start, token.span.end)
        if not self._pos:
            self._pos = {(s.start, s.end): i for i, s in enumerate(self.elements)}
        return self._pos[key]

    def quote(self, value: str) -> str | None:
        return self.write(value)

    def replace(self, token: Token, value: str) -> Edit | None:
        new = self.write(value)
        return None if new is None else Edit(token.span, new)

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        parts = write_all(self.write, words)
        if parts is None:
            return None
        return Edit(Span(first.span.start, last.span.end), self.separator.join(parts))

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        parts = write_all(self.write, words)
        if parts is None:
            return None
        return Edit(Span(token.span.end, token.span.end),
                    "".join(self.separator + p for p in parts))

    def remove(self, first: Token, last: Token) -> Edit:
        return self.remove_elements(self._at(first), self._at(last))


class ReadOnlyHost:
    """The host of a launch whose words cannot be edited in place (positions that are not
    exact, words a helper adds itself): every fix is refused rather than made wrong."""

    quote_context = "'"

    def __init__(self, text: str, index: LineIndex, name: str):
        self.text = text
        self.index = index
        self.name = name

    def quote(self, value: str) -> str | None:
        return None

    def replace(self, token: Token, value: str) -> Edit | None:
        return None

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        return None

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        return None

    def remove(self, first: Token, last: Token) -> Edit | None:
        return None


class RegionHost:
    """The host of a kept launch: the part of the document it came from (a Dockerfile
    stage, a compose service, a launch.json configuration) is read again from the newest
    text (`doc.text`, `doc.index`) when an edit is first asked for, and that launch's own
    host answers (`_host`, per format). `name` and `quote_context` are the real host's."""

    __slots__ = ("doc", "name", "quote_context")

    def __init__(self, doc, like):
        self.doc = doc
        self.name = like.name
        self.quote_context = like.quote_context

    @property
    def text(self) -> str:
        return self.doc.text

    @property
    def index(self) -> LineIndex:
        return self.doc.index

    def _host(self) -> Host:
        raise NotImplementedError

    def _read_only(self) -> ReadOnlyHost:
        return ReadOnlyHost(self.doc.text, self.doc.index, self.name)

    def quote(self, value: str) -> str | None:
        return self._host().quote(value)

    def replace(self, token: Token, value: str) -> Edit | None:
        return self._host().replace(token, value)

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        return self._host().replace_words(first, last, words)

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        return self._host().insert_after(token, words)

    def remove(self, first: Token, last: Token) -> Edit | None:
        return self._host().remove(first, last)


class NthInRegionHost(RegionHost):
    """A RegionHost for the `nth` launch of the part of the document at [start, end) (a
    Dockerfile stage, a compose service): `_launches` reads that part of the newest text
    again and gives its launches (None when it no longer reads)."""

    __slots__ = ("start", "end", "nth")

    def __init__(self, doc, start: int, end: int, nth: int, like):
        super().__init__(doc, like)
        self.start, self.end, self.nth = start, end, nth

    def _launches(self) -> list | None:
        raise NotImplementedError

    def _host(self) -> Host:
        launches = self._launches()
        if launches is None or self.nth >= len(launches):
            return self._read_only()
        return launches[self.nth].host
