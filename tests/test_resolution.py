"""Rules see a launch as SGLang's resolution sees it (rules/normalize.yaml, resolve.py), and
a verdict that depends on the environment, the model or the GPU becomes a warning that
names the condition, or an error / nothing where the file settles it."""

import json
from pathlib import Path

import pytest
import yaml

from servelint.edits import apply_edits
from servelint.engine import lint
from servelint.settings import Settings

PACK = """
- id: t-sidecar
  code: T1
  errorMessage: "--sidecar requires --grpc-port or SGLANG_GRPC_PORT."
  sglangTemplate: "--sidecar requires --grpc-port or SGLANG_GRPC_PORT (sidecar {--sidecar})."
  messageTemplate: "--sidecar {--sidecar} needs a gRPC port to talk to. Add --grpc-port."
  condition:
    all:
    - present: --sidecar
    - absent: --grpc-port
    - {env: SGLANG_GRPC_PORT, set: false}
- id: t-spec
  code: T2
  errorMessage: x
  messageTemplate: "algorithm {--speculative-algorithm} with attention DP {--attn-dp-size}, dp {--dp-size}."
  condition:
    all:
    - {option: --speculative-algorithm, eq: EAGLE}
    - {option: --attn-dp-size, gt: 1}
  fixes:
  - title: Set --attn-dp-size 1
    edits: [{set: --attn-dp-size, value: 1}]
    preferred: true
- id: t-replicas
  code: T4
  errorMessage: x
  messageTemplate: "replicas {--dp-size}."
  condition: {option: --dp-size, gt: 1}
- id: t-gpu
  code: T3
  errorMessage: x
  messageTemplate: "kv {--kv-cache-dtype}. Remove it."
  condition:
    all:
    - {option: --kv-cache-dtype, eq: fp8_e5m2}
    - not: {gpu: [sm100, sm103]}
- id: t-gpu-rare
  code: T9
  errorMessage: x
  messageTemplate: "kv {--kv-cache-dtype} on sm120. Remove it."
  condition:
    all:
    - {option: --kv-cache-dtype, eq: fp8_e5m2}
    - gpu: [sm120]
- id: t-model
  code: T5
  errorMessage: x
  messageTemplate: "two-batch overlap without attention DP. Set --attn-dp-size."
  condition:
    all:
    - {option: --enable-two-batch-overlap, truthy: true}
    - not: {model: {architecture: [DeepseekV3ForCausalLM, Qwen3MoeForCausalLM]}}
"""


@pytest.fixture
def project(tmp_path):
    rules = tmp_path / ".servelint" / "rules"
    rules.mkdir(parents=True)
    (rules / "t.yaml").write_text(PACK)
    return tmp_path


def run(project, name, text, gpu=None):
    path = project / name
    path.write_text(text)
    result = lint(text, path=str(path), settings=Settings(gpu=gpu))
    return result, [f for f in result.findings if f.code.startswith("T")]


LAUNCH = "python3 -m sglang.launch_server --model-path m "


@pytest.mark.parametrize("spelling", ["eagle", "Eagle", "EAGLE", "nextn", "NextN"])
def test_values_are_normalised_as_sglang_does(project, spelling):
    _, got = run(project, "a.sh", LAUNCH + f"--speculative-algorithm {spelling} --attn-dp-size 2 --tp-size 2\n")
    assert [f.code for f in got] == ["T2"]
    assert got[0].message == "algorithm EAGLE with attention DP 2, dp 1."


def test_other_values_are_not_normalised_into_a_match(project):
    _, got = run(project, "a.sh", LAUNCH + "--speculative-algorithm eagle3 --attn-dp-size 2 --tp-size 2\n")
    assert got == []


