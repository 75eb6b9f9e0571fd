"""Flag catalogs: what SGLang's own argparse parser accepts, per SGLang release.

Every release's catalog (docs/catalog.md, schemas/catalog.schema.json) is generated
from SGLang's parser by `tools/catalog_release.py` (the same records as
`tools/gen_catalog.py`) and packed by `tools/pack_catalogs.py` into one file,
`data/releases.json.gz`, where an option record shared by several releases is
stored once. Nothing here is edited by hand.

- `load_catalog(version)` builds the `Catalog` of one packed release;
- `known_versions()`, `newest_version()`, `version_key()` and `resolve_version()`
  say which releases there are and which one answers for a version a user names;
- `history()` (built on first use) answers when an option string, a default or a
  choice came and went: `History`, `Event` (module `servelint.catalog.timeline`).
"""

from __future__ import annotations

import bisect
import gc
import json
import marshal
import os
import re
import sys
import zlib
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from servelint.lazy import LazyPattern

if TYPE_CHECKING:
    from servelint.catalog.timeline import EVENT_KINDS, Event, History

# The newest packed release; tests/test_catalog_releases.py holds it to the pack.
DEFAULT_VERSION = "0.5.23"
PACK_NAME = "releases.json.gz"
PACK_FORMAT = "servelint-catalogs/2"


_OPTION_FIELDS = ("names", "dest", "kind", "nargs", "action", "type", "choices", "default",
                  "help", "hidden", "metavar", "required", "deprecated", "removed", "message",
                  "replacement")


class Option:
    """One option of a release's parser. What `@dataclass(frozen=True, slots=True)` made
    (the same init, equality, hash, repr and frozen slots), written out: the generated
    version cost every cold start its code generation and a second class (issue 16)."""

    __slots__ = _OPTION_FIELDS

    names: tuple[str, ...]
    dest: str
    kind: str  # flag | value | optional | list | bool_optional
    nargs: Any
    action: str
    type: str | None
    choices: tuple[Any, ...] | None
    default: Any
    help: str | None
    hidden: bool
    metavar: Any
    required: bool
    deprecated: bool
    removed: bool
    message: str | None
    replacement: str | None

    def __init__(self, names: tuple[str, ...], dest: str, kind: str, nargs: Any, action: str,
                 type: str | None, choices: tuple[Any, ...] | None, default: Any,
                 help: str | None, hidden: bool, metavar: Any, required: bool, deprecated: bool,
                 removed: bool, message: str | None, replacement: str | None) -> None:
        put = object.__setattr__
        put(self, "names", names)
        put(self, "dest", dest)
        put(self, "kind", kind)
        put(self, "nargs", nargs)
        put(self, "action", action)
        put(self, "type", type)
        put(self, "choices", choices)
        put(self, "default", default)
        put(self, "help", help)
        put(self, "hidden", hidden)
        put(self, "metavar", metavar)
        put(self, "required", required)
        put(self, "deprecated", deprecated)
        put(self, "removed", removed)
        put(self, "message", message)
        put(self, "replacement", replacement)

    def _values(self) -> tuple:
        return (self.names, self.dest, self.kind, self.nargs, self.action, self.type,
                self.choices, self.default, self.help, self.hidden, self.metavar,
                self.required, self.deprecated, self.removed, self.message, self.replacement)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in _OPTION_FIELDS)
        return f"Option({inner})"

    def __setattr__(self, name: str, value: Any) -> None:
        from dataclasses import FrozenInstanceError
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self) -> tuple:
        return self._values()

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(_OPTION_FIELDS, state):
            object.__setattr__(self, name, value)

    @property
    def name(self) -> str:
        """The spelling SGLang documents: the first long name that is not a --no- form."""
        for n in self.names:
            if n.startswith("--") and not (self.kind == "bool_optional" and n.startswith("--no-")):
                return n
        return self.names[0]

    @property
    def takes_value(self) -> bool:
        return self.kind in ("value", "optional", "list")

    @property
    def repeatable(self) -> bool:
        return self.action in ("append", "append_const", "count", "extend")

    @property
    def is_boolean(self) -> bool:
        return self.kind in ("flag", "bool_optional")


def _option(raw: dict[str, Any]) -> Option:
    choices = raw.get("choices")
    return Option(
        names=tuple(raw["names"]),
        dest=raw["dest"],
        kind=raw["kind"],
        nargs=raw.get("nargs"),
        action=raw.get("action") or "store",
        type=raw.get("type"),
        choices=tuple(choices) if choices is not None else None,
        default=raw.get("default"),
        help=raw.get("help"),
        hidden=bool(raw.get("hidden")),
        metavar=raw.get("metavar"),
        required=bool(raw.get("required")),
        deprecated=bool(raw.get("deprecated")),
        removed=bool(raw.get("removed")),
        message=raw.get("message"),
        replacement=raw.get("replacement"),
    )


