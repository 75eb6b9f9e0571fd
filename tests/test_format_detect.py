"""Format detection by content (issue 13): Dockerfiles whatever their name, and what a text
without a name (standard input) is read as."""

import pytest

from servelint.engine import detect_format, lint
from servelint.extract.dockerfile import looks_like_dockerfile

DOCKERFILE = """\
# syntax=docker/dockerfile:1
ARG CUDA_VERSION=12.6.1
FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu22.04
RUN pip install "sglang[all]==0.5.2"
ENV HF_HOME=/models
EXPOSE 30000
CMD ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"]
"""


@pytest.mark.parametrize("name", [
    "Dockerfile", "Containerfile", "build/sglang.dockerfile", "docker/Dockerfile.rocm",
    "docker/Dockerfile-cu124", "docker/Dockerfile_npu", "docker/rocm.Containerfile",
    "docker/sglang-image", "images/serve.cu126", "docker/Dockerfile.sglang.blackwell",
])
def test_dockerfiles_by_name_or_content(name):
    assert detect_format(name, None, DOCKERFILE) == "dockerfile"
    r = lint(DOCKERFILE, name)
    assert [f.code for f in r.findings] == ["SL002"]


def test_by_content_needs_a_first_from_or_arg_and_only_instructions():
    assert looks_like_dockerfile("FROM ubuntu:22.04\nRUN apt-get update\n")
    assert looks_like_dockerfile("# a comment\n\nARG V=1\nFROM x:${V} AS base\nCOPY . /app\n")
    assert looks_like_dockerfile("FROM x\nRUN <<EOF\nset -e\necho hi\nEOF\nCMD [\"a\"]\n")
    assert looks_like_dockerfile("FROM x\nRUN a && \\\n    b\n# c\nWORKDIR /w\n")
    assert not looks_like_dockerfile("FROM x\n")  # one instruction is too little to tell
    assert not looks_like_dockerfile("RUN a\nFROM x\n")  # Docker requires FROM (or ARG) first
    assert not looks_like_dockerfile("ARG A=1\nRUN x\n")  # no FROM at all


@pytest.mark.parametrize("text", [
    "#!/bin/bash\nFROM=1\necho $FROM\n",                       # a shell script
    "set -e\nFROM x\nRUN y\n",                                  # a shell line first
    "FROM x\nRUN y\nset -e\npython3 -m sglang.launch_server\n",  # a line Docker does not know
    "FROM: ubuntu\nRUN: [a, b]\n",                             # YAML
    "from os import path\nimport sglang\n",                    # Python
    "from x\nrun y\n",                                          # lower case: not sniffed
    "---\nFROM: x\n",
])
def test_never_mistakes_scripts_yaml_or_python(text):
    assert not looks_like_dockerfile(text)


def test_names_of_other_formats_are_not_sniffed():
    assert detect_format("run.sh", None, DOCKERFILE) == "shell"
    assert detect_format("notes.txt", None, DOCKERFILE) is None
    assert detect_format("serve.py", None, DOCKERFILE) == "python"
    # An editor's language wins too.
    assert detect_format("x", "shellscript", DOCKERFILE) == "shell"
    assert detect_format("x", None, DOCKERFILE) == "dockerfile"


def test_a_shell_script_without_suffix_stays_shell():
    text = "#!/bin/sh\nFROM=x\npython3 -m sglang.launch_server --model-path m --tp_size 2\n"
    assert detect_format("scripts/serve", None, text) == "shell"


# --- no name at all (standard input) -----------------------------------------------------------

@pytest.mark.parametrize("text,fmt", [
    ("#!/bin/bash\npython3 -m sglang.launch_server --model-path m\n", "shell"),
    ("#!/usr/bin/env python3\nimport subprocess\n", "python"),
    (DOCKERFILE, "dockerfile"),
    ("---\n# Source: chart/templates/deploy.yaml\napiVersion: apps/v1\nkind: Deployment\n"
     "spec: {}\n", "yaml"),
    ("services:\n  a:\n    command: python3 -m sglang.launch_server --model-path m\n", "yaml"),
    ("containers:\n  - name: a\n    command: [python3, -m, sglang.launch_server]\n", "yaml"),
    ("model-path: m\ntp-size: 2\n", "sglang-config"),
    ('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', "notebook"),
    ('{\n  // debug\n  "configurations": [{"type": "debugpy"}],\n}\n', "launch-json"),
    ('{"version": "0.2.0", "configurations": []}', "launch-json"),
    ("import subprocess\nsubprocess.run(['python3', '-m', 'sglang.launch_server'])\n", "python"),
    ("CUDA_VISIBLE_DEVICES=0 python3 -m sglang.launch_server --model-path m\n", "shell"),
    ("sglang serve --model-path m\n", "shell"),
    ("just some words about sglang\n", None),
    ('{"name": "x"}', None),
    ("", None),
])
def test_nameless_text_is_sniffed(text, fmt):
    assert detect_format(None, None, text) == fmt


def test_sniffing_is_only_for_nameless_text():
    """A named file keeps the name's verdict: a `.txt` file holding YAML is not linted."""
    yaml_text = "services:\n  a:\n    command: python3 -m sglang.launch_server --tp_size 2\n"
    assert detect_format("notes.txt", None, yaml_text) is None
    assert detect_format(None, "markdown", "# t\n") == "markdown"


def test_real_dockerfile_is_read_the_same_under_a_name_that_says_nothing(tmp_path):
    """RubricLab/inference's Dockerfile (tests/data/real/code, MIT): by its name and by its
    content alone (copied to `images/inference`, and piped in without a name) servelint reads
    the same launch."""
    import os
    src = os.path.join(os.path.dirname(__file__), "data", "real", "code", "dockerfile",
                       "rubriclab-inference.Dockerfile")
    with open(src, encoding="utf-8") as fh:
        text = fh.read()
    named = lint(text, src)
    assert detect_format("images/inference", None, text) == "dockerfile"
    assert detect_format(None, None, text) == "dockerfile"
    for other in (lint(text, "images/inference"), lint(text, None)):
        assert other.format == "dockerfile"
        assert [[t.text for t in l.tokens] for l in other.launches] == \
            [[t.text for t in l.tokens] for l in named.launches] != []
        assert [(f.code, f.span) for f in other.findings] == [(f.code, f.span) for f in named.findings]