def test_deprecated_dp_attention_spelling_reads_as_attn_dp_size(project):
    text = LAUNCH + "--speculative-algorithm EAGLE --enable-dp-attention --dp-size 2 --tp-size 2\n"
    result, got = run(project, "a.sh", text)
    assert [f.code for f in got] == ["T2"]  # not T4: --dp-size 2 counts attention DP here
    # The message quotes the derived option and says which of the launch's words it came from.
    assert got[0].message == ("algorithm EAGLE with attention DP 2, dp 1. (SGLang derives --attn-dp-size 2 "
                              "from this launch's --dp-size 2 --enable-dp-attention.)")
    # The fix to --attn-dp-size is written in the launch's own spelling: the deprecated pair goes.
    (fix,) = got[0].fixes
    fixed = apply_edits(text, fix.edits)
    assert fixed.split() == (LAUNCH + "--speculative-algorithm EAGLE --tp-size 2").split()
    assert not [f for f in lint(fixed, path=str(project / "a.sh")).findings if f.code == "T2"]


def test_replicas_without_the_deprecated_flag_stay_replicas(project):
    _, got = run(project, "a.sh", LAUNCH + "--dp-size 2\n")
    assert [f.code for f in got] == ["T4"]
    # --attn-dp-size written next to the deprecated flag: the flag adds nothing, dp stays.
    _, got = run(project, "a.sh", LAUNCH + "--enable-dp-attention --attn-dp-size 2 --dp-size 2 --tp-size 4\n")
    assert sorted(f.code for f in got) == ["T4"]


def test_unknown_dp_size_keeps_attention_dp_unknown(project):
    _, got = run(project, "a.sh", LAUNCH + "--speculative-algorithm EAGLE --enable-dp-attention --dp-size $DP\n")
    assert got == []


def test_environment_dependency_is_a_warning_that_names_it(project):
    result, (f,) = run(project, "a.sh", LAUNCH + "--sidecar ./agent\n")
    assert f.severity == 2
    assert f.message.startswith("--sidecar ./agent needs a gRPC port to talk to. Add --grpc-port.")
    assert "SGLang refuses this unless SGLANG_GRPC_PORT is set" in f.message
    assert f.sglang == "--sidecar requires --grpc-port or SGLANG_GRPC_PORT (sidecar ./agent)."


@pytest.mark.parametrize("text", [
    "SGLANG_GRPC_PORT=50051 " + LAUNCH + "--sidecar x\n",
    "export SGLANG_GRPC_PORT=50051\n" + LAUNCH + "--sidecar x\n",
    "export A=1 SGLANG_GRPC_PORT=\"$PORT\"\n" + LAUNCH + "--sidecar x\n",
    "env SGLANG_GRPC_PORT=1 " + LAUNCH + "--sidecar x\n",
])
def test_shell_environment_settles_it(project, text):
    _, got = run(project, "a.sh", text)
    assert got == []


def test_unset_after_export_brings_the_warning_back(project):
    _, got = run(project, "a.sh", "export SGLANG_GRPC_PORT=1\nunset SGLANG_GRPC_PORT\n" + LAUNCH + "--sidecar x\n")
    assert [f.severity for f in got] == [2]


K8S = """apiVersion: v1
kind: Pod
spec:
  containers:
  - name: a
    image: lmsysorg/sglang:v0.5.23
    command: [python3, -m, sglang.launch_server, --model-path, m, --sidecar, x]
{env}"""


@pytest.mark.parametrize("env, want", [
    ("    env:\n    - {name: HF_TOKEN, value: t}\n", [1]),  # the whole environment: unset -> error
    ("", [1]),  # no env at all: nothing sets it
    ("    env:\n    - {name: SGLANG_GRPC_PORT, value: \"50051\"}\n", []),
    ("    env:\n    - name: SGLANG_GRPC_PORT\n      valueFrom: {configMapKeyRef: {name: c, key: k}}\n", []),
    ("    envFrom:\n    - configMapRef: {name: c}\n", [2]),  # may come from the ConfigMap
])
def test_kubernetes_env_settles_it(project, env, want):
    _, got = run(project, "pod.yaml", K8S.format(env=env))
    assert [f.severity for f in got] == want


