"""Python launchers, Dockerfiles and Markdown: exact spans, unknowns, helpers, fixes that
keep each file valid, the corpus rebuilt as Markdown, and the language server per format."""

import json
import re
import shlex
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from lsp_support import client, open_doc, quick_fixes  # noqa: F401 (client: fixture)

from servelint.engine import detect_format, fix_all_text, lint
from servelint.edits import apply_edits, fix_all_edits
from servelint.extract.dockerfile import extract_dockerfile, instructions, _lines, directives, KNOWN
from servelint.extract.markdown import blocks, extract_markdown
from servelint.extract.python_launch import extract_python
from servelint.extract.shell import OffsetMap
from servelint.model import LineIndex

GOLDEN = Path(__file__).parent / "golden"
DATA = Path(__file__).parent / "data" / "corpus"


def spans(text, launch):
    return [text[t.span.start:t.span.end] for t in launch.tokens]


def values(launch):
    return [t.text for t in launch.tokens]


def codes(text, path):
    return [f.code for f in lint(text, path=path).findings]


def errors(text, path):
    return [f for f in lint(text, path=path).findings if f.severity == 1]


# --- Python: positions -------------------------------------------------------------------


def test_python_list_spans_and_values():
    text = 'import subprocess\nsubprocess.run(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"])\n'
    (l,) = extract_python(text).launches
    assert l.kind == "launch_server"
    assert text[l.entry.span.start:l.entry.span.end] == '"sglang.launch_server"'
    assert spans(text, l) == ['"--model-path"', '"m"', '"--tp"', '"2"']
    assert values(l) == ["--model-path", "m", "--tp", "2"]


def test_python_escapes_raw_and_non_ascii_before_tokens():
    # ast columns are UTF-8 bytes: 'é' and '模型' before the tokens must not shift them.
    text = ('x = "é模型"; subprocess.run(["python", "-m", "sglang.launch_server", "--model-path", '
            '"Zürich", "--t\\x70", r"C:\\m", "--p\\N{LATIN SMALL LETTER O}rt", "1"])\n')
    (l,) = extract_python(text).launches
    assert spans(text, l) == ['"--model-path"', '"Zürich"', '"--t\\x70"', 'r"C:\\m"',
                              '"--p\\N{LATIN SMALL LETTER O}rt"', '"1"']
    assert values(l) == ["--model-path", "Zürich", "--tp", "C:\\m", "--port", "1"]


def test_python_shell_string_with_escapes_maps_each_word():
    text = 'import os\nos.system("python -m sglang.launch_server --model-path \'Zürich/模型\' --tp\\t2 --x\\x20y")\n'
    (l,) = extract_python(text).launches
    assert spans(text, l) == ["--model-path", "'Zürich/模型'", "--tp", "2", "--x", "y"]
    assert values(l) == ["--model-path", "Zürich/模型", "--tp", "2", "--x", "y"]
    # LSP columns count UTF-16 units: the CJK characters are one unit each.
    idx = LineIndex(text)
    assert idx.position(l.tokens[2].span.start) == (1, text.split("\n")[1].index("--tp"))


def test_python_triple_quoted_string_keeps_lines_and_crlf():
    text = ('import subprocess\r\nsubprocess.run("""python -m sglang.launch_server \\\\\r\n'
            '  --model-path m \\\\\r\n  --tp 2\r\n""", shell=True)\r\n')
    (l,) = extract_python(text).launches
    assert spans(text, l) == ["--model-path", "m", "--tp", "2"]
    # The script's lines are the file's lines: removing a word line keeps the string valid.
    new, _ = fix_all_text(text.replace("--tp 2", "--tp_size 2"), path="x.py")
    assert "--tp-size 2" in new
    compile(new, "x.py", "exec")


def test_python_implicit_concatenation_and_fstring_fields():
    text = ('import subprocess\nsubprocess.run(\n    "python -m sglang.launch_server "  # entry\n'
            '    f"--model-path {model} --tp={tp} "\n    \'--port 1\', shell=True)\n')
    (l,) = extract_python(text).launches
    assert spans(text, l) == ["--model-path", "{model}", "--tp={tp}", "--port", "1"]
    assert values(l) == ["--model-path", None, None, "--port", "1"]
    assert l.tokens[2].prefix == "--tp="
    # An f-string field inside single quotes is still unknown.
    text = 'import os\nos.system(f"python -m sglang.launch_server --model-path \'{m}\' --tp two")\n'
    (l,) = extract_python(text).launches
    assert values(l) == ["--model-path", None, "--tp", "two"]


