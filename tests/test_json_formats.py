"""JSON with positions (jsonpos), VS Code launch.json and Jupyter notebooks."""

import json
import random
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from lsp_support import apply_lsp_edits, client, open_doc, quick_fixes  # noqa: F401 (client: fixture)

from servelint.engine import fix_all_text, lint
from servelint.edits import apply_edits, fix_all_edits
from servelint.extract import by_name
from servelint.extract.jsonpos import (JArray, JObject, JScalar, JString, loads_jsonc, parse,
                                       parse_string_literal, remove_elements, to_python)
from servelint.extract.launch_json import detect as detect_launch_json, shell_words
from servelint.extract.notebook import detect as detect_notebook, split_python
from servelint.model import LineIndex

HELPERS = {"launch_server_cmd", "popen_launch_server", "execute_shell_command"}
GOLDEN = Path(__file__).parent / "golden"
EXAMPLES = Path(__file__).parent.parent / "examples"


# --- jsonpos: spans ---------------------------------------------------------------------------


def test_spans_of_objects_arrays_and_keys():
    text = '{ "a" : [1, "x" , true,null] , "b":{"c":"d"} }'
    doc = parse(text)
    assert doc.errors == []
    root = doc.root
    assert isinstance(root, JObject) and (root.start, root.end) == (0, len(text))
    a, b = root.members
    assert text[a.key.start:a.key.end] == '"a"'
    arr = a.value
    assert isinstance(arr, JArray)
    assert [text[e.start:e.end] for e in arr.elements] == ["1", '"x"', "true", "null"]
    assert [text[c] if c is not None else None for c in arr.commas] == [",", ",", ",", None]
    assert text[arr.start:arr.end] == '[1, "x" , true,null]'
    assert a.comma is not None and text[a.comma] == ","
    assert text[b.value.start:b.value.end] == '{"c":"d"}'
    assert to_python(root) == json.loads(text)


def test_string_offsets_through_escapes():
    text = r'"a\"b\\c\nd\u00e9\ud83d\ude00\/e"'
    s = parse_string_literal(text)
    assert s.value == json.loads(text) == 'a"b\\c\nd\u00e9\U0001F600/e'
    pieces = [text[st:en] for st, en in zip(s.starts, s.ends)]
    assert pieces == ["a", '\\"', "b", "\\\\", "c", "\\n", "d", "\\u00e9", "\\ud83d\\ude00", "\\/", "e"]
    assert s.starts[-1] == len(text) - 1 and s.closed
    assert (s.content.start, s.content.end) == (1, len(text) - 1)


def test_raw_non_ascii_and_astral_characters_are_one_offset_each():
    text = '["café 😀", "ü"]'
    arr = parse(text).root
    s = arr.elements[0]
    assert s.value == "café 😀"
    assert [text[a:b] for a, b in zip(s.starts, s.ends)] == list("café 😀")
    assert text[arr.elements[1].start:arr.elements[1].end] == '"ü"'


def test_lone_surrogates_decode_as_json_loads_does():
    for lit in [r'"\ud800"', r'"\udc00x"', r'"\ud800\u0041"', r'"\ud83d\ud83d\ude00"']:
        s = parse_string_literal(lit)
        assert s.value == json.loads(lit), lit
        assert len(s.starts) == len(s.value) + 1 and len(s.ends) == len(s.value)


def _random_strings(n: int):
    rng = random.Random(7)
    alphabet = ['a', 'Z', ' ', '"', '\\', '/', '\n', '\t', '\r', '\b', '\f', '\x01', '\x1f', 'é', 'ß',
                '\u2028', '😀', '\U0001F680', '中', '\u00a0', '\ufeff', '{', '}', '$', "'"]
    for _ in range(n):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        yield json.dumps(s, ensure_ascii=rng.random() < 0.5)


