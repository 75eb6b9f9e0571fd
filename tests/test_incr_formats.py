"""Incremental extraction of launch.json, docker compose and Dockerfile texts (and
Markdown): after random character edits anywhere, a lint with the document's LintCache
gives exactly what a fresh lint gives, and an edit of one launch reads one launch again."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from servelint import engine
from servelint.lintcache import LintCache
from test_incremental import GOLDEN, _gen, signature

PIECES = {
    "launch-json": ['"', "{", "}", ",", "[", "]", "//", "/*", "*/", "\\", "\n", "x", "2", " ",
                    "x", "2", "x", "2", "\n", " ", "\n", ", ",
                    '"--tp_size", "2", ', '"args": "--tp 2",', "\n// sglang==0.4.6\n",
                    '"module": "sglang.launch_server", ', "${env:X}"],
    "compose": [":", "-", "\n", "  ", "'", '"', "#", "x", "2", "\\", "$", "{", "}", "&",
                " --tp_size 2", "\n    image: lmsysorg/sglang:v0.4.9\n", "\n  other:\n    command: x\n",
                "\n    entrypoint: python3 -m sglang.launch_server\n", "<<: *base\n", "sglang"],
    "dockerfile": ["\\", "\n", " \\\n", "#", "[", "]", '"', ",", "x", "2", " ", "FROM ",
                   "\nFROM lmsysorg/sglang:v0.4.9 AS s\n", "\nRUN pip install sglang==0.4.6\n",
                   "\nCMD python3 -m sglang.launch_server --tp 2\n", "ENTRYPOINT ", "\nARG V=1\n",
                   "$V", "<<EOF\n", "sglang"],
    "markdown": ["```", "\n", "~~~", "`", "$ ", "\\", "x", "2", "#", "\n```bash\n", "sglang",
                 " --tp_size 2"],
}


def edit_chars(rng: random.Random, text: str, pieces: list[str]) -> str:
    at = rng.randrange(len(text) + 1)
    if rng.random() < 0.6:
        return text[:at] + rng.choice(pieces) + text[at:]
    return text[:at] + text[at + rng.randrange(1, 6):]


def check(text: str, path: str, kind: str, steps: int, seed: int) -> None:
    rng = random.Random(seed)
    cache = LintCache()
    engine.lint(text, path, cache=cache)
    original = text
    for step in range(steps):
        # Back to the first text now and then (most edits of a small text break its
        # syntax for good; the cache then meets a large edit and a readable text again).
        text = edit_chars(rng, original if step % 6 == 5 else text, PIECES[kind])
        got = engine.lint(text, path, cache=cache)
        want = engine.lint(text, path)
        assert signature(got) == signature(want), f"edit {step} (seed {seed}) of {path}"
        assert [len(p.uses) for p in got.parsed] == [len(p.uses) for p in want.parsed]


def _texts(kind: str) -> list[tuple[str, str]]:
    gen = _gen()
    made = {"launch-json": (gen.launch_json, "/tmp/servelint-incr/.vscode/launch.json", "launch-json"),
            "compose": (gen.compose_yaml, "/tmp/servelint-incr/compose.yaml", "yaml"),
            "dockerfile": (gen.dockerfile, "/tmp/servelint-incr/Dockerfile", "dockerfile"),
            "markdown": (gen.markdown_doc, "/tmp/servelint-incr/guide.md", "markdown")}[kind]
    out = [(made[0](300, 16, seed=5), made[1])]
    if kind == "compose":
        # services ending with a block scalar, a script naming sglang, a key after them
        svc = """  s{n}:
    image: lmsysorg/sglang:v0.4.{n}
    environment:
      TP: "2"
    healthcheck:
      test: ["CMD", "curl", "-f", "http://localhost:30000/health"]
    entrypoint: ["python3", "-m", "sglang.launch_server"]
    command: >
      --model-path m{n} --tp_size 2
      --port 3000{n}

  w{n}:
    image: busybox
    command:
      - bash
      - -c
      - |
        python3 -m sglang.launch_server --tp 2 \\
          --enable_metrics