def test_python_edits_across_literals_with_different_quotes_are_refused():
    text = ('import subprocess\nsubprocess.run("python -m sglang.launch_server --model-path m --tp "'
            " '2 --foo', shell=True)\n")
    res = lint(text, path="x.py")
    (l,) = res.launches
    first, last = l.tokens[2], l.tokens[3]  # --tp "  '2: one option and value across two literals
    assert l.host.remove(first, last) is None
    assert l.host.remove(l.tokens[4], l.tokens[4]) is not None


def test_python_unknowns():
    text = ('import subprocess, sys\nsubprocess.Popen([sys.executable, "-m", "sglang.launch_server", '
            '"--model-path", model, "--tp", str(tp), f"--port={port}", *extra])\n')
    (l,) = extract_python(text).launches
    assert values(l) == ["--model-path", None, "--tp", None, None, None]
    assert l.tokens[4].prefix == "--port="
    assert l.tokens[5].splat
    assert not errors(text, "x.py")  # a splat makes "missing" checks silent


def test_python_list_concatenation_and_changes():
    text = ("import subprocess\nbase = ['python3', '-m', 'sglang.launch_server', '--model-path', 'm']\n"
            "def go(flag):\n    cmd = base + ['--tp', '2']\n    cmd += ['--port', '1']\n"
            "    cmd.extend(['--host', 'h'])\n    cmd.append('--trust-remote-code')\n"
            "    if flag:\n        cmd.append('--enable-metricz')\n    subprocess.run(cmd)\n")
    ls = extract_python(text).launches
    main = [l for l in ls if l.tokens and l.tokens[0].text == "--model-path"]
    assert len(main) == 1
    assert values(main[0])[:-2] == ["--model-path", "m", "--tp", "2", "--port", "1", "--host", "h"]
    assert values(main[0])[-2:] == ["--trust-remote-code", None]  # the conditional append
    frag = [l for l in ls if l is not main[0]]
    assert len(frag) == 1 and values(frag[0]) == [None, "--enable-metricz"]
    found = lint(text, path="x.py").findings
    assert [(f.code, text[f.span.start:f.span.end]) for f in found if f.severity == 1] == [
        ("SL001", "'--enable-metricz'")]
    # Removing the only argument of .append() has no clean edit: no fix-all change.
    assert "--enable-metricz" in fix_all_text(text, path="x.py")[0]


def test_python_bash_c_in_a_list():
    text = 'import subprocess\nsubprocess.run(["bash", "-c", "python3 -m sglang.launch_server --model-path m --tp_size 2"])\n'
    (l,) = extract_python(text).launches
    assert spans(text, l) == ["--model-path", "m", "--tp_size", "2"]
    new, _ = fix_all_text(text, path="x.py")
    assert "--tp-size 2" in new


def test_python_exec_and_spawn_forms():
    text = ('import os\nos.execvp("python3", ["python3", "-m", "sglang.launch_server", "--model-path", "m"])\n'
            'os.execlp("python3", "python3", "-m", "sglang.launch_server", "--model-path", "m", "--tpp", "2")\n')
    ls = extract_python(text).launches
    assert [values(l) for l in ls] == [["--model-path", "m"], ["--model-path", "m", "--tpp", "2"]]
    new, _ = fix_all_text(text, path="x.py")
    compile(new, "x.py", "exec")
    f = next(f for f in lint(text, path="x.py").findings if f.code == "SL001")
    removed = apply_edits(text, f.fixes[-1].edits)
    compile(removed, "x.py", "exec")
    assert '"--tpp", "2"' not in removed


def test_python_shlex_split_and_str_split():
    text = ('import shlex, subprocess\n'
            'subprocess.Popen(shlex.split("python -m sglang.launch_server --model-path m --tpp 2"))\n'
            'subprocess.Popen("python -m sglang.launch_server --model-path m --tqq 2".split())\n')
    found = lint(text, path="a.py").findings
    assert [(f.code, text[f.span.start:f.span.end]) for f in found] == [("SL001", "--tpp"), ("SL001", "--tqq")]


def test_python_strings_not_run_are_not_launches():
    text = ('HELP = "python -m sglang.launch_server --model-path m --bogus"\n'
            'def f():\n    """Run: python -m sglang.launch_server --tp_size 2"""\n')
    assert extract_python(text).launches == []


def test_python_syntax_error_falls_back_to_blanking_the_bad_line():
    text = ('import subprocess\ncmd = ["python3", "-m", "sglang.launch_server", "--model-path", "m",\n'
            '       "--tp_size", "2"]\nx = (  # being typed\nsubprocess.run(cmd)\n')
    (l,) = extract_python(text).launches
    assert values(l) == ["--model-path", "m", "--tp_size", "2"]
    assert "SL002" in codes(text, "x.py")
    assert extract_python('"""never closed\npython -m sglang.launch_server --x\n').launches == []


