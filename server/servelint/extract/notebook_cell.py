"""One cell of a notebook, as an editor sends it: VS Code opens each cell of an
`.ipynb` as its own document (`vscode-notebook-cell:/path/nb.ipynb#<cell>`), with the
cell's text and the cell's language, not the notebook's JSON.

A code cell is read as the notebook reader reads one (`notebook.py`): `!` lines and
shell magics (`%%bash`, ...) as shell, the rest as Python (see IPYTHON_LANGUAGES below
for which cells). Positions, fixes and suppressions are the cell's own: nothing is
moved into JSON.

A document is a cell when its path names a notebook but its text is not the notebook's
JSON (a notebook file starts with `{`; the language an editor gives a cell is that of the
cell, never `jupyter`). A Markdown cell is left to the Markdown reader.
"""

from __future__ import annotations

from servelint.extract.common import ExtractResult, empty
from servelint.extract.notebook import _cell_results, _mode, is_cell, split_python
from servelint.extract.shell import SHELL_LANGUAGES
from servelint.model import LineIndex

# The language VS Code shows a cell in is only how it highlights it: a Python kernel runs
# every code cell as IPython, and VS Code itself shows a `%%bash` cell as shellscript and
# some cells as plaintext. So cells in these languages are read as IPython reads them; a
# shell cell with no IPython syntax (a bash kernel's) goes to the shell reader, a Markdown
# cell to the Markdown reader, a cell in another language (an R or Julia kernel's) to none,
# as the notebook reader skips other kernels' cells.
IPYTHON_LANGUAGES = {None, "", "python", "ipython", "plaintext"}


def _ipython_syntax(text: str) -> bool:
    """A cell magic first (`%%bash`) or a `!` shell line, as the notebook reader finds them."""
    return text.lstrip(" \t").startswith("%%") or bool(split_python(text)[1])


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    if not is_cell(path, language_id, text):
        return False
    if language_id in IPYTHON_LANGUAGES:
        return True
    return language_id in SHELL_LANGUAGES and _ipython_syntax(text)


def extract(text: str, index: LineIndex, path: str | None, settings) -> ExtractResult:
    result = empty()
    mode, body = _mode(text, "")
    if mode == "skip":
        return result
    for res, _ in _cell_results(body, mode, settings):
        result.launches.extend(res.launches)
        result.findings.extend(res.findings)
    result.launches.sort(key=lambda l: l.span.start)
    return result


def _format():
    from servelint.extract import Format
    return Format("notebook-cell", 19, detect, extract)


FORMAT = _format()