@pytest.mark.parametrize("env, want", [
    ("    environment:\n      HF_TOKEN: t\n", [1]),
    ("    environment:\n      SGLANG_GRPC_PORT: 50051\n", []),
    ("    environment:\n      - SGLANG_GRPC_PORT=50051\n", []),
    ("    environment:\n      - SGLANG_GRPC_PORT\n", [2]),  # the host's value, if any
    ("    env_file: .env\n", [2]),
])
def test_compose_environment_settles_it(project, env, want):
    text = ("services:\n  sglang:\n    image: lmsysorg/sglang:v0.5.23\n"
            "    command: python3 -m sglang.launch_server --model-path m --sidecar x\n" + env)
    _, got = run(project, "compose.yaml", text)
    assert [f.severity for f in got] == want


def test_launch_json_env_settles_it(project):
    cfg = {"version": "0.2.0", "configurations": [{
        "name": "a", "type": "debugpy", "request": "launch", "module": "sglang.launch_server",
        "args": ["--model-path", "m", "--sidecar", "x"], "env": {"SGLANG_GRPC_PORT": "1"}}]}
    (project / ".vscode").mkdir()
    _, got = run(project, ".vscode/launch.json", json.dumps(cfg))
    assert got == []
    del cfg["configurations"][0]["env"]
    _, got = run(project, ".vscode/launch.json", json.dumps(cfg))
    assert [f.severity for f in got] == [2]


def test_gpu_dependency(project):
    """Refused unless the GPU is one of a few: a warning until the `gpu` setting says.
    Refused only on one GPU generation: nothing until the setting names it."""
    text = LAUNCH + "--kv-cache-dtype fp8_e5m2\n"
    (_, (f,)) = run(project, "a.sh", text)
    assert f.code == "T3" and f.severity == 2
    assert "SGLang refuses this unless the GPU is sm100 or sm103" in f.message
    assert "`gpu` setting" in f.message
    _, got = run(project, "a.sh", text, gpu="sm90")
    assert [(g.code, g.severity, g.message) for g in got] == [("T3", 1, "kv fp8_e5m2. Remove it.")]
    _, got = run(project, "a.sh", text, gpu="sm100")
    assert got == []
    _, got = run(project, "a.sh", text, gpu="sm120")
    assert sorted(g.code for g in got) == ["T3", "T9"]


def test_model_dependency(project):
    (_, (f,)) = run(project, "a.sh", LAUNCH + "--enable-two-batch-overlap\n")
    assert f.severity == 2
    assert ("SGLang refuses this unless the model's architecture is one of DeepseekV3ForCausalLM, "
            "Qwen3MoeForCausalLM") in f.message


def test_normalize_data_names_real_options_and_sources():
    from servelint.catalog import load_catalog
    from servelint.rules.resolve import _data, normalizer
    data = _data()
    cat = load_catalog("0.5.23")
    for name in data["values"]:
        assert cat.lookup(name) is not None, name
    norm = normalizer(cat)
    assert len(norm.steps) == len(data["steps"])  # every step parses against 0.5.23
    for step in data["steps"]:
        assert step["source"].startswith("sglang/srt/")
    for spec in data["values"].values():
        assert spec["source"].startswith("sglang/srt/")


def test_condition_errors_for_new_atoms():
    from servelint.catalog import load_catalog
    from servelint.rules.condition import ConditionError, parse_condition
    cat = load_catalog("0.5.23")
    for raw, msg in [({"env": "1BAD", "set": True}, "environment variable name"),
                     ({"env": "X", "set": "yes"}, "true or false"),
                     ({"env": "X", "gt": 1}, "an env test takes"),
                     ({"model": {"family": ["x"]}}, "architecture"),
                     ({"model": {"architecture": []}}, "list of names")]:
        with pytest.raises(ConditionError, match=msg):
            parse_condition(raw, cat)