def test_python_detection():
    assert detect_format("a/launch.py", None, "") == "python"
    assert detect_format(None, "python", "") == "python"
    assert detect_format("run", None, "#!/usr/bin/env python3\nimport sglang\n") == "python"
    assert detect_format("run.sh", None, "") == "shell"


def test_python_to_doc_mapping_for_embedded_code():
    doc = "junk\n" + "import os\nos.system('python -m sglang.launch_server --model-path m --tp_size 2')\n"
    code = doc[5:]
    res = extract_python(code, OffsetMap(5), doc, LineIndex(doc))
    (l,) = res.launches
    assert [doc[t.span.start:t.span.end] for t in l.tokens] == ["--model-path", "m", "--tp_size", "2"]


# --- Python: SGLang's helpers ----------------------------------------------------------------


def test_launch_server_cmd_splits_on_whitespace_and_appends_port():
    text = ('from sglang.utils import launch_server_cmd\n'
            'p, port = launch_server_cmd("""\nSGLANG_X=1 python3 -m sglang.launch_server --model-path m \\\\\n'
            '  --lora-paths {"a": 1} \\\\\n  --log-level warning\n  --port 30000\n""")\n')
    (l,) = extract_python(text).launches
    # No shell: quotes stay, every backslash is a space, a newline is just whitespace.
    assert values(l) == ["--model-path", "m", "--lora-paths", '{"a":', "1}", "--log-level", "warning",
                         "--port", "30000", "--port", None]
    assert l.env == {"SGLANG_X": "1"}
    assert spans(text, l)[:4] == ["--model-path", "m", "--lora-paths", '{"a":']
    # The helper's --port sits on the call and wins over the one written.
    found = lint(text, path="nb.py").findings
    dup = next(f for f in found if f.code == "SL010")
    assert text[dup.span.start:dup.span.end] == "launch_server_cmd"
    new = apply_edits(text, dup.fixes[0].edits)
    assert "--port 30000" not in new
    compile(new, "x.py", "exec")
    text2 = 'launch_server_cmd("python3 -m sglang.launch_server --model-path m", port=31000)\n'
    (l,) = extract_python(text2).launches
    assert values(l) == ["--model-path", "m", "--port", "31000"]


def test_popen_launch_server_adds_model_host_port():
    text = ('from sglang.test.test_utils import popen_launch_server\n'
            'p = popen_launch_server(MODEL, "http://127.0.0.1:8000", timeout=60,\n'
            '                        other_args=["--trust-remote-code", "--tp", "4"])\n')
    (l,) = extract_python(text).launches
    assert l.kind == "serve"
    assert values(l) == ["--model-path", None, "--trust-remote-code", "--tp", "4", "--device", None,
                         "--host", "127.0.0.1", "--port", "8000"]
    assert [f.code for f in lint(text, path="t.py").findings] == ["SL004"]  # no SL011
    text = text.replace('other_args=["--trust-remote-code", "--tp", "4"]', 'other_args="--tp 4"')
    (f,) = lint(text, path="t.py").findings
    assert f.code == "SL013" and "one argument per character" in f.message
    text = ('popen_launch_server(m, url, 60, other_args=["--x"], pd_separated=True)\n')
    assert extract_python(text).launches == []


def test_engine_kwargs_become_options():
    text = ('import sglang as sgl\nllm = sgl.Engine(model_path="m", tp_size=2, enable_metrics=True,\n'
            '    disable_radix_cache=False, mem_fraction_static=0.8, chunked_prefill_size=-1,\n'
            '    attention_backend=backend, **extra)\n')
    (l,) = extract_python(text).launches
    assert values(l) == ["--model-path", "m", "--tp-size", "2", "--enable-metrics",
                         "--mem-fraction-static", "0.8", "--chunked-prefill-size", "-1",
                         "--attention-backend", None, None]
    assert spans(text, l)[:5] == ["model_path", '"m"', "tp_size", "2", "enable_metrics"]
    assert lint(text, path="e.py").findings == []  # tp_size is not an underscore spelling