@pytest.mark.parametrize("lit", list(_random_strings(400)) + [
    r'""', r'"\u0041\u0042"', r'"\uD83D\uDE00"', r'"\u00E9"', r'"tab\there"', r'"\\\""', r'"x\/y"',
])
def test_decoded_equals_json_loads(lit):
    s = parse_string_literal(lit)
    assert s.closed and s.value == json.loads(lit)
    # Re-encoding each character's source text on its own gives the same character.
    for ch, a, b in zip(s.value, s.starts, s.ends):
        assert json.loads('"' + lit[a:b] + '"') == ch


def test_invalid_escapes_leave_no_value():
    for lit in [r'"\x41"', r'"\u12"', r'"\uZZZZ"', '"\\']:
        s = parse_string_literal(lit)
        assert s.value is None, lit


def test_comments_and_trailing_commas():
    text = """// top
{
  /* block
     comment */ "a": [1, 2,], // after
  "b": {"c": "// not a comment", "d": "/* nor this */",},
}
"""
    assert loads_jsonc(text) == {"a": [1, 2], "b": {"c": "// not a comment", "d": "/* nor this */"}}
    assert parse(text).errors == []


def test_broken_input_never_raises_and_keeps_what_was_read():
    text = '{"configurations": [{"module": "sglang.launch_server", "args": ["--tp", "2"]}, {"x": 1}]}'
    for cut in range(len(text) + 1):
        doc = parse(text[:cut])
        assert cut == len(text) or doc.errors or cut == 0
    doc = parse(text[:text.index('{"x"')])
    cfg = doc.root.get("configurations").elements[0]
    assert to_python(cfg.get("args")) == ["--tp", "2"]
    rng = random.Random(3)
    for _ in range(300):
        chars = list(text)
        for _ in range(3):
            chars[rng.randrange(len(chars))] = rng.choice('{}[],:"\\/*x\n')
        parse("".join(chars))  # no exception
    assert parse("").root is None
    assert parse('"unterminated\n').errors
    assert parse("[" * 5000).errors  # deep nesting: an error, not a RecursionError


def test_half_typed_string_ends_at_the_line():
    doc = parse('{"args": ["--model-path", "m\n]}')
    arr = doc.root.get("args")
    assert [to_python(e) for e in arr.elements] == ["--model-path", "m"]
    assert not arr.elements[1].closed and doc.errors


# --- jsonpos: removing elements ---------------------------------------------------------------


def _remove(text: str, i: int, j: int) -> str:
    arr = parse(text).root
    edit = remove_elements(text, LineIndex(text), arr, i, j)
    return apply_edits(text, [edit])


@pytest.mark.parametrize("text,i,j,expected", [
    ('["a", "b", "c"]', 1, 1, '["a", "c"]'),
    ('["a", "b", "c"]', 0, 0, '["b", "c"]'),
    ('["a", "b", "c"]', 2, 2, '["a", "b"]'),
    ('["a", "b", "c",]', 2, 2, '["a", "b"]'),
    ('["a", "b", "c"]', 1, 2, '["a"]'),
    ('["a"]', 0, 0, '[]'),
    ('[\n  "a",\n  "b",\n  "c"\n]', 1, 1, '[\n  "a",\n  "c"\n]'),
    ('[\n  "a",\n  "b",\n  "c"\n]', 2, 2, '[\n  "a",\n  "b"\n]'),
    ('[\n  "a",\n  "b",\n  "c",\n]', 2, 2, '[\n  "a",\n  "b"\n]'),
    ('[\n  "a", "b",\n  "c"\n]', 1, 1, '[\n  "a",\n  "c"\n]'),
    ('[\n  "a", // first\n  "b"\n]', 1, 1, '[\n  "a" // first\n]'),
    ('[\n  "a",\n  "b", // the b\n  // about c\n  "c"\n]', 1, 1, '[\n  "a",\n  // about c\n  "c"\n]'),
    ('[\n  "x"\n]', 0, 0, '[\n]'),
    ('["--tp", "2", "--port", "1"]', 0, 1, '["--port", "1"]'),
])
def test_remove_elements(text, i, j, expected):
    got = _remove(text, i, j)
    assert got == expected
    loads_jsonc(got)


# --- launch.json ---------------------------------------------------------------------------------

