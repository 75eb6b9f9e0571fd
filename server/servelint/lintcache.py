"""Per-document memory of a lint, so that an edit re-lints only the launches it touched.

The caller (the language server, fix-all) keeps one `LintCache` per document and passes it
to `engine.lint(..., cache=cache)`. Each launch's findings are kept under a key made of
everything that decides them (see `launch_key`): the text of the lines around the launch
(a digest of it), the launch as the extractor read it with offsets relative to those lines,
its release and the rule set. A later lint that meets the same key re-uses the findings with their offsets
moved to where the lines now are. Settings, path and format are checked per lint: when
they change, everything is forgotten. See docs/architecture.md, "Incremental linting".
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Sequence

from servelint.model import Edit, Finding, Fix, Launch, LineIndex, Related, Span, Token


@dataclass(slots=True)
class Entry:
    findings: Sequence[Finding]  # offsets relative to the window start (() when none)
    notices: tuple[str, ...]
    rules: Any  # the RuleSet object the findings were made with (compared by identity)
    model_file: tuple[str, tuple | None] | None  # (config.json path, its stat) or None
    line: int | None  # the window's first line when a message depends on line numbers


@dataclass
class LintCache:
    """What one document's last lint learned (owned by the caller, one per document)."""

    signature: tuple | None = None
    entries: dict[tuple, Entry] = field(default_factory=dict)
    # Counters for tests and benchmarks: launches whose checks ran / were re-used.
    ran: int = 0
    reused: int = 0
    extras: dict[str, Any] = field(default_factory=dict)  # per-format extraction memory

    def begin(self, signature: tuple) -> dict[tuple, Entry]:
        """Start a lint; returns the dict the lint fills (entries it used or made)."""
        if signature != self.signature:
            self.signature = signature
            self.entries = {}
            self.extras = {}
        return {}

    def finish(self, used: dict[tuple, Entry]) -> None:
        self.entries = used  # only the launches of the latest text are kept

    def clear(self) -> None:
        self.signature = None
        self.entries = {}
        self.extras = {}