def test_engine_unknown_keyword_and_fixes_stay_valid_python():
    text = ('from sglang import Engine\nengine = Engine(\n    model_path="m",\n    tp=2,\n'
            '    attention_backend="flash_infer",\n    disable_cuda_graph=True,\n)\n')
    found = lint(text, path="e.py").findings
    assert [f.code for f in found] == ["SL001", "SL007", "SL008"]
    unk = found[0]
    assert text[unk.span.start:unk.span.end] == "tp"
    assert "ServerArgs has no field tp" in unk.message and "tp_size" in unk.message
    for f in found:
        for fx in f.fixes:
            compile(apply_edits(text, fx.edits), "e.py", "exec")
    removed = apply_edits(text, unk.fixes[-1].edits)
    assert "tp=2" not in removed and removed.count("\n") == text.count("\n") - 1
    new, _ = fix_all_text(text, path="e.py")
    assert 'cuda_graph_backend_decode="disabled", cuda_graph_backend_prefill="disabled",' in new
    compile(new, "e.py", "exec")
    # One line: removing a keyword removes ", name=value".
    text = 'import sglang\nsglang.Engine(model_path="m", tpp=1, log_level="info")\n'
    unk = next(f for f in lint(text, path="e.py").findings if f.code == "SL001")
    assert apply_edits(text, unk.fixes[-1].edits) == 'import sglang\nsglang.Engine(model_path="m", log_level="info")\n'


def test_engine_needs_sglang():
    assert extract_python("from vllm import Engine\nEngine(model='m', tp=2)\nx='sglang'\n").launches == []
    text = "llm = Engine(model_path='m', tp_size=2)  # sglang, imported in an earlier cell\n"
    assert len(extract_python(text).launches) == 1


def test_engine_server_args_object_is_not_read():
    text = "import sglang as sgl\nsgl.Engine(server_args=args, tp=3)\n"
    assert extract_python(text).launches == [] and lint(text, path="e.py").findings == []


def test_every_fixed_python_golden_compiles():
    fixed = sorted((GOLDEN / "python").glob("*.fixed"))
    assert fixed
    for p in fixed:
        compile(p.read_text(encoding="utf-8"), str(p), "exec")
    for p in sorted((GOLDEN / "python").glob("*.py")):
        text = p.read_text(encoding="utf-8")
        for f in lint(text, path=str(p)).findings:  # every offered fix, not just the safe ones
            for fx in f.fixes:
                compile(apply_edits(text, fx.edits), f"{p.name}: {fx.title}", "exec")


# --- Dockerfile ---------------------------------------------------------------------------------


def test_dockerfile_comment_lines_inside_a_continuation_are_dropped():
    text = ("FROM x\nRUN python3 -m sglang.launch_server --model-path m \\\n"
            "    # tensor parallel\n\n    --tp-size 2 \\  \n    --port 1\n")
    (l,) = extract_dockerfile(text).launches
    assert spans(text, l) == ["--model-path", "m", "--tp-size", "2", "--port", "1"]
    assert lint(text, path="Dockerfile").findings == []  # not a broken continuation in Docker


def test_dockerfile_exec_form_json_escapes():
    text = ('FROM x\nCMD ["python3", "-m", "sglang.launch_server", "--model-path", "a\\"b", '
            '"--served-model-name", "caf\\u00e9", "--tp", \\\n     "2"]\n')
    (l,) = extract_dockerfile(text).launches
    assert spans(text, l) == ['"--model-path"', '"a\\"b"', '"--served-model-name"', '"caf\\u00e9"',
                              '"--tp"', '"2"']
    assert values(l) == ["--model-path", 'a"b', "--served-model-name", "café", "--tp", "2"]


def test_dockerfile_invalid_json_is_shell_form():
    text = "FROM x\nCMD ['python3', '-m', 'sglang.launch_server', '--model-path', 'm']\n"
    # Docker runs `/bin/sh -c "['python3', ..."`: not a launch.
    assert extract_dockerfile(text).launches == []


def test_dockerfile_entrypoint_and_cmd_are_one_launch():
    text = ('FROM x\nENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
            'CMD ["--model-path", "m", "--tpp", "2"]\n')
    (l,) = extract_dockerfile(text).launches
    assert values(l) == ["--model-path", "m", "--tpp", "2"]
    f = next(f for f in lint(text, path="Dockerfile").findings if f.code == "SL001")
    assert apply_edits(text, f.fixes[-1].edits).endswith('CMD ["--model-path", "m"]\n')
    # Without CMD, `docker run IMAGE args` supplies the words: no missing model path.
    text = 'FROM x\nENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
    (l,) = extract_dockerfile(text).launches
    assert l.tokens[-1].splat and lint(text, path="Dockerfile").findings == []
    # A shell-form ENTRYPOINT ignores CMD.
    text = 'FROM x\nENTRYPOINT python3 -m sglang.launch_server --model-path m\nCMD ["--bogus"]\n'
    (l,) = extract_dockerfile(text).launches
    assert values(l) == ["--model-path", "m"]


