"""YAML: scalar positions (yamlpos), launches in Kubernetes / compose / CI / Helm files,
unknown values, fixes that keep the file valid, bad input, and the language server."""

import random
from pathlib import Path

import pytest
import yaml
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_support import apply_lsp_edits, client, quick_fixes  # noqa: F401 (client: fixture)

from servelint.engine import detect_format, fix_all_text, lint
from servelint.edits import apply_edits, fix_all_edits
from servelint.extract import by_name, yaml_launch, yamlpos
from servelint.extract.yaml_compose import compose_words
from servelint.extract.yaml_host import yaml_scalar
from servelint.extract.yaml_launch import k8s_value

GOLDEN = Path(__file__).parent / "golden" / "yaml"
EXAMPLES = Path(__file__).parent.parent / "examples"
LOADERS = [yaml.SafeLoader] + ([yaml.CSafeLoader] if hasattr(yaml, "CSafeLoader") else [])


def scalars(text: str, loader=yaml.SafeLoader):
    return [e for e in yaml.parse(text, Loader=loader) if isinstance(e, yaml.ScalarEvent)]


def decode_all(text: str, loader=yaml.SafeLoader):
    return [(e, yamlpos.decode(text, e.start_mark.index, e.end_mark.index, e.value))
            for e in scalars(text, loader)]


def value_of(text: str, key: str):
    """The decoded scalar that follows the plain key `key`."""
    events = scalars(text)
    for k, v in zip(events, events[1:]):
        if k.value == key:
            return yamlpos.decode(text, v.start_mark.index, v.end_mark.index, v.value)
    raise KeyError(key)


def at(text: str, d: yamlpos.Decoded, sub: str, nth: int = 0) -> int:
    """The document offset the decoder gives the value's `sub` (its nth occurrence)."""
    i = -1
    for _ in range(nth + 1):
        i = d.value.index(sub, i + 1)
    return d.table[i]


# --- yamlpos: every scalar style ----------------------------------------------------------------


def test_plain_multiline_folding():
    text = "k: first  line\n   second\n\n   third\nz: 1\n"
    d = value_of(text, "k")
    assert d.exact and d.style == "plain"
    assert d.value == yaml.safe_load(text)["k"] == "first  line second\nthird"
    assert at(text, d, "second") == text.index("second")
    assert at(text, d, "third") == text.index("third")
    # the folded space sits right after the word that ends the line
    assert at(text, d, " second") == text.index("line") + 4
    # the line break that survives is the empty line's own
    assert at(text, d, "\n") == text.index("\n\n") + 1
    assert d.table[-1] == text.index("third") + 5


def test_single_quoted_with_doubled_quotes_and_folding():
    text = "k: 'it''s   a\n    multi  \n\n    line'\n"
    d = value_of(text, "k")
    assert d.value == yaml.safe_load(text)["k"] == "it's   a multi\nline"
    assert at(text, d, "'") == text.index("''")
    assert at(text, d, "s") == text.index("''") + 2
    assert at(text, d, "multi") == text.index("multi")
    assert d.table[-1] == text.rindex("'")


def test_double_quoted_escapes():
    text = 'k: "a\\"b\\n\\t\\\\c \\x41\\u00e9\\U0001F600 end"\n'
    d = value_of(text, "k")
    assert d.value == yaml.safe_load(text)["k"] == 'a"b\n\t\\c Aé😀 end'
    assert at(text, d, '"') == text.index('\\"')
    assert at(text, d, "\n") == text.index("\\n")
    assert at(text, d, "\t") == text.index("\\t")
    assert at(text, d, "\\") == text.index("\\\\")
    assert at(text, d, "A") == text.index("\\x41")
    assert at(text, d, "é") == text.index("\\u00e9")
    assert at(text, d, "😀") == text.index("\\U0001F600")
    assert at(text, d, "end") == text.index("end")


def test_double_quoted_escaped_line_break_joins_without_space():
    text = 'k: "python3 -m x \\\n     --tp 8\\\n     --port 1"\n'
    d = value_of(text, "k")
    assert d.value == yaml.safe_load(text)["k"] == "python3 -m x --tp 8--port 1"
    assert at(text, d, "--tp") == text.index("--tp")
    assert at(text, d, "--port") == text.index("--port")


