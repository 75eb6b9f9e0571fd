"""Which SGLang release a launch runs on, as its files declare it.

`detect_release` reads, in this order (the explicit `sglang-version` setting is the
engine's, before this):

1. the image of the launch's own container (`Launch.image`, set by the extractors: the
   `docker run` image word, the Kubernetes container's or compose service's `image:`, the
   CI job's container, the Dockerfile stage's base image); `latest`, `dev`, `nightly-...`
   tags mean the newest release. In a Dockerfile, an exact `sglang==X` installed in the
   launch's own stage replaces the base image's SGLang and wins over it;
2. an exact pin in the same file (`pip install "sglang[all]==0.4.6.post1"`, `sglang==` in a
   list, `ARG/ENV SGLANG_VERSION=`, `git clone -b v0.4.6 ... sgl-project/sglang`, `git
   checkout v0.4.6` after such a clone, `git+https://github.com/sgl-project/sglang@v0.4.6`):
   the nearest one above the launch, else the nearest below. In Python files and notebooks
   an SGLang image named in a string (Modal's `Image.from_registry(...)`) comes next;
3. the project: from the file's directory up to `root` (or the first directory holding
   `.git`, or the filesystem root), nearest first: lock files (uv.lock, poetry.lock,
   pdm.lock, pylock.toml), requirements*.txt / requirements*.in / constraints*.txt (with
   their `-r`/`-c` includes), pyproject.toml;
4. a range (`sglang>=0.4.9`, `~=0.4.6`, `<0.5`, Poetry `^0.4.6`), in the file and then the
   project: without an upper bound the newest release; with one, the newest packed release
   inside it;
5. the newest release.

Nothing is executed. Project files are read with a size cap, only when they are regular
files (a FIFO, a device or a directory with such a name is skipped without blocking), and
skipped when they hold NUL bytes; what was read is cached by (path, mtime, size).
"""

from __future__ import annotations

import bisect
import os
import re
import stat
import sys
from typing import Literal

from servelint.lazy import LazyPattern, Record
from servelint.model import Launch, LineIndex, Span


def _toml():
    """tomllib (tomli before Python 3.11), imported when a TOML file is read."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return tomllib


class ReleaseHint(Record, frozen=True):
    version: str | None  # the declared release, normalized ("0.4.9.post2"); None: the newest
    source: str  # "image" | "pin" | "project" | "floor" | "newest"
    detail: str  # for people: where it was read, and what was assumed
    span: Span | None  # where in this document it was found, else None
    path: str | None = None  # the other file it was read from (source "project"), else None


# --- versions ------------------------------------------------------------------------------------

_VERSION = LazyPattern(r"v?(\d+)\.(\d+)(?:\.(\d+))?((?:a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?", re.I)


def normalize(text: str) -> str | None:
    """`v0.4.9.post2` -> `0.4.9.post2`, `0.5` -> `0.5.0`; None for text that is not a
    release version of that shape."""
    m = _VERSION.fullmatch(text.strip())
    if m is None:
        return None
    major, minor, patch, pre, post, dev = m.groups()
    out = f"{int(major)}.{int(minor)}.{int(patch or 0)}"
    return out + (pre or "").lower() + (post or "").lower() + (dev or "").lower()


def _key(version: str):
    from servelint.catalog import version_key
    return version_key(version)


# --- images --------------------------------------------------------------------------------------

# A tag's release: `v0.4.9.post2-cu126`, `v0.5.3rc0-cu126`, `v0.4.9.post2.iaas.dev.2025...`,
# `sglang-0.5.14-rocm720-mi35x-mori-0701` (rocm/sgl-dev), `0.4.6`.
_TAG_VERSION = LazyPattern(
    r"(?:sglang[-_]?)?v?(\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?)(?=$|[-_.+])",
    re.I)
_NEWEST_TAGS = ("latest", "dev", "nightly", "main")


def _sglang_repository(repo: str) -> bool:
    """Whether an image repository is SGLang's: named `sglang` (any registry or
    namespace: `lmsysorg/sglang`, `docker.io/lmsysorg/sglang`, a mirror's `.../sglang`),
    `lmsysorg/sglang-rocm` and the like, or AMD's `rocm/sgl-dev`."""
    parts = repo.lower().split("/")
    name = parts[-1]
    if name == "sglang":
        return True
    owner = parts[-2] if len(parts) >= 2 else ""
    if owner == "lmsysorg" and name.startswith("sglang") and "router" not in name:
        return True
    return owner == "rocm" and name == "sgl-dev"


def _split_image(ref: str) -> tuple[str, str, str | None]:
    """(repository, tag, digest) of an image reference; `docker://`, `docker:` (SkyPilot)
    and `oras://` prefixes dropped, pyxis's `REGISTRY#IMAGE` read as `REGISTRY/IMAGE`."""
    r = ref.strip().strip("'\"").strip()
    low = r.lower()
    for prefix in ("docker://", "oras://", "docker:"):
        if low.startswith(prefix):
            r = r[len(prefix):]
            break
    if "#" in r:  # pyxis: REGISTRY#IMAGE
        r = r.replace("#", "/", 1)
    digest = None
    if "@" in r:
        r, digest = r.split("@", 1)
    slash = r.rfind("/")
    colon = r.rfind(":")
    if colon > slash:
        return r[:colon], r[colon + 1:], digest
    return r, "", digest