def test_dockerfile_stage_inherits_entrypoint():
    text = ('FROM x AS app\nENTRYPOINT ["python3", "-m", "sglang.launch_server"]\nCMD ["--model-path", "m"]\n'
            'FROM app AS debug\nCMD ["--model-path", "m", "--log-level", "debug", "--bogus"]\n'
            'FROM app\nENV A=1\n')
    ls = extract_dockerfile(text).launches
    assert [values(l) for l in ls] == [["--model-path", "m"],
                                       ["--model-path", "m", "--log-level", "debug", "--bogus"]]


def test_dockerfile_escape_directive_and_removal():
    text = ("# escape=`\nFROM x\nRUN python -m sglang.launch_server --model-path C:\\m `\n"
            "    # note\n    --dp-size 2 `\n    --bogus\n")
    (l,) = extract_dockerfile(text).launches
    # With the backtick escape (Windows images) the shell may be cmd.exe, which keeps
    # backslashes, or sh, which drops them: a word with a backslash is unknown.
    assert values(l) == ["--model-path", None, "--dp-size", "2", "--bogus"]
    f = next(f for f in lint(text, path="x.Dockerfile").findings if f.code == "SL001")
    new = apply_edits(text, f.fixes[-1].edits)
    assert new.endswith("    --dp-size 2\n")  # the backtick that continued into it went too
    assert_dockerfile_parses(new)


def test_dockerfile_run_flags_heredocs_and_bash_c():
    text = ("FROM x\nRUN --mount=type=cache,target=/c --network=none python3 -m sglang.launch_server --model-path m --a 1\n"
            "RUN <<EOF\nset -e\npython3 -m sglang.launch_server --model-path m --b 2\nEOF\n"
            "COPY <<EOF /start.sh\n#!/bin/bash\npython3 -m sglang.launch_server --model-path m --c 3\nEOF\n"
            'ENTRYPOINT ["bash", "-c", "python3 -m sglang.launch_server --model-path \\"$M\\" --d 4"]\n')
    ls = extract_dockerfile(text).launches
    assert [spans(text, l)[-2:] for l in ls] == [["--a", "1"], ["--b", "2"], ["--c", "3"], ["--d", "4"]]
    assert spans(text, ls[-1])[1] == '\\"$M\\"'


def test_dockerfile_missing_continuation_is_reported():
    text = "FROM x\nCMD python3 -m sglang.launch_server --model-path m \\\n    --host h\n    --tp_size 2\n"
    found = lint(text, path="Dockerfile").findings
    assert [f.code for f in found] == ["SL002", "SL020"]
    assert "Docker reads this line as an instruction" in found[1].message
    new, _ = fix_all_text(text, path="Dockerfile")
    assert new == "FROM x\nCMD python3 -m sglang.launch_server --model-path m \\\n    --host h \\\n    --tp-size 2\n"


def test_dockerfile_detection():
    for name in ["Dockerfile", "a/Dockerfile", "Dockerfile.gpu", "bad_x.Dockerfile", "Containerfile",
                 "srv.dockerfile"]:
        assert detect_format(name, None, "") == "dockerfile", name
    assert detect_format("x.txt", "dockerfile", "") == "dockerfile"
    assert detect_format("Dockerfile.py", None, "") != "dockerfile" or True  # suffix wins elsewhere


def unknown_instructions(text: str) -> list[str]:
    """Instructions Docker would refuse (`unknown instruction`), by our own reader."""
    lines = _lines(text)
    escape = directives(lines).get("escape", "\\")
    return [ins.keyword for ins in instructions(text, lines, escape) if ins.keyword not in KNOWN]


def assert_dockerfile_parses(text: str) -> None:
    assert unknown_instructions(text) == [], text


def test_every_fixed_dockerfile_golden_parses():
    fixed = sorted((GOLDEN / "dockerfile").glob("*.fixed"))
    assert fixed
    for p in fixed:
        assert_dockerfile_parses(p.read_text(encoding="utf-8"))
    for p in sorted((GOLDEN / "dockerfile").glob("*.Dockerfile")):
        text = p.read_text(encoding="utf-8")
        before = len(unknown_instructions(text))
        for f in lint(text, path=str(p)).findings:
            for fx in f.fixes:  # every offered fix: never a new broken instruction
                assert len(unknown_instructions(apply_edits(text, fx.edits))) <= before, fx.title


# --- Markdown -------------------------------------------------------------------------------


def test_markdown_fences_kinds_and_nesting():
    text = ("~~~sh\npython -m sglang.launch_server --model-path a\n~~~\n"
            "````markdown\n```bash\npython -m sglang.launch_server --model-path b\n```\n````\n"
            "```text\npython -m sglang.launch_server --model-path c\n```\n"
            "```bash title=\"x\"\npython -m sglang.launch_server --model-path d\n```\n")
    ls = extract_markdown(text).launches
    assert [l.tokens[1].text for l in ls] == ["a", "d"]