def file_stat(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def fingerprint(launch: Launch) -> tuple:
    """The launch as the extractor read it, offsets relative to launch.span.start:
    (lowest offset, highest offset, words from another file, everything else as one
    string). Kept on the launch.

    The last item is a 128-bit digest of the repr of a tuple of str, int, bool and None
    values (a repr tells two such tuples apart exactly; a plain word, its text as written
    and nothing else set, is written (start, text)). A tuple per word took ~100 bytes a
    word of every launch of the document (19 MB for 11,110 launches), the repr itself
    ~600 bytes a launch (6.7 MB), the digest 49; two launches read differently share a
    digest with a chance of 2**-128."""
    known = launch.fingerprint
    if known is not None:
        return known
    base = launch.span.start
    e = launch.entry
    lo = min(base, launch.anchor, e.span.start)
    hi = max(launch.span.end, e.span.end)
    toks: list[tuple] = []
    foreign = False
    for t in launch.tokens:
        s = t.span
        if t.origin is not None:
            foreign = True
        elif s.start < lo:
            lo = s.start
        if s.end > hi and t.origin is None:
            hi = s.end
        text = t.text
        if text is not None and t.raw == text and s.end - s.start == len(text) \
                and not t.prefix and not t.splat and not t.placeholder and t.origin is None:
            toks.append((s.start - base, text))
        else:
            toks.append((s.start - base, s.end - base, text, t.prefix, t.splat, t.raw,
                         t.placeholder, t.origin))
    image = None
    if launch.image is not None:
        image = (launch.image[0], launch.image[1].start - base, launch.image[1].end - base)
    host = launch.host
    fp = (lo - base, hi - base, foreign, digest(repr((
        launch.kind, type(host).__name__, host.name, host.quote_context,
        launch.span.end - base, launch.anchor - base, e.span.start - base, e.span.end - base,
        e.text, e.raw, toks, sorted(launch.env.items()), launch.env_complete, image))))
    launch.fingerprint = fp
    return fp


def digest(text: str) -> bytes:
    """16 bytes standing for `text` in a key kept per launch (a fingerprint, the lines
    around a launch): the text itself is in the document, and a copy per launch was most
    of what a large script's cache kept (issue 16: memory). hashlib is imported on the
    first call: a cold check of one file keeps no cache and never pays for it."""
    if not _BLAKE2B:
        from hashlib import blake2b
        _BLAKE2B.append(blake2b)
    return _BLAKE2B[0](text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_BLAKE2B: list = []


def window(index: LineIndex, launch: Launch) -> tuple[int, int, int]:
    """(first line, start, end) of the lines a launch's findings may touch: the lines of its
    words and anchor, with one line of margin each side."""
    fp = fingerprint(launch)
    base = launch.span.start
    first = max(0, index.line_of(base + fp[0]) - 1)
    last = min(len(index.starts) - 1, index.line_of(base + fp[1]) + 1)
    return first, index.line_start(first), index.line_end(last)


def launch_key(text: str, ws: int, we: int, launch: Launch, release: tuple,
               rules_id: int) -> tuple | None:
    """Everything a launch's findings depend on, offsets relative to `ws`; None when the
    launch reaches outside the document (words from another file)."""
    fp = fingerprint(launch)
    if fp[2]:
        return None
    return (digest(text[ws:we]), launch.span.start - ws, fp, release, rules_id)


def _inside(span: Span, ws: int, we: int) -> bool:
    return ws <= span.start and span.end <= we


def relative(findings: list[Finding], ws: int, we: int) -> Sequence[Finding] | None:
    """The findings with offsets relative to `ws`, or None when one reaches outside
    [ws, we] (then they cannot be moved with the window and are not kept); () when there
    are none (most launches of a large file: an empty list each was 56 bytes)."""
    if not findings:
        return ()
    for f in findings:
        if not _inside(f.span, ws, we):
            return None
        for r in f.related:
            if r.path is None and not _inside(r.span, ws, we):
                return None
        for x in f.fixes:
            for e in x.edits:
                if not _inside(e.span, ws, we):
                    return None
    return [moved(f, -ws) for f in findings]


def _sp(s: Span, d: int) -> Span:
    return Span(s.start + d, s.end + d)


def moved(f: Finding, d: int, launch_index: int | None = None) -> Finding:
    """A new finding (nothing shared with `f` that a later pass mutates), offsets + d. The
    copy shares `f`'s JSON holder (serialize.diagnostics_parts): moved where its lines are
    the same, it is not serialized again."""
    if f.serial is None:
        f.serial = [None, None]
    return Finding(
        f.code, f.severity, f.message, _sp(f.span, d),
        [Related(_sp(r.span, d) if r.path is None else r.span, r.message, r.path, r.mark,
                 r.range) for r in f.related],
        [Fix(x.title, [Edit(_sp(e.span, d), e.new_text) for e in x.edits], x.preferred, x.safe)
         for x in f.fixes],
        f.deprecated, f.unnecessary, f.launch_index if launch_index is None else launch_index,
        f.sglang, f.serial)


# The memory an extractor may keep between lints of one document (set by the engine while
# it extracts with a cache; None otherwise). Each format keeps its own key in the dict.
_EXTRACT_MEMO: ContextVar[dict | None] = ContextVar("servelint_extract_memo", default=None)


def extract_memo() -> dict | None:
    return _EXTRACT_MEMO.get()


def shifted_token(t: Token, d: int) -> Token:
    return Token(Span(t.span.start + d, t.span.end + d), t.text, t.prefix, t.splat, t.raw,
                 t.origin, t.placeholder)


def shifted_launch(launch: Launch, d: int, host: Any) -> Launch:
    """The same launch `d` characters further on, edited through `host`. With d == 0 the
    tokens are shared (nothing downstream changes a token in place); a thin launch
    (model.Launch.thin) gives a thin copy."""
    if d == 0:
        tokens = launch._tokens
        entry = launch.entry
    elif launch.is_thin:  # the copy is thin too: its host reads its words where it now is
        tokens = None
        entry = shifted_token(launch.entry, d)
    else:
        new = {id(t): shifted_token(t, d) for t in launch.tokens}
        tokens = [new[id(t)] for t in launch.tokens]
        entry = new.get(id(launch.entry)) or shifted_token(launch.entry, d)
    image = launch.image
    if image is not None and d:
        image = (image[0], Span(image[1].start + d, image[1].end + d))
    return Launch(launch.kind, entry, tokens, host,
                  Span(launch.span.start + d, launch.span.end + d), launch.env,
                  launch.anchor + d, image, launch.env_complete, fingerprint(launch))


class ShiftedHost:
    """A host made for an earlier text, for a launch that moved `d` characters with its
    words unchanged: edits are asked of the old host at the old offsets and moved back.
    `text` and `index` are the new document's."""

    inner: Any
    d: int

    def __init__(self, inner: Any, d: int, text: str, index: LineIndex):
        while isinstance(inner, ShiftedHost):  # moved again: one hop to the original
            d += inner.d
            inner = inner.inner
        self.inner = inner
        self.d = d
        self.text = text
        self.index = index
        self.name = inner.name
        self.quote_context = inner.quote_context

    def _old(self, t: Token) -> Token:
        return shifted_token(t, -self.d) if self.d else t

    def _new(self, e: Edit | None) -> Edit | None:
        if e is None or not self.d:
            return e
        return Edit(Span(e.span.start + self.d, e.span.end + self.d), e.new_text)

    def quote(self, value: str) -> str | None:
        return self.inner.quote(value)

    def replace(self, token: Token, value: str) -> Edit | None:
        return self._new(self.inner.replace(self._old(token), value))

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        return self._new(self.inner.replace_words(self._old(first), self._old(last), words))

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        return self._new(self.inner.insert_after(self._old(token), words))

    def remove(self, first: Token, last: Token) -> Edit | None:
        return self._new(self.inner.remove(self._old(first), self._old(last)))


# --- an edit as the unchanged start and end of the text -------------------------------------


def text_diff(old: str, new: str) -> tuple[int, int]:
    """(P, S): `old` and `new` share their first P and their last S characters (P + S
    never more than either length). Compared in blocks, so a 600 KB text costs a few
    hundred string comparisons made in C, not a loop over characters."""
    n = min(len(old), len(new))
    block = 4096
    p = 0
    while p < n:
        q = min(p + block, n)
        if old[p:q] == new[p:q]:
            p = q
            continue
        while p < q and old[p] == new[p]:
            p += 1
        break
    limit = n - p  # the suffix may not reach back into the prefix
    s = 0
    lo, ln = len(old), len(new)
    while s < limit:
        t = min(s + block, limit)
        if old[lo - t:lo - s] == new[ln - t:ln - s]:
            s = t
            continue
        while s < t and old[lo - s - 1] == new[ln - s - 1]:
            s += 1
        break
    return p, s


class Moved:
    """A launch of an earlier text, `d` characters further on, not yet copied: the copy
    (shifted_launch) is made when someone reads it (LaunchList). `base` is never a Moved."""

    __slots__ = ("base", "d", "host")

    def __init__(self, base: Launch, d: int, host: Any):
        self.base = base
        self.d = d
        self.host = host

    @property
    def start(self) -> int:
        return self.base.span.start + self.d

    def again(self, d: int, host: Any) -> "Moved":
        return Moved(self.base, self.d + d, host)

    def make(self) -> Launch:
        return shifted_launch(self.base, self.d, self.host)


def moved_again(item: "Launch | Moved", d: int, host: Any) -> "Launch | Moved":
    """`item` (a launch or a Moved one) `d` characters further on, through `host`."""
    if isinstance(item, Moved):
        return item.again(d, host)
    return Moved(item, d, host)


def raw_start(item: "Launch | Moved") -> int:
    return item.start if isinstance(item, Moved) else item.span.start


def raw_fingerprint(item: "Launch | Moved") -> Any:
    return item.base.fingerprint if isinstance(item, Moved) else item.fingerprint


class LaunchList(list):
    """A document's launches, some of them Moved ones that are copied when first read
    (an edit moves the launches below it; most are never read again before the next
    edit). Reading by index, slice or iteration gives Launch objects; `raw(i)` gives what
    is stored, without copying."""

    def raw(self, i: int) -> "Launch | Moved":
        return list.__getitem__(self, i)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        v = list.__getitem__(self, i)
        if type(v) is Moved:
            v = v.make()
            list.__setitem__(self, i, v)
        return v

    def __iter__(self):
        for k in range(len(self)):
            yield self[k]

    def sort(self, *args, **kwargs):
        raise TypeError("a LaunchList is made in document order")


@dataclass(slots=True)
class Prev:
    """What the engine keeps of a document's last lint, per launch, so that the next lint
    takes the launches an edit did not reach as they were (engine.lint)."""

    text: str
    fmt: str
    index: LineIndex
    raw: list  # the launches as stored (Launch or Moved)
    releases: list
    found: list  # per launch: its findings (absolute offsets), or None: not to be re-used
    notices: list  # per launch: the notices it added
    parsed: list  # per launch: what result.parsed held (a ParsedLaunch or a later one)
    ws: list  # per launch: its window (lintcache.window) start and end in `text`
    we: list
    lines: list  # per launch: its messages name line numbers
    models: list  # per launch: (config.json path, its stat) or None
    rules: list  # per launch: the RuleSet it was checked with
    varies: list  # per launch: its release depends on variables set elsewhere
    context: tuple | None  # what every launch's release depended on, when it is the same for all
    model_files: dict  # every model config.json its launches read: path -> its stat then
    rule_sets: dict  # release -> the RuleSet its launches were checked with
    keys: list  # per launch: its LintCache entry's key, or None
