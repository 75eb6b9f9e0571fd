"""Custom resources that keep a launch's command apart from its arguments (yaml_crds): the
table's kinds (llmaz BackendRuntime), RoleBasedGroup templates patched per leader and worker,
runtimes another object completes (KServe/OME ServingRuntime), and the generic rule for other
kinds. Arguments that cannot be found are unknown, never missing. Kubernetes containers
(`command` + `args`) stay one launch each."""

from __future__ import annotations

import pytest

from servelint.engine import lint
from servelint.extract import yaml_crds
from servelint.model import Severity

BACKEND_RUNTIME = """\
apiVersion: inference.llmaz.io/v1alpha1
kind: BackendRuntime
metadata:
  name: sglang
spec:
  command:
    - python3
    - -m
    - sglang.launch_server
  image: lmsysorg/sglang
  version: v0.4.5-cu121
  envs:
    - name: SGLANG_X
      value: "1"
  recommendedConfigs:
    - name: default
      args:
        - --model-path
        - "{{ .ModelPath }}"
        - --served-model-name
        - "{{ .ModelName }}"
        - --port
        - "8080"
      sharedMemorySize: 2Gi
    - name: speculative
      args:
        - --model-path
        - "{{ .ModelPath }}"
        - --tp_size
        - "2"
"""


def codes(result, severity=None):
    return [f.code for f in result.findings if severity is None or f.severity == severity]


def test_backend_runtime_is_one_launch_per_recommended_config():
    result = lint(BACKEND_RUNTIME, path="/r/backend.yaml")
    default, speculative = result.launches
    assert [t.text for t in default.tokens] == ["--model-path", None, "--served-model-name", None,
                                                "--port", "8080"]
    assert [t.text for t in speculative.tokens] == ["--model-path", None, "--tp_size", "2"]
    # the command is shared, written once
    assert default.entry.span == speculative.entry.span
    assert "SL011" not in codes(result)
    (wrong,) = [f for f in result.findings if f.severity == Severity.ERROR]
    assert BACKEND_RUNTIME[wrong.span.start:wrong.span.end] == "--tp_size"
    # image and version are kept apart too
    assert default.image is not None and default.image[0] == "lmsysorg/sglang:v0.4.5-cu121"
    assert result.releases[0].version.startswith("0.4.5")
    assert default.env == {"SGLANG_X": "1"}


def test_backend_runtime_without_configs_has_unknown_arguments():
    text = BACKEND_RUNTIME.split("  recommendedConfigs:")[0]
    result = lint(text, path="/r/backend.yaml")
    (launch,) = result.launches
    assert launch.tokens and launch.tokens[-1].splat and launch.tokens[-1].text is None
    assert "SL011" not in codes(result)


def test_the_table_names_its_kinds_and_paths():
    (split,) = [s for s in yaml_crds.SPLITS if s.kind == "BackendRuntime"]
    assert (split.command, split.args) == ("spec.command", "spec.recommendedConfigs[].args")


# --- the generic rule -------------------------------------------------------------------------


@pytest.mark.parametrize("sibling, expected", [
    ("  extraArgs: [--model-path, /m, --tp-size, \"2\"]\n", [["--model-path", "/m", "--tp-size", "2"]]),
    ("  serverArguments:\n  - --model-path\n  - /m\n", [["--model-path", "/m"]]),
    ("  profiles:\n  - name: a\n    args: [--model-path, /a]\n  - name: b\n    args: [--model-path, /b]\n",
     [["--model-path", "/a"], ["--model-path", "/b"]]),
])
def test_an_unknown_kind_takes_its_arguments_from_an_args_like_sibling(sibling, expected):
    text = ("apiVersion: serving.example.com/v1\nkind: ModelServer\nmetadata:\n  name: x\nspec:\n"
            "  command: [python3, -m, sglang.launch_server]\n" + sibling)
    result = lint(text, path="/r/server.yaml")
    assert [[t.text for t in l.tokens] for l in result.launches] == expected
    assert "SL011" not in codes(result)


def test_an_unknown_kind_without_arguments_is_not_missing_them():
    text = ("apiVersion: serving.example.com/v1\nkind: ModelServer\nspec:\n"
            "  image: lmsysorg/sglang:latest\n  command: [python3, -m, sglang.launch_server]\n"
            "  replicas: 2\n")
    result = lint(text, path="/r/server.yaml")
    (launch,) = result.launches
    assert launch.tokens[-1].splat
    assert "SL011" not in codes(result)


def test_a_full_command_in_a_custom_resource_is_read_as_written():
    text = ("apiVersion: serving.example.com/v1\nkind: ModelServer\nspec:\n"
            "  command: [python3, -m, sglang.launch_server, --tp_size, \"2\"]\n")
    result = lint(text, path="/r/server.yaml")
    (launch,) = result.launches
    assert [t.text for t in launch.tokens] == ["--tp_size", "2"]
    assert "SL011" in codes(result) and "SL002" in codes(result)