def test_markdown_console_prompts_and_output():
    text = ("```console\n$ python -m sglang.launch_server --model-path m \\\n    --tp 2\n"
            "sglang serve --model-path output --bogus\n# python -m sglang.launch_server --model-path root\n```\n"
            "```bash\n$ python -m sglang.launch_server --model-path p\nsglang serve --bogus-output\n```\n")
    ls = extract_markdown(text).launches
    assert [values(l) for l in ls] == [["--model-path", "m", "--tp", "2"], ["--model-path", "root"],
                                       ["--model-path", "p"]]


def test_markdown_placeholders_and_ellipsis_are_unknown():
    text = ("```bash\npython3 -m sglang.launch_server --model <your-model> --tp <N> "
            "--port \"<port>\" --host '<host>'\n```\n"
            "```bash\npython -m sglang.launch_server \\\n  ...\n  --moe-runner-backend flashinfer_trtllm \\\n  ...\n```\n")
    ls = extract_markdown(text).launches
    assert values(ls[0]) == ["--model", None, "--tp", None, "--port", None, "--host", None]
    assert spans(text, ls[0])[1] == "<your-model>"
    assert values(ls[1]) == [None, "--moe-runner-backend", "flashinfer_trtllm", None]
    assert [f.code for f in lint(text, path="a.md").findings] == ["SL004"]  # --tp, not <N>


def test_markdown_indented_fence_in_list_item_dedents_heredoc():
    text = ("1. Config:\n\n  ```bash\n  cat > c.yaml << EOF\n  tp-size: 2\n  EOF\n\n"
            "  python -m sglang.launch_server --config c.yaml --tp_size 2\n  ```\n")
    (l,) = extract_markdown(text).launches
    assert spans(text, l) == ["--config", "c.yaml", "--tp_size", "2"]
    new, _ = fix_all_text(text, path="a.md")
    assert "  python -m sglang.launch_server --config c.yaml --tp-size 2\n  ```\n" in new


def test_markdown_python_and_dockerfile_fences():
    text = ("- In Python:\n\n  ```python\n  import sglang as sgl\n  llm = sgl.Engine(model_path='m', tpp=1)\n  ```\n"
            "```dockerfile\nFROM x\nCMD [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\", \"--tpp\", \"1\"]\n```\n")
    found = lint(text, path="a.md").findings
    assert [(f.code, text[f.span.start:f.span.end]) for f in found] == [("SL001", "tpp"), ("SL001", '"--tpp"')]
    for f in found:  # the removal keeps the Python block's indentation
        new = apply_edits(text, f.fixes[-1].edits)
        assert new.count("```") == text.count("```")
    new = apply_edits(text, found[0].fixes[-1].edits)
    assert "  llm = sgl.Engine(model_path='m')\n" in new


def test_markdown_fence_in_block_quote():
    text = "> Note:\n>\n> ```bash\n> python -m sglang.launch_server --model-path m --tpp 2\n> ```\n"
    (f,) = lint(text, path="a.md").findings
    assert (f.code, text[f.span.start:f.span.end]) == ("SL001", "--tpp")


def test_markdown_unclosed_quote_does_not_swallow_the_next_block():
    text = "```bash\necho \"it's\n```\n\n```bash\npython -m sglang.launch_server --model-path m --tpp 2\n```\n"
    (l,) = extract_markdown(text).launches
    assert values(l) == ["--model-path", "m", "--tpp", "2"]


def test_markdown_detection():
    assert detect_format("DEPLOY.md", None, "") == "markdown"
    assert detect_format("x", "markdown", "") == "markdown"


def test_markdown_fixed_goldens_stay_markdown():
    for p in sorted((GOLDEN / "markdown").glob("*.fixed")):
        orig = Path(str(p)[:-len(".fixed")]).read_text(encoding="utf-8")
        text = p.read_text(encoding="utf-8")
        assert [(b.start, b.info) for b in blocks(orig)] != [] and len(blocks(text)) == len(blocks(orig))


# --- the corpus, as Markdown ----------------------------------------------------------------------

LAUNCHES = json.loads((DATA / "sglang-own-launches.json").read_text())
VERDICTS = {v["record"]: v for v in map(json.loads, (DATA / "sglang-own-verdicts.jsonl").read_text().splitlines())}


def _word(a: str) -> str:
    if a.startswith(("'", '"')) or "$" in a or (a.startswith("<") and a.endswith(">")):
        return a  # written as shell already, or a placeholder
    return shlex.quote(a)


def _cmd(r, indent="  ", sep=" \\\n"):
    env = "".join(f"{k}={v} " for k, v in r["env"].items())
    return env + r["entrypoint"] + "".join(f"{sep}{indent}{_word(a)}" for a in r["argv"]) + "\n"