def parse_image(ref: str) -> str | None | Literal["newest"]:
    """The SGLang release of an image reference: its tag's version ("0.4.9.post2" for
    `lmsysorg/sglang:v0.4.9.post2-cu126`), "newest" for `latest`, `dev...`, `nightly...`,
    `main...` tags and for no tag at all (Docker pulls `latest`), None when the image is not
    SGLang's, when only a digest pins it, or when its tag names no release."""
    repo, tag, digest = _split_image(ref)
    if not repo or not _sglang_repository(repo):
        return None
    if not tag:
        return None if digest else "newest"
    t = tag.lower()
    if any(t == n or t.startswith((n + "-", n + "_")) for n in _NEWEST_TAGS):
        return "newest"
    m = _TAG_VERSION.match(tag)
    if m is None:
        return None
    return normalize(m.group(1))


# --- variables -------------------------------------------------------------------------------------

_VAR_REF = LazyPattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class _Doc:
    """What is read once per document text and reused for each of its launches: its line
    index, the assignments of each variable, its pins (per format)."""

    def __init__(self, text: str):
        self.text = text
        self._index: LineIndex | None = None
        self._assigns: dict[str, list[tuple[int, str]]] = {}
        self.scans: dict[str, _Scan] = {}
        self._stages: list[int] | None = None

    def line(self, offset: int) -> int:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index.line_of(offset) + 1

    def assignment(self, name: str, before: int) -> tuple[str, int] | None:
        """The value the nearest assignment of `name` above `before` gives it, and its
        offset."""
        found = self._assigns.get(name)
        if found is None:
            found = self._assigns[name] = _assignments(self.text, name)
        i = bisect.bisect_left(found, (before, "")) - 1
        return (found[i][1], found[i][0]) if i >= 0 else None

    def stages(self) -> list[int]:
        if self._stages is None:
            self._stages = _stage_starts(self.text)
        return self._stages

    def scan(self, fmt: str) -> "_Scan":
        found = self.scans.get(fmt)
        if found is None:
            found = self.scans[fmt] = _scan(self, fmt)
        return found


_DOCS: dict[tuple[int, int], _Doc] = {}


def _doc(text: str) -> _Doc:
    key = (len(text), hash(text))
    doc = _DOCS.get(key)
    if doc is not None and doc.text is not text:
        if doc.text == text:
            doc.text = text  # the next launch of this text is found by identity
        else:
            doc = None
    if doc is None:
        if len(_DOCS) >= 2:  # each holds a whole text (a 100,000-line script is 3.6 MB)
            _DOCS.clear()
        doc = _DOCS[key] = _Doc(text)
    return doc


def _assignments(text: str, name: str) -> list[tuple[int, str]]:
    """Every assignment of `name` in `text` as (offset, value): `NAME=v`, `export NAME=v`,
    `ARG NAME=v`, `ENV NAME=v`, `ENV NAME v`, `NAME: v` (YAML env), `- NAME=v`,
    `: "${NAME:=v}"`."""
    n = re.escape(name)
    pattern = re.compile(
        r"^[ \t]*(?:(?:export|local|readonly|declare(?:[ \t]+-\w+)?)[ \t]+|(?:ARG|ENV)[ \t]+|-[ \t]+)?"
        + n + r"(?:=|[ \t]*:[ \t]+)(\"[^\"\n]*\"|'[^'\n]*'|[^\s;#]*)"
        + r"|^[ \t]*(?:ENV)[ \t]+" + n + r"[ \t]+(\"[^\"\n]*\"|'[^'\n]*'|\S+)"
        + r"|^[ \t]*:[ \t]+\"?\$\{" + n + r":?=([^}\n]*)\}",
        re.M)
    out = []
    for m in pattern.finditer(text):
        value = next(g for g in (m.group(1), m.group(2), m.group(3)) if g is not None)
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
            value = value[1:-1]
        out.append((m.start(), value))
    return out


def _substitute(value: str, doc: _Doc, before: int, depth: int = 0) -> tuple[str | None, list[str]]:
    """`value` with `$NAME`, `${NAME}`, `${NAME:-default}` filled in from the assignments
    above `before` (a default when there is none). Returns (None, ...) when a variable has
    no value; the list says what was filled in, for people."""
    if "$" not in value or depth > 3:
        return (value if "$" not in value else None), []
    notes: list[str] = []
    failed = False

    def one(m: re.Match) -> str:
        nonlocal failed
        name = m.group(1) or m.group(4)
        default = m.group(3)
        found = doc.assignment(name, before)
        if found is not None:
            inner, _ = _substitute(found[0], doc, found[1], depth + 1)
            if inner is not None and inner != "":
                notes.append(f"${name} set on line {doc.line(found[1])}")
                return inner
        if default is not None:
            inner, _ = _substitute(default, doc, before, depth + 1)
            if inner is not None:
                notes.append(f"the default of ${name}")
                return inner
        failed = True
        return m.group(0)

    out = _VAR_REF.sub(one, value)
    return (None if failed else out), notes


