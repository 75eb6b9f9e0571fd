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


def test_fix_all_and_suppression_in_a_cell():
    text = "!python -m sglang.launch_server --model-path m --tp_size 2\n"
    fixed, _ = fix_all_text(text, NB, "python")
    assert fixed == text.replace("--tp_size", "--tp-size")
    silenced = "# servelint: disable=SL002 -- checked\n" + text
    assert found(silenced)[1] == []