def test_a_local_model_folder_settles_the_model(project):
    folder = project / "models" / "ds"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"],
                                                    "model_type": "deepseek_v3"}))
    llama = project / "models" / "llama"
    llama.mkdir()
    (llama / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    _, got = run(project, "a.sh", "python3 -m sglang.launch_server --model-path models/ds --enable-two-batch-overlap\n")
    assert got == []  # one of the model families SGLang lets through
    _, got = run(project, "a.sh", "python3 -m sglang.launch_server --model-path models/llama --enable-two-batch-overlap\n")
    assert [(f.severity, f.message) for f in got] == [(1, "two-batch overlap without attention DP. Set --attn-dp-size.")]
    (project / "models" / "bad").mkdir()
    (project / "models" / "bad" / "config.json").write_text("{not json")
    _, got = run(project, "a.sh", "python3 -m sglang.launch_server --model-path models/bad --enable-two-batch-overlap\n")
    assert [f.severity for f in got] == [2]


def test_a_fifo_as_config_json_is_not_read(project):
    import os
    folder = project / "models" / "fifo"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "config.json")
    _, got = run(project, "a.sh", "python3 -m sglang.launch_server --model-path models/fifo --enable-two-batch-overlap\n")
    assert [f.severity for f in got] == [2]


@pytest.mark.parametrize("prefix, want", [
    ("SGLANG_ENABLE_PP_SPEC=1 ", [1]), ("SGLANG_ENABLE_PP_SPEC=Yes ", [1]),
    ("SGLANG_ENABLE_PP_SPEC=0 ", []), ("SGLANG_ENABLE_PP_SPEC=false ", []),
    # refused only when an opt-in variable is on: silent while the file does not say
    ("SGLANG_ENABLE_PP_SPEC=$X ", []), ("", []),
])
def test_boolean_environment_variables_read_as_sglang_reads_them(project, prefix, want):
    (project / ".servelint" / "rules" / "b.yaml").write_text("""
- id: t-bool
  code: T6
  errorMessage: x
  messageTemplate: pp {--pp-size}. Unset SGLANG_ENABLE_PP_SPEC.
  condition:
    all:
    - {option: --pp-size, gt: 1}
    - {env: SGLANG_ENABLE_PP_SPEC, truthy: true}
""")
    _, got = run(project, "a.sh", prefix + LAUNCH + "--pp-size 2\n")
    assert [f.severity for f in got if f.code == "T6"] == want


def test_device_index_is_cut_and_written_reads_before_steps(project):
    (project / ".servelint" / "rules" / "d.yaml").write_text("""
- id: t-dev
  code: T7
  errorMessage: x
  messageTemplate: device {--device}. Use cuda.
  condition: {option: --device, eq: cuda}
- id: t-written
  code: T8
  errorMessage: x
  messageTemplate: written dp. Remove it.
  condition:
    value: {written: --dp-size}
    gt: 1
""")
    _, got = run(project, "a.sh", LAUNCH + "--device cuda:1\n")
    assert [(f.code, f.message) for f in got] == [("T7", "device cuda. Use cuda.")]
    # --dp-size 2 with the deprecated flag reads as dp 1 after the step, 2 before it
    _, got = run(project, "a.sh", LAUNCH + "--enable-dp-attention --dp-size 2 --tp-size 2\n")
    assert [f.code for f in got] == ["T8"]


def test_written_needs_an_option():
    from servelint.catalog import load_catalog
    from servelint.rules.condition import ConditionError, parse_condition
    with pytest.raises(ConditionError, match="written: expected an option name"):
        parse_condition({"value": {"written": 3}, "gt": 1}, load_catalog("0.5.23"))


def test_a_rule_that_holds_through_its_environment_branch_is_found(project):
    """The rule index must not skip a rule whose condition can hold through an
    environment test alone (one branch of an `any`)."""
    (project / ".servelint" / "rules" / "i.yaml").write_text("""
- id: t-index
  code: T10
  errorMessage: x
  messageTemplate: grpc server on {--port}. Unset SGLANG_X_GRPC.
  condition:
    any:
    - present: --grpc-port
    - {env: SGLANG_X_GRPC, set: true}
""")
    _, got = run(project, "a.sh", "SGLANG_X_GRPC=1 " + LAUNCH + "--use-ray\n")
    assert [f.code for f in got] == ["T10"]
    _, got = run(project, "a.sh", LAUNCH + "--use-ray --grpc-port 5\n")
    assert [f.code for f in got] == ["T10"]
    _, got = run(project, "a.sh", LAUNCH + "--use-ray\n")
    assert got == []  # refused only when the opt-in variable is on: silent until shown


