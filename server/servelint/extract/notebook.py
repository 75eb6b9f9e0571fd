"""Jupyter notebooks (`.ipynb`): SGLang launches in code cells.

A code cell's `source` is a list of JSON strings (or one string) whose concatenation is
the cell's text. The cell text is rebuilt with, for each of its characters, the document
offsets of its source text (escapes included), and then read as what IPython runs:

- shell: `!cmd` lines (also `!!cmd`, `x = !cmd`; backslash-newline continues them, as
  in IPython) and cells run by a shell magic (`%%bash`, `%%sh`, `%%script bash`,
  `%%writefile x.sh`), or every cell of a notebook whose kernel is bash. In `!` lines
  IPython substitutes `{expr}` before the shell sees the line: a word with `{...}` is
  unknown.
- Python: the rest of the cell, with IPython's escape lines turned into comments of the
  same length, goes to the Python extractor (`python_launch.extract_python`), which
  knows SGLang's helpers (`launch_server_cmd('''...''')`, `popen_launch_server(...)`).

Launches are found in cell coordinates by those extractors, with hosts that edit the
cell text; `jsonpos.MappedHost` moves every span and edit into the document, escaping
new text for the JSON string. An edit that deletes whole source lines removes their
list elements (commas included), so the notebook stays valid JSON.
"""

from __future__ import annotations

import os
import re

from servelint.extract.common import ExtractResult, add_notice, empty
from servelint.extract.jsonpos import (InnerText, JArray, JObject, JString, deep_notices,
                                       map_finding, map_launch, parse, remove_elements)
from servelint.extract.shell import extract_shell
from servelint.lazy import LazyLogger
from servelint.model import LineIndex, Token

log = LazyLogger(__name__)  # logging imported at the first message

SHELL_MAGICS = re.compile(r"%%(?:bash|sh|script[ \t]+(?:\S*/)?(?:bash|sh|zsh|dash)\b|writefile[ \t]+(?:-a[ \t]+)?\S+\.(?:sh|bash))")
PYTHON_MAGICS = re.compile(r"%%(?:time|timeit|capture|prun|memit|debug)\b")
# An IPython escape at the start of a logical line: `!cmd`, `!!cmd`, `x = !cmd`, `%magic`.
_ESCAPE = re.compile(r"[ \t]*(?:[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*)?(!!?|%%?)")
_IPY_FIELD = re.compile(r"(?<!\$)\{[^{}]*\}")
_SHELL_KERNELS = {"bash", "sh", "shell", "zsh"}


# The languages an editor gives a notebook file opened as text; a document named like a
# notebook in another language is one of its cells (notebook_cell.py). Plain text could be
# either: the text tells.
FILE_LANGUAGES = {"jupyter", "ipynb", "json", "jsonc"}


def is_cell(path: str | None, language_id: str | None, text: str) -> bool:
    """A notebook's cell as an editor sends it: named like the notebook, in a cell's
    language, or (no language, plain text) with a text that is not a notebook's JSON."""
    if not path or not os.path.basename(path).lower().endswith(".ipynb"):
        return False
    if language_id and language_id != "plaintext":
        return language_id not in FILE_LANGUAGES
    return text.lstrip()[:1] not in ("{", "")


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    if language_id in ("jupyter", "ipynb"):
        return True
    if not path:
        return False
    return os.path.basename(path).lower().endswith(".ipynb") and not is_cell(path, language_id, text)


# --- the cell's text -----------------------------------------------------------------------


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j < 0 else j


def _logical_end(text: str, i: int) -> int:
    """End of the line at `i`, following backslash-newline continuations (IPython joins
    `!` lines that end with a backslash)."""
    end = _line_end(text, i)
    while end < len(text) and end > i and text[end - 1] == "\\":
        end = _line_end(text, end + 1)
    return end