@pytest.mark.parametrize("header,body,expected", [
    ("|", "  a\n   b\n\n  c\n\n\n", "a\n b\n\nc\n"),
    ("|-", "  a\n  b\n\n", "a\nb"),
    ("|+", "  a\n  b\n\n\n", "a\nb\n\n\n"),
    (">", "  a\n  b\n\n  c\n    d\n  e\n", "a b\nc\n  d\ne\n"),
    (">-", "  a\n  b\n", "a b"),
    ("|2", "    x\n   y\n", "  x\n y\n"),
    ("|1-", "   x\n  y\n", "  x\n y"),
    ("|+2", "   x\n\n", " x\n\n"),
    (">2-  # comment", "    a\n   b\n", "  a\n b"),
])
def test_block_scalars(header, body, expected):
    text = f"k: {header}\n{body}z: 1\n"
    d = value_of(text, "k")
    assert d.exact and d.style == header[0]
    assert d.value == yaml.safe_load(text)["k"] == expected
    for i, c in enumerate(d.value):
        if c not in " \n":
            assert text[d.table[i]] == c


def test_block_scalar_in_sequence_with_indentation_indicator():
    text = "args:\n  - |2\n       starts with spaces\n      python3 -m x\n"
    (e, d) = decode_all(text)[-1]
    # the indicator counts from the sequence's indentation, which the marks do not give
    assert d.value == yaml.safe_load(text)["args"][0] == "   starts with spaces\n  python3 -m x\n"
    assert at(text, d, "python3") == text.index("python3")
    assert at(text, d, "starts") == text.index("starts")


def test_non_ascii_offsets_are_code_points():
    text = 'k: "日本 é😀 --tp_size"\nl: |\n  モデル --x 😀\n'
    d = value_of(text, "k")
    assert at(text, d, "--tp_size") == text.index("--tp_size")
    d = value_of(text, "l")
    assert at(text, d, "--x") == text.index("--x")
    assert at(text, d, "😀") == text.rindex("😀")


def test_tags_and_anchors_are_skipped():
    text = "k: !!str &a   --tp 8\n"
    d = value_of(text, "k")
    assert d.start == text.index("--tp") and d.value == "--tp 8"


def test_crlf_line_breaks():
    text = "k: |\r\n  a\r\n  b\r\nl: x\r\n  y\r\n"
    assert value_of(text, "k").value == "a\nb\n"
    d = value_of(text, "l")
    assert d.value == "x y" and at(text, d, "y") == text.index("y")


def test_a_value_the_decoder_does_not_reproduce_is_not_exact():
    text = 'k: "abc"\n'
    e = scalars(text)[1]
    d = yamlpos.decode(text, e.start_mark.index, e.end_mark.index, "something else")
    assert not d.exact and d.table is None
    assert (d.start, d.end) == (3, 8)


def _random_string(rng: random.Random) -> str:
    alphabet = "ab -_:#'\"\\\n\t éü😀日x{}[],.$%&*!|>@`"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 50)))


def _dumped(rng: random.Random):
    for _ in range(1500):
        s = _random_string(rng)
        style = rng.choice([None, "'", '"', "|", ">"])
        wrap = rng.choice(["map", "seq", "flow", "nested"])
        obj = {"k": s} if wrap == "map" else [s] if wrap == "seq" else \
            {"a": [s, "x"]} if wrap == "flow" else {"a": {"b": [s, {"c": s}]}}
        try:
            yield yaml.dump(obj, default_style=style, width=rng.choice([5, 12, 30, 80]),
                            allow_unicode=rng.random() < 0.5, default_flow_style=(wrap == "flow"),
                            indent=rng.choice([2, 3, 4]))
        except yaml.YAMLError:
            continue


def _handmade(rng: random.Random):
    words = ["python3", "-m", "sglang.launch_server", "--tp", "8", "é😀", "''", "#x", "a:b",
             "\\", "--x=\"y\""]
    for _ in range(600):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 4)))
                 for _ in range(rng.randint(1, 5))]
        indent = rng.randint(1, 6)
        extra = [rng.randint(0, 2) for _ in lines]
        header = rng.choice(["|", ">", "|-", ">-", "|+", ">+"])
        use_indicator = rng.random() < 0.4
        if use_indicator:
            header += str(indent)
        body = "".join((" " * (indent + (x if (use_indicator or i) else 0)) + ln.rstrip() + "\n")
                       if ln.strip() else "\n" for i, (ln, x) in enumerate(zip(lines, extra)))
        yield f"top:\n  k: {header}\n" + "".join("  " + b if b.strip() else b for b in body.splitlines(True)) \
            + "  z: 1\n"
        yield "k: " + " ".join(rng.choice(words[:5]) for _ in range(3)) + "\n   " + \
              "\n\n   ".join(rng.choice(words[:5]) for _ in range(3)) + "\n"