LAUNCH = """{
    "version": "0.2.0",
    "configurations": [
        {
            "name": "SGLang",
            "type": "debugpy",
            "request": "launch",
            "module": "sglang.launch_server",
            "args": ["--model-path", "${workspaceFolder}/models/llama", "--tp-size", "${env:TP}",
                     "--port", 30000, "--host", "0.0.0.0"],
            "env": {"CUDA_VISIBLE_DEVICES": "0,1", "HF_HOME": "${env:HOME}/hf"}
        }
    ]
}
"""


def _launches(text: str, path: str):
    return lint(text, path=path)


def test_array_args_spans_env_and_variables():
    r = _launches(LAUNCH, "/w/.vscode/launch.json")
    assert r.format == "launch-json" and r.findings == []
    (launch,) = r.launches
    assert launch.kind == "launch_server"
    assert LAUNCH[launch.entry.span.start:launch.entry.span.end] == '"sglang.launch_server"'
    texts = [t.text for t in launch.tokens]
    assert texts == ["--model-path", None, "--tp-size", None, "--port", None, "--host", "0.0.0.0"]
    assert [LAUNCH[t.span.start:t.span.end] for t in launch.tokens][:2] == [
        '"--model-path"', '"${workspaceFolder}/models/llama"']
    assert launch.tokens[1].prefix == "" and not launch.tokens[1].splat
    assert launch.env == {"CUDA_VISIBLE_DEVICES": "0,1", "HF_HOME": None}
    assert launch.anchor == LineIndex(LAUNCH).line_start(3)


def test_array_args_findings_sit_on_the_json_string():
    text = LAUNCH.replace('"--tp-size"', '"--tp_size"')
    r = _launches(text, "launch.json")
    (f,) = r.findings
    assert f.code == "SL002" and text[f.span.start:f.span.end] == '"--tp_size"'
    fixed, _ = fix_all_text(text, "launch.json")
    assert '"--tp-size"' in fixed and loads_jsonc(fixed)


def test_program_form_and_cli_serve():
    text = """{"configurations": [
      {"name": "p", "program": "${workspaceFolder}\\\\python\\\\sglang\\\\launch_server.py", "args": ["--model-path", "m", "--tp_size", "2"]},
      {"name": "r", "program": "python/sglang_router/launch_server.py", "args": ["--model-path", "m", "--router-policy", "cache_aware"]},
      {"name": "s", "module": "sglang.cli.main", "args": ["serve", "--model-path", "m", "--dp", "2"]},
      {"name": "s2", "module": "sglang.cli.main", "args": "serve --model-path m --port 1"},
      {"name": "b", "program": "/usr/bin/sglang", "args": ["serve", "--model-path", "m"]},
      {"name": "n", "module": "sglang.cli.main", "args": ["version"]}
    ]}"""
    r = _launches(text, "launch.json")
    kinds = [(l.kind, l.entry.text) for l in r.launches]
    assert kinds == [("launch_server", "${workspaceFolder}\\python\\sglang\\launch_server.py"),
                     ("router", "python/sglang_router/launch_server.py"),
                     ("serve", "serve"), ("serve", "serve"), ("serve", "serve")]
    assert [f.code for f in r.findings] == ["SL002", "SL004"]
    serve = r.launches[2]
    assert text[serve.entry.span.start:serve.entry.span.end] == '"serve"'
    assert [t.text for t in serve.tokens] == ["--model-path", "m", "--dp", "2"]
    s2 = r.launches[3]
    assert text[s2.entry.span.start:s2.entry.span.end] == "serve"