class Catalog:
    def __init__(self, data: dict[str, Any]):
        self._index(data.get("engine", "sglang"), data["version"], data.get("generated", ""),
                    [_option(raw) for raw in data["options"]])

    @classmethod
    def _of(cls, engine: str, version: str, generated: str, options: list[Option]) -> Catalog:
        catalog = cls.__new__(cls)
        catalog._index(engine, version, generated, options)
        return catalog

    def _index(self, engine: str, version: str, generated: str, options: list[Option]) -> None:
        self.engine = engine
        self.version = version
        self.generated = generated
        self.options: list[Option] = options
        self.by_name: dict[str, Option] = {}
        self.by_dest: dict[str, Option] = {}
        for opt in options:
            for n in opt.names:
                self.by_name[n] = opt
            # The first registration of a dest is the one SGLang documents.
            self.by_dest.setdefault(opt.dest, opt)
        self.sorted_names = sorted(self.by_name)

    def lookup(self, name: str) -> Option | None:
        return self.by_name.get(name)

    def prefix_matches(self, prefix: str) -> list[str]:
        """Every option string that starts with `prefix`, as argparse's abbreviation
        matching sees them (Python 3.11: each string counts, aliases included)."""
        names = self.sorted_names
        i = bisect.bisect_left(names, prefix)
        out = []
        while i < len(names) and names[i].startswith(prefix):
            out.append(names[i])
            i += 1
        return out

    def long_names(self) -> list[str]:
        return [n for n in self.sorted_names if n.startswith("--")]


# ---------------------------------------------------------------------------
# Versions (PEP 440, the subset SGLang uses and a bit more; no dependency).

_VERSION = LazyPattern(
    r"""^\s*v?
    (?:(?P<epoch>\d+)!)?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre_l>a|alpha|b|beta|c|rc|pre|preview)[-_.]?(?P<pre_n>\d*))?
    (?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d*))?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d*))?
    (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?
    \s*$""",
    re.IGNORECASE | re.VERBOSE,
)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}

VersionKey = tuple[int, tuple[int, ...], tuple[int, int], int, tuple[int, int]]