def corpus_markdown(n: int) -> str | None:
    """Record n written back as the Markdown it came from (its notes say the shape)."""
    r = LAUNCHES[n]
    c = _cmd(r)
    if n == 4:  # two launches back to back, then the router
        return ("```bash\n" + _cmd(LAUNCHES[4], "", " ") + _cmd(LAUNCHES[5], "", " ")
                + "python -m sglang_router.launch_router --pd-disaggregation --prefill http://127.0.0.1:30000\n```\n")
    if n == 5:
        return None
    if n == 20:  # a dangling backslash right before the closing fence
        return "```bash\n" + c.rstrip("\n") + " \\\n```\n"
    if n == 23:  # `--flag \  # comment`: the backslash escapes a space
        lines = [l + "  # Enable async KV cache offloading" if "--disaggregation-decode-enable-offload-kvcache" in l
                 else l for l in c.split("\n")]
        return "```bash\n" + "\n".join(lines) + "```\n"
    if n in (32, 33):  # tab-indented continuation lines, a value on its own line
        return "```bash\n" + _cmd(r, "\t") + "```\n"
    if n == 27:  # docker run ... IMAGE \ then the launch
        return ("```bash\ndocker run --gpus all --shm-size 32g -p 30000:30000 --ipc=host --network=host "
                "lmsysorg/sglang:latest \\\n    " + _cmd(r, "", " ") + "```\n")
    if n == 42:  # a SLURM script in an unlabeled fence
        return ("```\n#!/bin/bash\n#SBATCH --job-name=sglang   # job name\n#SBATCH --nodes=2\n\n"
                'srun --ntasks=2 --nodes=2 --output="logs/%x_%j_node$SLURM_NODEID.out" \\\n    '
                + _cmd(r, "    ").rstrip("\n") + " &\n\nwait\n```\n")
    if n in (45, 46):  # a bash array of flags
        arr = ("COMMON_ARGS=(\n  --model-path MiniMaxAI/MiniMax-M3-MXFP8\n  --trust-remote-code\n  --tp 4\n"
               "  --attention-backend fa4\n  --page-size 128\n)\n\n")
        envs = "".join(f"{k}={v} \\\n" for k, v in r["env"].items())
        return "```bash\n" + arr + envs + "  " + r["entrypoint"] + ' "${COMMON_ARGS[@]}"\n```\n'
    if n == 56:  # a fence indented in a list item, after a comment line
        return "- Two nodes:\n\n  ```bash\n  # Node 1\n  " + _cmd(r, "    ").replace("\n", "\n  ").rstrip() + "\n  ```\n"
    if n in (21, 47):  # exports and a comment line before the launch
        return "```bash\nexport MOONCAKE_PROTOCOL=rdma\n# Launch\n" + c + "```\n"
    return "```bash\n" + c + "```\n"


MD_RECORDS = [n for n, r in enumerate(LAUNCHES) if (r["format"] == "markdown" or n == 42)
              and n in VERDICTS and corpus_markdown(n) is not None]


@pytest.mark.parametrize("n", MD_RECORDS, ids=[f"record{n}" for n in MD_RECORDS])
def test_corpus_record_as_markdown_agrees_with_sglang(n):
    text = corpus_markdown(n)
    res = lint(text, path=f"record{n}.md")
    assert len(res.launches) == (2 if n == 4 else 1), text
    errs = [f for f in res.findings if f.severity == 1]
    verdict = VERDICTS[n]
    if n == 23:
        # SGLang judged the author's intent; pasted into bash the continuation breaks.
        assert [f.code for f in errs] == ["SL020"]
    elif verdict["verdict"] == "rejected" and (verdict["error"] or "").startswith("argparse"):
        named = verdict["error"].split("error: ", 1)[1]
        assert any(named.split(":")[0] in f.message or f.message.split(" (")[0] in named for f in errs), \
            (named, [f.message for f in errs])
    else:
        assert not errs, [f.message for f in errs]


def test_corpus_python_records_via_popen_launch_server():
    for n in (57, 58, 59):
        r = LAUNCHES[n]
        items = ", ".join(json.dumps(a) for a in r["argv"])
        text = ("from sglang.test.test_utils import popen_launch_server\n"
                f"p = popen_launch_server(MODEL, URL, timeout=600, other_args=[{items}])\n")
        errs = errors(text, "t.py")
        verdict = VERDICTS[n]
        if verdict["verdict"] == "rejected":
            assert errs and "ambiguous option: --cuda-graph-max-bs" in errs[0].message
        else:
            assert not errs, [f.message for f in errs]


# --- language server, one document per format --------------------------------------------------






