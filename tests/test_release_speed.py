"""Release detection costs one scan of the document per lint, not one per launch
(issue 16): counted by calls of the scanning functions, never by time."""

from __future__ import annotations

import re

import pytest
from servelint import engine, release
from servelint.release import _GIT_URL_REF, _NAME, _matches


def _dockerfile(stages: int) -> str:
    out = []
    for i in range(stages):
        out.append(f"FROM lmsysorg/sglang:v0.4.{6 + i % 3}-cu126 AS s{i}")
        if i % 2 == 0:
            out.append(f'RUN pip install "sglang[all]==0.4.{i % 5}.post1"')
        out.append(f"CMD python3 -m sglang.launch_server --model-path m{i} --port {30000 + i}")
    return "\n".join(out) + "\n"


def _shell(launches: int) -> str:
    out = ["#!/bin/bash", 'pip install "sglang[all]==0.4.6.post1"']
    for i in range(launches):
        out.append(f"echo step {i}")
        out.append(f"python3 -m sglang.launch_server --model-path m{i} --port {30000 + i}")
    return "\n".join(out) + "\n"


def _counting(monkeypatch, name: str) -> list[int]:
    calls = [0]
    real = getattr(release, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(release, name, counted)
    return calls


def test_dockerfile_stages_found_once_per_lint(monkeypatch):
    stages = _counting(monkeypatch, "_stage_starts")
    scans = _counting(monkeypatch, "_scan")
    text = _dockerfile(300)
    result = engine.lint(text, "Dockerfile")
    assert len(result.launches) == 300
    assert stages[0] == 1
    assert scans[0] == 1
    # and each stage's own pin wins over its base image, the others run the image's
    for i, launch in enumerate(result.launches):
        hint = release.detect_release(text, "dockerfile", launch, None)
        if i % 2 == 0:
            assert (hint.source, hint.version) == ("pin", f"0.4.{i % 5}.post1")
        else:
            assert (hint.source, hint.version) == ("image", f"0.4.{6 + i % 3}")
    assert stages[0] == 1 and scans[0] == 1  # the same text again: nothing rescanned


def test_shell_scanned_once_per_lint(monkeypatch):
    scans = _counting(monkeypatch, "_scan")
    text = _shell(400)
    result = engine.lint(text, "run.sh")
    assert len(result.launches) == 400
    assert scans[0] == 1
    edited = text + "# an edit\n"
    engine.lint(edited, "run.sh")
    assert scans[0] == 2  # a new text: scanned once more, not once per launch
    releases = engine.lint(edited, "run.sh").releases
    assert len(releases) == 400
    assert {(r.source, r.declared) for r in releases} == {("pin", "0.4.6.post1")}


@pytest.mark.parametrize("text", [
    'pip install "sglang[all]==0.4.6" SGLANG>=0.4 xsglang==1 /sglang==2 sglang',
    "sglang[x,sglang>=1]==2 and sglang[a]>=0.5,<0.6",
    "pip install git+https://github.com/SGL-Project/SGLang@v0.4.6 sgl-project/sglang@v0.5",
    "ſglang==0.4.6 İ sglang==0.4.7 sgl-project/sglang@v0.4.8",  # not ASCII: the regex path
    "",
])
def test_matches_equal_finditer(text):
    low = text.lower()
    for pattern, literal in ((_NAME, "sglang"), (_GIT_URL_REF, "sgl-project/sglang")):
        want = [(m.start(), m.end()) for m in pattern.finditer(text)]
        got = [(m.start(), m.end()) for m in _matches(pattern, literal, text, low)]
        assert got == want


def test_matches_starts_only_at_the_literal():
    # the fast path depends on both patterns beginning with their literal
    for pattern, literal in ((_NAME, "sglang"), (_GIT_URL_REF, "sgl-project/sglang")):
        for m in pattern.finditer(f"a {literal.upper()}==0.4.6@v1 {literal}==1@v2"):
            assert m.group(0).lower().startswith(literal)
    assert re.search(r"\(\?<!", _NAME.pattern)  # the lookbehind still applies at the match


def test_each_image_read_once_per_lint(monkeypatch):
    reads = _counting(monkeypatch, "parse_image")
    result = engine.lint(_dockerfile(300), "Dockerfile")
    assert len(result.releases) == 300
    assert reads[0] == 3  # three distinct base images among 300 stages
    assert {r.declared for r in result.releases if r.source == "image"} == {"0.4.6", "0.4.7", "0.4.8"}