def test_string_args_positions_through_escapes():
    text = ('{"configurations": [{"module": "sglang.launch_server", "args": '
            '"--model-path \\"/m/caf\\u00e9 \\ud83d\\ude00\\" --tp_size 2 --port=\\u0033000 ${input:x} \'a b\'"}]}')
    r = _launches(text, "launch.json")
    (launch,) = r.launches
    got = [(t.text, text[t.span.start:t.span.end]) for t in launch.tokens]
    assert got == [("--model-path", "--model-path"), ("/m/café 😀", '\\"/m/caf\\u00e9 \\ud83d\\ude00\\"'),
                   ("--tp_size", "--tp_size"), ("2", "2"), ("--port=3000", "--port=\\u0033000"),
                   (None, "${input:x}"), ("a b", "'a b'")]
    assert launch.tokens[5].splat  # the shell splits what VS Code substitutes
    (f,) = [f for f in r.findings if f.code == "SL002"]
    assert text[f.span.start:f.span.end] == "--tp_size"
    # the port's value: its span starts after `--port=` in the document
    fixed, _ = fix_all_text(text, "launch.json")
    assert "--tp-size 2" in fixed and loads_jsonc(fixed)


def test_lone_surrogates_are_not_read():
    text = ('{"configurations": [{"module": "sglang.launch_server", "args": ["--model-path", "\\ud800", '
            '"--tp_size", "2"]}, {"module": "sglang.launch_server", "args": "--model-path \\udc00 --tp_size 2"}]}')
    r = lint(text, "launch.json")
    assert [t.text for t in r.launches[0].tokens] == ["--model-path", None, "--tp_size", "2"]
    assert len(r.launches) == 1 and [f.code for f in r.findings] == ["SL002"]
    nb = _nb("!python -m sglang.launch_server --model-path \ud800 --tp_size 2\n")
    assert "\\ud800" in nb and lint(nb, "x.ipynb").launches == []


def test_string_args_words_are_shell_words():
    words = shell_words("--a 1 --b \"x y\" --c=$X > out; echo hi")
    assert [(w.text, w.span.start, w.span.end) for w in words] == [
        ("--a", 0, 3), ("1", 4, 5), ("--b", 6, 9), ("x y", 10, 15), (None, 16, 22)]
    assert shell_words("${command:pickArgs}")[0].splat
    assert shell_words("") == []


def test_inserting_after_the_module_goes_first_in_args():
    text = '{"configurations": [{"module": "sglang.launch_server", "args": ["--model-path", "m"]}]}'
    (launch,) = lint(text, "launch.json").launches
    edit = launch.host.insert_after(launch.entry, ["--tp-size", "2"])
    new = apply_edits(text, [edit])
    assert loads_jsonc(new)["configurations"][0]["args"] == ["--tp-size", "2", "--model-path", "m"]
    text = '{"configurations": [{"module": "sglang.launch_server", "args": "--model-path m"}]}'
    (launch,) = lint(text, "launch.json").launches
    new = apply_edits(text, [launch.host.insert_after(launch.entry, ["--x", "a b"])])
    assert loads_jsonc(new)["configurations"][0]["args"] == "--x 'a b' --model-path m"
    text = '{"configurations": [{"module": "sglang.launch_server", "args": []}]}'
    (launch,) = lint(text, "launch.json").launches
    new = apply_edits(text, [launch.host.insert_after(launch.entry, ["--x"])])
    assert loads_jsonc(new)["configurations"][0]["args"] == ["--x"]


def test_code_workspace_and_detection():
    ws = '{"folders": [], "launch": {"configurations": [{"module": "sglang.launch_server", "args": ["--model-path", "m", "--tp_size", "2"]}]}}'
    r = lint(ws, "/w/team.code-workspace")
    assert r.format == "launch-json" and [f.code for f in r.findings] == ["SL002"]
    assert detect_launch_json("/w/.vscode/launch.json", None, "")
    assert detect_launch_json("/w/x.json", None, '{"configurations" : [')
    assert detect_launch_json(None, "jsonc", '{"configurations": []}')
    assert not detect_launch_json("/w/package.json", None, '{"name": "x"}')
    assert not detect_launch_json("/w/run.sh", "shellscript", '"configurations": [')


def test_broken_launch_json_lints_what_was_read():
    text = '{"configurations": [{"module": "sglang.launch_server", "args": ["--model-path", "m", "--tp_size", "2", "--x'
    r = lint(text, "launch.json")
    assert [f.code for f in r.findings] == ["SL002"]  # "--x is being typed: unknown
    assert r.launches[0].tokens[-1].text is None
    for cut in range(0, len(text), 3):
        lint(text[:cut], "launch.json")  # never raises


