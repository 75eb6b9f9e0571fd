"""Finding and reading the files servelint lints, for the command line and the language
server alike (both import this module; it imports neither).

Walking a folder skips what git would not show: the patterns of `.gitignore` files (every
level) and of the repository's `.git/info/exclude`, read here the way git reads them
(`IgnoreFile`; git itself is never run), what `.servelintignore` files say (the same
syntax; beating `.gitignore`), and the `exclude` setting of the project configuration
file. A file named on the command line is linted whatever those say (docs/configuration.md).
"""

from __future__ import annotations

import os
import re
import stat
from typing import Iterator, Sequence

from servelint.lazy import Record

SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
             ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs"}
GITIGNORE = ".gitignore"
SERVELINTIGNORE = ".servelintignore"
MAX_IGNORE_BYTES = 4 << 20  # an ignore file larger than this is not read


def _is_venv(path: str) -> bool:
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))


# --- gitignore patterns -------------------------------------------------------------------
#
# gitignore(5), and git's dir.c/wildmatch.c for what the manual leaves open: a line is a
# pattern unless blank or starting with `#`; trailing spaces are dropped unless escaped
# (`\ `); `!` negates; a trailing `/` matches folders only; a pattern with no other `/`
# matches a name at any depth, one with a `/` (a leading one included) the path relative
# to the file's folder, where `*`, `?` and `[...]` never match `/`, `**/` spans any
# number of folders (none too) and a trailing `/**` everything inside; `\` escapes the
# next character. Within one file the last matching pattern decides.

# wildmatch's character classes (ASCII, as git's own ctype)
_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
    "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


def _bracket(pat: str, i: int, pathname: bool) -> tuple[str, int] | None:
    """The regex of the bracket expression at pat[i] (`[`) and the index after it; None
    when it is malformed (unclosed, or an unknown `[:class:]`): git then matches nothing
    with the whole pattern. As wildmatch reads it: `!` or `^` first negates, a `]` first
    is a member, `a-z` is a range, `\\` escapes, `[:alpha:]` is a class."""
    n = len(pat)
    p = i + 1
    if p >= n:
        return None
    ch = pat[p]
    negated = ch in "!^"
    if negated:
        p += 1
        if p >= n:
            return None
        ch = pat[p]
    items: list[str] = []
    prev: str | None = None  # the previous member, for a range; None after a range/class
    while True:
        cur: str | None
        if ch == "\\":
            p += 1
            if p >= n:
                return None
            cur = pat[p]
            items.append(re.escape(cur))
        elif ch == "-" and prev is not None and p + 1 < n and pat[p + 1] != "]":
            p += 1
            hi = pat[p]
            if hi == "\\":
                p += 1
                if p >= n:
                    return None
                hi = pat[p]
            if prev <= hi:
                items.append(f"{re.escape(prev)}-{re.escape(hi)}")
            cur = None
        elif ch == "[" and p + 1 < n and pat[p + 1] == ":":
            start = p + 2
            q = start
            while q < n and pat[q] != "]":
                q += 1
            if q >= n:
                return None
            if q - start - 1 < 0 or pat[q - 1] != ":":
                cur = "["  # no `:]`: a plain `[`, and the `:` is read next
                items.append(re.escape(cur))
            else:
                cls = _POSIX.get(pat[start:q - 1])
                if cls is None:
                    return None
                items.append(cls)
                cur = None
                p = q
        else:
            cur = ch
            items.append(re.escape(ch))
        prev = cur
        p += 1
        if p >= n:
            return None
        ch = pat[p]
        if ch == "]":
            break
    body = "".join(items)
    if negated:
        rx = f"[^{body}/]" if pathname else (f"[^{body}]" if body else "(?s:.)")
    else:
        rx = f"(?!/)[{body}]" if body and pathname else (f"[{body}]" if body else "(?!)")
    return rx, p + 1


def wildmatch_regex(pat: str, pathname: bool = True) -> re.Pattern | None:
    """git's wildmatch as a regular expression over a whole `/`-separated path (with
    `pathname`: WM_PATHNAME, as for a pattern holding a `/`), or None when the pattern
    can match nothing (a malformed bracket, a trailing lone backslash)."""
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "\\":
            if i + 1 >= n:
                return None
            out.append(re.escape(pat[i + 1]))
            i += 2
        elif c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            if not pathname:
                out.append(".*")
            elif j - i >= 2 and (i == 0 or pat[i - 1] == "/") and \
                    (j == n or pat[j] == "/" or pat.startswith("\\/", j)):
                if j == n:
                    out.append(".*")  # a trailing `**`: everything
                elif pat[j] == "/":
                    out.append("(?:.*/)?")  # `**/`: any number of folders, none too
                    j += 1
                else:
                    out.append(".*")  # before an escaped `/`, which must still match
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]" if pathname else ".")
            i += 1
        elif c == "[":
            got = _bracket(pat, i, pathname)
            if got is None:
                return None
            out.append(got[0])
            i = got[1]
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.DOTALL)