def version_key(version: str) -> VersionKey:
    """A sort key ordering versions as PEP 440 does (0.5.0rc2 < 0.5.1 < 0.5.1.post1 <
    0.5.2rc0 < 0.5.2). A leading `v` is accepted; a local part (`+cu124`) is ignored.
    Raises ValueError for text that is not a version."""
    m = _VERSION.match(version)
    if not m:
        raise ValueError(f"not a version: {version!r}")
    release = tuple(int(p) for p in m["release"].split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    has_post = m["post_n1"] is not None or m["post_l"] is not None
    has_dev = m["dev_l"] is not None
    if m["pre_l"]:
        pre = (_PRE_RANK[m["pre_l"].lower()], int(m["pre_n"] or 0))
    elif has_dev and not has_post:
        pre = (-1, 0)  # 1.0.dev0 sorts before 1.0a0
    else:
        pre = (3, 0)  # a final release sorts after its pre-releases
    post = int(m["post_n1"] or m["post_n2"] or 0) if has_post else -1
    dev = (0, int(m["dev_n"] or 0)) if has_dev else (1, 0)
    return (int(m["epoch"] or 0), release, pre, post, dev)


# ---------------------------------------------------------------------------
# The pack.

class _Pack:
    """`data/releases.json.gz` decoded (format: tools/pack_catalogs.py): the value
    table, the records (one value id per column), the releases by version with their
    record ids decoded on first use, and the versions in ascending order."""

    def __init__(self, doc: dict[str, Any], args: list[tuple] | None = None):
        if doc.get("format") != PACK_FORMAT:
            raise ValueError(f"unknown catalog pack format {doc.get('format')!r}")
        self.fields: list[str] = doc["fields"]
        self.columns: list[list[str]] = doc["columns"]
        self.values: list[Any] = doc["values"]
        self.records: list[list[int]] = doc["records"]
        self.releases: dict[str, dict[str, Any]] = {r["version"]: r for r in doc["releases"]}
        # tools/pack_catalogs.py writes the releases in ascending PEP 440 order
        self.versions: tuple[str, ...] = tuple(self.releases)
        self._rids: dict[str, list[int]] = {}
        self._options: list[Option | None] = [None] * len(self.records)
        # each record's Option arguments (`option_args`), when the cache file had them
        self._args = args if args is not None and len(args) == len(self.records) else None
        # where each field is: (column, index in the column's array or -1)
        self._where = {f: (c, -1 if len(col) == 1 else col.index(f))
                       for c, col in enumerate(self.columns) for f in col}
        self._slots = [self._where[f] for f in (
            "names", "dest", "kind", "nargs", "action", "type", "choices", "default", "help",
            "hidden", "metavar", "required", "deprecated", "removed", "message", "replacement")]
        self._names_col = self._where["names"][0]
        self._dest_col = self._where["dest"][0]

    def field(self, rid: int, name: str) -> Any:
        c, i = self._where[name]
        value = self.values[self.records[rid][c]]
        return value if i < 0 else value[i]

    def names(self, rid: int) -> list[str]:
        return self.values[self.records[rid][self._names_col]]

    def dest(self, rid: int) -> str:
        return self.values[self.records[rid][self._dest_col]]

    def option_args(self, rid: int) -> tuple:
        """The arguments of record `rid`'s `Option`, in its fields' order."""
        values = self.values
        cells = [values[v] for v in self.records[rid]]
        (names, dest, kind, nargs, action, type_, choices, default, help_, hidden, metavar,
         required, deprecated, removed, message, replacement) = [
            cells[c] if i < 0 else cells[c][i] for c, i in self._slots]
        return (tuple(names), dest, kind, nargs, action or "store", type_,
                tuple(choices) if choices is not None else None, default, help_,
                bool(hidden), metavar, bool(required), bool(deprecated), bool(removed),
                message, replacement)

    def option(self, rid: int) -> Option:
        """The `Option` of record `rid`, built once and shared by every release holding it."""
        opt = self._options[rid]
        if opt is None:
            opt = self._options[rid] = Option(
                *(self._args[rid] if self._args is not None else self.option_args(rid)))
        return opt

    def options(self, rids: list[int]) -> list[Option]:
        """`option()` of each record id, without pauses for the cycle collector: the
        objects built here are not cycles, and collecting while thousands of them are
        made costs about a sixth of the time."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            return [self.option(rid) for rid in rids]
        finally:
            if enabled:
                gc.enable()

    def record(self, rid: int) -> dict[str, Any]:
        """Record `rid` as the catalog JSON object (a fresh copy)."""
        from copy import deepcopy

        return {name: deepcopy(self.field(rid, name)) for name in self.fields}

    def release(self, version: str) -> dict[str, Any]:
        try:
            return self.releases[version]
        except KeyError:
            raise KeyError(f"no flag catalog for SGLang {version}") from None

    def release_rids(self, version: str) -> list[int]:
        """The record ids of `version`'s options, in registration order."""
        rids = self._rids.get(version)
        if rids is None:
            rids = self._rids[version] = [int(x) for x in
                                          self.release(version)["options"].split(",")]
        return rids


def _read_pack() -> bytes:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", PACK_NAME)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:  # not a plain folder (a zip): ask the import system
        from importlib import resources

        return (resources.files("servelint.catalog") / "data" / PACK_NAME).read_bytes()


@lru_cache(maxsize=1)
def _pack() -> _Pack:
    raw = _read_pack()
    enabled = gc.isenabled()
    gc.disable()  # as in _Pack.options: many small containers, no cycles
    try:
        return _Pack(*_decoded(raw))
    finally:
        if enabled:
            gc.enable()


PACK_CACHE = "catalogs.marshal"
_PACK_CACHE_LAYOUT = 2  # what the file holds: (the document, each record's Option arguments)
# How often the decoded pack came from the cache file or was written to it in this process
# (tests count them; the linter never reads them).
PACK_STATS = {"cache_read": 0, "cache_written": 0}


def _decoded(raw: bytes) -> tuple[dict[str, Any], list[tuple]]:
    """The pack's JSON document, and each record's `Option` arguments. Unzipping and
    decoding the pack and making the arguments of a release's options was a tenth of a
    cold `servelint check` of one file (issue 16): both are also kept in the cache folder
    (catalog/cache.py) as marshal data (Python's bytecode format, read several times
    faster), under a first line holding its key (the pack's CRC-32 and size, this Python's
    bytecode tag and marshal version, the file's layout) and the CRC-32 of the data after
    it. A file with another key or a wrong CRC, one that does not load or is not the
    expected shape, or no cache folder: the pack is decoded, and the file written again
    when the folder allows."""
    from servelint.catalog.cache import read_cache, write_cache

    key = (f"{PACK_FORMAT} {zlib.crc32(raw):08x} {len(raw)} {sys.implementation.cache_tag} "
           f"{marshal.version} {_PACK_CACHE_LAYOUT}").encode()
    cached = read_cache(PACK_CACHE)
    if cached is not None:
        head, _, body = cached.partition(b"\n")
        if head == key + b" %08x" % zlib.crc32(body):
            try:
                got = marshal.loads(body)
            except (ValueError, EOFError, TypeError):
                got = None
            if isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], dict) \
                    and got[0].get("format") == PACK_FORMAT and isinstance(got[1], list) \
                    and len(got[1]) == len(got[0].get("records", ())):
                PACK_STATS["cache_read"] += 1
                return got
    doc = json.loads(zlib.decompress(raw, 31))  # 31: the gzip format
    pack = _Pack(doc)
    args = [pack.option_args(rid) for rid in range(len(pack.records))]
    body = marshal.dumps((doc, args))
    if write_cache(PACK_CACHE, key + b" %08x\n" % zlib.crc32(body) + body):
        PACK_STATS["cache_written"] += 1
    return doc, args