@pytest.mark.parametrize("loader", LOADERS, ids=lambda l: l.__name__)
def test_decoded_equals_safe_load_on_generated_scalars(loader):
    rng = random.Random(20240611)
    checked = 0
    for text in list(_dumped(rng)) + list(_handmade(rng)):
        try:
            events = scalars(text, loader)
        except yaml.YAMLError:
            continue
        for e in events:
            d = yamlpos.decode(text, e.start_mark.index, e.end_mark.index, e.value)
            assert d.exact, (text, e.value)
            assert d.value == e.value
            assert len(d.table) == len(d.value) + 1
            for i, c in enumerate(d.value):
                src = text[d.table[i]]
                assert src == c or src in "\\'\r\n \t" or c in " \n", (text, i, c, src)
            checked += 1
        # and the values are what safe_load itself returns
        loaded = yaml.safe_load(text)
        flat = []

        def collect(o):
            if isinstance(o, dict):
                for k, v in o.items():
                    collect(k)
                    collect(v)
            elif isinstance(o, list):
                for v in o:
                    collect(v)
            elif isinstance(o, str):
                flat.append(o)
        collect(loaded)
        decoded = [yamlpos.decode(text, e.start_mark.index, e.end_mark.index, e.value).value
                   for e in events]
        for s in flat:
            assert s in decoded
    assert checked > 3000


# --- detection -------------------------------------------------------------------------------------

K8S = """apiVersion: v1
kind: Pod
spec:
  containers:
    - name: s
      command: [python3, -m, sglang.launch_server, --model-path, m, --tp_size, "2"]
"""
COMPOSE = """services:
  s:
    image: lmsysorg/sglang
    command: python3 -m sglang.launch_server --model-path m --tp_size 2
"""
CONFIG = "model-path: meta-llama/Llama-3.1-8B\ntp-size: 2\nport: 30000\nenable-metrics: true\n"


def test_format_priority():
    assert by_name("yaml").priority == 30


@pytest.mark.parametrize("path,lang,text,expected", [
    ("/x/deploy.yml", None, K8S, "yaml"),
    ("/x/stack.yaml", None, COMPOSE, "yaml"),
    (None, None, K8S, "yaml"),
    (None, None, COMPOSE, "yaml"),
    (None, "yaml", "anything: 1\n", "yaml"),
    (None, "dockercompose", COMPOSE, "yaml"),
    ("/x/templates/_helpers.tpl", None, '{{- define "x" -}}\n- python3\n{{- end }}\n', "yaml"),
    ("/x/Chart/templates/deploy.yaml.tpl", None, K8S, "yaml"),
    ("/x/run.sh", None, K8S, "shell"),
    (None, "shellscript", K8S, "shell"),
    (None, None, "#!/bin/bash\npython3 -m sglang.launch_server --model-path m\n", "shell"),
    ("/x/notes.txt", None, K8S, None),
])
def test_detection(path, lang, text, expected):
    assert detect_format(path, lang, text) == expected


def test_an_sglang_config_file_is_not_claimed_without_a_launch():
    assert not yaml_launch.detect("/x/server.yaml", None, CONFIG)
    assert not yaml_launch.detect(None, "yaml", CONFIG)
    assert detect_format("/x/server.yaml", None, CONFIG) != "yaml"
    # a manifest whose keys happen to be few still is one
    assert yaml_launch.detect("/x/server.yaml", None, CONFIG + "run: |\n  python -m sglang.launch_server\n")


def test_files_without_launch_are_not_parsed(monkeypatch):
    calls = []
    real = yaml_launch.compose
    monkeypatch.setattr(yaml_launch, "compose", lambda *a: calls.append(a) or real(*a))
    big = "---\n".join(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\ndata:\n"
                       f"  image: lmsysorg/sglang:v{i}\n" for i in range(1000))
    assert lint(big, path="/x/big.yaml").launches == []
    assert calls == []
    # only the document holding a launch is parsed
    big += "---\n" + K8S
    assert len(lint(big, path="/x/big.yaml").launches) == 1
    assert len(calls) == 1


