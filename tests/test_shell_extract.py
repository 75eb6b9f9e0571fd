"""The shell extractor: which commands are launches, and exact token spans."""

from servelint.edits import apply_edits
from servelint.extract.shell import extract_shell
from servelint.model import LineIndex


def launches(text):
    return extract_shell(text, LineIndex(text)).launches


def words(text, launch):
    return [text[t.span.start:t.span.end] for t in launch.tokens]


def values(launch):
    return [t.text for t in launch.tokens]


def test_plain_python_module():
    text = "python3 -m sglang.launch_server --model-path m --tp 2\n"
    (l,) = launches(text)
    assert l.kind == "launch_server"
    assert values(l) == ["--model-path", "m", "--tp", "2"]
    assert text[l.entry.span.start:l.entry.span.end] == "sglang.launch_server"


def test_python_versions_and_paths():
    for py in ["python", "python3", "python3.11", "/usr/bin/python3", "/opt/venv/bin/python3.12"]:
        (l,) = launches(f"{py} -m sglang.launch_server --model-path m\n")
        assert values(l) == ["--model-path", "m"], py


def test_python_from_a_variable():
    (l,) = launches('"$PY" -m sglang.launch_server --model-path m\n')
    assert values(l) == ["--model-path", "m"]


def test_sglang_serve_and_router_and_uv():
    text = ("sglang serve --model-path a\n"
            "python -m sglang_router.launch_server --model-path b --dp-size 2\n"
            "uv run -m sglang.launch_server --model-path c\n"
            "uv run python -m sglang.launch_server --model-path d\n")
    ls = launches(text)
    assert [l.kind for l in ls] == ["serve", "router", "launch_server", "launch_server"]
    assert [l.tokens[1].text for l in ls] == ["a", "b", "c", "d"]


def test_wrappers():
    cases = [
        "exec python3 -m sglang.launch_server --model-path m",
        "nohup python3 -m sglang.launch_server --model-path m > log 2>&1 &",
        "env A=1 B=2 python3 -m sglang.launch_server --model-path m",
        "numactl --cpunodebind=0 --membind 0 python3 -m sglang.launch_server --model-path m",
        "srun --ntasks=2 -N 2 python3 -m sglang.launch_server --model-path m",
        "timeout 60 python3 -m sglang.launch_server --model-path m",
        "CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path m",
        "docker run --gpus all -p 30000:30000 -e HF_TOKEN=x --ipc=host lmsysorg/sglang:latest "
        "python3 -m sglang.launch_server --model-path m",
    ]
    for c in cases:
        ls = launches(c + "\n")
        assert len(ls) == 1, c
        assert values(ls[0])[:2] == ["--model-path", "m"], c


def test_env_is_recorded():
    (l,) = launches("CUDA_VISIBLE_DEVICES=0,1 env HF_HOME=/x python3 -m sglang.launch_server --model-path m\n")
    assert l.env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert l.env["HF_HOME"] == "/x"


def test_not_launches():
    text = ("echo python3 -m sglang.launch_server --tp 2\n"
            "pip install sglang\n"
            "# python3 -m sglang.launch_server --tp 2\n"
            "grep sglang.launch_server log.txt\n")
    assert launches(text) == []


def test_continuations_quotes_and_equals():
    text = ("python3 -m sglang.launch_server \\\n"
            "  --model-path \"meta-llama/Llama 3\" \\\n"
            "  --chat-template='tmpl x' \\\n"
            "  --port=30000\n")
    (l,) = launches(text)
    assert values(l) == ["--model-path", "meta-llama/Llama 3", "--chat-template=tmpl x", "--port=30000"]
    assert words(text, l) == ["--model-path", '"meta-llama/Llama 3"', "--chat-template='tmpl x'",
                              "--port=30000"]


def test_unknown_values():
    text = 'python3 -m sglang.launch_server --model-path "$M" --tp $TP --port=${PORT:-1} $(extra) "$@"\n'
    (l,) = launches(text)
    toks = l.tokens
    assert toks[1].text is None and not toks[1].splat          # "$M": one word
    assert toks[3].text is None and toks[3].splat              # $TP: unquoted
    assert toks[4].text is None and toks[4].prefix == "--port="
    assert toks[5].splat and toks[6].splat


def test_bash_c_positions_map_into_the_string():
    text = "bash -c 'python3 -m sglang.launch_server --model-path m --tp 2'\n"
    (l,) = launches(text)
    assert words(text, l) == ["--model-path", "m", "--tp", "2"]
    text2 = 'sh -c "exec python3 -m sglang.launch_server --model-path \\"a b\\" --tp 2"\n'
    (l2,) = launches(text2)
    assert values(l2) == ["--model-path", "a b", "--tp", "2"]
    assert words(text2, l2) == ["--model-path", '\\"a b\\"', "--tp", "2"]