# --- requirement specifiers --------------------------------------------------------------------------


class _Req(Record, frozen=True):
    """One requirement on sglang: `exact` when it fixes a release, else the range clauses
    ((op, version) with op in >=, >, <, <=)."""

    written: str
    exact: str | None
    clauses: tuple[tuple[str, str], ...] = ()
    start: int = -1  # offsets of `written` in the text it was read from
    end: int = -1


_OP = r"(?:===|==|~=|>=|<=|!=|>|<)"
_SPEC_ITEM = LazyPattern(r"\s*(" + _OP + r")\s*(\$\{[^}\n]*\}|\$\w+|[\w.*+!-]+)")


def _bump(version: str, part: int) -> str | None:
    """The release after `version` at `part` (0 major, 1 minor, 2 patch): 0.4.6, 1 -> 0.5.0."""
    m = _VERSION.match(version)
    if m is None:
        return None
    nums = [int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)]
    nums[part] += 1
    for k in range(part + 1, 3):
        nums[k] = 0
    return ".".join(str(x) for x in nums)


def _clauses(items: list[tuple[str, str]]) -> tuple[str | None, tuple[tuple[str, str], ...]] | None:
    """(exact, range clauses) of PEP 440 (op, version) pairs; None when a version cannot be
    read."""
    exact = None
    out: list[tuple[str, str]] = []
    for op, ver in items:
        if op == "!=":
            continue
        if op in ("==", "===") and ver.endswith(".*"):
            base = normalize(ver[:-2])
            parts = ver[:-2].lstrip("v").count(".")
            if base is None:
                return None
            upper = _bump(base, min(parts, 2))
            out.append((">=", base))
            if upper:
                out.append(("<", upper))
            continue
        v = normalize(ver)
        if v is None:
            return None
        if op in ("==", "==="):
            exact = v
        elif op == "~=":
            parts = ver.lstrip("v").split("+")[0].count(".")
            out.append((">=", v))
            upper = _bump(v, max(parts - 1, 0))
            if upper:
                out.append(("<", upper))
        else:
            out.append((op, v))
    return exact, tuple(out)


def _spec_items(s: str, pos: int) -> tuple[list[tuple[str, str]], int]:
    """The `op version` items of a specifier starting at `pos` (comma separated), and
    where they end."""
    items: list[tuple[str, str]] = []
    m = _SPEC_ITEM.match(s, pos)
    while m is not None:
        items.append((m.group(1), m.group(2).rstrip(".,")))
        pos = m.end()
        comma = re.compile(r"\s*,").match(s, pos)
        if comma is None:
            break
        m = _SPEC_ITEM.match(s, comma.end())
    return items, pos


def _poetry(spec: str) -> list[tuple[str, str]] | None:
    """A Poetry version constraint as PEP 440 items: `0.4.6` (exact), `^0.4.6`, `~0.4.6`,
    `>=0.4,<0.5`, `*`."""
    spec = spec.strip()
    if spec in ("", "*"):
        return []
    items: list[tuple[str, str]] = []
    for part in spec.split(","):
        part = part.strip()
        if part.startswith("^"):
            v = normalize(part[1:])
            if v is None:
                return None
            m = _VERSION.match(v)
            assert m is not None
            nums = [int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)]
            at = 0 if nums[0] else 1 if nums[1] else 2
            items += [(">=", v), ("<", _bump(v, at) or v)]
        elif part.startswith("~") and not part.startswith("~="):
            v = normalize(part[1:])
            if v is None:
                return None
            at = 1 if part[1:].lstrip("v").count(".") >= 1 else 0
            items += [(">=", v), ("<", _bump(v, at) or v)]
        elif re.match(_OP, part):
            found, _ = _spec_items(part, 0)
            items += found
        else:
            items.append(("==", part))
    return items


# --- pins in a text ---------------------------------------------------------------------------------

_NAME = LazyPattern(r"(?<![\w.\-/@$])sglang(?:\[[^\]\n]*\])?(?=\s*" + _OP + ")", re.I)
_GIT_URL_REF = LazyPattern(r"sgl-project/sglang(?:\.git)?@([\w.\-]+)", re.I)
_GIT_CLONE = LazyPattern(r"\bgit\s+clone\b[^\n]*", re.I)
_GIT_BRANCH = LazyPattern(r"(?:^|\s)(?:-b|--branch)(?:=|\s+)[\"']?([\w.\-/]+)")
_GIT_CHECKOUT = LazyPattern(
    r"\bgit\s+(?:-C\s+\S+\s+)?(?:checkout|switch\s+--detach)\s+(?:-q\s+|--quiet\s+)?[\"']?(?:tags/)?([\w.\-]+)")
