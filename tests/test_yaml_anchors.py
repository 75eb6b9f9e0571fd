"""Anchors, aliases and merge keys (docker compose `x-` blocks, Kubernetes manifests): the
launch a merged mapping or an aliased node holds is read where its text is, each finding is
reported once there, and each service still runs its own image's release."""

from __future__ import annotations

from servelint.edits import apply_edits
from servelint.engine import fix_all_text, lint
from servelint.model import Severity

BASE = """\
x-sglang-base: &sglang-base
  image: lmsysorg/sglang:v0.5.2
  ipc: host
  command: >
    python3 -m sglang.launch_server
    --model-path Qwen/Qwen3-8B
    --tp_size 2
    --port 30000

services:
  sglang-a:
    <<: *sglang-base
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["0", "1"], capabilities: [gpu]}]
  sglang-b:
    <<: *sglang-base
    environment:
      - HF_TOKEN=${HF_TOKEN}
"""


def errors(result):
    return [f for f in result.findings if f.severity == Severity.ERROR]


def test_a_merged_command_is_read_and_each_finding_reported_once():
    result = lint(BASE, path="/p/compose.yaml")
    # two services with the same text and the same image: one launch
    (launch,) = result.launches
    assert [t.text for t in launch.tokens] == ["--model-path", "Qwen/Qwen3-8B", "--tp_size", "2",
                                               "--port", "30000"]
    (wrong,) = errors(result)
    # at the text that holds it: the anchor's block, not the services
    assert BASE[wrong.span.start:wrong.span.end] == "--tp_size"
    assert wrong.span.start < BASE.index("services:")
    assert launch.image is not None and launch.image[0] == "lmsysorg/sglang:v0.5.2"


def test_services_with_their_own_images_keep_their_releases():
    text = BASE.replace("    environment:\n", "    image: lmsysorg/sglang:v0.4.9.post2\n    environment:\n")
    result = lint(text, path="/p/compose.yaml")
    # the same words in two images: each image's release judges them
    assert sorted(r.version for r in result.releases) == ["0.4.9.post2", "0.5.2"]
    assert {l.image[0] for l in result.launches if l.image} == {"lmsysorg/sglang:v0.5.2",
                                                                "lmsysorg/sglang:v0.4.9.post2"}
    assert all(l.tokens[2].span == result.launches[0].tokens[2].span for l in result.launches)
    # a finding both releases make is reported once, at the anchor's text
    wrong = [f for f in errors(result) if text[f.span.start:f.span.end] == "--tp_size"]
    assert len({(f.code, f.span, f.message) for f in wrong}) == len(wrong)
    assert len({f.span for f in wrong}) == 1


def test_the_fix_edits_the_anchored_text_once():
    fixed, _ = fix_all_text(BASE, path="/p/compose.yaml")
    assert fixed.count("--tp-size 2") == 1 and "--tp_size" not in fixed
    assert fixed.count("<<: *sglang-base") == 2


def test_an_aliased_command_list_in_two_services():
    text = ("x-cmd: &cmd [python3, -m, sglang.launch_server, --model-path, m, --enable_metrics]\n"
            "services:\n  a:\n    image: lmsysorg/sglang:latest\n    command: *cmd\n"
            "  b:\n    image: lmsysorg/sglang:latest\n    command: *cmd\n")
    result = lint(text, path="/p/compose.yaml")
    assert len(result.launches) == 1
    (wrong,) = errors(result)
    assert text[wrong.span.start:wrong.span.end] == "--enable_metrics"
    assert wrong.span.start < text.index("services:")


def test_merge_of_several_mappings_and_an_explicit_key_that_wins():
    text = ("x-img: &img\n  image: lmsysorg/sglang:v0.5.2\nx-run: &run\n"
            "  entrypoint: [python3, -m, sglang.launch_server]\n  command: [--model-path, m, --tp-size, \"2\"]\n"
            "services:\n  a:\n    <<: [*img, *run]\n  b:\n    <<: [*img, *run]\n"
            "    command: [--model-path, m, --dp_size, \"2\"]\n")
    result = lint(text, path="/p/compose.yaml")
    a, b = sorted(result.launches, key=lambda l: l.tokens[-2].span.start)
    assert [t.text for t in a.tokens] == ["--model-path", "m", "--tp-size", "2"]
    assert [t.text for t in b.tokens] == ["--model-path", "m", "--dp_size", "2"]
    assert a.entry.span == b.entry.span  # the entrypoint both merge is written once
    assert [text[f.span.start:f.span.end] for f in errors(result)] == ["--dp_size"]
    assert all(l.image and l.image[0] == "lmsysorg/sglang:v0.5.2" for l in result.launches)


def test_kubernetes_anchors_in_one_document():
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    image: lmsysorg/sglang:latest\n"
            "    command: &launch\n    - python3\n    - -m\n    - sglang.launch_server\n"
            "    - --model-path\n    - m\n    - --tp-size\n    - \"3\"\n    - --dp-size\n    - \"2\"\n"
            "    - --enable-dp-attention\n  - name: b\n    image: lmsysorg/sglang:latest\n    command: *launch\n")
    result = lint(text, path="/p/pod.yaml")
    assert len(result.launches) == 1
    spans = [f.span for f in result.findings]
    assert len(spans) == len(set((f.code, f.span, f.message) for f in result.findings))


def test_a_fix_inside_the_anchor_keeps_the_merges_working():
    fixed, _ = fix_all_text(BASE, path="/p/compose.yaml")
    import yaml
    loaded = yaml.safe_load(fixed)
    assert loaded["services"]["sglang-a"]["command"] == loaded["services"]["sglang-b"]["command"]
    assert "--tp-size 2" in loaded["services"]["sglang-a"]["command"]
    result = lint(BASE, path="/p/compose.yaml")
    (wrong,) = errors(result)
    once = apply_edits(BASE, wrong.fixes[0].edits)
    assert once == fixed