class Pattern(Record, frozen=True):
    """One line of an ignore file."""

    text: str                 # the line as written (trailing spaces dropped)
    regex: re.Pattern | None  # None: matches nothing
    negated: bool             # `!pattern`: re-includes
    dir_only: bool            # `pattern/`: folders only
    name_only: bool           # no `/` (a trailing one aside): matched against the name at any depth

    def matches(self, rel: str, name: str, is_dir: bool) -> bool:
        if self.regex is None or (self.dir_only and not is_dir):
            return False
        return self.regex.fullmatch(name if self.name_only else rel) is not None


def _trim_trailing_spaces(line: str) -> str:
    """Drop trailing spaces, but not one escaped with a backslash (git's rule; tabs stay)."""
    last_space = None
    i = 0
    while i < len(line):
        c = line[i]
        if c == " ":
            if last_space is None:
                last_space = i
        elif c == "\\":
            i += 1
            if i >= len(line):
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def parse_pattern(line: str) -> Pattern | None:
    """The pattern of one ignore-file line (without its line ending), or None for a blank
    line or a comment."""
    if not line or line.startswith("#"):
        return None
    text = _trim_trailing_spaces(line)
    body = text
    negated = body.startswith("!")
    if negated:
        body = body[1:]
    dir_only = body.endswith("/")
    if dir_only:
        body = body[:-1]
    name_only = "/" not in body
    if not name_only and body.startswith("/"):
        body = body[1:]
    return Pattern(text, wildmatch_regex(body, pathname=not name_only), negated, dir_only,
                   name_only)


def parse_patterns(text: str) -> list[Pattern]:
    """The patterns of an ignore file's text (a UTF-8 byte order mark and CR before LF
    are dropped, as git does)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    out = []
    for line in text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        pattern = parse_pattern(line)
        if pattern is not None:
            out.append(pattern)
    return out


class IgnoreFile:
    """The patterns of one ignore file (or of the `exclude` setting), anchored at the
    folder `base`: what they say of a path below it."""

    def __init__(self, base: str, patterns: Sequence[Pattern], source: str = ""):
        self.base = os.path.abspath(base)
        self.patterns = list(patterns)
        self.source = source

    @classmethod
    def from_text(cls, base: str, text: str, source: str = "") -> "IgnoreFile":
        return cls(base, parse_patterns(text), source)

    def match(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!` pattern; None: no pattern matches
        (or `path` is not below `base`). The last matching pattern decides."""
        if not self.patterns:
            return None
        if not os.path.isabs(path):
            path = os.path.abspath(path)
        prefix = self.base.rstrip(os.sep) + os.sep
        if not path.startswith(prefix):
            return None
        rel = path[len(prefix):]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        name = rel.rsplit("/", 1)[-1]
        for pattern in reversed(self.patterns):
            if pattern.matches(rel, name, is_dir):
                return not pattern.negated
        return None