def test_either_of_two_dependencies_is_enough(project):
    (project / ".servelint" / "rules" / "e.yaml").write_text("""
- id: t-either
  code: T11
  errorMessage: x
  messageTemplate: mla on {--attention-backend}. Use another backend.
  condition:
    all:
    - {option: --attention-backend, eq: trtllm_mla}
    - any:
      - not: {model: {architecture: [DeepseekV3ForCausalLM]}}
      - not: {gpu: [sm100, sm103]}
""")
    (_, got) = run(project, "a.sh", LAUNCH + "--attention-backend trtllm_mla\n")
    assert [f.severity for f in got] == [2]
    assert "SGLang refuses this unless" in got[0].message
    _, got = run(project, "a.sh", LAUNCH + "--attention-backend trtllm_mla\n", gpu="sm90")
    assert [f.severity for f in got] == [1]


def test_load_balance_method_auto_resolves_by_disaggregation_mode(project):
    (project / ".servelint" / "rules" / "l.yaml").write_text("""
- id: t-lbm
  code: T12
  errorMessage: x
  messageTemplate: load balance {--load-balance-method}. Set --load-balance-method round_robin.
  condition: {option: --load-balance-method, eq: follow_bootstrap_room}
""")
    _, got = run(project, "a.sh", LAUNCH + "--disaggregation-mode prefill\n")
    assert [f.message for f in got] == ["load balance follow_bootstrap_room. Set --load-balance-method round_robin. "
                                        "(SGLang derives --load-balance-method follow_bootstrap_room from this "
                                        "launch's --disaggregation-mode prefill.)"]
    # Written as auto, the option is the launch's own: its message needs no note.
    _, got = run(project, "a.sh", LAUNCH + "--disaggregation-mode prefill --load-balance-method auto\n")
    assert [f.message for f in got] == ["load balance follow_bootstrap_room. Set --load-balance-method round_robin."]
    _, got = run(project, "a.sh", LAUNCH + "--disaggregation-mode decode\n")
    assert got == []
    _, got = run(project, "a.sh", LAUNCH + "--disaggregation-mode prefill --load-balance-method round_robin\n")
    assert got == []


def test_a_long_model_list_is_cut_in_the_message():
    """A warning naming more models than a sentence can hold names the first few and says
    how many more the rule's page lists; a short list is named in full."""
    from servelint.rules.condition import SHOWN_NAMES, Model, describe
    many = tuple(f"Arch{i}ForCausalLM" for i in range(40))
    said = describe(Model("architecture", many), True)
    assert said.startswith("the model's architecture is one of Arch0ForCausalLM, ")
    assert f"Arch{SHOWN_NAMES - 1}ForCausalLM (or {40 - SHOWN_NAMES} more the rule's page lists)" in said
    assert f"Arch{SHOWN_NAMES}ForCausalLM" not in said
    few = tuple(many[:SHOWN_NAMES + 1])
    assert describe(Model("architecture", few), False).endswith(", ".join(few))


def test_an_invalid_choice_is_not_a_value_rules_read(project):
    """argparse stops at a value outside the option's choices (SL007 says so); a rule that
    compares the option does not read it as if SGLang had gone on."""
    (project / ".servelint" / "rules" / "c.yaml").write_text("""
- id: t-choice
  code: T13
  errorMessage: x
  messageTemplate: backend {--attention-backend} is not fa3. Use fa3.
  condition: {option: --attention-backend, ne: fa3}
""")
    result, got = run(project, "a.sh", LAUNCH + "--attention-backend flash_infer\n")
    assert got == [] and [f.code for f in result.findings] == ["SL007"]
    _, got = run(project, "a.sh", LAUNCH + "--attention-backend flashinfer\n")
    assert [f.message for f in got] == ["backend flashinfer is not fa3. Use fa3."]
