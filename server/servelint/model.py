"""LSP-free data types shared by every part of servelint.

Offsets are indices into the document's Python string (code points). Conversion to
lines and UTF-16 columns happens once, at the edge, through `LineIndex`.
"""

from __future__ import annotations

import bisect
import re
from array import array
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Callable, Iterable, Protocol


class Severity(IntEnum):
    """Ordered so that a lower number is more severe (as in LSP)."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> "Severity":
        key = text.strip().upper()
        aliases = {"INFO": "INFORMATION", "WARN": "WARNING"}
        return cls[aliases.get(key, key)]


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int

    def contains(self, offset: int) -> bool:
        return self.start <= offset <= self.end

    def overlaps(self, other: "Span") -> bool:
        return self.start < other.end and other.start < self.end


@dataclass(slots=True, init=False)
class Token:
    """One shell word (or list item, or JSON string) of a launch.

    `text` is the value the program would receive, or None when the file does not fix
    it (`$TP`, `$(cmd)`, a template). `prefix` is the literal start of a partly known
    value (`--tp=$TP` has prefix `--tp=`). `splat` marks a token that may expand to
    any number of arguments (`$ARGS`, `"$@"`, `${A[@]}`): nothing after or around it is
    certain. `span` covers the token as written, quotes included. `placeholder` marks a
    documentation placeholder (`<model-path>`, `[options]`, `...`): it stands for any
    arguments, even where an option takes it as its value.

    Short words are shared (`shared_word`): a large script writes `--tp-size` thousands of
    times, and each token kept its own copy.
    """

    span: Span
    text: str | None
    prefix: str
    splat: bool
    raw: str
    origin: str | None  # another file the word comes from (a --config file), else None
    placeholder: bool

    def __init__(self, span: Span, text: str | None, prefix: str = "", splat: bool = False,
                 raw: str = "", origin: str | None = None, placeholder: bool = False):
        self.span = span
        self.text = text if text is None or len(text) > _SHARED_LEN else shared_word(text)
        self.prefix = prefix
        self.splat = splat
        self.raw = raw if len(raw) > _SHARED_LEN else shared_word(raw)
        self.origin = origin
        self.placeholder = placeholder

    @property
    def known(self) -> bool:
        return self.text is not None

    @property
    def literal_start(self) -> str:
        return self.text if self.text is not None else self.prefix


# Equal short words share one string object (Token): a table of at most _SHARED_MAX
# words, emptied when full (sys.intern is not used: its strings are immortal in Python 3.12).
_SHARED_LEN = 40
_SHARED_MAX = 20_000
_SHARED: dict[str, str] = {}


def shared_word(word: str) -> str:
    """`word`, or an equal string met before (the same object for every equal word).
    Only plain strings are shared (an equal str subclass is another value)."""
    if type(word) is not str:
        return word
    got = _SHARED.get(word)
    if got is not None:
        return got
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    _SHARED[word] = word
    return word


@dataclass(slots=True)
class Edit:
    span: Span
    new_text: str


@dataclass(slots=True)
class Fix:
    title: str
    edits: list[Edit]
    preferred: bool = False
    safe: bool = True


@dataclass(slots=True)
class Related:
    span: Span
    message: str
    path: str | None = None  # None: the same document
    mark: bool = False  # also underline it in an editor (a hint carrying the same fixes)
    range: tuple[int, int, int, int] | None = None  # (line, char, line, char) when `path` is set


@dataclass(slots=True)
class Finding:
    code: str
    severity: Severity
    message: str
    span: Span
    related: list[Related] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    deprecated: bool = False
    unnecessary: bool = False
    launch_index: int | None = None
    sglang: str | None = None  # SGLang's own message for a rule finding (JSON `sglangMessage`)
    # The finding's diagnostics as JSON, kept for the place they were made for and shared
    # by the copies a cache moves (serialize.diagnostics_parts): [key, pieces] or None.
    serial: list | None = field(default=None, compare=False, repr=False)


class Host(Protocol):
    """How to edit the document a launch was found in: every format supplies one.

    The checks, the rules and the suppressions write their fixes only through these
    methods, with command-line words in and document edits out; a host quotes and places
    the words as its format wants (shell quoting, a JSON list item, a Python keyword
    argument). An edit method returns None when the edit cannot be made cleanly (the words
    sit in a template, a literal the edit would break, another file): there is then no fix
    rather than a wrong one. `quote_context` is "" when any word may be written, else the
    quote the words sit inside (only plain words may be written then)."""

    text: str  # the document
    index: LineIndex
    name: str  # the format, such as "shell", "python-list", "json-string"
    quote_context: str

    def quote(self, value: str) -> str | None:
        """The source text of one word, or None when it cannot be written here."""
        ...

    def replace(self, token: Token, value: str) -> Edit | None:
        """Rewrite one word."""
        ...

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        """Rewrite the words from `first` to `last` (inclusive) as `words`."""
        ...

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        """Add `words` after `token`."""
        ...

    def remove(self, first: Token, last: Token) -> Edit | None:
        """Delete the words from `first` to `last` (inclusive), with their separators."""
        ...


def write_all(write: Callable[[str], str | None], words: Iterable[str]) -> list[str] | None:
    """Each word as `write` (a host's quoting) puts it in the document, or None when one
    of them cannot be written."""
    out = []
    for word in words:
        written = write(word)
        if written is None:
            return None
        out.append(written)
    return out


_NO_ENV: dict = {}  # Launch's default: a fresh dict per launch (the sentinel is never kept)


class Launch:
    """One engine invocation found in a document.

    `tokens` are the arguments after the entrypoint. `entry` is the token that names
    the entrypoint (the module or `serve`), where launch-wide findings sit. `host`
    knows how to edit this document format (quoting, removing tokens cleanly).
    `anchor` is the offset of the line a suppression comment would sit above.
    `env` holds the environment variables the document sets for the launch (value None when
    the document does not fix it); `env_complete` says no other variable is set (a
    Kubernetes container's `env:` without `envFrom`, a compose service's `environment:`
    without `env_file`), so a variable not in `env` is known to be unset.
    `image` is the container image the launch runs in, as written, and where: the
    image word of the `docker run` (or `podman`, `srun --container-image`, ...) whose
    command it is, its Kubernetes container's or compose service's `image:`, its CI
    job's container, its Dockerfile stage's base image; None when the document does
    not say (release.py reads the SGLang release from it).

    A launch may be kept "thin" (`thin()`): without its tokens, which its host reads
    again from the document when someone asks for them (a host whose `rereads` is true:
    `host.reread_tokens(launch)`, checked against the launch's fingerprint). A large script's kept launches are thin:
    their words took ~3.6 KB a launch (docs/architecture.md, "Memory").
    """

    __slots__ = ("kind", "entry", "_tokens", "host", "span", "env", "anchor", "image",
                 "env_complete", "fingerprint")

    kind: str  # "launch_server", "serve", "router"
    entry: Token
    host: Host
    span: Span
    env: dict[str, str | None]
    anchor: int
    image: tuple[str, Span] | None
    env_complete: bool  # `env` is the whole environment (a container's `env:` without envFrom)
    # The launch as read, offsets relative to span.start (lintcache.fingerprint), made once
    # and carried along when a cached launch is moved.
    fingerprint: tuple | None

    def __init__(self, kind: str, entry: Token, tokens: list[Token] | None, host: Host,
                 span: Span, env: dict[str, str | None] = _NO_ENV, anchor: int = 0,
                 image: tuple[str, Span] | None = None, env_complete: bool = False,
                 fingerprint: tuple | None = None):
        self.kind = kind
        self.entry = entry
        self._tokens = tokens  # None: thin (read again when asked)
        self.host = host
        self.span = span
        self.env = {} if env is _NO_ENV else env
        self.anchor = anchor
        self.image = image
        self.env_complete = env_complete
        self.fingerprint = fingerprint

    @property
    def tokens(self) -> list[Token]:
        got = self._tokens
        if got is None:
            got = self._tokens = self.host.reread_tokens(self)  # type: ignore[attr-defined]
        return got

    @tokens.setter
    def tokens(self, value: list[Token]) -> None:
        self._tokens = value

    @property
    def is_thin(self) -> bool:
        return self._tokens is None

    def thin(self) -> None:
        """Drop the tokens when the host can read them again (they are read when asked)."""
        if self.fingerprint is not None and getattr(self.host, "rereads", False):
            self._tokens = None

    def _fields(self) -> tuple:
        return (self.kind, self.entry, self.tokens, self.host, self.span, self.env, self.anchor,
                self.image, self.env_complete, self.fingerprint)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # as the dataclass it was: mutable, unhashable

    def __repr__(self) -> str:
        names = ("kind", "entry", "tokens", "host", "span", "env", "anchor", "image",
                 "env_complete", "fingerprint")
        return "Launch(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, self._fields())) + ")"


class EnvMap(dict):
    """Environment variables a document sets for a launch; `complete` when the document
    shows the whole environment (see Launch.env_complete)."""

    complete = False


# How many times a LineIndex was asked for a line number: the engine's cache notes whether
# a launch's checks did (their messages may then name lines, so moving is not enough).
LINE_READS = [0]


_LONE_CR = re.compile(r"\r(?!\n)")


def _offsets(text: str) -> array:
    """An empty array that holds any offset of `text` (4-byte items below 2**31)."""
    return array("i" if len(text) < 2**31 - 1 else "q")


class LineIndex:
    """Maps string offsets to (line, UTF-16 column) and back."""

    def __init__(self, text: str):
        self.text = text
        starts = _offsets(text)
        starts.append(0)
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        # The lines the formats read (a shell ends a line at \n only). An array of machine
        # integers: a list of 100,000 Python ints took 4 MB, the array 0.4 MB.
        self.starts = starts
        # Positions (LSP, and the command line's line:col) count lines as editors do: ended
        # by \n, \r\n or a lone \r, nothing else (not a form feed, NEL or U+2028, which
        # Python's splitlines would also take).
        self.lsp_starts = starts
        if "\r" in text:
            lone = [m.end() for m in _LONE_CR.finditer(text)]
            if lone:
                both = _offsets(text)
                both.extend(sorted(starts.tolist() + lone))
                self.lsp_starts = both
        self.ascii = text.isascii()

    @classmethod
    def edited(cls, old: "LineIndex", text: str, p: int, s: int) -> "LineIndex":
        """The index of `text`, which shares its first `p` and last `s` characters with
        `old.text`: the lines outside the edit are taken from `old` (moved), the edit's
        own are found again."""
        if "\r" in text or "\r" in old.text or old.starts.typecode != _offsets(text).typecode:
            return cls(text)
        self = cls.__new__(cls)
        self.text = text
        starts = old.starts
        d = len(text) - len(old.text)
        tail_from = len(old.text) - s  # old offsets >= this are in the shared end
        # Old line starts whose newline (at start - 1) lies before the edit, or in the end.
        keep = bisect.bisect_right(starts, p)
        cut = bisect.bisect_right(starts, tail_from)
        new = starts[:keep]
        find = text.find
        pos = find("\n", p, len(text) - s)
        while pos != -1:
            new.append(pos + 1)
            pos = find("\n", pos + 1, len(text) - s)
        if d == 0:
            new.extend(starts[cut:])
        else:
            # 8,192 moved offsets at a time: a list of them all was 3.6 MB for 100,000 lines.
            for k in range(cut, len(starts), 8192):
                new.extend([x + d for x in starts[k:k + 8192]])
        self.starts = new
        self.lsp_starts = new
        self.ascii = text.isascii()
        return self

    def line_of(self, offset: int) -> int:
        LINE_READS[0] += 1
        return bisect.bisect_right(self.starts, offset) - 1

    def line_start(self, line: int) -> int:
        return self.starts[line]

    def line_end(self, line: int) -> int:
        """Offset of the line's end, before its newline."""
        if line + 1 < len(self.starts):
            return self.starts[line + 1] - 1
        return len(self.text)

    def position(self, offset: int) -> tuple[int, int]:
        """The LSP position of an offset: line (as editors count lines) and UTF-16 column."""
        offset = max(0, min(offset, len(self.text)))
        if self.lsp_starts is self.starts:
            line = self.line_of(offset)
        else:
            line = bisect.bisect_right(self.lsp_starts, offset) - 1
        start = self.lsp_starts[line]
        if self.ascii:
            return line, offset - start
        segment = self.text[start:offset]
        return line, len(segment.encode("utf-16-le")) // 2

    def offset(self, line: int, character: int) -> int:
        """The offset of an LSP position (clamped to its line's end)."""
        starts = self.lsp_starts
        if line >= len(starts):
            return len(self.text)
        start = starts[line]
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self.text)
        if start < end < len(self.text) and self.text[end] == "\n" and self.text[end - 1] == "\r":
            end -= 1  # a \r\n ends the line: the \r is not in it
        if self.ascii:
            return min(start + character, end)
        units = 0
        pos = start
        while pos < end and units < character:
            units += 2 if ord(self.text[pos]) > 0xFFFF else 1
            pos += 1
        return pos