def read_ignore_file(path: str, base: str) -> IgnoreFile | None:
    """The ignore file at `path` (patterns anchored at `base`), or None when there is no
    regular, readable file there (a FIFO or a folder of that name is not opened)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_IGNORE_BYTES:
            return None
        with open(path, "rb") as fh:
            data = fh.read(MAX_IGNORE_BYTES)
    except OSError:
        return None
    # Undecodable bytes stay as the same surrogates os.walk gives undecodable names.
    return IgnoreFile.from_text(base, data.decode("utf-8", "surrogateescape"), path)


# --- walking folders ----------------------------------------------------------------------


def repository_root(path: str) -> str | None:
    """The nearest folder at or above `path` that holds `.git` (a folder, or the file a
    worktree or submodule has), or None outside a git repository."""
    d = os.path.abspath(path)
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def info_exclude(repo: str) -> str:
    """Where the repository at `repo` keeps `info/exclude`: in `.git`, or, when `.git` is
    a file (`gitdir: ...`), in the git folder it names (its common folder for a worktree)."""
    git = os.path.join(repo, ".git")
    if os.path.isdir(git):
        return os.path.join(git, "info", "exclude")
    gitdir = git
    try:
        with open(git, encoding="utf-8", errors="replace") as fh:
            first = fh.readline().strip()
        if first.startswith("gitdir:"):
            gitdir = os.path.join(repo, first[len("gitdir:"):].strip())
        common = os.path.join(gitdir, "commondir")
        if os.path.isfile(common):
            with open(common, encoding="utf-8", errors="replace") as fh:
                gitdir = os.path.join(gitdir, fh.read().strip())
    except OSError:
        pass
    return os.path.join(gitdir, "info", "exclude")


# The patterns in force in one folder: the .gitignore files (git's own order: the
# repository's info/exclude first, then each folder's file from the top down) and the
# .servelintignore files, from the top down.
_Chains = tuple[tuple[IgnoreFile, ...], tuple[IgnoreFile, ...]]


class Discovery:
    """Which files under a folder are linted: see the module docstring. `config_path`:
    the configuration file whose `exclude` applies everywhere (--config); `read_config`
    False: no configuration file is read (--isolated, an untrusted workspace)."""

    def __init__(self, respect_gitignore: bool = True, config_path: str | None = None,
                 read_config: bool = True):
        self.respect_gitignore = respect_gitignore
        self.config_path = config_path
        self.read_config = read_config
        self._excludes: dict[tuple, IgnoreFile] = {}

    def _own(self, folder: str) -> _Chains:
        git = read_ignore_file(os.path.join(folder, GITIGNORE), folder) \
            if self.respect_gitignore else None
        ours = read_ignore_file(os.path.join(folder, SERVELINTIGNORE), folder)
        return (git,) if git else (), (ours,) if ours else ()

    def top_chains(self, top: str) -> _Chains:
        """The patterns in force in `top`: those of the folders from its repository's
        root down to it, and the repository's info/exclude (outside a repository: only
        `top`'s own files)."""
        top = os.path.abspath(top)
        repo = repository_root(top)
        git: tuple[IgnoreFile, ...] = ()
        ours: tuple[IgnoreFile, ...] = ()
        folders = [top]
        if repo is not None:
            if self.respect_gitignore:
                exclude = read_ignore_file(info_exclude(repo), repo)
                git = (exclude,) if exclude else ()
            d = top
            while d != repo:
                d = os.path.dirname(d)
                folders.append(d)
        for folder in reversed(folders):
            g, o = self._own(folder)
            git, ours = git + g, ours + o
        return git, ours

    def exclude_for(self, folder: str) -> IgnoreFile | None:
        """The `exclude` patterns of the configuration file that applies in `folder`,
        anchored at that file's folder."""
        if not self.read_config:
            return None
        from servelint import config
        cfg = config.load(self.config_path, explicit=True) if self.config_path \
            else config.find_config(folder)
        if cfg is None or not cfg.exclude:
            return None
        key = (cfg.path, tuple(cfg.exclude))
        hit = self._excludes.get(key)
        if hit is None:
            hit = IgnoreFile(cfg.directory, [p for p in map(parse_pattern, cfg.exclude) if p],
                             f"exclude in {cfg.path}")
            self._excludes[key] = hit
        return hit

    @staticmethod
    def decide(path: str, is_dir: bool, chains: _Chains, exclude: IgnoreFile | None) -> bool:
        """Whether `path` is skipped: the exclude setting says so, else the deepest
        .servelintignore with a matching pattern, else the deepest .gitignore (then
        info/exclude) with one."""
        if exclude is not None and exclude.match(path, is_dir):
            return True
        git, ours = chains
        for files in (ours, git):
            for f in reversed(files):
                said = f.match(path, is_dir)
                if said is not None:
                    return said
        return False

    def walk(self, top: str, keep_dir=lambda name: True) -> Iterator[str]:
        """Every file under the folder `top` that is not skipped, folder by folder in
        name order. `top` itself is walked whatever the patterns say of it; a skipped
        folder is not entered (as in git, nothing below it can be re-included).
        `keep_dir(name)`: False skips a folder by its name before any pattern."""
        top = os.path.abspath(top)
        chains = {top: self.top_chains(top)}
        for base, dirs, files in os.walk(top):
            here = chains.pop(base)  # os.walk enters only the folders kept below
            exclude = self.exclude_for(base)
            kept = []
            for d in sorted(dirs):
                full = os.path.join(base, d)
                if d in SKIP_DIRS or not keep_dir(d) or _is_venv(full) or \
                        self.decide(full, True, here, exclude):
                    continue
                kept.append(d)
                g, o = self._own(full)
                chains[full] = (here[0] + g, here[1] + o)
            dirs[:] = kept
            for f in sorted(files):
                full = os.path.join(base, f)
                if not self.decide(full, False, here, exclude):
                    yield full