# --- launches -----------------------------------------------------------------------------------------


def launches(text: str, path: str = "/x/f.yaml"):
    return lint(text, path=path).launches


def words(text: str, launch):
    return [(text[t.span.start:t.span.end], t.text) for t in launch.tokens]


def test_k8s_command_and_args_are_one_launch():
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n"
            "    command: [\"python3\", '-m', sglang.launch_server]\n"
            "    args:\n    - --model-path\n    - \"/m\"\n    - --tp\n    - '8'\n")
    (launch,) = launches(text)
    assert text[launch.entry.span.start:launch.entry.span.end] == "sglang.launch_server"
    assert words(text, launch) == [("--model-path", "--model-path"), ('"/m"', "/m"),
                                   ("--tp", "--tp"), ("'8'", "8")]


def test_multi_document_positions():
    docs = [K8S.replace("--tp_size", f"--tp_size{i}") for i in range(3)]
    text = "# header\n---\n" + "---\n".join(docs)
    found = lint(text, path="/x/all.yaml")
    assert len(found.launches) == 3
    codes = [f for f in found.findings if f.code in ("SL001", "SL002")]
    assert [text[f.span.start:f.span.end] for f in codes] == ["--tp_size0", "--tp_size1", "--tp_size2"]


def test_k8s_bash_c_script_in_each_position():
    for command, args in [("[/bin/bash, -c]", '["python3 -m sglang.launch_server --tp_size 2"]'),
                          ('["sh", "-c", "python3 -m sglang.launch_server --tp_size 2"]', None),
                          ("[bash, -c, --]", "\n    - python3 -m sglang.launch_server --tp_size 2"),
                          ("[bash, -lc]", "\n    - >-\n      python3 -m sglang.launch_server\n      --tp_size 2")]:
        text = f"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - command: {command}\n"
        if args:
            text += f"    args: {args}\n"
        result = lint(text, path="/x/p.yaml")
        (launch,) = result.launches
        (f,) = [f for f in result.findings if f.code == "SL002"]
        assert text[f.span.start:f.span.end] == "--tp_size", text


def test_merge_conflict_markers_keep_our_side():
    text = ("apiVersion: apps/v1\nkind: StatefulSet\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - command: [/bin/bash, -c]\n          args:\n            - |\n"
            "              python3 -m sglang.launch_server \\\n                --model /m \\\n"
            "<<<<<<< HEAD\n                --enable-ep-moe \\\n=======\n                --theirs \\\n"
            ">>>>>>> branch\n                --port 8000\n")
    result = lint(text, path="/x/sts.yaml")
    (launch,) = result.launches
    assert [t.text for t in launch.tokens] == ["--model", "/m", "--enable-ep-moe", "--port", "8000"]
    (f,) = [f for f in result.findings if f.severity == 1]
    assert text[f.span.start:f.span.end] == "--enable-ep-moe"


def test_half_typed_yaml_still_reads_what_comes_before():
    text = K8S + "  - name: b\n    command: [python3, -m, sglang.launch_server, --tp"
    result = lint(text, path="/x/p.yaml")
    assert result.launches and not result.notices
    assert "--tp_size" in [text[f.span.start:f.span.end] for f in result.findings]
    # the unfinished list may continue: nothing is reported as missing there
    assert not [f for f in result.findings if f.code == "SL011"]


def test_broken_yaml_after_a_literal_block_falls_back_to_its_lines():
    text = ("run: |\n  python3 -m sglang.launch_server --model-path m --tp_size 2\n"
            "oops: [unclosed\n  : : :\n")
    result = lint(text, path="/x/task.yaml")
    assert "--tp_size" in [text[f.span.start:f.span.end] for f in result.findings]


