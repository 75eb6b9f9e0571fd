"""Helm charts: templates read with their actions masked (control lines in lists, `with`,
`range`, `include`, `toYaml`, `quote`, `default`), values from the chart's values.yaml where a
launch takes them literally (with their place in values.yaml as related information), branches
the values leave out, and `helm template` output read as plain YAML documents.

The template files are written here in the shapes of real charts (OME's ome-serving
ClusterServingRuntime, SGLang's lws_pd_helm, single-Deployment charts); the real files
themselves are in tests/data/real/yaml (tests/test_yaml_real_files.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servelint.engine import detect_format, lint
from servelint.extract.helm_values import ValuesHost, go_float, parse_lookup, relate_values
from servelint.model import Severity

# --- the OME idiom: a range around the documents, control lines at column 0 in the list ---

OME_LIKE = """\
{{/*
  One runtime per enabled model.
*/}}
{{- $registry := include "chart.registry" . | fromYaml }}
{{- range $name, $model := .Values.models }}
{{- if $model.enabled }}
{{- $gpus := $model.runtime.gpus | default 1 | int }}
{{- $isPdMode := $model.pdMode | default false }}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: srt-{{ $name }}
spec:
  engineConfig:
    annotations:
{{- if $isPdMode }}
      rdma.ome.io/auto-inject: "true"
{{- end }}
      prometheus.io/scrape: "true"
    runner:
      name: ome-container
      image: {{ $model.runtime.image | default $.Values.defaults.image }}
      command:
        - python3
        - -m
        - sglang.launch_server
        - --host
        - "0.0.0.0"
        - --port
        - "8080"
        - --model-path
        - $(MODEL_PATH)
        - --tp-size
        - "{{ $gpus }}"
        - --mem-fraction-static
        - "{{ $model.runtime.memFrac | default $.Values.defaults.memFrac }}"
{{- if $isPdMode }}
        - --disaggregation-mode
        - prefill
{{- end }}
        {{- with $model.runtime.extraArgs }}
        {{- range . }}
        - {{ . | quote }}
        {{- end }}
        {{- end }}
      resources:
        limits:
          nvidia.com/gpu: {{ $gpus }}
{{- if $isPdMode }}
  decoderConfig:
    runner:
      name: ome-container
      command:
        - python3
        - -m
        - sglang.launch_server
        - --model-path
        - $(MODEL_PATH)
        - --tp-size
        - "{{ $gpus }}"
        - --disaggregation-mode
        - decode
        {{- with $model.runtime.extraArgs }}{{- range . }}
        - {{ . | quote }}
        {{- end }}{{- end }}
{{- end }}
{{- end }}
{{- end }}
"""


def test_a_range_around_the_documents_does_not_hide_the_launches():
    result = lint(OME_LIKE, path="/repo/charts/ome-serving/templates/clusterservingruntime.yaml")
    assert result.format == "yaml"
    assert [l.kind for l in result.launches] == ["launch_server", "launch_server"]
    engine, decoder = result.launches
    texts = [t.text for t in engine.tokens]
    # the words the chart writes are known; a range around the whole document repeats the
    # document, not its words
    assert texts[:6] == ["--host", "0.0.0.0", "--port", "8080", "--model-path", None]
    assert texts[6:12] == ["--tp-size", None, "--mem-fraction-static", None,
                           "--disaggregation-mode", "prefill"]
    # `{{ with }}{{ range }}` items: any number of words
    assert engine.tokens[-1].text is None and engine.tokens[-1].splat
    assert [t.text for t in decoder.tokens][:2] == ["--model-path", None]
    assert decoder.tokens[-1].splat
    # unknown values are unknown, not errors; nothing is reported
    assert [f for f in result.findings if f.severity == Severity.ERROR] == []


def test_words_inside_a_range_of_the_list_may_be_any_number():
    text = ("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - name: s\n        command: [python3, -m, sglang.launch_server]\n        args:\n"
            "          - --model-path\n          - m\n          {{- range .Values.extraArgs }}\n"
            "          - {{ . | quote }}\n          {{- end }}\n")
    (launch,) = lint(text, path="/c/templates/d.yaml").launches
    assert [t.text for t in launch.tokens] == ["--model-path", "m", None]
    assert launch.tokens[-1].splat


@pytest.mark.parametrize("line", [
    "{{- include \"chart.extraArgs\" . | nindent 10 }}",
    "{{- toYaml .Values.extraArgs | nindent 10 }}",
    "{{- with .Values.extra }}{{ toYaml . | nindent 10 }}{{- end }}",
])
def test_lines_that_emit_words_are_an_unknown_stretch(line):
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n    command:\n"
            "          - python3\n          - -m\n          - sglang.launch_server\n"
            "          - --tp-size\n          - \"2\"\n          " + line + "\n")
    result = lint(text, path="/c/templates/pod.yaml")
    (launch,) = result.launches
    assert [t.text for t in launch.tokens][:2] == ["--tp-size", "2"]
    assert launch.tokens[-1].splat
    # --model-path may be among the emitted words: not reported missing
    assert not [f for f in result.findings if f.code == "SL011"]


# --- values.yaml -----------------------------------------------------------------------------


VALUES = """\
image:
  repository: lmsysorg/sglang
  tag: v0.4.9.post2