# --- notebooks ---------------------------------------------------------------------------------


def _nb(*sources, kernel="python", ascii=True, single=False) -> str:
    cells = []
    for src in sources:
        lines = src.splitlines(keepends=True)
        cells.append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                      "source": src if single else lines})
    nb = {"cells": cells, "metadata": {"kernelspec": {"language": kernel, "name": kernel}},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1, ensure_ascii=ascii) + "\n"


def _token_doc_value(text: str, tok) -> str:
    return json.loads('"' + text[tok.span.start:tok.span.end] + '"')


@pytest.mark.parametrize("ascii", [True, False])
def test_bang_lines_positions_and_ipython_fields(ascii):
    text = _nb('model = "m"  # «café» 😀\n'
               '!python -m sglang.launch_server --model-path {model} --served-model-name "é 😀" \\\n'
               '  --tp_size 2 --port=$PORT\n'
               'print("done")', ascii=ascii)
    r = lint(text, "/w/run.ipynb")
    assert r.format == "notebook"
    (launch,) = r.launches
    toks = launch.tokens
    assert [t.text for t in toks] == ["--model-path", None, "--served-model-name", "é 😀", "--tp_size", "2", None]
    assert toks[1].splat and toks[1].prefix == ""
    assert _token_doc_value(text, toks[3]) == '"é 😀"'
    for t in toks:
        if t.text is not None and '"' not in _token_doc_value(text, t):
            assert _token_doc_value(text, t) == t.text
    (f,) = r.findings
    assert f.code == "SL002" and text[f.span.start:f.span.end] == "--tp_size"
    fixed, _ = fix_all_text(text, "/w/run.ipynb")
    cell = "".join(json.loads(fixed)["cells"][0]["source"])
    assert "--tp-size 2" in cell


def test_bash_magic_cell_and_whole_line_removal():
    text = _nb("%%bash\n"
               "python3 -m sglang.launch_server --model-path m --is-embedding \\\n"
               "  --chunked-prefill-size=-1 --disable-radix-cache \\\n"
               "  --prefill-only-disable-kv-cache \\\n"
               "  --enable-hisparse\n"
               "echo started\n")
    r = lint(text, "x.ipynb")
    assert [f.code for f in r.findings] == ["SL101"]
    fixed, _ = fix_all_text(text, "x.ipynb")
    assert json.loads(fixed)["cells"][0]["source"] == [
        "%%bash\n",
        "python3 -m sglang.launch_server --model-path m --is-embedding \\\n",
        "  --chunked-prefill-size=-1 --disable-radix-cache \\\n",
        "  --prefill-only-disable-kv-cache\n",
        "echo started\n"]


def test_broken_continuation_in_a_cell_names_document_lines():
    text = _nb("%%sh\npython -m sglang.launch_server --model-path m \\\n  --tp-size 2\n  --port 1\n")
    r = lint(text, "x.ipynb")
    (f,) = r.findings
    assert f.code == "SL020" and text[f.span.start:f.span.end] == "--port 1"
    line = r.index.line_of(f.span.start) + 1
    assert f"line {line - 1} does not end" in f.message
    fixed, _ = fix_all_text(text, "x.ipynb")
    assert "".join(json.loads(fixed)["cells"][0]["source"]).endswith("--tp-size 2 \\\n  --port 1\n")


def test_single_string_source_with_escapes():
    src = '%%bash\nexport X="a\\\\b"  # café 😀\npython -m sglang.launch_server --model-path "m" --tp_size 2\n'
    text = _nb(src, single=True)
    assert '"source": "%%bash\\n' in text
    r = lint(text, "x.ipynb")
    (f,) = r.findings
    assert text[f.span.start:f.span.end] == "--tp_size"
    (launch,) = r.launches
    assert text[launch.tokens[1].span.start:launch.tokens[1].span.end] == '\\"m\\"'
    fixed, _ = fix_all_text(text, "x.ipynb")
    assert json.loads(fixed)["cells"][0]["source"] == src.replace("--tp_size", "--tp-size")


