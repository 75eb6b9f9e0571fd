"""Does a fix leave the file parsing in its own syntax? (issue 17, point 1)

`breaks_syntax(fmt, before, after)` re-parses the text a fix (or a fix-all) would leave
and compares it with the text before: a fix may never make a parsing file unparsable,
nor add parse errors to a file that was already broken (a half-written script in the
editor still gets its fixes, as long as they make it no worse).

Each format is read by a parser of its own syntax, independent of the extractor that
found the launch (a blind spot of the extractor must not also be one of the check):

- shell: tree-sitter-bash; ERROR and MISSING nodes are counted;
- YAML (Kubernetes, compose, CI files, SGLang `--config` files, rule packs): PyYAML's safe
  parser, event by event (libyaml's recursive composer crashes the process on deep
  nesting; the events hold the same syntax), undefined aliases included; Go/Helm
  template actions are blanked first, as the YAML reader blanks them;
- JSON with comments (launch.json, rule packs): servelint's tolerant JSONC parser, which
  lists every problem;
- notebooks: strict JSON, then each code cell as IPython reads it (`!` lines and shell
  magics as shell, the rest compiled as Python);
- Python: `compile(..., "exec", PyCF_ONLY_AST)`;
- Dockerfile: the line structure (instructions, continuation lines, heredocs), exec-form
  JSON arrays still JSON arrays of strings, and the shell form of RUN/CMD/ENTRYPOINT;
- Markdown: the code fences (the same fences, balanced) and the shell and Python inside;
- TOML: tomllib.

A parse of `before` is kept for the few texts checked last: a document's fixes are all
checked against the same `before`, which is parsed once.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
import threading
import warnings
from collections import OrderedDict
from typing import Any, Callable, TypeVar

from servelint.lazy import LazyPattern, Record, yaml
from servelint.edits import apply_edits, common_prefix, common_suffix
from servelint.model import Edit, Fix, LineIndex, Span


class Parse(Record, frozen=True):
    """What a parser said about a text: how many problems, where the first one is (the
    text's length when there is none), what it is, and the problems of each part (a
    notebook's cells, a Markdown file's code blocks) when the text has parts."""

    errors: int
    first: int
    what: str = ""
    parts: tuple[int, ...] | None = None
    # Offsets (0 first) where a text without problems splits into pieces that each parse
    # alone (top-level statements starting a line): a fix is then checked by re-parsing
    # only the piece it edits (a 20k-line file costs the piece, not the file).
    bounds: tuple[int, ...] | None = None


def _ok(text: str) -> Parse:
    return Parse(0, len(text))


# --- pieces parsed once ------------------------------------------------------------------------

T = TypeVar("T")
_UNITS: OrderedDict[tuple[str, str], Any] = OrderedDict()
_UNIT_CHARS = 1 << 16  # a larger piece is parsed every time
_UNITS_BUDGET = 1 << 22  # characters of pieces remembered (a 20k-line file's all fit)
_units_held = [0]


def _unit(kind: str, text: str, count: Callable[[str], T]) -> T:
    """`count(text)`, remembered for small texts: a document's cells, code blocks and
    shell commands are mostly the same before and after a fix, and are parsed once."""
    if len(text) > _UNIT_CHARS:
        return count(text)
    key = (kind, text)
    with _LOCK:
        got = _UNITS.get(key)
        if got is not None:
            _UNITS.move_to_end(key)
            return got
    got = count(text)
    with _LOCK:
        if key not in _UNITS:
            _UNITS[key] = got
            _units_held[0] += len(text)
        while _units_held[0] > _UNITS_BUDGET:
            (_, dropped), _ = _UNITS.popitem(last=False)
            _units_held[0] -= len(dropped)
    return got


def _shell_count(text: str) -> int:
    return _unit("shell", text, lambda t: _shell_errors(t)[0])


def _python_count(text: str) -> int:
    return _unit("python", text, lambda t: 0 if _python_error(t) is None else 1)


# --- shell ---------------------------------------------------------------------------------


def _shell_errors(text: str, bounds: list[int] | None = None) -> tuple[int, int, str]:
    """(count, offset of the first, description) of tree-sitter-bash's ERROR and MISSING
    nodes. Only subtrees that hold an error are walked (tree-sitter marks them), so a
    parsing script costs the parse alone. `bounds`, when given and there is no error,
    receives the offsets of the lines where a top-level command starts."""
    from servelint.extract.shell import parse_shell
    data = text.encode("utf-8", "surrogatepass")
    tree, _ = parse_shell(text, data)
    root = tree.root_node
    if not root.has_error:
        if bounds is not None:
            starts = _line_starts(text, "\n")
            rows = {c.start_point.row for c in root.children if c.start_point.column == 0}
            bounds.extend(starts[r] for r in sorted(rows) if 0 < r < len(starts))
        return 0, len(text), ""
    count = 0
    first_byte = -1
    what = ""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
            if first_byte < 0 or node.start_byte < first_byte:
                first_byte = node.start_byte
                what = "missing " + node.type if node.is_missing else "a syntax error"
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    first = len(data[:max(first_byte, 0)].decode("utf-8", "surrogatepass")) if first_byte > 0 else 0
    return count, first, what


def _line_starts(text: str, breaks: str) -> list[int]:
    """The offset of each line's start: lines end at `breaks` ("\\n": tree-sitter's rows),
    or, for "", at \\r\\n, \\r or \\n (Python's lines)."""
    pattern = re.compile(re.escape(breaks)) if breaks else _LINE_END
    return [0] + [m.end() for m in pattern.finditer(text)]


def _shell(text: str) -> Parse:
    bounds: list[int] = [0]
    count, first, what = _shell_errors(text, bounds)
    if count:
        return Parse(count, first, f"shell: {what}")
    return Parse(0, len(text), bounds=tuple(bounds))


# --- YAML ----------------------------------------------------------------------------------

_TEMPLATE = LazyPattern(r"\{\{[^\n]*?\}\}")


def _blank_templates(text: str) -> str:
    """Go/Helm template actions as spaces (offsets and line breaks kept)."""
    if "{{" not in text:
        return text
    return _TEMPLATE.sub(lambda m: " " * len(m.group(0)), text)


def _yaml(text: str) -> Parse:
    loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    anchors: set[str] = set()
    try:
        for ev in yaml.parse(_blank_templates(text), Loader=loader):
            anchor = getattr(ev, "anchor", None)
            if anchor is None:
                continue
            if isinstance(ev, yaml.AliasEvent):
                if anchor not in anchors:
                    return Parse(1, _mark(ev.start_mark, text), f"YAML: undefined alias *{anchor}")
            else:
                anchors.add(anchor)
            if isinstance(ev, yaml.DocumentEndEvent):
                anchors.clear()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return Parse(1, _mark(mark, text), f"YAML: {problem}")
    except (RecursionError, MemoryError):
        return Parse(1, 0, "YAML: too deeply nested")
    return _ok(text)


def _mark(mark, text: str) -> int:
    index = getattr(mark, "index", None)
    return index if isinstance(index, int) and 0 <= index <= len(text) else len(text)


# --- JSON ----------------------------------------------------------------------------------


def _jsonc(text: str) -> Parse:
    from servelint.extract.jsonpos import parse
    doc = parse(text)
    errors = list(doc.errors)
    if doc.root is None and not errors:
        errors.append((0, "empty document"))
    if not errors:
        return _ok(text)
    at, msg = min(errors)
    return Parse(len(errors), at, f"JSON: {msg}")


def _strict_json(text: str) -> tuple[object, Parse]:
    try:
        return json.loads(text), _ok(text)
    except json.JSONDecodeError as exc:
        return None, Parse(1, exc.pos, f"JSON: {exc.msg}")
    except (ValueError, RecursionError) as exc:
        return None, Parse(1, 0, f"JSON: {exc}")


# --- Python and notebook cells ---------------------------------------------------------------

_LINE_END = LazyPattern(r"\r\n|\r|\n")


def _python_error(text: str) -> tuple[int, str] | None:
    """(offset, message) of the first Python syntax error, None when the text compiles."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<fix>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        return None
    except SyntaxError as exc:
        return _line_offset(text, exc.lineno or 1, exc.offset or 1), f"Python: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return 0, f"Python: {exc}"


def _line_offset(text: str, line: int, col: int) -> int:
    """The offset of 1-based (line, column) as Python counts lines."""
    pos = 0
    for _ in range(line - 1):
        m = _LINE_END.search(text, pos)
        if m is None:
            return len(text)
        pos = m.end()
    return min(pos + max(col - 1, 0), len(text))


def _python(text: str) -> Parse:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = compile(text, "<fix>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        err = _python_error(text)
        return Parse(1, err[0], err[1]) if err is not None else Parse(1, 0, "Python: unreadable")
    rows = set()
    assert isinstance(tree, ast.Module)
    for stmt in tree.body:
        decorators = getattr(stmt, "decorator_list", None) or []
        line = min([stmt.lineno] + [d.lineno for d in decorators])
        col = min([stmt.col_offset] + [d.col_offset for d in decorators])
        if col <= 1:  # a decorator's line starts with its @
            rows.add(line - 1)
    starts = _line_starts(text, "")
    bounds = [0] + [starts[r] for r in sorted(rows) if 0 < r < len(starts)]
    return Parse(0, len(text), bounds=tuple(bounds))


def _cell_errors(cell: str, kernel: str = "") -> int:
    """The problems of one code cell as IPython runs it: a shell magic's body as shell;
    otherwise the Python (escape lines masked) plus each `!` line's shell command."""
    from servelint.extract.notebook import _mode, split_python
    mode, body = _mode(cell, kernel)
    if mode == "skip":
        return 0
    if mode == "shell":
        return _shell_count(body)
    masked, commands = split_python(body)
    count = _python_count(masked)
    for start, end in commands:
        count += _shell_count(body[start:end])
    return count


def _parts_parse(text: str, parts: list[int], base: Parse | None = None) -> Parse:
    total = sum(parts)
    if base is not None and base.errors:
        return Parse(base.errors + total, base.first, base.what, tuple(parts))
    if not total:
        return Parse(0, len(text), "", tuple(parts))
    k = next(i for i, n in enumerate(parts) if n)
    return Parse(total, len(text), f"part {k + 1}", tuple(parts))


def _notebook(text: str) -> Parse:
    value, parsed = _strict_json(text)
    if parsed.errors or not isinstance(value, dict):
        return parsed if parsed.errors else Parse(1, 0, "notebook: not a JSON object")
    kernel = ""
    meta = value.get("metadata")
    if isinstance(meta, dict):
        for key, fld in (("kernelspec", "language"), ("language_info", "name")):
            obj = meta.get(key)
            if isinstance(obj, dict) and isinstance(obj.get(fld), str) and obj[fld]:
                kernel = obj[fld].lower()
                break
    parts = []
    cells = value.get("cells")
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            parts.append(0)
            continue
        src = cell.get("source")
        if isinstance(src, list):
            src = "".join(s for s in src if isinstance(s, str))
        parts.append(_unit("cell:" + kernel, src, lambda t: _cell_errors(t, kernel))
                     if isinstance(src, str) else 1)
    parsed = _parts_parse(text, parts)
    if parsed.errors:
        k = next(i for i, n in enumerate(parts) if n)
        return Parse(parsed.errors, parsed.first, f"notebook cell {k + 1}", parsed.parts)
    return parsed


def _notebook_cell(text: str) -> Parse:
    count = _unit("cell:", text, _cell_errors)
    return Parse(count, 0 if count else len(text), "notebook cell" if count else "")


# --- Dockerfile ------------------------------------------------------------------------------

_INSTRUCTIONS = {"FROM", "RUN", "CMD", "ENTRYPOINT", "ENV", "ARG", "LABEL", "EXPOSE", "ADD",
                 "COPY", "VOLUME", "USER", "WORKDIR", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK",
                 "SHELL", "MAINTAINER"}
_EXEC_FORM = {"RUN", "CMD", "ENTRYPOINT", "SHELL", "ADD", "COPY", "VOLUME"}
_SHELL_FORM = {"RUN", "CMD", "ENTRYPOINT"}
_DIRECTIVE = LazyPattern(r"#[ \t]*([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(\S*)[ \t]*$")
_HEREDOC = LazyPattern(r"<<-?([\"']?)([A-Za-z_][A-Za-z0-9_]*)\1")
_FLAG = LazyPattern(r"--[A-Za-z-]+(?:=(?:\"[^\"]*\"|'[^']*'|\S*))?[ \t]+")
_DOCKER_LINES = LazyPattern(r"[^\n]*(?:\n|$)")


def _dockerfile(text: str) -> Parse:
    """Problems of a Dockerfile's structure: a line that starts an instruction but names
    none, an unterminated heredoc, an exec form that is no JSON array of strings (Docker
    would silently run it as a shell command), a shell form that is no shell."""
    lines = [(m.start(), m.group(0)) for m in _DOCKER_LINES.finditer(text) if m.group(0)]
    escape = "\\"
    for _, line in lines:  # parser directives: the comments before anything else
        m = _DIRECTIVE.match(line.rstrip("\r\n").lstrip(" \t"))
        if m is None:
            break
        if m.group(1).lower() == "escape" and m.group(2) in ("`", "\\"):
            escape = m.group(2)
    problems: list[tuple[int, str]] = []
    i = 0
    n = len(lines)
    while i < n:
        start, line = lines[i]
        body = line.rstrip("\r\n")
        stripped = body.lstrip(" \t\ufeff")
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        # the logical line: physical lines joined while one ends with the escape character
        pieces = [body]
        while body.rstrip(" \t").endswith(escape) and i + 1 < n:
            i += 1
            body = lines[i][1].rstrip("\r\n")
            if not body.strip(" \t") or body.lstrip(" \t").startswith("#"):
                body = escape  # a comment or blank line inside an instruction: dropped
                continue
            pieces.append(body)
        i += 1
        word = stripped.split(None, 1)[0] if stripped.split(None, 1) else ""
        keyword = word.upper()
        if keyword not in _INSTRUCTIONS:
            problems.append((start, f"Dockerfile: {word[:20]!r} is no instruction"))
            continue
        joined = "".join(p.rstrip(" \t")[:-1] if p.rstrip(" \t").endswith(escape) else p
                           for p in pieces)
        args = joined.lstrip(" \t\ufeff")[len(word):].lstrip(" \t")
        heredocs = _HEREDOC.findall(args) if keyword in ("RUN", "COPY", "ADD") else []
        for _, word_end in heredocs:
            while i < n and lines[i][1].rstrip("\r\n").lstrip("\t") != word_end:
                i += 1
            if i >= n:
                problems.append((start, f"Dockerfile: heredoc {word_end} never ends"))
            i += 1
        if keyword == "ONBUILD" or heredocs:
            continue
        while keyword in ("RUN", "ADD", "COPY") and args.startswith("--"):
            m = _FLAG.match(args)
            if m is None:
                break
            args = args[m.end():]
        if args.startswith("[") and keyword in _EXEC_FORM:
            try:
                value = json.loads(args)
                good = isinstance(value, list) and all(isinstance(v, str) for v in value)
            except ValueError:
                good = False
            if not good:
                problems.append((start, f"Dockerfile: {keyword}'s exec form is no JSON array "
                                        "of strings"))
            continue
        if keyword in _SHELL_FORM and args.strip():
            # where in the command (a fix that continues a line onto a broken one moves the
            # problem into this instruction, not ahead of it)
            count, at = _unit("shell-at", args, lambda t: _shell_errors(t)[:2])
            problems.extend([(min(start + len(word) + 1 + at, len(text)),
                              f"Dockerfile: {keyword}'s shell command does not parse")] * count)
    if not problems:
        return _ok(text)
    at, what = min(problems)
    return Parse(len(problems), at, what)


# --- Markdown --------------------------------------------------------------------------------

_FENCE = LazyPattern(r"^([ \t]*(?:>[ \t]?)*[ \t]*)(`{3,}|~{3,})(.*)$")
_SHELL_INFO = {"bash", "sh", "shell", "zsh", "ksh"}
_PYTHON_INFO = {"python", "py", "python3"}


def _markdown(text: str) -> Parse:
    """The fences (each opened and closed, with what kind of code), and the shell and
    Python blocks' own syntax. A fix that drops or adds a fence turns text into code or
    code into text: that is a problem whether or not the fences still balance."""
    lines = [(m.start(), m.group(0)) for m in _DOCKER_LINES.finditer(text) if m.group(0)]
    parts: list[int] = []
    unclosed = None
    i = 0
    while i < len(lines):
        start, line = lines[i]
        m = _FENCE.match(line.rstrip("\r\n"))
        i += 1
        if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
            continue
        fence = m.group(2)
        info = m.group(3).strip().split(None, 1)
        lang = info[0].strip("{}.").lower() if info else ""
        body_start = i
        while i < len(lines):
            c = _FENCE.match(lines[i][1].rstrip("\r\n"))
            if c is not None and c.group(2)[0] == fence[0] and len(c.group(2)) >= len(fence) \
                    and not c.group(3).strip():
                break
            i += 1
        if i >= len(lines):
            unclosed = start
            parts.append(1)
            break
        prefix = len(m.group(1))
        body = "".join(ln[prefix:] if ln[:prefix].strip(" \t>") == "" else ln.lstrip(" \t>")
                       for _, ln in lines[body_start:i])
        i += 1
        if lang in _SHELL_INFO:
            parts.append(_shell_count(body))
        elif lang in _PYTHON_INFO:
            parts.append(_python_count(body))
        else:
            parts.append(0)
    if unclosed is not None:
        return Parse(sum(parts), unclosed, "Markdown: a code fence is never closed", tuple(parts))
    return _parts_parse(text, parts)


# --- TOML ------------------------------------------------------------------------------------


def _toml(text: str) -> Parse:
    from servelint.config import _toml as toml_module
    tomllib = toml_module()
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Parse(1, _line_offset(text, getattr(exc, "lineno", 1) or 1,
                                     getattr(exc, "colno", 1) or 1), f"TOML: {exc}")
    except RecursionError:
        return Parse(1, 0, "TOML: too deeply nested")
    return _ok(text)


def _rulepack(text: str) -> Parse:
    return _jsonc(text) if text.lstrip("\ufeff \t\r\n").startswith("{") else _yaml(text)


PARSERS: dict[str, Callable[[str], Parse]] = {
    "shell": _shell, "yaml": _yaml, "sglang-config": _yaml, "launch-json": _jsonc,
    "json": _jsonc, "jsonc": _jsonc, "notebook": _notebook, "notebook-cell": _notebook_cell,
    "python": _python, "dockerfile": _dockerfile, "markdown": _markdown, "toml": _toml,
    "rulepack": _rulepack,
}


# --- the check -------------------------------------------------------------------------------

_CACHE: OrderedDict[tuple[str, str], Parse] = OrderedDict()
_CACHE_SIZE = 8
_LOCK = threading.Lock()


def parse_result(fmt: str, text: str) -> Parse | None:
    """The parse of `text` in format `fmt` (None for a format without a parser here),
    remembered for the last few texts (the lint thread and the CLI share it)."""
    parser = PARSERS.get(fmt)
    if parser is None:
        return None
    key = (fmt, text)
    with _LOCK:
        got = _CACHE.get(key)
        if got is not None:
            _CACHE.move_to_end(key)
            return got
    try:
        got = parser(text)
    except Exception as exc:  # a parser's own failure counts as a problem, never a crash
        got = Parse(1, 0, f"{fmt}: the parser failed ({type(exc).__name__})")
    with _LOCK:
        _CACHE[key] = got
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return got


_WINDOW_COUNT: dict[str, Callable[[str], int]] = {"shell": _shell_count, "python": _python_count}
_WHOLE = "whole"  # the windowed check cannot tell: parse the whole text


def _windowed(fmt: str, old: Parse, before: str, after: str) -> str | None:
    """None when the piece of text the fix edits (between two of `old.bounds`) parsed
    alone before and still does after: the rest of the text is the same whole statements,
    so the whole text parses too. _WHOLE otherwise: the whole text is compared (a piece
    may fail alone and not in the text, when the fix joins it to the next statement)."""
    assert old.bounds is not None
    count = _WINDOW_COUNT[fmt]
    p = common_prefix(before, after)
    s = common_suffix(before, after, min(len(before), len(after)) - p)
    end_old = len(before) - s
    bounds = old.bounds
    k = bisect.bisect_right(bounds, p) - 1
    lo = bounds[k]
    j = bisect.bisect_left(bounds, max(end_old, p + 1))
    hi = bounds[j] if j < len(bounds) else len(before)
    delta = len(after) - len(before)
    piece = after[lo:hi + delta]
    if hi < len(before) and not piece.endswith(("\n", "\r")):
        return _WHOLE
    if count(piece) or count(before[lo:hi]):
        return _WHOLE
    return None


def breaks_syntax(fmt: str | None, before: str, after: str) -> str | None:
    """None when `after` parses in `fmt`'s own syntax at least as well as `before`; else
    why not, in a few words. "At least as well": no new problem, and the first problem
    no earlier than before (allowing for text the edit removed ahead of it); a notebook's
    cells and a Markdown file's code blocks are compared one by one, and must stay as
    many."""
    if fmt is None or before == after:
        return None
    old = parse_result(fmt, before)
    if old is None:
        return None
    if old.bounds is not None and not old.errors and fmt in _WINDOW_COUNT:
        got = _windowed(fmt, old, before, after)
        if got is not _WHOLE:
            return got
    return compare(fmt, old, before, after)


def compare(fmt: str, old: Parse, before: str, after: str) -> str | None:
    """The check on the whole text of `after` (`old`: the parse of `before`)."""
    new = parse_result(fmt, after)
    assert new is not None
    if not new.errors:
        if old.parts is not None and new.parts is not None and len(old.parts) != len(new.parts):
            return f"{fmt}: the fix changes the number of code blocks or cells"
        return None
    if old.parts is not None and new.parts is not None:
        if len(old.parts) != len(new.parts):
            return f"{fmt}: the fix changes the number of code blocks or cells"
        worse = [k for k, (a, b) in enumerate(zip(old.parts, new.parts)) if b > a]
        if worse:
            kind = "cell" if fmt == "notebook" else "code block"
            return f"the fixed {kind} {worse[0] + 1} no longer parses"
    if not old.errors:
        return f"the fixed text no longer parses ({new.what})"
    if new.errors > old.errors:
        return f"the fix adds a parse problem ({new.what})"
    # Where the first problem may be now: the text before the first edited character is
    # the same, so a problem there is the fix's (Python reports an unclosed bracket where
    # it opens); an edit wholly ahead of the old first problem moves it by its length; a
    # problem inside the edited text may be the old one moved, and only its count tells.
    p = common_prefix(before, after)
    end_old = len(before) - common_suffix(before, after, min(len(before), len(after)) - p)
    if end_old <= old.first:
        allowed = old.first + min(0, len(after) - len(before))
    elif p >= old.first:
        allowed = old.first
    else:
        allowed = p
    if new.first < allowed:
        return f"the fix adds a parse problem ahead of the first one ({new.what})"
    return None


def offered(fmt: str | None, text: str, fixes: list[Fix]) -> list[Fix]:
    """The fixes that may be offered for `text`: those whose result parses (the editor's
    quick fixes; checked when they are asked for, a handful at a time, not at every lint)."""
    return [fx for fx in fixes if breaks_syntax(fmt, text, apply_edits(text, fx.edits)) is None]


def offered_dicts(fmt: str | None, text: str, index: LineIndex, fixes: list[dict]) -> list[dict]:
    """`offered` for fixes as the serializer writes them into a diagnostic's data (edits
    with LSP ranges, `index` the LineIndex of `text`)."""
    out = []
    for fx in fixes:
        try:
            edits = [Edit(Span(index.offset(e["range"]["start"]["line"], e["range"]["start"]["character"]),
                               index.offset(e["range"]["end"]["line"], e["range"]["end"]["character"])),
                          e["newText"]) for e in fx["edits"]]
        except (KeyError, TypeError):
            continue  # not a fix servelint wrote: not offered
        if offered(fmt, text, [Fix(fx.get("title", ""), edits)]):
            out.append(fx)
    return out


__all__ = ["Parse", "PARSERS", "breaks_syntax", "compare", "offered", "offered_dicts",
           "parse_result"]