def iter_files(paths: list[str], errors: list[str], respect_gitignore: bool = True, *,
               config_path: str | None = None, isolated: bool = False) -> Iterator[str]:
    """The files `servelint check` lints for these paths: a file as named (whatever
    .gitignore, .servelintignore or `exclude` say of it), a folder's files as `Discovery`
    finds them (`respect_gitignore` False: .gitignore and info/exclude are not read;
    .servelintignore and `exclude` still are). `config_path` (--config) names the one
    configuration whose `exclude` applies; `isolated` (--isolated) reads none. A path
    that does not exist is appended to `errors`."""
    discovery = Discovery(respect_gitignore, config_path, not isolated)
    for p in paths:
        if os.path.isdir(p):
            for full in discovery.walk(p):
                # Shown as given: relative paths stay relative.
                yield os.path.join(p, os.path.relpath(full, os.path.abspath(p)))
        elif os.path.exists(p):
            yield p
        else:
            errors.append(f"{p}: no such file or directory")


def iter_workspace_files(root: str, respect_gitignore: bool = True, *,
                         trusted: bool = True) -> Iterator[str]:
    """Every file under a workspace folder that `servelint.server.lintWorkspace` looks at:
    as `check` walks a folder (the ignore files and the `exclude` setting included), and
    hidden folders and `.venv*` skipped too, except `.github` (workflows) and `.servelint`
    (rule packs). Symbolic links to folders are not followed. `trusted` False (limited
    mode): no configuration file is read, so no `exclude`; the ignore files still apply."""
    def keep(name: str) -> bool:
        return not name.startswith(".venv") and \
            (not name.startswith(".") or name in WORKSPACE_HIDDEN_OK)
    yield from Discovery(respect_gitignore, read_config=trusted).walk(root, keep)


WORKSPACE_HIDDEN_OK = {".github", ".servelint"}


def read_text(path: str, explicit: bool, max_bytes: int,
              rule_packs: Sequence[str] = ()) -> str | None:
    """A file's text for linting: None when it is not `explicit`ly named and servelint
    reads no format from it, or when it is binary; TooLarge beyond `max_bytes`; NotRegular
    for a FIFO, device or socket (never opened in a way that can block: a FIFO named
    `run.sh` would otherwise wait for a writer forever); OSError with the path in its
    message when it cannot be read. Invalid UTF-8 is replaced. At most `max_bytes` are
    read, whatever the size said a moment before (a file that grows is cut off: TooLarge)."""
    import stat
    from servelint.engine import detect_format
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(path)
        if st.st_size > max_bytes:
            raise TooLarge(st.st_size)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise NotRegular(path)  # replaced between the stat and the open
            head = fh.read(4096)
            if not explicit and detect_format(path, None, head.decode("utf-8", "replace"),
                                            rule_packs) is None:
                return None
            if b"\0" in head:
                return None
            data = head + fh.read(max(0, min(st.st_size, max_bytes) + 1 - len(head)))
            if len(data) > st.st_size and len(data) <= max_bytes:
                # It grew since the stat: read on, up to the cap. (Reading up to the cap at
                # once asked for a 5 MiB buffer per file: a fifth of the time of a run over
                # a thousand small files went to allocating and freeing it.)
                data += fh.read(max_bytes + 1 - len(data))
            if len(data) > max_bytes:
                raise TooLarge(len(data))
    except (NotRegular, TooLarge):
        raise
    except OSError as exc:
        raise OSError(f"{path}: {exc.strerror or exc}") from exc
    return data.decode("utf-8", errors="replace")


def read_bytes(path: str, max_bytes: int) -> bytes:
    """A regular file's bytes, at most `max_bytes` (TooLarge beyond), for the files
    servelint reads besides the linted ones (project configuration): NotRegular for a FIFO,
    device or socket, never opened in a way that can block."""
    import stat
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise NotRegular(path)
        data = fh.read(min(st.st_size, max_bytes) + 1)  # one byte more: a file that grew
        if st.st_size < len(data) <= max_bytes:
            data += fh.read(max_bytes + 1 - len(data))
    if len(data) > max_bytes:
        raise TooLarge(len(data))
    return data


class NotRegular(OSError):
    """Not a regular file (a FIFO, a device, a socket): servelint does not read it. An
    OSError, so that a caller that skips unreadable files skips these too."""

    def __str__(self) -> str:
        return f"{self.args[0]}: not a regular file (a FIFO, device or socket), not read"


class TooLarge(Exception):
    """A file larger than the maxFileBytes setting (args: its size)."""