_VERSION_VAR = LazyPattern(
    r"^[ \t]*(?:(?:ARG|ENV|export)[ \t]+)?SGLANG_VERSION=[\"']?([^\s\"';]+)"
    r"|^[ \t]*ENV[ \t]+SGLANG_VERSION[ \t]+[\"']?([^\s\"';]+)", re.M)


class _Scan(Record):
    exact: list[_Req]
    ranges: list[_Req]
    images: list[tuple[str, str, Span]]  # (ref, release or "newest", span): Python only


def _comment_lines(text: str, fmt: str) -> list[tuple[int, int]]:
    marks = ("//",) if fmt == "launch-json" else ("#",)
    out = []
    for m in re.finditer(r"^[ \t]*(\S)", text, re.M):
        if text.startswith(marks, m.start(1)):
            end = text.find("\n", m.start(1))
            out.append((m.start(), len(text) if end == -1 else end))
    return out


def _in(spans: list[tuple[int, int]], offset: int) -> bool:
    i = bisect.bisect_right(spans, (offset, offset)) - 1
    if i + 1 < len(spans) and spans[i + 1][0] == offset:
        i += 1
    return i >= 0 and spans[i][0] <= offset < spans[i][1]


def _ref_version(ref: str) -> str | None:
    """A git ref or a variable's value that names a release: `v0.4.6`, `v0.4.6.post1`,
    `0.4.9`, `v0.5.0rc0-cu129` (an image tag)."""
    m = _TAG_VERSION.match(ref.strip("'\""))
    return _release(normalize(m.group(1))) if m else None


def _release(version: str | None) -> str | None:
    """`version`, unless it is a source build's placeholder (`0.0.0.dev0`)."""
    return None if version is None or version.startswith("0.0.") else version


def _matches(pattern: re.Pattern | LazyPattern, literal: str, text: str, low: str):
    """`pattern.finditer(text)` for a pattern that starts with `literal` (lower case, matched
    case-insensitively): in an ASCII text (where `low`, its lower case, has the same
    offsets) the pattern is tried only where `low` holds the literal, which str.find finds
    far faster than the regex engine scanning every offset."""
    if not text.isascii():
        yield from pattern.finditer(text)
        return
    i = low.find(literal)
    while i != -1:
        m = pattern.match(text, i)
        if m is not None:
            yield m
        i = low.find(literal, m.end() if m is not None else i + 1)  # as finditer: no overlaps


def _scan(doc: _Doc, fmt: str) -> _Scan:
    text = doc.text
    found_comments: list[list[tuple[int, int]]] = []

    def commented(offset: int) -> bool:
        """Whether `offset` is in a comment line (the lines are found when first asked)."""
        if not found_comments:
            found_comments.append(_comment_lines(text, fmt) if "#" in text or "//" in text else [])
        return _in(found_comments[0], offset)

    exact: list[_Req] = []
    ranges: list[_Req] = []
    low = text.lower()

    def add(written: str, start: int, end: int, items: list[tuple[str, str]]) -> None:
        if commented(start):
            return
        resolved = []
        for op, ver in items:
            if "$" in ver:
                value, _ = _substitute(ver, doc, start)
                if value is None:
                    return
                ver = value
            resolved.append((op, ver))
        parsed = _clauses(resolved)
        if parsed is None:
            return
        found, clauses = parsed
        req = _Req(written, found, clauses, start, end)
        if found is not None:
            exact.append(req)
        elif clauses:
            ranges.append(req)

    if "sglang" in low:
        for m in _matches(_NAME, "sglang", text, low):
            items, end = _spec_items(text, m.end())
            if items:
                add(text[m.start():end], m.start(), end, items)
        for m in _matches(_GIT_URL_REF, "sgl-project/sglang", text, low):
            v = _ref_version(m.group(1))
            if v is not None and not commented(m.start()):
                exact.append(_Req(m.group(0), v, (), m.start(), m.end()))
    if "sglang" in low and (not text.isascii() or "sgl-project/sglang" in low):
        # (every clone read below names sgl-project/sglang on its line)
        logical = text.replace("\\\r\n", "   ").replace("\\\n", "  ")
        for m in _GIT_CLONE.finditer(logical):
            line = m.group(0)
            if "sgl-project/sglang" not in line.lower() or commented(m.start()):
                continue
            b = _GIT_BRANCH.search(line)
            if b is not None:
                v = _ref_version(b.group(1))
                if v is not None:
                    exact.append(_Req(line.strip(), v, (), m.start(), m.end()))
            # `git checkout v0.4.6` after the clone, up to the next clone (of anything)
            nxt = _GIT_CLONE.search(logical, m.end())
            stop = nxt.start() if nxt else len(logical)
            for c in _GIT_CHECKOUT.finditer(logical, m.end(), stop):
                v = _ref_version(c.group(1))
                if v is not None and not commented(c.start()):
                    exact.append(_Req(c.group(0), v, (), c.start(), c.end()))
    if "SGLANG_VERSION" in text:
        for m in _VERSION_VAR.finditer(text):
            raw = m.group(1) or m.group(2)
            v = _ref_version(raw) if not raw.startswith("$") else None
            if v is not None and not commented(m.start()):
                start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
                exact.append(_Req(m.group(0).strip(), v, (), start, m.end()))
    images: list[tuple[str, str, Span]] = []
    if fmt in ("python", "notebook", "notebook-cell") and ("sglang" in low or "sgl-dev" in low):
        for m in re.finditer(r"[\"']([^\"'\s]*(?:sglang|sgl-dev)[^\"'\s]*:[^\"'\s]+)[\"']", text):
            release = parse_image(m.group(1))
            if release is not None and not commented(m.start()):
                images.append((m.group(1), release, Span(m.start(1), m.end(1))))
    exact.sort(key=lambda r: r.start)
    ranges.sort(key=lambda r: r.start)
    return _Scan(exact, ranges, images)