def test_bad_input_never_raises():
    samples = ["", "\0\0\0sglang launch_server", "{{{{", "- - - - sglang serve", ": : :",
               "a: *undefined\nb: sglang.launch_server", "run: |\n\tpython -m sglang.launch_server",
               "k: \"unterminated sglang.launch_server", "%YAML 9.9\n--- sglang serve",
               "x: &a [*a, sglang.launch_server]", "<<: *x\ncommand: [sglang, serve]"]
    for s in samples:
        for path in ("/x/a.yaml", None):
            lint(s, path=path, language_id="yaml")
    rng = random.Random(7)
    base = (GOLDEN / "bad_k8s_script_styles.yaml").read_text(encoding="utf-8")
    for _ in range(300):
        chars = list(base)
        for _ in range(rng.randint(1, 6)):
            chars.insert(rng.randrange(len(chars)), rng.choice(" \t\n-:'\"|>{}[]#\\$&*!"))
        text = "".join(chars)
        result = lint(text, path="/x/f.yaml")
        assert not [n for n in result.notices if "internal error" in n]
        for launch in result.launches:
            for t in [launch.entry] + launch.tokens:
                assert 0 <= t.span.start <= t.span.end <= len(text)


def test_aliases_use_the_anchored_value_where_the_alias_is_written():
    text = ("x-tp: &tp \"4\"\nservices:\n  s:\n    entrypoint: [python3, -m, sglang.launch_server]\n"
            "    command: [--model-path, m, --tp-size, *tp, --dp_size, *tp]\n")
    (launch,) = launches(text, "/x/compose.yaml")
    assert words(text, launch)[3] == ("*tp", "4")


def test_merge_keys_and_anchored_lists_give_one_launch_each():
    text = ("x-base: &base\n  image: lmsysorg/sglang:latest\n  entrypoint: [python3, -m, sglang.launch_server]\n"
            "x-cmd: &cmd [python3, -m, sglang.launch_server, --model-path, m, --tp_size, \"2\"]\n"
            "services:\n  a:\n    <<: *base\n    command: [--model-path, m, --dp_size, \"2\"]\n"
            "  b:\n    <<: *base\n    command: [--model-path, m2]\n  c:\n    command: *cmd\n")
    result = lint(text, path="/x/compose.yaml")
    assert [[t.text for t in l.tokens][:2] for l in result.launches] == [
        ["--model-path", "m"], ["--model-path", "m2"], ["--model-path", "m"]]
    # the base alone (no --model-path) is not a launch of its own
    assert sorted(text[f.span.start:f.span.end] for f in result.findings) == ["--dp_size", "--tp_size"]


def test_entrypoint_script_that_runs_its_arguments():
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - command: [/opt/nvidia/nvidia_entrypoint.sh]\n"
            "    args: [python3, -m, sglang.launch_server, --model-path, m, --tp_size, \"2\"]\n")
    (launch,) = launches(text)
    assert [t.text for t in launch.tokens] == ["--model-path", "m", "--tp_size", "2"]


def test_crlf_files_keep_their_line_breaks():
    text = ("apiVersion: v1\r\nkind: Pod\r\nspec:\r\n  containers:\r\n  - command:\r\n    - python3\r\n"
            "    - -m\r\n    - sglang.launch_server\r\n    - --model-path\r\n    - m\r\n    - --is-embedding\r\n"
            "    - --disable-radix-cache\r\n    - --prefill-only-disable-kv-cache\r\n    - --trust-remote-code\r\n"
            "    - \"yes\"\r\n")
    result = lint(text, path="/x/p.yaml")
    by_code = {f.code: f for f in result.findings}
    removed = apply_edits(text, by_code["SL013"].fixes[0].edits)
    assert removed == text.replace('    - "yes"\r\n', "")
    added = apply_edits(text, by_code["SL105"].fixes[0].edits)
    assert "\r\n    - --chunked-prefill-size\r\n    - \"-1\"\r\n" in added
    assert "\n" not in added.replace("\r\n", "")


# --- unknown values ---------------------------------------------------------------------------------


def test_k8s_variable_references():
    assert k8s_value("$(POD_INDEX)") == (None, "")
    assert k8s_value("--x=$(A)") == (None, "--x=")
    assert k8s_value("$$(A)") == ("$(A)", "")
    assert k8s_value("$HOME") == ("$HOME", "")


def test_compose_words_and_interpolation():
    ws = compose_words("python3 -m 'a b' \"c $X\" ${TP:-8} --x=$${Y} tail\\ end ; rm -rf")
    assert [w.text for w in ws] == ["python3", "-m", "a b", None, None, "--x=${Y}", "tail end", None]
    assert ws[3].prefix == "c " and not ws[3].splat
    assert ws[4].splat and ws[-1].splat