model: Qwen/Qwen3-8B
tp: 8
memFraction: 0.85
bigNumber: 1000000
backend: flash_infer
enableMetrics: false
withRadix: true
nothing:
empty: ""
extra:
  - --trust-remote-code
"""


def chart(tmp_path: Path, template: str, name: str = "deployment.yaml", values: str = VALUES) -> Path:
    (tmp_path / "templates").mkdir(exist_ok=True)
    (tmp_path / "values.yaml").write_text(values, encoding="utf-8")
    path = tmp_path / "templates" / name
    path.write_text(template, encoding="utf-8")
    return path


def container(*items: str) -> str:
    return ("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - name: sglang\n        image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n"
            "        command:\n" + "".join(f"        - {i}\n" for i in ("python3", "-m", "sglang.launch_server") + items))


def read(path: Path):
    return lint(path.read_text(encoding="utf-8"), path=str(path))


def test_values_are_substituted_where_the_launch_takes_them_literally(tmp_path):
    path = chart(tmp_path, container(
        "--model-path", "{{ .Values.model }}", "--tp-size", "{{ .Values.tp | quote }}",
        "--mem-fraction-static={{ .Values.memFraction }}", "--max-total-tokens",
        '"{{ .Values.bigNumber }}"', "--port", "{{ .Values.nothing | default 30000 | quote }}",
        "--chunked-prefill-size", "{{ default \"4096\" .Values.empty }}", "--page-size", "{{ .Values.tp | int }}"))
    result = read(path)
    (launch,) = result.launches
    assert [t.text for t in launch.tokens] == [
        "--model-path", "Qwen/Qwen3-8B", "--tp-size", "8", "--mem-fraction-static=0.85",
        # values.yaml numbers are float64 to Helm, printed with Go's %v
        "--max-total-tokens", "1e+06", "--port", "30000", "--chunked-prefill-size", "4096",
        "--page-size", "8"]
    # the image's release comes through values.yaml too
    assert launch.image is not None and launch.image[0] == "lmsysorg/sglang:v0.4.9.post2"
    assert result.releases[0].version == "0.4.9.post2"
    # 1e+06 is what SGLang receives: an invalid integer
    assert [f.code for f in result.findings if f.severity == Severity.ERROR] == ["SL006"]


@pytest.mark.parametrize("item", [
    "{{ .Values.missing }}",          # not in values.yaml: whoever installs sets it
    "{{ .Values.nothing }}",          # null
    "{{ .Values.extra }}",            # a list
    "{{ .Values.tp | add 1 }}",       # a function servelint does not model
    "{{ .Release.Name }}",            # not a value
    "{{ printf \"%d\" .Values.tp }}",
])
def test_values_the_chart_does_not_fix_stay_unknown(tmp_path, item):
    path = chart(tmp_path, container("--model-path", "m", "--tp-size", item))
    (launch,) = read(path).launches
    assert [t.text for t in launch.tokens] == ["--model-path", "m", "--tp-size", None]


def test_dot_is_not_the_root_inside_range_and_with(tmp_path):
    template = container("--model-path", "m") + (
        "        {{- with .Values.image }}\n        - --served-model-name\n        - {{ .Values.model }}\n"
        "        - --tokenizer-path\n        - {{ $.Values.model }}\n        {{- end }}\n")
    (launch,) = read(chart(tmp_path, template)).launches
    assert [t.text for t in launch.tokens] == ["--model-path", "m", "--served-model-name", None,
                                               "--tokenizer-path", "Qwen/Qwen3-8B"]


def test_define_blocks_get_values_only_when_every_include_passes_the_root(tmp_path):
    helpers = ('{{- define "c.cmd" -}}\n- python3\n- -m\n- sglang.launch_server\n- --model-path\n'
               '- {{ .Values.model }}\n- --tp-size\n- {{ .Values.tp | quote }}\n{{- end }}\n'
               '{{- define "c.other" -}}\n- python3\n- -m\n- sglang.launch_server\n- --tp-size\n'
               '- {{ .Values.tp | quote }}\n{{- end }}\n')
    path = chart(tmp_path, helpers, "_helpers.tpl")
    (tmp_path / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    command:\n"
        "    {{- include \"c.cmd\" . | nindent 4 }}\n  - name: b\n    command:\n"
        "    {{- include \"c.other\" (dict \"Values\" .Values.sub) | nindent 4 }}\n", encoding="utf-8")
    first, second = read(path).launches
    assert [t.text for t in first.tokens] == ["--model-path", "Qwen/Qwen3-8B", "--tp-size", "8"]
    # c.other is given another dict: its `.Values` is not the chart's
    assert [t.text for t in second.tokens] == ["--tp-size", None]


def test_branches_the_values_leave_out_are_not_read(tmp_path):
    template = container("--model-path", "m") + (
        "        {{- if .Values.enableMetrics }}\n        - --enable-metrics\n        {{- else }}\n"
        "        - --log-level\n        - warning\n        {{- end }}\n"
        "        {{- if not .Values.withRadix }}\n        - --disable-radix-cache\n        {{- end }}\n"
        "        {{- if .Values.notInValues }}\n        - --trust-remote-code\n        {{- end }}\n")
    (launch,) = read(chart(tmp_path, template)).launches
    # enableMetrics is false, withRadix true; notInValues is unknown: its branch stays
    assert [t.text for t in launch.tokens] == ["--model-path", "m", "--log-level", "warning",
                                               "--trust-remote-code"]


def test_findings_about_a_value_point_into_values_yaml(tmp_path):
    path = chart(tmp_path, container("--model-path", "m", "--attention-backend", "{{ .Values.backend }}"))
    result = read(path)
    (launch,) = result.launches
    assert isinstance(launch.host, ValuesHost)
    (finding,) = [f for f in result.findings if f.code == "SL007"]
    # engine.lint relates it (no call here): one place, in values.yaml.
    (where,) = [r for r in finding.related if r.path is not None]
    assert where.path == str(tmp_path / "values.yaml")
    values = VALUES.splitlines()
    line = next(i for i, l in enumerate(values) if l.startswith("backend:"))
    assert where.range == (line, len("backend: "), line, len("backend: flash_infer"))
    assert ".Values.backend is flash_infer in values.yaml" in where.message
    # the value is set in values.yaml: no fix rewrites the template's action
    text = path.read_text(encoding="utf-8")
    action = text.index("{{ .Values.backend }}")
    for fix in finding.fixes:
        for edit in fix.edits:
            assert not (edit.span.start < action + 20 and action < edit.span.end)
    # findings about other words get no values.yaml place
    other = [f for f in result.findings if f.code != "SL007"]
    relate_values(other, launch.host)
    assert all(r.path is None for f in other for r in f.related)


def test_values_inside_a_script(tmp_path):
    template = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n"
                "    command: [bash, -c]\n    args:\n    - |\n"
                "      python3 -m sglang.launch_server --model-path {{ .Values.model }} \\\n"
                "        --tp-size {{ .Values.tp }} --port {{ .Values.unset }}\n")
    path = chart(tmp_path, template)
    text = path.read_text(encoding="utf-8")
    (launch,) = read(path).launches
    assert [t.text for t in launch.tokens] == ["--model-path", "Qwen/Qwen3-8B", "--tp-size", "8",
                                               "--port", None]
    tp = launch.tokens[3]
    assert text[tp.span.start:tp.span.end] == "{{ .Values.tp }}"


def test_no_values_outside_a_chart(tmp_path):
    (tmp_path / "values.yaml").write_text(VALUES, encoding="utf-8")
    path = tmp_path / "deployment.yaml"  # not under templates/
    path.write_text(container("--model-path", "{{ .Values.model }}"), encoding="utf-8")
    (launch,) = read(path).launches
    assert [t.text for t in launch.tokens] == ["--model-path", None]


@pytest.mark.parametrize("value, printed", [
    (8, "8"), (0.85, "0.85"), (999999, "999999"), (1000000, "1e+06"), (1234567, "1.234567e+06"),
    (0.0001, "0.0001"), (0.00001, "1e-05"), (-3, "-3"), (2.5e21, "2.5e+21"), (0, "0"),
])
def test_numbers_print_as_helm_prints_them(value, printed):
    assert go_float(float(value)) == printed


def test_lookups_the_grammar_reads():
    assert parse_lookup('.Values.a.b | quote').keys == ("a", "b")
    assert parse_lookup('$.Values.a').dollar
    assert parse_lookup('index .Values "a-b" "c"').keys == ("a-b", "c")
    assert parse_lookup('default "x" .Values.a').default == "x"
    assert parse_lookup('.Values.a | default 3 | quote').quote == '"'
    for body in ('.Values.a | upper', 'include "x" .', '.Values.a | default (.Values.b)', 'tpl .Values.a .'):
        assert parse_lookup(body) is None


# --- `helm template` output ---------------------------------------------------------------------

RENDERED = """\
---
# Source: sglang/templates/hpa.yaml
---
# Source: sglang/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: sglang
spec:
  ports:
    - port: 30000