# --- Kubernetes containers stay as they were -------------------------------------------------


def test_a_container_without_arguments_still_misses_the_model():
    text = ("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - name: s\n        image: lmsysorg/sglang:latest\n"
            "        command: [python3, -m, sglang.launch_server]\n")
    result = lint(text, path="/r/d.yaml")
    assert len(result.launches) == 1
    assert "SL011" in codes(result, Severity.ERROR)


def test_container_command_and_args_are_one_launch():
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n"
            "    command: [python3, -m, sglang.launch_server]\n    args: [--model-path, /m, --port, \"80\"]\n")
    (launch,) = lint(text, path="/r/p.yaml").launches
    assert [t.text for t in launch.tokens] == ["--model-path", "/m", "--port", "80"]


@pytest.mark.parametrize("api", ["serving.kserve.io/v1alpha1", "ome.io/v1beta1"])
def test_a_runtime_another_object_completes_is_open_ended(api):
    text = (f"apiVersion: {api}\nkind: ClusterServingRuntime\nmetadata:\n  name: sglang\nspec:\n"
            "  containers:\n  - name: kserve-container\n    image: lmsysorg/sglang:latest\n"
            "    command: [python3, -m, sglang.launch_server]\n")
    result = lint(text, path="/r/runtime.yaml")
    (launch,) = result.launches
    assert launch.tokens[-1].splat
    assert "SL011" not in codes(result)


# --- RoleBasedGroup -----------------------------------------------------------------------------

RBG_V1ALPHA2 = """\
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata:
  name: pd
spec:
  roles:
    - name: prefill
      replicas: 1
      leaderWorkerPattern:
        size: 2
        template:
          spec:
            containers:
              - name: sglang
                image: lmsysorg/sglang:v0.5.2
                command: [python3, -m, sglang.launch_server]
                env:
                  - name: A
                    value: base
        leaderTemplatePatch:
          spec:
            containers:
              - name: sglang
                args: [--model-path, /m, --tp-size, "2", --node-rank, "0", --port, "8000"]
                env:
                  - name: A
                    value: leader
        workerTemplatePatch:
          spec:
            containers:
              - name: sglang
                args: [--model-path, /m, --tp-size, "2", --node-rank, "1", --enable_metrics]
"""


def test_role_based_group_leader_and_worker_patches():
    result = lint(RBG_V1ALPHA2, path="/r/rbg.yaml")
    leader, worker = result.launches
    assert [t.text for t in leader.tokens] == ["--model-path", "/m", "--tp-size", "2", "--node-rank",
                                               "0", "--port", "8000"]
    assert [t.text for t in worker.tokens] == ["--model-path", "/m", "--tp-size", "2", "--node-rank",
                                               "1", "--enable_metrics"]
    assert leader.env == {"A": "leader"} and worker.env == {"A": "base"}
    assert all(l.image and l.image[0] == "lmsysorg/sglang:v0.5.2" for l in result.launches)
    # the template alone (no arguments) runs in no pod: no "--model-path is required"
    assert "SL011" not in codes(result)
    (wrong,) = [f for f in result.findings if f.severity == Severity.ERROR]
    assert RBG_V1ALPHA2[wrong.span.start:wrong.span.end] == "--enable_metrics"


def test_role_based_group_v1alpha1_role_templates_and_lws_patches():
    text = """\
apiVersion: workloads.x-k8s.io/v1alpha1
kind: RoleBasedGroup
metadata:
  name: pd
spec:
  roleTemplates:
    - name: engine
      template:
        spec:
          containers:
            - name: sglang
              image: lmsysorg/sglang:latest
              command: [python3, -m, sglang.launch_server, --model-path, /m]
  roles:
    - name: decode
      templateRef:
        name: engine
      templatePatch:
        spec:
          containers:
            - name: sglang
              args: [--disaggregation-mode, decode]
      leaderWorkerSet:
        size: 2
        patchLeaderTemplate:
          metadata:
            labels:
              role: leader
        patchWorkerTemplate:
          spec:
            containers:
              - name: sglang
                args: [--disaggregation-mode, decode, --node-rank, "1"]
"""
    result = lint(text, path="/r/rbg.yaml")
    assert sorted([t.text for t in l.tokens] for l in result.launches) == [
        ["--model-path", "/m", "--disaggregation-mode", "decode"],
        ["--model-path", "/m", "--disaggregation-mode", "decode", "--node-rank", "1"]]
    assert "SL011" not in codes(result)


def test_role_based_group_without_patches_reads_the_template():
    text = RBG_V1ALPHA2.split("        leaderTemplatePatch:")[0].replace(
        "command: [python3, -m, sglang.launch_server]", "command: [python3, -m, sglang.launch_server, --model-path, /m]")
    result = lint(text, path="/r/rbg.yaml")
    (launch,) = result.launches
    assert [t.text for t in launch.tokens] == ["--model-path", "/m"]