def test_compose_values_are_unknown_not_errors():
    text = ("services:\n  s:\n    entrypoint: [python3, -m, sglang.launch_server]\n"
            "    command: [--model-path, m, --tp-size, \"${TP:-8}\", --port, $PORT, --dp-size, \"$${DP}\"]\n")
    result = lint(text, path="/x/compose.yaml")
    (launch,) = result.launches
    texts = [t.text for t in launch.tokens]
    assert texts[3] is None and texts[5] is None and texts[7] == "${DP}"
    # `$$` is a literal `$`: SGLang really receives ${DP}
    assert [f.code for f in result.findings] == ["SL006"]


def test_helm_templates_are_unknown():
    text = (GOLDEN / "ok_helm_helpers.tpl").read_text(encoding="utf-8")
    result = lint(text, path="/chart/templates/_helpers.tpl")
    assert result.format == "yaml" and len(result.launches) == 2 and not result.findings
    first = result.launches[0]
    unknown = [text[t.span.start:t.span.end] for t in first.tokens if t.text is None]
    assert "{{ .Values.prefill.config.tp | quote }}" in unknown
    assert "$(LWS_LEADER_ADDRESS):{{ .Values.global.distInit.port }}" in unknown
    # the items inside `{{ range }}` may be any number of words
    assert first.tokens[-1].splat


def test_helm_template_manifest_that_is_not_yaml():
    text = ("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
            "        - name: {{ .Chart.Name }}\n          command:\n            - python3\n"
            "            - -m\n            - sglang.launch_server\n            - --tp-size\n"
            "            - {{ .Values.tp }}\n            {{- if .Values.metrics }}\n"
            "            - --enable-metrics\n            {{- end }}\n            {{- toYaml .Values.extra | nindent 12 }}\n"
            "          args: |\n            {{ .Values.ignored }}\n")
    result = lint(text, path="/chart/templates/deployment.yaml")
    (launch,) = result.launches
    assert [t.text for t in launch.tokens][:3] == ["--tp-size", None, "--enable-metrics"]
    assert launch.tokens[-1].splat  # what toYaml emits
    assert not result.findings


def test_helm_templates_inside_a_script():
    text = ("run: |\n  python3 -m sglang.launch_server --tp-size {{ .Values.tp }} \\\n"
            "  {{- if .Values.m }}\n    --enable-metrics \\\n  {{- end }}\n    --port '{{ .Values.port }}'\n")
    (launch,) = launches(text, "/x/task.yaml")
    assert [t.text for t in launch.tokens] == ["--tp-size", None, "--enable-metrics", "--port", None]


def test_github_expressions_are_unknown():
    text = ("on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: |\n"
            "          python3 -m sglang.launch_server --model-path m --tp-size ${{ matrix.tp }} --port '${{ inputs.port }}'\n")
    result = lint(text, path="/x/.github/workflows/ci.yml")
    (launch,) = result.launches
    assert [t.text for t in launch.tokens] == ["--model-path", "m", "--tp-size", None, "--port", None]
    assert not result.findings


# --- fixes ----------------------------------------------------------------------------------------