def test_other_cells_and_magics_are_not_shell():
    text = _nb('%%writefile notes.txt\npython -m sglang.launch_server --tp_size 2\n',
               '%%html\n<code>python -m sglang.launch_server --tp_size 2</code>\n',
               'doc = """\n!python -m sglang.launch_server --tp_size 2\n"""\nx = 10 % 3\n',
               '%%time\n!sglang serve --model-path m --tp-size 2\n')
    r = lint(text, "x.ipynb")
    assert r.findings == [] and [l.kind for l in r.launches] == ["serve"]


def test_bash_kernel_cells_are_shell():
    text = _nb("python -m sglang.launch_server --model-path m --tp_size 2\n", kernel="bash")
    assert [f.code for f in lint(text, "x.ipynb").findings] == ["SL002"]
    text = _nb("python -m sglang.launch_server --model-path m --tp_size 2\n", kernel="R")
    assert lint(text, "x.ipynb").launches == []


def test_split_python_keeps_offsets():
    cell = 'x = 1\n!echo a \\\n  b\nfiles = !ls\n%time f()\nif x:\n    !python -m sglang.launch_server\ny = x != 2\n'
    python, shell = split_python(cell)
    assert len(python) == len(cell)
    assert [cell[s:e] for s, e in shell] == ["echo a \\\n  b", "ls", "python -m sglang.launch_server"]
    assert python.splitlines() == ["x = 1", "#echo a \\", "# b", "#iles = !ls", "#time f()", "if x:",
                                   "    #python -m sglang.launch_server", "y = x != 2"]


def test_half_typed_notebook_never_raises():
    text = _nb("!python -m sglang.launch_server --model-path m --tp_size 2\n", "%%bash\nsglang serve --tp_size 2\n")
    for cut in range(0, len(text), 7):
        lint(text[:cut], "x.ipynb")
    r = lint(text[:text.index("%%bash")], "x.ipynb")
    assert [f.code for f in r.findings] == ["SL002"]


def test_detect_notebook():
    assert detect_notebook("/w/a.ipynb", None, "")
    assert detect_notebook(None, "jupyter", "")
    assert not detect_notebook("/w/a.json", "json", "")
    # A notebook's cell as an editor sends it (not JSON) is not the notebook.
    assert not detect_notebook("/w/a.ipynb", "python", "!python -m sglang.launch_server\n")


def test_python_cells_go_to_the_python_extractor():
    text = _nb('from sglang.utils import launch_server_cmd\n'
               'server_process, port = launch_server_cmd(\n'
               '    """\n'
               'python3 -m sglang.launch_server --model-path "m" \\\n'
               '    --cuda-graph-max-bs 8 --tp_size 2\n'
               '    --log-level warning\n'
               '"""\n'
               ')\n')
    r = lint(text, "x.ipynb")
    found = {f.code: text[f.span.start:f.span.end] for f in r.findings}
    assert found.get("SL009") == "--cuda-graph-max-bs"
    assert found.get("SL002") == "--tp_size"
    for f in r.findings:
        for fx in f.fixes:
            json.loads(apply_edits(text, fx.edits))


# --- every golden file: fixes keep the file loading ------------------------------------------------


def _load(path: Path, text: str):
    if path.suffix == ".ipynb":
        return json.loads(text)
    return loads_jsonc(text)


def _cases():
    paths = sorted(GOLDEN.glob("launch-json/*.json")) + sorted(GOLDEN.glob("notebook/*.ipynb"))
    paths += [EXAMPLES / ".vscode" / "launch.json"] + sorted(EXAMPLES.glob("*.ipynb"))
    return [p for p in paths if p.exists()]


