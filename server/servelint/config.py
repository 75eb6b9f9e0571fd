"""Project configuration files: `.servelint.toml` and `[tool.servelint]` in
`pyproject.toml`, and how they combine with the editor's settings or the command line.

The one entry point both the CLI and the language server use is `settings_for(path,
base)`. Discovery walks up from the linted file's directory; the closest directory that
has a configuration wins (in one directory `.servelint.toml` beats `pyproject.toml`; a
`pyproject.toml` without a `[tool.servelint]` table is not a configuration). A file with
an unknown key, a wrong type or broken TOML is ignored as a whole: its problems are
returned and the built-in defaults stand in for everything it would have set.

Parsed files are cached by path, modification time and size, and the directory ->
configuration resolution is cached too, checked with one `stat` per file it depends on,
so finding the configuration of an open document costs microseconds. A configuration
file *created* in a directory that resolved to nothing is only seen after `invalidate()`
(the server calls it on workspace/didChangeWatchedFiles and on saving such a file).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from servelint.schema import BY_TOML, PREFERENCES, PROJECT_ONLY, Invalid, SeverityMap
from servelint.settings import Settings
from servelint.suggest import VALUES, close_matches

DOT_FILE = ".servelint.toml"
PYPROJECT = "pyproject.toml"
CONFIG_NAMES = (DOT_FILE, PYPROJECT)  # in the order they win within one directory


@dataclass
class ProjectConfig:
    """One configuration file, parsed. `values` holds Settings attributes the file sets;
    a file with `problems` contributes nothing."""

    path: str
    values: dict[str, Any] = field(default_factory=dict)
    extend_select: list[str] = field(default_factory=list)
    extend_ignore: list[str] = field(default_factory=list)
    per_file_ignores: list[tuple[str, list[str]]] = field(default_factory=list)
    per_file_sglang_version: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def directory(self) -> str:
        return os.path.dirname(self.path)

    def message(self) -> str:
        """One line naming the file, each key and its problem, and what happens instead."""
        return (f"{self.path}: invalid servelint configuration: {'; '.join(self.problems)}. "
                f"The whole file is ignored: servelint uses its built-in defaults for "
                f"everything it sets until it is fixed.")

    def ignores_for(self, path: str) -> list[str]:
        """The codes per-file-ignores turns off for this file."""
        out: list[str] = []
        if not self.per_file_ignores or not path:
            return out
        rel = os.path.relpath(os.path.abspath(path), self.directory).replace(os.sep, "/")
        base = os.path.basename(path)
        for pattern, codes in self.per_file_ignores:
            if glob_matches(pattern, rel, base):
                out.extend(c for c in codes if c not in out)
        return out

    def version_for(self, path: str) -> tuple[str, str] | None:
        """The release per-file-sglang-version gives this file (the last matching glob
        wins, as the table is read top to bottom), with the glob."""
        if not self.per_file_sglang_version or not path:
            return None
        rel = os.path.relpath(os.path.abspath(path), self.directory).replace(os.sep, "/")
        base = os.path.basename(path)
        found = None
        for pattern, version in self.per_file_sglang_version:
            if glob_matches(pattern, rel, base):
                found = (version, pattern)
        return found


# --- reading one file ---------------------------------------------------------------------


def parse_table(table: Any, path: str) -> ProjectConfig:
    """A configuration from the servelint table of the file at `path`."""
    cfg = ProjectConfig(path)
    if not isinstance(table, dict):
        cfg.problems.append("[tool.servelint] must be a table")
        return cfg
    for key, value in table.items():
        spec = BY_TOML.get(key)
        if spec is None:
            close = close_matches(key, BY_TOML, n=1, cutoff=VALUES)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            cfg.problems.append(f"unknown key `{key}`{hint}")
            continue
        attr = spec.attr
        try:
            value = spec.parse(value)
        except Invalid as exc:
            cfg.problems.append(f"`{key}` {exc}")
            continue
        if attr == "rule_packs":
            value = [os.path.normpath(os.path.join(cfg.directory, os.path.expanduser(p)))
                     for p in value]
        if attr in PROJECT_ONLY:
            setattr(cfg, attr, value)
        else:
            cfg.values[attr] = value
    if cfg.problems:
        cfg.values, cfg.extend_select, cfg.extend_ignore, cfg.per_file_ignores = {}, [], [], []
        cfg.per_file_sglang_version = []
    return cfg


def parse_file(path: str, explicit: bool = False) -> ProjectConfig | None:
    """The configuration in `path`; None for a pyproject.toml without [tool.servelint]
    (unless `explicit`: a file named by --config is always a configuration)."""
    path = os.path.abspath(path)
    is_pyproject = os.path.basename(path) == PYPROJECT
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return ProjectConfig(path, problems=[f"cannot read the file: {exc.strerror or exc}"])
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        if is_pyproject and not explicit and b"tool.servelint" not in data \
                and not re.search(rb"\[\s*tool\s*\.\s*servelint", data):
            return None  # someone else's broken pyproject.toml
        return ProjectConfig(path, problems=[f"invalid TOML: {exc}"])
    if is_pyproject:
        tool = doc.get("tool")
        if not isinstance(tool, dict) or "servelint" not in tool:
            return ProjectConfig(path) if explicit else None
        return parse_table(tool["servelint"], path)
    return parse_table(doc, path)


# --- caches ---------------------------------------------------------------------------------

_parsed: dict[str, tuple[tuple, ProjectConfig | None]] = {}
# directory -> (the configuration path or None, ((file, stat key) it depends on, ...))
_resolved: dict[str, tuple[str | None, tuple]] = {}


def _stat_key(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def load(path: str, explicit: bool = False) -> ProjectConfig | None:
    """`parse_file`, cached by path + modification time + size."""
    path = os.path.abspath(path)
    key = (_stat_key(path), explicit)
    hit = _parsed.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    cfg = parse_file(path, explicit)
    _parsed[path] = (key, cfg)
    return cfg


def invalidate(path: str | None = None) -> None:
    """Forget cached resolutions (all of them; a new file may shadow a parent's), and the
    parsed copy of `path` if given."""
    _resolved.clear()
    if path is None:
        _parsed.clear()
    else:
        _parsed.pop(os.path.abspath(path), None)


def find_config(directory: str) -> ProjectConfig | None:
    """The configuration that applies to files in `directory`: the closest one above."""
    directory = os.path.abspath(directory)
    hit = _resolved.get(directory)
    if hit is not None and all(_stat_key(p) == k for p, k in hit[1]):
        return load(hit[0]) if hit[0] else None
    found, depends = None, []
    d = directory
    while found is None:
        for name in CONFIG_NAMES:
            cand = os.path.join(d, name)
            key = _stat_key(cand)
            if key is None:
                continue
            depends.append((cand, key))
            if load(cand) is not None:
                found = cand
                break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    _resolved[directory] = (found, tuple(depends))
    return load(found) if found else None


# --- combining ---------------------------------------------------------------------------


def settings_for(path: str | None, base: Settings, preference: str | None = None, *,
                 config_path: str | None = None, isolated: bool = False,
                 trusted: bool = True) -> tuple[Settings, list[ProjectConfig]]:
    """The settings that lint the file at `path`, and the invalid configuration files met.

    `base` is the editor's settings (or the command line's); `preference` (default:
    `base.configuration_preference`) says how it combines with the project file:
    editorFirst: the file's values, then whatever `base` set explicitly on top;
    filesystemFirst: `base`, then the file's values on top; editorOnly: no file.
    `config_path` names the file instead of discovering it; `isolated` reads none;
    `trusted=False` reads none and drops rule packs (limited mode). Per-file ignores of
    the file in use always apply; severity tables and rule packs of both sides merge."""
    s = base.copy()
    s.file_ignores = []
    s.config_file = None
    if s.sglang_version != "auto" and s.sglang_version_from is None:
        s.sglang_version_from = "servelint.sglangVersion"
    preference = preference or base.configuration_preference
    if preference not in PREFERENCES:
        preference = "editorFirst"
    if not trusted:
        s.project_rules = False
        s.rule_packs = []
        return s, []
    if isolated or preference == "editorOnly":
        return s, []
    if config_path is not None:
        cfg = load(config_path, explicit=True)
    elif path:
        cfg = find_config(os.path.dirname(os.path.abspath(path)))
    else:
        cfg = None
    if cfg is None:
        return s, []
    if cfg.problems:
        return s, [cfg]
    s.config_file = cfg.path
    file_wins = preference == "filesystemFirst"
    for attr, value in cfg.values.items():
        if attr == "severity":
            merged = SeverityMap(dict.items(base.severity if file_wins else value))
            merged.update(dict.items(value if file_wins else base.severity))
            s.severity = merged
        elif attr == "rule_packs":
            s.rule_packs = list(dict.fromkeys(list(value) + list(base.rule_packs)))
        elif file_wins or attr not in base.explicit:
            setattr(s, attr, list(value) if isinstance(value, list) else value)
            if attr == "sglang_version":
                s.sglang_version_from = (None if value == "auto"
                                         else f"sglang-version in {cfg.path}")
    for attr, extra in (("select", cfg.extend_select), ("ignore", cfg.extend_ignore)):
        # extend-* belongs with the file's select/ignore: it is dropped when the editor's
        # own list wins, and extending an empty select (every code) changes nothing.
        if extra and (file_wins or attr not in base.explicit) and \
                (attr == "ignore" or getattr(s, attr)):
            setattr(s, attr, list(dict.fromkeys(getattr(s, attr) + extra)))
    if path:
        s.file_ignores = cfg.ignores_for(path)
        # The most specific setting: a file's own release beats the folder's and the editor's.
        per_file = cfg.version_for(path)
        if per_file is not None:
            s.sglang_version = per_file[0]
            s.sglang_version_from = f'per-file-sglang-version "{per_file[1]}" in {cfg.path}'
    return s, []


# --- globs --------------------------------------------------------------------------------

_glob_cache: dict[str, re.Pattern] = {}


def glob_regex(pattern: str) -> re.Pattern:
    """A glob as a regex over `/`-separated relative paths: `*` and `?` stay within one
    path component, `**` spans any number, `[...]` is a class, `{a,b}` alternates; a
    pattern ending in `/` matches everything below that folder."""
    hit = _glob_cache.get(pattern)
    if hit is not None:
        return hit
    p = pattern.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    if p.endswith("/"):
        p += "**"
    out, i, depth = [], 0, 0
    while i < len(p):
        c = p[i]
        if p.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if p.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = p.find("]", i + 2 if p.startswith("[!", i) or p.startswith("[^", i) else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = p[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            out.append("(?:")
            depth += 1
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    out.append(")" * depth)
    try:
        rx = re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error:
        rx = re.compile(re.escape(p) + r"\Z")
    _glob_cache[pattern] = rx
    return rx


def glob_matches(pattern: str, rel: str, basename: str) -> bool:
    """Ruff's rule: the pattern is matched against the path relative to the configuration
    file's directory, and a pattern without `/` also against the file's name."""
    rx = glob_regex(pattern)
    if rx.match(rel):
        return True
    return "/" not in pattern.rstrip("/") and not pattern.endswith("/") and bool(rx.match(basename))