def _nearest(items: list, at: int, start=lambda x: x.start):
    """The item nearest above offset `at`, else the nearest below (`items` in order)."""
    i = bisect.bisect_right(items, at, key=start)
    if i:
        return items[i - 1]
    return items[0] if items else None


# --- project files --------------------------------------------------------------------------------------

MAX_BYTES = 1 << 20  # requirements and pyproject files larger than this are not read
MAX_LOCK_BYTES = 16 << 20  # lock files
MAX_LEVELS = 64
_LOCKS = ("uv.lock", "poetry.lock", "pdm.lock", "pylock.toml")


class _Parsed(Record, frozen=True):
    reqs: tuple[_Req, ...]
    includes: tuple[str, ...] = ()  # requirements files named by -r / -c


_FILES: dict[str, tuple[tuple[int, int], _Parsed]] = {}
_DIRS: dict[str, tuple[int, tuple[tuple[str, ...], bool]]] = {}
_EMPTY = _Parsed(())


def read_capped(path: str, cap: int) -> str | None:
    """The text of a regular file of at most `cap` bytes without NUL bytes, else None.
    Opened without blocking, so a FIFO (or a device) with the name is refused at once."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
        | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            return None
        chunks = []
        total = 0
        while total <= cap:
            chunk = os.read(fd, min(1 << 16, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap or b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def _parse_requirement(line: str) -> _Req | None:
    """One PEP 508 requirement on sglang (`sglang[all]>=0.4.9; python_version>'3.9'`,
    `sglang @ git+https://github.com/sgl-project/sglang@v0.4.6#subdirectory=python`)."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*", line)
    if m is None or re.sub(r"[-_.]+", "-", m.group(1)).lower() != "sglang":
        return None
    rest = line[m.end():]
    written = line.strip()
    if rest.startswith("@"):
        g = _GIT_URL_REF.search(rest)
        v = _ref_version(g.group(1)) if g else None
        return _Req(written, v) if v else None
    spec = rest.split(";", 1)[0]
    items, _ = _spec_items(spec, 0)
    if not items:
        return None
    parsed = _clauses(items)
    if parsed is None:
        return None
    exact, clauses = parsed
    written = (m.group(0) + spec).strip()
    return _Req(written, exact, clauses) if exact or clauses else None


def _parse_requirements_file(path: str, text: str) -> _Parsed:
    reqs: list[_Req] = []
    includes: list[str] = []
    base = os.path.dirname(path)
    for raw in re.sub(r"\\\r?\n", " ", text).splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        inc = re.match(r"(?:-r|--requirement|-c|--constraint)(?:=|\s+)(\S+)", line)
        if inc:
            target = inc.group(1)
            if "://" not in target:
                includes.append(os.path.normpath(os.path.join(base, target)))
            continue
        edit = re.match(r"(?:-e|--editable)(?:=|\s+)(\S+)", line)
        if edit:
            g = _GIT_URL_REF.search(edit.group(1))
            v = _ref_version(g.group(1)) if g else None
            if v:
                reqs.append(_Req(line, v))
            continue
        if line.startswith("-"):
            continue
        line = re.split(r"\s--\w", line, 1)[0]  # --hash=... after the requirement
        req = _parse_requirement(line)
        if req is not None:
            reqs.append(req)
    return _Parsed(tuple(reqs), tuple(includes))


# Where a pyproject.toml can require sglang: a requirement string that starts with the
# name and goes on to a version operator or `@` (after extras, spaces or a line break), or
# a Poetry key named sglang (`sglang = `, `"sglang" =`, `sglang.version =`, a
# `[...dependencies.sglang]` header).
_MAY_REQUIRE = LazyPattern(r"""sglang["']?\s*(?:\[[^\]]*\]\s*)?["']?\s*[=<>!~@\].]""", re.I)