def yaml_goldens():
    return sorted(p for p in GOLDEN.iterdir() if p.suffix in (".yaml", ".yml"))


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.fixed")), ids=lambda p: p.name)
def test_fixed_golden_files_still_load(path):
    list(yaml.safe_load_all(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", yaml_goldens() + sorted(EXAMPLES.glob("*.y*ml")), ids=lambda p: p.name)
def test_every_fix_keeps_the_file_loading(path):
    text = path.read_text(encoding="utf-8")
    list(yaml.safe_load_all(text))
    result = lint(text, path=str(path))
    assert result.format in ("yaml", "sglang-config")
    for f in result.findings:
        for fx in f.fixes:
            list(yaml.safe_load_all(apply_edits(text, fx.edits)))
    list(yaml.safe_load_all(apply_edits(text, fix_all_edits(result.findings))))
    fixed, _ = fix_all_text(text, str(path))
    list(yaml.safe_load_all(fixed))


@pytest.mark.parametrize("path", yaml_goldens(), ids=lambda p: p.name)
def test_list_tokens_are_where_their_values_are_written(path):
    """A list element's span holds a YAML scalar whose value is the token (unless a
    variable makes it unknown)."""
    text = path.read_text(encoding="utf-8")
    for launch in lint(text, path=str(path)).launches:
        if type(launch.host).__name__ != "YamlHost":
            continue
        for tok in [launch.entry] + launch.tokens:
            if tok.text is None or tok.splat:
                continue
            written = text[tok.span.start:tok.span.end]
            if launch.host._find(tok)[0].kind == "words":
                assert written.strip("'\"") == tok.text or "\\" in written or "$$" in written
            else:
                assert str(yaml.safe_load(written)) == tok.text.replace("$$", "$") or "$$" in written


def test_block_sequence_fixes_work_on_whole_lines():
    text = (GOLDEN / "bad_k8s_block_fixes.yaml").read_text(encoding="utf-8")
    result = lint(text, path="/x/job.yaml")
    by_code = {f.code: f for f in result.findings}
    (edit,) = by_code["SL013"].fixes[0].edits
    assert text[edit.span.start:edit.span.end] == '            - "true"\n' and edit.new_text == ""
    (edit,) = by_code["SL010"].fixes[0].edits
    assert text[edit.span.start:edit.span.end] == '            - --port\n            - "30000"\n'
    add = by_code["SL105"].fixes[0]
    assert add.edits[0].new_text == '\n            - --chunked-prefill-size\n            - "-1"'
    fixed = apply_edits(text, add.edits)
    args = yaml.safe_load(fixed)["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--chunked-prefill-size") + 1] == "-1"


def test_flow_sequence_removal_takes_one_comma():
    text = (GOLDEN / "bad_k8s_flow_fixes.yaml").read_text(encoding="utf-8")
    fixed = apply_edits(text, fix_all_edits(lint(text, path="/x/p.yaml").findings))
    pod = yaml.safe_load(fixed)
    assert pod["spec"]["containers"][0]["args"] == ["--model-path", "/models/qwen", "--enable-metrics",
                                                    "--mem-fraction-static", "0.85"]
    assert ", ," not in fixed and "[," not in fixed


@pytest.mark.parametrize("value,style,written", [
    ("--tp-size", "", "--tp-size"), ("8", "", '"8"'), ("-1", "", '"-1"'), ("true", "", '"true"'),
    ("0.85", "", '"0.85"'), ("a,b", "", '"a,b"'), ("x: y", "", '"x: y"'), ("~", "", '"~"'),
    ("1:30", "", '"1:30"'), ("--x", '"', '"--x"'), ("it's", "'", "'it''s'"),
    ('a"b\\', "", '"a\\"b\\\\"'), ("-", "", '"-"'), ("null", "", '"null"'),
])
def test_new_elements_are_quoted_when_yaml_needs_it(value, style, written):
    assert yaml_scalar(value, style) == written
    assert yaml.safe_load(f"[{written}]") == [value]
    assert yaml.safe_load(f"- {written}\n") == [value]


def test_a_fix_in_a_literal_block_keeps_its_indentation():
    text = (GOLDEN / "bad_skypilot_task.yaml").read_text(encoding="utf-8")
    fixed = (GOLDEN / "bad_skypilot_task.yaml.fixed").read_text(encoding="utf-8")
    assert yaml.safe_load(fixed)["run"] == yaml.safe_load(text)["run"].replace("--tp ", "--tp-size ") \
        .replace("--port 30000\n", "--port 30000 \\\n")


# --- language server ----------------------------------------------------------------------------------

LSP_TEXT = """apiVersion: v1
kind: Pod
metadata:
  name: sglang
spec:
  containers:
    - name: server
      image: lmsysorg/sglang:latest
      command: ["/bin/bash", "-c"]
      args:
        - |
          python3 -m sglang.launch_server --model-path /models/é \\
            --tp_size 2 \\
            --port 30000
"""
LSP_URI = "file:///tmp/servelint-e2e/pod.yaml"




async def test_lsp_diagnostic_in_block_scalar_and_quick_fix(client: LanguageClient):
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=LSP_URI, language_id="yaml", version=1, text=LSP_TEXT)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    (d,) = client.diagnostics[LSP_URI]
    assert d.code == "SL002"
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (12, 12, 21)
    quick = await quick_fixes(client, LSP_URI, d)
    assert quick and quick[0].is_preferred
    text = apply_lsp_edits(LSP_TEXT, quick[0].edit.changes[LSP_URI])
    assert text == LSP_TEXT.replace("--tp_size", "--tp-size")
    pod = yaml.safe_load(text)
    assert "\n  --tp-size 2 \\\n" in pod["spec"]["containers"][0]["args"][0]