def known_versions() -> tuple[str, ...]:
    """Every packed release, ascending in PEP 440 order."""
    return _pack().versions


def newest_version() -> str:
    return _pack().versions[-1]


def available_versions() -> list[str]:
    """`known_versions()` as a list (the name older callers use)."""
    return list(known_versions())


def _known(version: str) -> str | None:
    """The packed release `version` names (`v0.4.6`, `0.4.6`), else None."""
    pack = _pack()
    if version in pack.releases:
        return version
    try:
        key = version_key(version)
    except ValueError:
        return None
    for known in pack.versions:
        if version_key(known) == key:
            return known
    return None


@lru_cache(maxsize=4)
def load_catalog(version: str = DEFAULT_VERSION) -> Catalog:
    """The catalog of packed release `version` (`v0.4.6` is read as `0.4.6`; `auto`,
    `latest` and `newest` are the newest). Raises KeyError for a release that is not
    packed: `resolve_version` picks a stand-in."""
    pack = _pack()
    if version in ("auto", "latest", "newest"):  # the setting's "auto": no release named
        return load_catalog(newest_version())
    known = _known(version)
    if known is None:
        raise KeyError(f"no flag catalog for SGLang {version}")
    if known != version:
        return load_catalog(known)
    rel = pack.release(known)
    v = pack.values
    return Catalog._of(v[rel["engine"]], known, v[rel["generated"]],
                       pack.options(pack.release_rids(known)))


def catalog_data(version: str) -> dict[str, Any]:
    """Packed release `version` as its catalog JSON document (docs/catalog.md), exactly
    as tools/catalog_release.py wrote it: same keys, same order, same values."""
    pack = _pack()
    known = _known(version)
    if known is None:
        raise KeyError(f"no flag catalog for SGLang {version}")
    rel = pack.release(known)
    v = pack.values
    return {
        "generated": v[rel["generated"]],
        "attribution": v[rel["attribution"]],
        "engine": v[rel["engine"]],
        "version": known,
        "python": v[rel["python"]],
        "options": [pack.record(rid) for rid in pack.release_rids(known)],
    }


class Resolved(NamedTuple):
    version: str  # the packed release to check with
    exact: bool  # it is the release asked for
    notice: str | None  # one sentence for the user when it is not


def resolve_version(version: str) -> Resolved:
    """Which packed release answers for SGLang `version`: itself when packed (`v0.4.6`
    and `0.4.6` alike; `latest`, `newest` and `auto` are the newest), else the nearest
    older packed release, or the oldest/newest one when `version` lies outside them,
    with a notice."""
    versions = known_versions()
    newest = versions[-1]
    text = version.strip()
    if text.lower() in ("latest", "newest", "auto"):
        return Resolved(newest, True, None)
    known = _known(text)
    if known is not None:
        return Resolved(known, True, None)
    try:
        key = version_key(text)
    except ValueError:
        return Resolved(newest, False, f"{text!r} is not an SGLang version; checking with "
                                       f"{newest}, the newest release servelint knows")
    keys = [version_key(v) for v in versions]
    i = bisect.bisect_right(keys, key)
    if i == 0:
        oldest = versions[0]
        return Resolved(oldest, False, f"servelint has no catalog for SGLang {text}, which is "
                                       f"older than any it knows; checking with {oldest}, "
                                       f"the oldest release it knows")
    if i == len(versions):
        return Resolved(newest, False, f"servelint has no catalog for SGLang {text}; checking "
                                       f"with {newest}, the newest release it knows")
    older = versions[i - 1]
    return Resolved(older, False, f"servelint has no catalog for SGLang {text}; checking with "
                                  f"{older}, the nearest older release it knows")


@lru_cache(maxsize=1)
def history() -> History:
    """When every option string, default and choice came and went, across all packed
    releases. Built on first call (see bench/catalog_load.py for its cost)."""
    from servelint.catalog.timeline import History

    return History(_pack())


def __getattr__(name: str) -> Any:
    # Event, History and EVENT_KINDS live in servelint.catalog.timeline (not named
    # `history`, which would shadow the function once imported), loaded on first use.
    if name in ("Event", "History", "EVENT_KINDS"):
        from servelint.catalog import timeline

        return getattr(timeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
