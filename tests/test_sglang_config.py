"""SGLang's own --config files: read the way SGLang reads them, and merged into a launch."""

import os
from pathlib import Path

import pytest
import yaml

from servelint.catalog import load_catalog
from servelint.engine import detect_format, fix_all_text, lint
from servelint.edits import apply_edits
from servelint.extract.sglang_config import config_tokens

CAT = load_catalog()
GOLDEN = Path(__file__).parent / "golden" / "sglang-config"


def words(text):
    toks, findings = config_tokens(text, CAT)
    return [t.text for t in toks], [f.message for f in findings]


def test_words_as_sglang_makes_them():
    got, problems = words(
        "tp-size: 2\ntrust-remote-code: true\nenable-metrics: false\nis-embedding: yes\n"
        "cuda-graph-bs-decode: [1, 2]\nlora-target-modules: []\n"
        "json-model-override-args: {a: {b: 1}}\nquantization-param-path: null\n"
        "mem-fraction-static: 0.8\ndisable-radix-cache: no\n")
    assert problems == []
    assert got == ["--tp-size", "2", "--trust-remote-code", "--is-embedding",
                   "--cuda-graph-bs-decode", "1", "2",
                   "--json-model-override-args", '{"a": {"b": 1}}',
                   "--quantization-param-path", "None", "--mem-fraction-static", "0.8"]


def test_keys_are_used_as_written():
    got, _ = words("tp_size: 2\ntrust_remote_code: true\n")
    # SGLang writes --tp_size and --trust_remote_code, which its parser rejects.
    assert got == ["--tp_size", "2", "--trust_remote_code"]
    codes = [f.code for f in lint("tp_size: 2\ntrust_remote_code: true\n", path="c.yaml").findings]
    assert codes == ["SL002", "SL002"]


def test_options_sglang_refuses_in_a_config_file():
    _, problems = words("enable-tf32-matmul: true\ndisable-cuda-graph: true\nlora-paths: [a]\n"
                        "monokernel-backend: amd\n")
    assert problems == [
        "Unsupported config option 'enable_tf32_matmul' with action 'BooleanOptionalAction' "
        "(SGLang cannot take --enable-tf32-matmul from a config file; pass it on the command line)",
        "Unsupported config option 'disable_cuda_graph' with action 'DeprecatedStoreTrueAction' "
        "(SGLang cannot take --disable-cuda-graph from a config file; pass it on the command line)",
        "Unsupported config option 'lora_paths' with action 'LoRAPathAction' "
        "(SGLang cannot take --lora-paths from a config file; pass it on the command line)",
    ]


def test_non_switch_booleans_become_words():
    got, _ = words("enable-multimodal: true\n")
    assert got[:1] == ["--enable-multimodal"]
    got, _ = words("log-requests: false\n")
    assert got == []


