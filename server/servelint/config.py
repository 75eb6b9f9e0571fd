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
from typing import Any

from servelint.lazy import LazyPattern, Record, field
from servelint.schema import (BY_ATTR, BY_TOML, PREFERENCES, PROJECT_ONLY, Invalid, SeverityMap,
                              selector_problem, unknown_selectors)
from servelint.settings import Settings
from servelint.suggest import VALUES, close_matches


def _toml():
    """tomllib (tomli before Python 3.11), imported when a TOML file is read."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return tomllib


DOT_FILE = ".servelint.toml"
PYPROJECT = "pyproject.toml"
CONFIG_NAMES = (DOT_FILE, PYPROJECT)  # in the order they win within one directory


class ProjectConfig(Record):
    """One configuration file, parsed. `values` holds Settings attributes the file sets;
    a file with `problems` contributes nothing."""

    path: str
    values: dict[str, Any] = field(default_factory=dict)
    extend_select: list[str] = field(default_factory=list)
    extend_ignore: list[str] = field(default_factory=list)
    per_file_ignores: list[tuple[str, list[str]]] = field(default_factory=list)
    per_file_sglang_version: list[tuple[str, str]] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)  # gitignore-style (files.py)
    problems: list[str] = field(default_factory=list)
    # Rule pack files and folders whose codes the file's selectors were checked against,
    # with their stat keys: a change re-reads the file (load).
    depends: tuple = field(default=(), compare=False, repr=False)

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
    if not cfg.problems:
        _check_pack_selectors(cfg)
    if cfg.problems:
        cfg.values, cfg.extend_select, cfg.extend_ignore, cfg.per_file_ignores = {}, [], [], []
        cfg.per_file_sglang_version, cfg.exclude = [], []
    return cfg


def _check_pack_selectors(cfg: ProjectConfig) -> None:
    """Selectors of the file outside servelint's own codes must name a code of a rule
    pack the file can mean: one of its `rule-packs`, or of the `.servelint/rules` folder
    in its own folder or above (schema.py judged servelint's own codes already)."""
    named = [("select", cfg.values.get("select", [])), ("ignore", cfg.values.get("ignore", [])),
             ("extend-select", cfg.extend_select), ("extend-ignore", cfg.extend_ignore),
             ("severity", list(cfg.values.get("severity", {})))]
    named += [(f"per-file-ignores {pattern!r}", listed) for pattern, listed in cfg.per_file_ignores]
    if not any(unknown_selectors(listed) for _, listed in named):
        return
    from servelint.rules import PROJECT_DIR, project_pack_dir
    packs = list(cfg.values.get("rule_packs", []))
    folder = project_pack_dir(cfg.path)
    if folder:
        packs.append(folder)
    extra, depends = pack_codes(packs)
    # Never empty: a rules folder made next to the file later is noticed by its stat, and
    # invalidate() re-reads every file that needed packs.
    own = os.path.join(cfg.directory, PROJECT_DIR)
    cfg.depends = depends + ((own, _stat_key(own)),)
    for key, listed in named:
        bad = unknown_selectors(listed, extra)
        if bad:
            cfg.problems.append(f"`{key}` {selector_problem(bad, extra, PACK_TAIL)}")


PACK_TAIL = ("servelint's codes begin with SL (`servelint rules` lists them), and no rule pack "
             "read here (rule-packs, --rules, .servelint/rules) has such a code")


_pack_codes: dict[str, tuple[tuple | None, frozenset[str]]] = {}


def pack_codes(paths: list[str]) -> tuple[frozenset[str], tuple]:
    """The codes of the rule packs at `paths` (files, or folders of pack files), as the
    rules would be coded (a record's `code`, else the one made from its id), whatever
    release they apply to; and the (path, stat key) pairs that answer depends on. A pack
    that cannot be read or parsed has no codes (its problems are reported when it is
    loaded for linting). Cached by path, modification time and size."""
    from servelint.rules import pack_files, parse_pack_text, rule_code, unwrap
    codes: set[str] = set()
    depends = []
    files = []
    for p in paths:
        p = os.path.abspath(p)
        depends.append((p, _stat_key(p)))
        files.extend(pack_files(p) if os.path.isdir(p) else [p])
    for f in files:
        key = _stat_key(f)
        if f not in dict(depends):
            depends.append((f, key))
        hit = _pack_codes.get(f)
        if hit is None or hit[0] != key:
            found: set[str] = set()
            if key is not None:
                try:
                    with open(f, encoding="utf-8") as fh:
                        data, _ = parse_pack_text(fh.read(), f)
                    for rec in unwrap(data) if data is not None else []:
                        if isinstance(rec, dict) and ("code" in rec or "id" in rec):
                            found.add(str(rule_code(rec)).upper())
                except (OSError, UnicodeDecodeError, ValueError):
                    pass
            hit = (key, frozenset(found))
            _pack_codes[f] = hit
        codes |= hit[1]
    return frozenset(codes), tuple(depends)


class SettingsProblem(ProjectConfig):
    """Codes the editor's settings or the command line select, ignore or give a severity
    that match no code of servelint or of the rule packs read for the linted file. Not a
    file's problem, but reported the way one is (`settings_for`'s second list); `path`
    only tells one such problem from another."""

    def message(self) -> str:
        return "; ".join(self.problems)


CONFIG_MAX_BYTES = 1024 * 1024  # a project configuration is a few lines; a pyproject.toml less than this


# Where a `tool` table can meet a `servelint` key: `tool.servelint` (dotted, in a header
# or a key, quoted or not), a `[tool]` or `[[tool]]` header, an inline `tool = {`.
_TOOL_TABLE = LazyPattern(rb"""tool["']?\s*(?:\.\s*["']?\s*servelint|\]|=\s*\{)""")


def may_hold_servelint_table(data: bytes) -> bool:
    """Whether a pyproject.toml's bytes can hold a [tool.servelint] table, without parsing
    them: False only when no `tool` key can meet a `servelint` key (above), and no
    `\\u`/`\\U` escape, the one way a quoted key spells letters it does not show. A
    false True costs a parse; a False is certain."""
    if b"\\u" in data or b"\\U" in data:
        return True
    return b"servelint" in data and _TOOL_TABLE.search(data) is not None


def parse_file(path: str, explicit: bool = False) -> ProjectConfig | None:
    """The configuration in `path`; None for a pyproject.toml without [tool.servelint]
    (unless `explicit`: a file named by --config is always a configuration)."""
    path = os.path.abspath(path)
    is_pyproject = os.path.basename(path) == PYPROJECT
    from servelint.files import NotRegular, TooLarge, read_bytes
    try:
        data = read_bytes(path, CONFIG_MAX_BYTES)
    except TooLarge as exc:
        return ProjectConfig(path, problems=[
            f"the file has {exc.args[0]:,} bytes or more, more than the {CONFIG_MAX_BYTES:,} "
            "servelint reads in a configuration file: not read"])
    except NotRegular:
        return ProjectConfig(path, problems=["not a regular file (a FIFO, device or socket): "
                                             "not read"])
    except OSError as exc:
        return ProjectConfig(path, problems=[f"cannot read the file: {exc.strerror or exc}"])
    if is_pyproject and not explicit and not may_hold_servelint_table(data):
        # Someone else's pyproject.toml: not a configuration, and not worth a TOML
        # parser's import (a sixth of a cold check inside such a project).
        return None
    tomllib = _toml()
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except RecursionError:  # tomllib reads nested arrays and tables by recursion
        return ProjectConfig(path, problems=["invalid TOML: values nested too deeply to read"])
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
    if hit is not None and hit[0] == key and \
            (hit[1] is None or all(_stat_key(p) == k for p, k in hit[1].depends)):
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
        # A rule pack may have come or gone: files whose selectors named pack codes are
        # checked again.
        for cached, (_, cfg) in list(_parsed.items()):
            if cfg is not None and cfg.depends:
                del _parsed[cached]


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
        # No pack is read, so a pack's code cannot be told from a typo: not judged.
        s.project_rules = False
        s.rule_packs = []
        return s, []
    if isolated or preference == "editorOnly":
        return s, _base_selector_problems(s, base, path)
    if config_path is not None:
        cfg = load(config_path, explicit=True)
    elif path:
        cfg = find_config(os.path.dirname(os.path.abspath(path)))
    else:
        cfg = None
    if cfg is None:
        return s, _base_selector_problems(s, base, path)
    if cfg.problems:
        return s, [cfg] + _base_selector_problems(s, base, path)
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
    return s, _base_selector_problems(s, base, path)


def _base_selector_problems(s: Settings, base: Settings, path: str | None) -> list[ProjectConfig]:
    """The codes of the editor's settings or the command line (`base`) outside servelint's
    own that no rule pack read for `path` has (the field's parser judged servelint's own
    codes already): one SettingsProblem, or none. `s`: the settings the file is linted
    with, whose rule packs count."""
    named = [(attr, list(getattr(base, attr))) for attr in ("select", "ignore", "severity")]
    if not any(unknown_selectors(listed) for _, listed in named):
        return []
    from servelint.rules import project_pack_dir
    packs = list(s.rule_packs)
    folder = project_pack_dir(path) if s.project_rules and path else None
    if folder:
        packs.append(folder)
    extra, _ = pack_codes(packs)
    said, key = [], []
    for attr, listed in named:
        bad = unknown_selectors(listed, extra)
        if bad:
            field = BY_ATTR[attr]
            names = " / ".join(n for n in (field.cli, field.editor and f"servelint.{field.editor}")
                               if n)
            said.append(f"{names} {selector_problem(bad, extra, PACK_TAIL)}")
            key += [attr] + bad
    if not said:
        return []
    return [SettingsProblem(f"<settings: {' '.join(key)}>", problems=said)]


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