def may_require_sglang(text: str) -> bool:
    """Whether a pyproject.toml can declare a requirement on sglang, without parsing it
    (the TOML parser's import and run are a sixth of a cold check inside a project whose
    pyproject.toml only mentions SGLang): False only when the pattern above is nowhere and
    no backslash is (an escape can spell any character of a string). A false True costs
    a parse; a False is certain: `_parse_pyproject` would find no requirement."""
    return "\\" in text or _MAY_REQUIRE.search(text) is not None


def _parse_pyproject(text: str) -> _Parsed:
    tomllib = _toml()
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return _EMPTY
    strings: list[str] = []

    def strs(value) -> None:
        if isinstance(value, list):
            strings.extend(v for v in value if isinstance(v, str))

    project = doc.get("project")
    if isinstance(project, dict):
        strs(project.get("dependencies"))
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            for v in optional.values():
                strs(v)
    groups = doc.get("dependency-groups")
    if isinstance(groups, dict):
        for v in groups.values():
            strs(v)
    tool = doc.get("tool") if isinstance(doc.get("tool"), dict) else {}
    assert isinstance(tool, dict)
    uv = tool.get("uv")
    if isinstance(uv, dict):
        for key in ("constraint-dependencies", "override-dependencies", "dev-dependencies"):
            strs(uv.get(key))
    pdm = tool.get("pdm")
    if isinstance(pdm, dict) and isinstance(pdm.get("dev-dependencies"), dict):
        for v in pdm["dev-dependencies"].values():
            strs(v)
    reqs = [r for r in (_parse_requirement(s) for s in strings) if r is not None]
    poetry = tool.get("poetry")
    if isinstance(poetry, dict):
        tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
        group = poetry.get("group")
        if isinstance(group, dict):
            tables += [g.get("dependencies") for g in group.values() if isinstance(g, dict)]
        for table in tables:
            if not isinstance(table, dict):
                continue
            for name, value in table.items():
                if re.sub(r"[-_.]+", "-", str(name)).lower() != "sglang":
                    continue
                req = _poetry_requirement(name, value)
                if req is not None:
                    reqs.append(req)
    return _Parsed(tuple(reqs))


def _poetry_requirement(name: str, value) -> _Req | None:
    if isinstance(value, dict):
        for key in ("tag", "rev", "branch"):
            if isinstance(value.get(key), str) and value.get("git"):
                v = _ref_version(value[key])
                return _Req(f'{name} = {{ git, {key} = "{value[key]}" }}', v) if v else None
        value = value.get("version")
    if not isinstance(value, str):
        return None
    items = _poetry(value)
    if items is None:
        return None
    parsed = _clauses(items)
    if parsed is None:
        return None
    exact, clauses = parsed
    return _Req(f'{name} = "{value}"', exact, clauses) if exact or clauses else None


_LOCK_ENTRY = LazyPattern(r'^name\s*=\s*"sglang"\s*\r?\n(?:[^\[\n].*\r?\n){0,3}?version\s*=\s*"([^"]+)"',
                         re.M | re.I)


def _parse_lock(text: str) -> _Parsed:
    versions = []
    for m in _LOCK_ENTRY.finditer(text):
        v = _release(normalize(m.group(1).split("+", 1)[0]))
        if v is not None and v not in versions:
            versions.append(v)
    if not versions:
        return _EMPTY
    more = f" (of {len(versions)} locked: {', '.join(versions)})" if len(versions) > 1 else ""
    return _Parsed((_Req(f"sglang {versions[0]}{more}", versions[0]),))


def _project_file(path: str) -> _Parsed:
    try:
        st = os.stat(path)
    except OSError:
        return _EMPTY
    key = (st.st_mtime_ns, st.st_size)
    cached = _FILES.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    name = os.path.basename(path)
    parsed = _EMPTY
    if stat.S_ISREG(st.st_mode):
        is_lock = name in _LOCKS
        text = read_capped(path, MAX_LOCK_BYTES if is_lock else MAX_BYTES)
        if text is not None and "sglang" in text.lower():
            if is_lock:
                parsed = _parse_lock(text)
            elif name == "pyproject.toml":
                parsed = _parse_pyproject(text) if may_require_sglang(text) else _EMPTY
            else:
                parsed = _parse_requirements_file(path, text)
        elif text is not None and name not in _LOCKS and name != "pyproject.toml":
            parsed = _parse_requirements_file(path, text)  # its -r includes may name sglang
    if len(_FILES) > 1024:
        _FILES.clear()
    _FILES[path] = (key, parsed)
    return parsed


def _listing(directory: str) -> tuple[tuple[str, ...], bool] | None:
    """The project files a folder holds (in the order they are read) and whether it holds
    `.git`; kept while the folder's modification time stays (a folder of a thousand
    linted files is looked at once, not once per file)."""
    try:
        st = os.stat(directory)
    except OSError:
        return None
    cached = _DIRS.get(directory)
    if cached is not None and cached[0] == st.st_mtime_ns:
        return cached[1]
    try:
        names = tuple(sorted(e.name for e in os.scandir(directory)))
    except OSError:
        return None
    if len(_DIRS) > 1024:
        _DIRS.clear()
    got = (tuple(_candidates(names)), ".git" in names)
    _DIRS[directory] = (st.st_mtime_ns, got)
    return got