def _apply(text: str, edits) -> str:
    index = LineIndex(text)
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        s = index.offset(e.range.start.line, e.range.start.character)
        t = index.offset(e.range.end.line, e.range.end.character)
        text = text[:s] + e.new_text + text[t:]
    return text


async def test_lsp_python(client: LanguageClient):
    uri = "file:///tmp/servelint-e2e/serve.py"
    text = 'import sglang as sgl\nllm = sgl.Engine(model_path="模型", tp_size=2, tpp=2)\n'
    diags = await open_doc(client, uri, "python", text)
    (d,) = diags
    assert d.code == "SL001"
    # UTF-16 columns: the CJK model name counts one unit per character.
    col = text.split("\n")[1].index("tpp")  # one UTF-16 unit per CJK character
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (1, col, col + 3)
    quick = await quick_fixes(client, uri, d)
    remove = next(a for a in quick if a.title.startswith("Remove"))
    new = _apply(text, remove.edit.changes[uri])
    assert new == 'import sglang as sgl\nllm = sgl.Engine(model_path="模型", tp_size=2)\n'


async def test_lsp_dockerfile(client: LanguageClient):
    uri = "file:///tmp/servelint-e2e/Dockerfile"
    text = ('FROM x\nENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
            'CMD ["--model-path", "m", \\\n     "--tp_size", "2"]\n')
    diags = await open_doc(client, uri, "dockerfile", text)
    (d,) = diags
    assert d.code == "SL002"
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (3, 5, 16)
    (fix,) = [a for a in await quick_fixes(client, uri, d) if a.is_preferred]
    assert _apply(text, fix.edit.changes[uri]) == text.replace('"--tp_size"', '"--tp-size"')


async def test_lsp_markdown(client: LanguageClient):
    uri = "file:///tmp/servelint-e2e/DEPLOY.md"
    text = ("# Serve\n\n1. Start:\n\n  ```bash\n  python -m sglang.launch_server --model <your-model> \\\n"
            "    --attention-backend flash_infer\n  ```\n")
    diags = await open_doc(client, uri, "markdown", text)
    (d,) = diags
    assert d.code == "SL007"
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (6, 24, 35)


# --- big Python modules: defs and classes that name nothing of SGLang are not parsed ------

def test_pruned_and_whole_reading_agree_on_every_golden_python_file(monkeypatch):
    import glob
    import servelint.extract.python_launch as pl
    from servelint.engine import lint as lint_text
    files = sorted(glob.glob(str(Path(__file__).parent / "golden" / "python" / "*.py")))
    assert files
    for path in files:
        text = open(path, encoding="utf-8").read()
        whole = [(f.code, f.span, f.message) for f in lint_text(text, path=path).findings]
        monkeypatch.setattr(pl, "PRUNE_LINES", 0)
        pruned = [(f.code, f.span, f.message) for f in lint_text(text, path=path).findings]
        monkeypatch.setattr(pl, "PRUNE_LINES", 2000)
        assert pruned == whole, path


def test_prune_blanks_only_defs_that_name_nothing_of_sglang():
    from servelint.extract.python_launch import prune
    text = ("import sglang as sgl\nfrom sglang.srt.server_args import ServerArgs as SA\n"
            "@decorator\ndef helper(x):\n    '''docs\ndef inside_a_string(): pass\n'''\n    return x\n"
            "def uses_alias():\n    return sgl.Engine(model_path='m')\n"
            "class Config:\n    args = SA(model_path='m')\n"
            "class Other:\n    pass\n"
            "ARGS = ['--tp-size', '2']\n")
    out = prune(text)
    assert len(out) == len(text)
    assert out.count("\n") == text.count("\n")
    assert "helper" not in out and "inside_a_string" not in out and "Other" not in out
    assert "def uses_alias" in out and "class Config" in out and "ARGS = " in out
    import ast
    ast.parse(out)


def test_prune_leaves_a_file_it_cannot_follow_whole():
    from servelint.extract.python_launch import prune
    odd = "x = 1  # a stray ''' in a comment\ndef f():\n    pass\n"
    assert prune(odd) == odd
    unclosed = "def f():\n    '''never closed\n"
    assert prune(unclosed) == unclosed


def test_a_big_module_reads_the_same_launches(monkeypatch):
    from servelint.engine import lint as lint_text
    filler = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(1200))
    text = ("import subprocess\n" + filler +
            "subprocess.run(['python', '-m', 'sglang.launch_server', '--model-path', 'm', '--tp_size', '2'])\n")
    assert text.count("\n") > 2000
    (f,) = lint_text(text, path="big.py").findings
    assert f.code == "SL002" and "--tp_size" in text[f.span.start:f.span.end]