def split_python(cell: str) -> tuple[str, list[tuple[int, int]]]:
    """The cell as Python (IPython escape lines made comments of the same length) and
    the ranges of the shell commands of its `!` lines."""
    n = len(cell)
    masked = list(cell)
    shell: list[tuple[int, int]] = []
    i = 0
    depth = 0
    line_start = True
    while i < n:
        at_start, line_start = line_start, False
        if at_start and depth == 0:
            m = _ESCAPE.match(cell, i)
            if m is not None:
                end = _logical_end(cell, i)
                if m.group(1).startswith("!"):
                    shell.append((m.end(1), end))
                # The escape line and its continuation lines become comments.
                first = i + len(m.group(0)) - len(m.group(0).lstrip(" \t"))
                masked[first] = "#"
                k = _line_end(cell, i)
                while k + 1 < end:
                    if cell[k + 1] != "\n":
                        masked[k + 1] = "#"
                    k = _line_end(cell, k + 1)
                i = end
                continue
        c = cell[i]
        if c == "#":
            i = _line_end(cell, i)
            continue
        if c in "\"'":
            i = _skip_string(cell, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c == "\\" and i + 1 < n and cell[i + 1] == "\n":
            i += 2
            continue
        elif c == "\n":
            line_start = True
        i += 1
    return "".join(masked), shell


def _skip_string(text: str, i: int) -> int:
    q = text[i]
    n = len(text)
    if text.startswith(q * 3, i):
        j = i + 3
        while j < n:
            if text[j] == "\\":
                j += 2
                continue
            if text.startswith(q * 3, j):
                return j + 3
            j += 1
        return n
    j = i + 1
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == q or c == "\n":
            return j + 1
        j += 1
    return n


def _blank(cell: str, keep: list[tuple[int, int]]) -> str:
    """The cell with everything outside `keep` turned into spaces (newlines stay)."""
    out = ["\n" if c == "\n" else " " for c in cell]
    for s, e in keep:
        out[s:e] = cell[s:e]
    return "".join(out)


def _ipython_word(tok: Token) -> Token:
    """IPython replaces `{expr}` in a `!` line before the shell runs it."""
    raw = tok.raw
    if not _IPY_FIELD.search(raw):
        return tok
    prefix = ""
    if tok.text is not None:
        p = tok.text.find("{")
        prefix = tok.text[:p] if p >= 0 else ""
    quoted = any(q in raw for q in "'\"")
    return Token(tok.span, None, prefix=prefix, splat=tok.splat or not quoted, raw=raw)


# --- Python cells -------------------------------------------------------------------------


def _python_extractor():
    try:
        from servelint.extract.python_launch import extract_python
    except ImportError:  # the Python extractor is not there: shell cells only
        return None
    import inspect
    if "settings" in inspect.signature(extract_python).parameters:
        return extract_python
    return lambda text, to_doc, doc_text, doc_index, settings=None: extract_python(
        text, to_doc, doc_text, doc_index)


def _cell_results(cell: str, mode: str, settings=None):
    """(extract result, from `!` lines) pairs for a cell's text, in cell coordinates."""
    found = []
    if mode == "shell":
        found.append((extract_shell(cell), False))
    elif mode == "markdown":
        from servelint.extract.markdown import extract_markdown
        found.append((extract_markdown(cell, LineIndex(cell), settings), False))
    elif mode == "python":
        python, shell = split_python(cell)
        if shell:
            found.append((extract_shell(_blank(cell, shell)), True))
        extract_python = _python_extractor()
        if extract_python is not None:
            # In cell coordinates, with hosts that edit the cell: MappedHost moves them.
            found.append((extract_python(python, None, python, LineIndex(python),
                                         settings=settings), False))
    for res, bang in found:
        if bang:
            for launch in res.launches:
                launch.entry = _ipython_word(launch.entry)
                launch.tokens = [_ipython_word(t) for t in launch.tokens]
    return found


def _cell_launches(cell: str, mode: str, result: ExtractResult, inner: InnerText,
                   text: str, index: LineIndex, settings=None) -> None:
    for res, _ in _cell_results(cell, mode, settings):
        for launch in res.launches:
            result.launches.append(map_launch(launch, inner, text, index, name="notebook"))
        for f in res.findings:
            result.findings.append(map_finding(f, inner, index))


def _mode(cell: str, kernel: str) -> tuple[str, str]:
    """('shell'|'python'|'skip', text) for a cell."""
    if kernel in _SHELL_KERNELS:
        return "shell", cell
    if kernel not in ("", "python", "python3", "ipython"):
        return "skip", cell
    first_end = _line_end(cell, 0)
    first = cell[:first_end].strip()
    if first.startswith("%%"):
        body = _blank(cell, [(first_end, len(cell))])
        if SHELL_MAGICS.match(first):
            return "shell", body
        if PYTHON_MAGICS.match(first):
            return "python", body
        return "skip", cell
    return "python", cell


def _kernel(root: JObject) -> str:
    meta = root.get("metadata")
    if not isinstance(meta, JObject):
        return ""
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        obj = meta.get(key)
        if isinstance(obj, JObject):
            v = obj.get(field)
            if isinstance(v, JString) and v.value:
                return v.value.lower()
    return ""


def _cells(root: JObject) -> list[JObject]:
    cells = root.get("cells")
    out: list[JObject] = []
    if isinstance(cells, JArray):
        out.extend(c for c in cells.elements if isinstance(c, JObject))
    sheets = root.get("worksheets")  # nbformat 3
    if isinstance(sheets, JArray):
        for ws in sheets.elements:
            if isinstance(ws, JObject):
                cs = ws.get("cells")
                if isinstance(cs, JArray):
                    out.extend(c for c in cs.elements if isinstance(c, JObject))
    return out


def _source(cell: JObject, text: str, index: LineIndex) -> InnerText | None:
    src = cell.get("source")
    if src is None:
        src = cell.get("input")  # nbformat 3
    if src is None:
        return None
    raw = text[src.start:src.end]
    if "sglang" not in raw and "launch_server" not in raw and "\\u" not in raw:
        return None  # cheap: most cells launch nothing
    if isinstance(src, JString):
        return InnerText.of_strings([src]) if src.value else None
    if isinstance(src, JArray) and src.elements:
        array = src
        strings = [e for e in array.elements if isinstance(e, JString)]
        if len(strings) < len(array.elements):
            return None
        return InnerText.of_strings(strings, lambda i, j: remove_elements(text, index, array, i, j))
    return None


def extract(text: str, index: LineIndex, path: str | None, settings) -> ExtractResult:
    result = empty()
    doc = parse(text)
    for said in deep_notices(doc, index):
        add_notice(result, said)
    root = doc.root
    if not isinstance(root, JObject):
        return result
    kernel = _kernel(root)
    for cell in _cells(root):
        kind = cell.get("cell_type")
        if not (isinstance(kind, JString) and kind.value in ("code", "markdown")):
            continue
        inner = _source(cell, text, index)
        if inner is None or "sglang" not in inner.text and "launch_server" not in inner.text:
            continue
        if kind.value == "markdown":
            # Commands shown in a Markdown cell's fenced blocks, read as in a .md file.
            mode, body = "markdown", inner.text
        else:
            # The kernel runs the cell whatever language VS Code shows it in
            # (`metadata.vscode.languageId` is only how the editor highlights it: a
            # `%%bash` cell is shown as shellscript, and others as plaintext).
            mode, body = _mode(inner.text, kernel)
        if mode == "skip":
            continue
        _cell_launches(body, mode, result, inner, text, index, settings)
    result.launches.sort(key=lambda l: l.span.start)
    return result


def _format():
    from servelint.extract import Format
    return Format("notebook", 20, detect, extract)


FORMAT = _format()