_REQUIREMENTS_NAME = LazyPattern(r"(requirements|constraints)[\w.-]*\.(txt|in)")


def _candidates(names: tuple[str, ...]) -> list[str]:
    locks = [n for n in _LOCKS if n in names]
    # The prefix first: a crowded folder (a /tmp of thousands of entries) is not matched
    # name by name against the pattern.
    reqs = [n for n in names if n.startswith(("requirements", "constraints"))
            and _REQUIREMENTS_NAME.fullmatch(n)]
    reqs.sort(key=lambda n: (n not in ("requirements.txt", "requirements.in"), n))
    return locks + reqs + (["pyproject.toml"] if "pyproject.toml" in names else [])


def _requirements(path: str, seen: set[str], depth: int = 0) -> list[tuple[_Req, str]]:
    """The requirements on sglang in a project file and the files it includes (`-r`,
    `-c`), each with the file it is written in."""
    if path in seen or depth > 4:
        return []
    seen.add(path)
    parsed = _project_file(path)
    out = [(req, path) for req in parsed.reqs]
    for inc in parsed.includes:
        out += _requirements(inc, seen, depth + 1)
    return out


def project_release(path: str, root: str | None = None) -> tuple[tuple[_Req, str] | None,
                                                                   tuple[_Req, str] | None]:
    """(the first exact requirement, the first range) on sglang in the project files
    around `path`, nearest directory first, each with the file it is in."""
    directory = os.path.dirname(os.path.abspath(path))
    top = os.path.abspath(root) if root else None
    exact: tuple[_Req, str] | None = None
    ranged: tuple[_Req, str] | None = None
    for _ in range(MAX_LEVELS):
        if top is not None and directory != top and not directory.startswith(top.rstrip(os.sep) + os.sep):
            break
        listed = _listing(directory)
        if listed is not None:
            files, has_git = listed
            for name in files:
                file = os.path.join(directory, name)
                for req, where in _requirements(file, set()):
                    if req.exact is not None and exact is None:
                        exact = (req, where)
                    elif req.exact is None and ranged is None:
                        ranged = (req, where)
                if exact is not None:
                    return exact, ranged
            if has_git:
                break
        if top is not None and directory == top:
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return exact, ranged


# --- ranges ----------------------------------------------------------------------------------------


def _in_range(version: str, clauses: tuple[tuple[str, str], ...]) -> bool:
    k = _key(version)
    for op, v in clauses:
        other = _key(v)
        if (op == ">=" and not k >= other) or (op == ">" and not k > other) \
                or (op == "<" and not k < other) or (op == "<=" and not k <= other):
            return False
    return True


def _prerelease(version: str) -> bool:
    return re.search(r"(a|b|rc|dev)\d*$|(a|b|rc)\d+\.", version) is not None


def _range_hint(req: _Req, where: str, span: Span | None, path: str | None) -> ReleaseHint:
    lower = next((v for op, v in req.clauses if op in (">=", ">")), None)
    upper = [(op, v) for op, v in req.clauses if op in ("<", "<=")]
    if not upper:
        said = f"any release from {lower} on" if lower else "any release"
        return ReleaseHint(None, "floor", f"{req.written} {where}: {said}; checked as the newest",
                           span, path)
    try:
        from servelint.catalog import known_versions
        # As pip: pre-releases count only when the range names one itself.
        pre = any(_prerelease(v) for _, v in req.clauses)
        inside = [v for v in known_versions()
                  if (pre or not _prerelease(v)) and _in_range(v, req.clauses)]
    except Exception:  # no catalogs to choose from: the newest
        inside = []
    bound = " and ".join(("below " if op == "<" else "up to ") + v for op, v in upper)
    said = (f"releases from {lower} " if lower else "releases ") + bound
    if not inside:
        return ReleaseHint(None, "floor", f"{req.written} {where}: {said}, none of which servelint "
                           f"knows; checked as the newest", span, path)
    return ReleaseHint(inside[-1], "floor", f"{req.written} {where}: {said}; checked as "
                       f"{inside[-1]}, the newest of them", span, path)


# --- the order ---------------------------------------------------------------------------------------


def _display(file: str, path: str | None) -> str:
    if path:
        try:
            return os.path.relpath(file, os.path.dirname(os.path.abspath(path)))
        except ValueError:  # another drive (Windows)
            pass
    return file


_FROM = LazyPattern(r"^[ \t]*FROM[ \t]", re.M | re.I)


def _stage_starts(text: str) -> list[int]:
    """The offsets of a Dockerfile's `FROM` lines (the starts of its stages), in order."""
    return [m.start() for m in _FROM.finditer(text)]