"""
        text = "services:\n" + "".join(svc.format(n=n) for n in range(4)) + "volumes:\n  data: {}\n"
        out.append((text, "/tmp/servelint-incr/compose-2.yaml"))
    for p in sorted((GOLDEN / made[2]).glob("*")):
        if p.name.startswith(("bad_", "ok_")) and not p.name.endswith((".expected", ".fixed")):
            if kind != "compose" or "compose" in p.name:
                out.append((p.read_text(encoding="utf-8"), str(p)))
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", sorted(PIECES))
def test_random_character_edits_match_a_fresh_lint(kind: str, seed: int):
    for n, (text, path) in enumerate(_texts(kind)):
        check(text, path, kind, steps=40 if n == 0 else 12, seed=seed * 100 + n)


def _count(monkeypatch, owner, name: str) -> dict:
    calls = {"n": 0}
    real = getattr(owner, name)

    def counting(*a, **k):
        calls["n"] += 1
        return real(*a, **k)
    monkeypatch.setattr(owner, name, counting)
    return calls


@pytest.mark.parametrize("kind", ["launch-json", "dockerfile", "compose"])
def test_one_launch_edit_reads_one_launch(kind: str, monkeypatch):
    """A digit of one launch's --tp-size changed: the extractor reads that launch only
    (the others are the last lint's, moved), and the checks run for that launch only."""
    from servelint.extract import dockerfile, launch_json, yaml_launch
    gen = _gen()
    make, path, owner, name = {
        "launch-json": (gen.launch_json, "/tmp/servelint-incr/.vscode/launch.json", launch_json, "_launch"),
        "dockerfile": (gen.dockerfile, "/tmp/servelint-incr/Dockerfile", dockerfile._Reader, "read_stage"),
        "compose": (gen.compose_yaml, "/tmp/servelint-incr/compose.yaml", yaml_launch, "_container"),
    }[kind]
    text = make(2000, 100, seed=3)
    reads = _count(monkeypatch, owner, name)
    cache = LintCache()
    first = engine.lint(text, path, cache=cache)
    assert len(first.launches) == 100
    at = text.find("--tp-size", len(text) // 2) + len("--tp-size")
    while not text[at].isdigit():
        at += 1
    new = text[:at] + ("3" if text[at] != "3" else "5") + text[at + 1:]
    reads["n"] = 0
    cache.ran = cache.reused = 0
    again = engine.lint(new, path, cache=cache)
    assert reads["n"] == 1
    assert (cache.ran, cache.reused) == (1, 99)
    assert signature(again) == signature(engine.lint(new, path))


def _large_strings(root, floor: int) -> list[str]:
    """Every string of `floor` characters or more reachable from `root`: through objects
    and the variables functions close over, not through modules (a module's own memory,
    release._DOCS, is not the document's)."""
    import gc
    import types
    seen: set[int] = set()
    found = []
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            if len(obj) >= floor:
                found.append(obj)
            continue
        if isinstance(obj, (int, float, bytes, type, types.ModuleType, types.BuiltinFunctionType)):
            continue
        if isinstance(obj, types.MethodType):
            stack += [obj.__self__, obj.__func__]
            continue
        if isinstance(obj, types.FunctionType):
            stack += [c.cell_contents for c in obj.__closure__ or () if c.cell_contents is not None]
            continue
        stack.extend(gc.get_referents(obj))
    return found


@pytest.mark.parametrize("kind", ["launch-json", "dockerfile", "compose"])
def test_kept_parts_hold_no_old_text(kind: str):
    """After edits in many places, what the cache and the last result hold refers to the
    newest text only: a kept launch's host reads its part from the newest text when asked
    (a host made for an earlier text would keep that whole text alive)."""
    gen = _gen()
    make, path = {"launch-json": (gen.launch_json, "/tmp/servelint-incr/.vscode/launch.json"),
                  "dockerfile": (gen.dockerfile, "/tmp/servelint-incr/Dockerfile"),
                  "compose": (gen.compose_yaml, "/tmp/servelint-incr/compose.yaml")}[kind]
    text = make(2000, 100, seed=4)
    cache = LintCache()
    result = engine.lint(text, path, cache=cache)
    at = 0
    for n in range(12):  # one digit in twelve launches, from the top down
        at = text.find("--tp-size", at + 1) + len("--tp-size")
        while not text[at].isdigit():
            at += 1
        text = text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1:]
        result = engine.lint(text, path, cache=cache)
        for launch in result.launches:  # what hover, code actions and fixes read
            launch.host.quote("x")
    kept = _large_strings((cache, result), len(text) // 2)
    assert kept and all(s is text for s in kept), f"{len(kept)} texts kept"