@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.name)
def test_every_fix_keeps_the_file_loading(path: Path):
    text = path.read_text(encoding="utf-8")
    complete = not path.name.startswith("bad_half")
    if complete:
        _load(path, text)
    result = lint(text, path=str(path))
    assert result.format in ("launch-json", "notebook")
    for f in result.findings:
        for fx in f.fixes:
            new = apply_edits(text, fx.edits)
            if complete:
                _load(path, new)
    fixed = path.with_name(path.name + ".fixed")
    if fixed.exists():
        fixed_text = fixed.read_text(encoding="utf-8")
        if complete:
            _load(path, fixed_text)
        else:  # no worse than it was
            assert len(parse(fixed_text).errors) <= len(parse(text).errors)
    if complete:
        _load(path, apply_edits(text, fix_all_edits(result.findings)))
        _load(path, fix_all_text(text, str(path))[0])


@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.name)
def test_token_spans_hold_their_values(path: Path):
    """A known token's document text decodes to its value (array elements as JSON strings,
    words inside strings as JSON string content, shell quotes aside)."""
    text = path.read_text(encoding="utf-8")
    for launch in lint(text, path=str(path)).launches:
        for tok in [launch.entry] + launch.tokens:
            doc = text[tok.span.start:tok.span.end]
            if tok.text is None or doc in HELPERS:  # words a helper adds sit on its call
                continue
            if doc.startswith('"') and doc.endswith('"') and len(doc) > 1:
                try:
                    if json.loads(doc) == tok.text:
                        continue
                except ValueError:
                    pass
            inner = json.loads('"' + doc + '"')
            if not any(q in inner for q in "'\"\\"):
                assert inner == tok.text, (path.name, doc)


def test_golden_formats_are_detected():
    assert by_name("launch-json").priority == 20 and by_name("notebook").priority == 20
    for p in GOLDEN.glob("launch-json/*.json"):
        assert lint(p.read_text(encoding="utf-8"), str(p)).format == "launch-json"
    for p in GOLDEN.glob("notebook/*.ipynb"):
        assert lint(p.read_text(encoding="utf-8"), str(p)).format == "notebook"


# --- language server end to end ------------------------------------------------------------------




async def _quick_fix(client: LanguageClient, uri: str, diag):
    quick = [a for a in await quick_fixes(client, uri, diag) if a.is_preferred]
    assert quick
    return quick[0].edit.changes[uri]


async def test_lsp_launch_json(client: LanguageClient):
    text = ('{\n  // 😀 before the launch\n  "configurations": [{\n    "name": "é",\n'
            '    "module": "sglang.launch_server",\n'
            '    "args": "--model-path \\"m 😀\\" --trust-remote-code true --tp_size 2",\n  }],\n}\n')
    uri = "file:///tmp/servelint-e2e/.vscode/launch.json"
    diags = await open_doc(client, uri, "jsonc", text)
    by_code = {d.code: d for d in diags}
    assert set(by_code) == {"SL002", "SL013"}
    d = by_code["SL002"]
    line = text.splitlines()[5]
    start = line.index("--tp_size")
    utf16 = len(line[:start].encode("utf-16-le")) // 2
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (5, utf16, utf16 + 9)
    fixed = apply_lsp_edits(text, await _quick_fix(client, uri, by_code["SL013"]))
    assert loads_jsonc(fixed)["configurations"][0]["args"] == '--model-path "m 😀" --trust-remote-code --tp_size 2'


async def test_lsp_notebook(client: LanguageClient):
    text = _nb('import os\n!python -m sglang.launch_server --model-path "é 😀" \\\n  --tp_size 2\n', ascii=False)
    uri = "file:///tmp/servelint-e2e/demo.ipynb"
    diags = await open_doc(client, uri, "json", text)
    (d,) = diags
    assert d.code == "SL002"
    lines = text.splitlines()
    row = next(i for i, l in enumerate(lines) if "--tp_size" in l)
    start = lines[row].index("--tp_size")
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (row, start, start + 9)
    fixed = apply_lsp_edits(text, await _quick_fix(client, uri, d))
    assert "".join(json.loads(fixed)["cells"][0]["source"]).endswith("--tp-size 2\n")