---
# Source: sglang/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang
spec:
  template:
    spec:
      containers:
        - name: sglang
          image: "lmsysorg/sglang:v0.5.2"
          command:
            - python3
            - -m
            - sglang.launch_server
          args:
            - --model-path
            - "Qwen/Qwen3-8B"
            - --tp-size
            - "8"
            - --tp_size
            - "8"
---
# Source: sglang/templates/worker.yaml
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: sglang-pd
spec:
  leaderWorkerTemplate:
    workerTemplate:
      spec:
        containers:
          - name: worker
            image: lmsysorg/sglang:latest
            command:
              - python3
              - -m
              - sglang.launch_server
              - --model-path
              - "Qwen/Qwen3-8B"
              - --dist-init-addr
              - $(LWS_LEADER_ADDRESS):20000
"""


@pytest.mark.parametrize("path", [None, "rendered.yaml"])
def test_rendered_output_is_read_as_yaml(path):
    assert detect_format(path, None, RENDERED) == "yaml"
    result = lint(RENDERED, path=path, fmt="yaml")
    first, second = result.launches
    assert [t.text for t in first.tokens][:4] == ["--model-path", "Qwen/Qwen3-8B", "--tp-size", "8"]
    assert first.image is not None and first.image[0] == "lmsysorg/sglang:v0.5.2"
    assert [t.text for t in second.tokens] == ["--model-path", "Qwen/Qwen3-8B", "--dist-init-addr", None]
    (wrong,) = [f for f in result.findings if f.severity == Severity.ERROR]
    assert RENDERED[wrong.span.start:wrong.span.end] == "--tp_size"