def test_double_quoted_script_with_expansions():
    text = 'bash -c "python3 -m sglang.launch_server --model-path $M --tp-size \\"$TP\\" --port 1"\n'
    (l,) = launches(text)
    assert values(l) == ["--model-path", None, "--tp-size", None, "--port", "1"]
    assert words(text, l)[-2:] == ["--port", "1"]


def test_docker_bash_c():
    text = "docker run img bash -lc 'python3 -m sglang.launch_server --model-path m'\n"
    (l,) = launches(text)
    assert values(l) == ["--model-path", "m"]


def test_non_ascii_offsets():
    text = "# модель\npython3 -m sglang.launch_server --model-path 'ünï' --tp 2\n"
    (l,) = launches(text)
    assert words(text, l) == ["--model-path", "'ünï'", "--tp", "2"]


def test_half_typed_script_does_not_crash():
    for text in ["python3 -m sglang.launch_server --model-path \"unterminated\n",
                 "python3 -m sglang.launch_server --tp $(\n",
                 "if then python3 -m sglang.launch_server --tp 2 fi {\n",
                 "python3 -m sglang.launch_server --model-path m \\\n"]:
        launches(text)


def test_comment_inside_continuation_is_reported():
    text = ("python3 -m sglang.launch_server --model-path m \\\n"
            "  # tensor parallel\n"
            "  --tp 2\n")
    res = extract_shell(text, LineIndex(text))
    (l,) = res.launches
    # The cut-off options are still read as the launch's, so their problems show now.
    assert values(l) == ["--model-path", "m", "--tp", "2"]
    (f,) = res.findings
    assert f.code == "SL020"
    assert text[f.span.start:f.span.end] == "--tp 2"


def test_missing_backslash_is_reported_and_fixed():
    text = ("python3 -m sglang.launch_server --model-path m\n"
            "  --tp 2\n")
    res = extract_shell(text, LineIndex(text))
    (f,) = res.findings
    fixed = apply_edits(text, f.fixes[0].edits)
    assert fixed == "python3 -m sglang.launch_server --model-path m \\\n  --tp 2\n"
    assert extract_shell(fixed, LineIndex(fixed)).launches[0].tokens[-1].text == "2"
    assert extract_shell(fixed, LineIndex(fixed)).findings == []


def test_remove_keeps_continuations():
    text = ("python3 -m sglang.launch_server --model-path m \\\n"
            "  --enable-hisparse \\\n"
            "  --tp 2\n"
            "echo done\n")
    (l,) = launches(text)
    edit = l.host.remove(l.tokens[2], l.tokens[2])
    assert apply_edits(text, [edit]) == ("python3 -m sglang.launch_server --model-path m \\\n"
                                         "  --tp 2\n" "echo done\n")
    edit = l.host.remove(l.tokens[3], l.tokens[4])
    assert apply_edits(text, [edit]) == ("python3 -m sglang.launch_server --model-path m \\\n"
                                         "  --enable-hisparse\n" "echo done\n")
    edit = l.host.remove(l.tokens[0], l.tokens[1])
    assert apply_edits(text, [edit]) == ("python3 -m sglang.launch_server \\\n"
                                         "  --enable-hisparse \\\n" "  --tp 2\n" "echo done\n")


def test_windowed_parse_matches_full_parse(monkeypatch):
    """Large scripts are parsed in windows around launches; results must not change."""
    import glob
    import os

    import servelint.extract.shell as shell
    from servelint.engine import lint

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = sorted(glob.glob(os.path.join(root, "tests/golden/shell/*.sh"))
                   + glob.glob(os.path.join(root, "examples/*.sh")))
    assert len(files) > 10

    def signature(result):
        return [(f.code, f.span, f.message, [(x.title, [(e.span, e.new_text) for e in x.edits])
                                              for x in f.fixes]) for f in result.findings]

    for path in files:
        text = open(path, encoding="utf-8").read()
        monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 10**12)
        full = signature(lint(text, path=path))
        monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
        windowed = signature(lint(text, path=path))
        assert windowed == full, path


def test_window_inside_a_multiline_string_falls_back_to_a_full_parse(monkeypatch):
    import servelint.extract.shell as shell
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
    text = ("X='first line\n"
            "python3 -m sglang.launch_server --tp_size 2 it is a string'\n"
            "python3 -m sglang.launch_server --model-path m\n")
    ls = launches(text)
    assert [values(l) for l in ls] == [["--model-path", "m"]]