def test_detection_by_content():
    assert detect_format("srv.yaml", None, "tp-size: 2\nport: 30000\nmodel-path: m\n") == "sglang-config"
    assert detect_format("srv.yml", None, "# comment\ntp_size: 2\n") == "sglang-config"
    assert detect_format("deploy.yaml", None, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {}\n") != "sglang-config"
    assert detect_format("compose.yaml", None, "services:\n  sglang:\n    image: x\n") != "sglang-config"


def test_broken_config_files():
    assert [f.code for f in lint("- tp-size: 2\n", path="c.yaml", fmt="sglang-config").findings] == ["SL091"]
    assert [f.code for f in lint("tp-size: [2\n", path="c.yaml", fmt="sglang-config").findings] == ["SL091"]
    assert lint("", path="c.yaml", fmt="sglang-config").findings == []
    assert "SL011" not in [f.code for f in lint("tp-size: 2\n", path="c.yaml").findings]


def test_fixed_golden_configs_still_load():
    for fixed in GOLDEN.glob("*.fixed"):
        yaml.safe_load(fixed.read_text())


def test_fix_all_keeps_a_valid_config():
    text = ("model-path: m\ntp_size: 2\nis-embedding: true\nchunked-prefill-size: -1\n"
            "prefill-only-disable-kv-cache: true\nenable-hisparse: true\n")
    fixed, _ = fix_all_text(text, "c.yaml")
    data = yaml.safe_load(fixed)
    assert data == {"model-path": "m", "tp-size": 2, "is-embedding": True, "chunked-prefill-size": -1,
                    "prefill-only-disable-kv-cache": True, "disable-radix-cache": True}


# --- a launch that names a config file -----------------------------------------------------


@pytest.fixture
def project(tmp_path):
    (tmp_path / "server.yaml").write_text(
        "model-path: BAAI/bge-large-en-v1.5\nis-embedding: true\nchunked-prefill-size: -1\n"
        "disable-radix-cache: true\nprefill-only-disable-kv-cache: true\ntp-size: 2\n"
        "attention-backend: flash_infer\n")
    return tmp_path


def lint_script(project, body):
    path = project / "run.sh"
    path.write_text(body)
    return lint(body, path=str(path))


def test_conflict_between_a_flag_and_a_config_key_points_at_both_files(project):
    result = lint_script(project, "python3 -m sglang.launch_server --config server.yaml \\\n"
                                  "  --enable-hisparse\n")
    (f,) = [x for x in result.findings if x.code == "SL101"]
    assert result.text[f.span.start:f.span.end] == "--enable-hisparse"
    (rel,) = f.related
    assert rel.path == str(project / "server.yaml") and rel.range == (4, 0, 4, 29)
    assert [x.title for x in f.fixes] == ["Remove --enable-hisparse"]  # the config side is not edited here
    fixed = apply_edits(result.text, f.fixes[0].edits)
    # what is left is the file's own (its invalid attention backend), on the --config value
    left = lint_script(project, fixed).findings
    assert left and all(x.code != "SL101" and fixed[x.span.start:x.span.end] == "server.yaml" for x in left)


def test_command_line_wins_and_is_not_a_duplicate(project):
    result = lint_script(project, "python3 -m sglang.launch_server --config server.yaml --tp-size 4\n")
    # tp-size from both is no duplicate; the file's own bad value shows on the --config value
    # (a CI run that lints only the script still sees it) and points at its line in the file
    (f,) = [x for x in result.findings if x.code == "SL007"]
    assert result.text[f.span.start:f.span.end] == "server.yaml"
    assert f.message.startswith("server.yaml: argument --attention-backend: invalid choice")
    assert (str(project / "server.yaml"), (6, 19, 6, 30)) in [(r.path, r.range) for r in f.related]
    assert f.fixes == []  # the file is edited in the file, not from here
    assert all(result.text[x.span.start:x.span.end] == "server.yaml" for x in result.findings)
    parsed = result.parsed[0]
    assert parsed.last_use("tp_size").values[0].text == "4"
    assert parsed.uses_of("model_path")  # the model comes from the file: no SL011


def test_config_written_with_equals_is_ignored_by_sglang(project):
    result = lint_script(project, "python3 -m sglang.launch_server --model-path m --config=server.yaml\n")
    (f,) = result.findings
    assert f.code == "SL092"
    fixed = apply_edits(result.text, f.fixes[0].edits)
    assert "--config server.yaml" in fixed


def test_unknown_or_missing_config_keeps_rules_silent(project):
    assert lint_script(project, 'python3 -m sglang.launch_server --config "$CFG" --port 1\n').findings == []
    assert lint_script(project, "python3 -m sglang.launch_server --config elsewhere.yaml --port 1\n").findings == []
    result = lint_script(project, "python3 -m sglang.launch_server --config a.yaml --config b.yaml\n")
    assert [f.message for f in result.findings] == ["Multiple config files specified! Only one allowed."]
    result = lint_script(project, "python3 -m sglang.launch_server --model-path m --config server.json\n")
    assert [f.message for f in result.findings] == ["Config file must be YAML format, got: .json"]


def test_problems_that_stop_sglang_reading_the_file_show_on_the_launch(project):
    (project / "server.yaml").write_text("enable-tf32-matmul: true\nmodel-path: m\n")
    result = lint_script(project, "python3 -m sglang.launch_server --config server.yaml\n")
    assert [(f.code, f.message.split(":")[0]) for f in result.findings] == [("SL093", "server.yaml")]
