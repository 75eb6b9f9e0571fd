"""One cell of a notebook, as an editor sends it: VS Code opens each cell of an
`.ipynb` as its own document (`vscode-notebook-cell:/path/nb.ipynb#<cell>`), with the
cell's text and the cell's language, not the notebook's JSON.

A code cell is read as the notebook reader reads one (`notebook.py`): `!` lines and
shell magics (`%%bash`, ...) as shell, the rest as Python. A cell whose language is a
shell (a bash kernel's cells) goes to the shell reader, a Markdown cell to the Markdown
reader. Positions, fixes and suppressions are the cell's own: nothing is
moved into JSON.

A document is a cell when its path names a notebook but its text is not the notebook's
JSON (a notebook file starts with `{`; the language an editor gives a cell is that of the
cell, never `jupyter`). A Markdown cell is left to the Markdown reader.
"""

from __future__ import annotations

from servelint.extract.common import ExtractResult, empty
from servelint.extract.notebook import _cell_results, _mode
from servelint.extract.shell import SHELL_LANGUAGES
from servelint.model import LineIndex

# Cells in these languages go to their own readers (shell.py, markdown.py).
OTHER_READERS = {"jupyter", "ipynb", "json", "jsonc", "markdown"} | SHELL_LANGUAGES


def is_cell(path: str | None, language_id: str | None, text: str) -> bool:
    """A document named like a notebook whose text is not a notebook's JSON."""
    return (bool(path) and path.lower().endswith(".ipynb")
            and language_id not in ("jupyter", "ipynb")
            and text.lstrip()[:1] not in ("{", ""))


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    return language_id not in OTHER_READERS and is_cell(path, language_id, text)


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
