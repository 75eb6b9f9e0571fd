"""A notebook cell as an editor sends it (notebook_cell.py): the cell's own text and
language, read like the notebook reader reads a code cell, positions in the cell."""

import json

from servelint.engine import fix_all_text, lint

NB = "/work/nb/serve.ipynb"


def found(text, language="python", path=NB):
    r = lint(text, path, language)
    return r.format, [(f.code, r.index.position(f.span.start)) for f in r.findings]


def test_bang_line_in_a_python_cell():
    text = "import os\n!python -m sglang.launch_server --model-path m --tp_size 2\n"
    assert found(text) == ("notebook-cell", [("SL002", (1, text.split("\n")[1].index("--tp_size")))])


def test_shell_magic_cell_and_continuations():
    text = "%%bash\npython -m sglang.launch_server --model-path m \\\n  --tp_size 2\n"
    assert found(text) == ("notebook-cell", [("SL002", (2, 2))])


def test_python_call_cell():
    text = ("from sglang.utils import launch_server_cmd\n"
            "proc, port = launch_server_cmd('python -m sglang.launch_server --model-path m --tp_size 2')\n")
    fmt, hits = found(text)
    assert fmt == "notebook-cell" and [c for c, _ in hits] == ["SL002"]


def test_other_magics_are_skipped_and_python_magics_read():
    assert found("%%html\n<p>python -m sglang.launch_server --tp_size 2</p>\n")[1] == []
    assert [c for c, _ in found("%%time\n!python -m sglang.launch_server --model-path m --tp_size 2\n")[1]] == ["SL002"]


def test_shell_and_markdown_cells_go_to_their_readers():
    assert found("python -m sglang.launch_server --model-path m --tp_size 2\n", "shellscript")[0] == "shell"
    md = "```bash\npython -m sglang.launch_server --model-path m --tp_size 2\n```\n"
    assert found(md, "markdown") == ("markdown", [("SL002", (1, 46))])


def test_the_notebook_file_itself_is_still_a_notebook():
    nb = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                "source": ["!python -m sglang.launch_server --model-path m --tp_size 2\n"]}],
                     "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    for language in (None, "jupyter", "json"):
        fmt, hits = found(nb, language)
        assert fmt == "notebook" and [c for c, _ in hits] == ["SL002"]


def test_fix_all_in_a_cell():
    text = "!python -m sglang.launch_server --model-path m --tp_size 2\n"
    fixed, _ = fix_all_text(text, NB, "python")
    assert fixed == text.replace("--tp_size", "--tp-size")


def test_a_cell_agrees_with_the_notebook_file_where_the_file_reader_has_limits():
    # Suppression comments are not read in notebooks (docs/suppressions.md), so not in a
    # cell either, and no "Disable ... for this launch" action is offered there.
    text = "# servelint: disable=SL002 -- checked\n!python -m sglang.launch_server --model-path m --tp_size 2\n"
    assert [c for c, _ in found(text)[1]] == ["SL002"]
    r = lint(text, NB, "python", suppression_actions=True)
    assert [fx.title for f in r.findings for fx in f.fixes] == ["Replace --tp_size with --tp-size"]
    # Cells of another kernel's notebook (R, Julia) are not read, as the file reader skips them.
    assert found("!python -m sglang.launch_server --model-path m --tp_size 2\n", "r") == (None, [])
    # A Python cell whose text starts like JSON is still a cell.
    assert found('{"a": 1}\n!python -m sglang.launch_server --model-path m --tp_size 2\n')[0] == "notebook-cell"


def test_the_language_vscode_shows_a_cell_in_does_not_change_what_ipython_runs():
    # VS Code shows a %%bash cell as shellscript and some cells as plaintext
    # (ROCm/gpuaidev's SpecForge_SGlang.ipynb); the Python kernel runs them as IPython.
    magic = "%%bash\npython3 -m sglang.launch_server --model-path m --tp_size 2\n"
    bang = "!python3 -m sglang.launch_server --model-path m --tp_size 2\n"
    for language in ("shellscript", "plaintext", "python"):
        for text in (magic, bang):
            assert found(text, language) == ("notebook-cell", [("SL002", (text.count("\n") - 1, text.split("\n")[-2].index("--tp_size")))])
    # Plain shell in a shell cell (a bash kernel's) is shell.
    assert found("python3 -m sglang.launch_server --model-path m --tp_size 2\n", "shellscript")[0] == "shell"
    # A notebook file opened as plain text is still the notebook.
    assert found('{"cells": []}', "plaintext")[0] == "notebook"


def test_markdown_cells_of_a_notebook_file_are_read_like_a_markdown_file():
    md = "Run it:\n\n```bash\npython -m sglang.launch_server --model-path m --tp 2\n```\n"
    nb = json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": md.splitlines(True)},
                               {"cell_type": "raw", "metadata": {}, "source": md.splitlines(True)}],
                     "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    fmt, hits = found(nb, None)
    assert fmt == "notebook" and [c for c, _ in hits] == ["SL004"]  # the raw cell is not read
    # The same cell as an editor sends it.
    assert [c for c, _ in found(md, "markdown")[1]] == ["SL004"]