def _stage_pin(doc: _Doc, launch: Launch, exact: list[_Req]) -> _Req | None:
    """In a Dockerfile: an exact pin installed in the launch's own stage (between its `FROM`
    and the next), which replaces the SGLang of the base image. The stages are found once
    per document text (`_Doc.stages`); each launch then bisects them."""
    text = doc.text
    starts = doc.stages()
    k = bisect.bisect_right(starts, launch.span.start)
    if not k or launch.image is None:
        return None
    stage_start = starts[k - 1]
    stage_end = starts[k] if k < len(starts) else len(text)
    from_end = text.find("\n", stage_start)
    if not stage_start <= launch.image[1].start <= (len(text) if from_end == -1 else from_end):
        return None  # the image is not this stage's FROM (a `docker run` inside a RUN)
    lo = bisect.bisect_left(exact, stage_start, key=lambda r: r.start)
    hi = bisect.bisect_left(exact, stage_end, key=lambda r: r.start)
    return _nearest(exact[lo:hi], launch.span.start)


def detect_release(text: str, fmt: str, launch: Launch, path: str | None,
                   root: str | None = None, memo: dict | None = None) -> ReleaseHint:
    """The SGLang release `launch` runs on, as the document `text` (format `fmt`, at
    `path`, None when unsaved) and its project declare it. See the module docstring for
    the order; `root` bounds the project search (default: the first directory holding
    `.git`). `memo`, one dict per lint of a document, keeps the project's answer for the
    document's other launches (the walk up the folders is then done once per lint)."""
    doc = _doc(text)
    unnamed = None  # an SGLang image whose tag names no release, for the last word
    if launch.image is not None:
        ref, span = launch.image
        resolved, notes = _substitute(ref.strip().strip("'\""), doc, launch.span.start)
        release = None
        if resolved:  # the launches of a document mostly share a few images: read each once
            image_key = ("image", resolved)
            if memo is not None and image_key in memo:
                release = memo[image_key]
            else:
                release = parse_image(resolved)
                if memo is not None:
                    memo[image_key] = release
        if release is not None:
            where = f"line {doc.line(span.start)}"
            if notes:
                where += f", {ref} with " + " and ".join(notes)
            if fmt == "dockerfile":
                pin = _stage_pin(doc, launch, doc.scan(fmt).exact)
                if pin is not None:
                    return ReleaseHint(pin.exact, "pin",
                                       f"{pin.written} on line {doc.line(pin.start)}, "
                                       f"installed over the image {resolved}",
                                       Span(pin.start, pin.end))
            version = None if release == "newest" else release
            return ReleaseHint(version, "image", f"image {resolved} ({where})", span)
        if resolved and _sglang_repository(_split_image(resolved)[0]):
            unnamed = f"image {resolved} (line {doc.line(span.start)}) names no release"
    scan = doc.scan(fmt)
    at = launch.span.start
    pin = _nearest(scan.exact, at)
    if pin is not None:
        return ReleaseHint(pin.exact, "pin", f"{pin.written} on line {doc.line(pin.start)}",
                           Span(pin.start, pin.end))
    if scan.images:
        ref, release, span = _nearest(scan.images, at, lambda x: x[2].start)
        version = None if release == "newest" else release
        return ReleaseHint(version, "image", f"image {ref} named on line {doc.line(span.start)}",
                           span)
    exact = ranged = None
    if path:
        key = ("project", path, root)
        found = memo.get(key) if memo is not None else None
        if found is None:
            found = project_release(path, root)
            if memo is not None:
                memo[key] = found
        exact, ranged = found
    if exact is not None:
        req, file = exact
        return ReleaseHint(req.exact, "project", f"{req.written} in {_display(file, path)}", None, file)
    near = _nearest(scan.ranges, at)
    if near is not None:
        return _range_hint(near, f"on line {doc.line(near.start)}", Span(near.start, near.end), None)
    if ranged is not None:
        req, file = ranged
        return _range_hint(req, f"in {_display(file, path)}", None, file)
    detail = "no SGLang release declared in the file or its project: checked as the newest"
    if unnamed:
        detail = f"{unnamed}, and nothing else declares one: checked as the newest"
    return ReleaseHint(None, "newest", detail, None)


def version_text() -> str:
    """What `servelint --version` prints: servelint's version on the first line
    ("servelint X.Y.Z"), then the SGLang releases its flag catalogs cover (the first, the
    last and how many) and the release a launch is judged by when neither the settings nor
    its files name one (step 5 above: the newest). Reads only the catalog pack's list of
    releases."""
    from servelint import __version__
    from servelint.catalog import known_versions

    versions = known_versions()
    first, newest = versions[0], versions[-1]
    return (f"servelint {__version__}\n"
            f"SGLang releases known: {first} to {newest} ({len(versions)} releases, one flag "
            f"catalog each)\n"
            f"Default release: {newest} (the newest), for a launch whose files and settings "
            f"name none; --sglang-version chooses another")
