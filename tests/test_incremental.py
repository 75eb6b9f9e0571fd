"""Incremental linting (engine.lint with a LintCache): after any edit the cached lint gives
exactly what a fresh lint gives, and an edit of one launch checks only that launch again."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from servelint import engine
from servelint.extract import shell
from servelint.lintcache import LintCache

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p for p in GOLDEN.rglob("*") if p.is_file() and p.name.startswith(("bad_", "ok_"))
               and not p.name.endswith((".expected", ".fixed")))


def _gen():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gen
    finally:
        sys.path.pop(0)
    return gen


def signature(result) -> tuple:
    """Everything a lint result tells the editor and the CLI."""
    out = []
    for f in result.findings:
        out.append((f.code, int(f.severity), f.message, f.span.start, f.span.end, f.deprecated,
                    f.unnecessary, f.launch_index, f.sglang,
                    tuple((r.span.start, r.span.end, r.message, r.path, r.mark, r.range)
                          for r in f.related),
                    tuple((x.title, x.preferred, x.safe,
                           tuple((e.span.start, e.span.end, e.new_text) for e in x.edits))
                          for x in f.fixes)))
    launches = tuple((l.kind, l.span.start, l.span.end, l.anchor,
                      tuple((t.span.start, t.span.end, t.text) for t in l.tokens))
                     for l in result.launches)
    releases = tuple(r.as_dict().items() for r in result.releases)
    return tuple(out), tuple(result.notices), launches, releases


def edit(rng: random.Random, text: str) -> str:
    """One random edit by lines: insert, delete, duplicate or change a line, anywhere
    (inside launches and between them)."""
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    kind = rng.randrange(5)
    if kind == 0:
        lines.insert(i, rng.choice(["", "# a comment", "echo hi", "X=1", "  --tp-size 2 \\"]))
    elif kind == 1 and len(lines) > 2:
        del lines[i]
    elif kind == 2:
        lines.insert(i, lines[i])
    elif kind == 3:
        line = lines[i]
        k = rng.randrange(len(line) + 1)
        lines[i] = line[:k] + rng.choice(["x", " ", "-", "_", "0"]) + line[k:]
    else:
        line = lines[i]
        if line:
            k = rng.randrange(len(line))
            lines[i] = line[:k] + line[k + 1:]
    return "\n".join(lines)


def check_edits(text: str, path: str, steps: int, seed: int, **kw) -> None:
    rng = random.Random(seed)
    cache = LintCache()
    got = engine.lint(text, path, cache=cache, **kw)
    assert signature(got) == signature(engine.lint(text, path, **kw))
    for step in range(steps):
        text = edit(rng, text)
        got = engine.lint(text, path, cache=cache, **kw)
        want = engine.lint(text, path, **kw)
        assert signature(got) == signature(want), f"edit {step} (seed {seed}) of {path}"
        # The arguments as read, for hover: the same as a fresh lint's.
        assert [len(p.uses) for p in got.parsed] == [len(p.uses) for p in want.parsed]


@pytest.mark.parametrize("path", CASES, ids=[str(p.relative_to(GOLDEN)) for p in CASES])
def test_random_edits_match_a_fresh_lint(path: Path):
    text = path.read_text(encoding="utf-8")
    check_edits(text, str(path), steps=12, seed=hash(path.name) % 1000,
                suppression_actions=path.name.endswith(".sh"))


@pytest.mark.parametrize("seed", range(4))
def test_random_edits_large_script_windows(seed: int, monkeypatch):
    # A large script is read in windows around its launches (cached per window): make a
    # small one take that path.
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
    text = _gen().script(400, 30, seed + 10)
    # and launches whose extraction reports findings that name lines (SL020)
    text += (GOLDEN / "shell" / "bad_broken_continuation.sh").read_text(encoding="utf-8")
    check_edits(text, "/tmp/servelint-incremental/run.sh", steps=25, seed=seed)


def test_random_edits_multi_document_files():
    # Documents (YAML) and fenced blocks (Markdown) are extracted once per text: many of
    # them in one file, edited, still lint as a fresh lint does.
    yamls = sorted((GOLDEN / "yaml").glob("*k8s*.yaml")) + sorted((GOLDEN / "yaml").glob("*compose*"))
    docs = [p.read_text(encoding="utf-8").strip("\n") for p in yamls]
    text = "\n---\n".join(docs * 2) + "\n"
    for seed in range(3):
        check_edits(text, "/tmp/servelint-incremental/all.yaml", steps=15, seed=seed)
    mds = sorted((GOLDEN / "markdown").glob("*.md"))
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in mds * 2)
    for seed in range(3):
        check_edits(text, "/tmp/servelint-incremental/all.md", steps=15, seed=seed,
                    suppression_actions=True)


def test_one_launch_edit_checks_one_launch(monkeypatch):
    text = _gen().script(2000, 100, 7)
    path = "/tmp/servelint-incremental/run.sh"
    calls = {"rules": 0, "read": 0}
    real_rules = engine.apply_rules

    def counting_rules(*a, **k):
        calls["rules"] += 1
        return real_rules(*a, **k)
    monkeypatch.setattr(engine, "apply_rules", counting_rules)
    real_read = engine.Reader.read

    def counting_read(self, launch):
        calls["read"] += 1
        return real_read(self, launch)
    monkeypatch.setattr(engine.Reader, "read", counting_read)
    cache = LintCache()
    first = engine.lint(text, path, cache=cache)
    assert len(first.launches) == 100 and calls["rules"] == 100
    # Type a character into the value of one launch's --model-path, in the middle.
    launch = first.launches[50]
    value = launch.tokens[1]
    new = text[:value.span.end] + "x" + text[value.span.end:]
    calls.update(rules=0, read=0)
    cache.ran = cache.reused = 0
    again = engine.lint(new, path, cache=cache)
    assert calls == {"rules": 1, "read": 1}
    assert (cache.ran, cache.reused) == (1, 99)
    assert signature(again) == signature(engine.lint(new, path))
    # Lines added above every launch move them all: nothing is checked again.
    calls.update(rules=0, read=0)
    moved = "# one\n# two\n" + new
    engine.lint(moved, path, cache=cache)
    assert calls["rules"] == 0


def test_settings_change_forgets(monkeypatch):
    from servelint.settings import Settings
    text = _gen().script(300, 10, 3)
    cache = LintCache()
    engine.lint(text, "/tmp/x/run.sh", cache=cache)
    cache.ran = 0
    engine.lint(text, "/tmp/x/run.sh", settings=Settings(sglang_version="0.4.6"), cache=cache)
    assert cache.ran == 10


def test_should_stop_cancels_between_launches():
    text = _gen().script(300, 10, 3)
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(engine.Cancelled):
        engine.lint(text, "/tmp/x/run.sh", should_stop=stop)
    assert len(asked) == 4
    # Not asked to stop: the lint completes, and a cancelled lint leaves a usable cache.
    cache = LintCache()
    asked.clear()
    with pytest.raises(engine.Cancelled):
        engine.lint(text, "/tmp/x/run.sh", cache=cache, should_stop=stop)
    full = engine.lint(text, "/tmp/x/run.sh", cache=cache, should_stop=lambda: False)
    assert signature(full) == signature(engine.lint(text, "/tmp/x/run.sh"))


@pytest.mark.parametrize("path", [p for p in CASES if p.name.startswith("bad_")],
                         ids=[str(p.relative_to(GOLDEN)) for p in CASES if p.name.startswith("bad_")])
def test_fix_all_with_a_cache_matches_fresh_passes(path: Path):
    from servelint.edits import apply_edits, fix_all_edits
    text = path.read_text(encoding="utf-8")
    want, count = text, 0
    for _ in range(8):  # engine.fix_all_text's passes, each with a fresh lint
        edits = fix_all_edits(engine.lint(want, str(path)).findings)
        new = apply_edits(want, edits) if edits else want
        if new == want:
            break
        want, count = new, count + len(edits)
    assert engine.fix_all_text(text, str(path)) == (want, count)


def edit_chars(rng: random.Random, text: str) -> str:
    """One random edit by characters: a few characters in or out anywhere, including the
    ones that change what a window is (newlines, backslashes, `sglang`, comment marks), a
    pin or an image that names a release, or an export."""
    at = rng.randrange(len(text) + 1)
    if rng.random() < 0.5:
        piece = rng.choice(["x", "\n", "\\", " \\\n", "sglang", "#", "-", "2", "\n# c\n",
                            "\npip install sglang==0.4.6\n", "\nexport TP=2\n",
                            "\ndocker run lmsysorg/sglang:v0.4.9 python3 -m sglang.launch_server --tp 2\n"])
        return text[:at] + piece + text[at:]
    return text[:at] + text[at + rng.randrange(1, 6):]


@pytest.mark.parametrize("seed", range(3))
def test_random_character_edits_large_script_windows(seed: int, monkeypatch):
    """The windows above and below an edit are taken from the last lint (moved by the
    edit's length), and so are their launches' findings: character edits anywhere, which
    join, split and move windows, give what a fresh lint gives."""
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
    rng = random.Random(seed)
    text = _gen().script(300, 25, seed + 20)
    cache = LintCache()
    path = "/tmp/servelint-incremental/chars.sh"
    engine.lint(text, path, cache=cache)
    for step in range(60):
        text = edit_chars(rng, text)
        got = engine.lint(text, path, cache=cache)
        want = engine.lint(text, path)
        assert signature(got) == signature(want), f"edit {step} (seed {seed})"
        assert [len(p.uses) for p in got.parsed] == [len(p.uses) for p in want.parsed]


def test_launches_taken_as_they_were_keep_their_entries(monkeypatch):
    """A large script's edit takes the launches it did not reach from the last lint
    without looking them up (engine._align); their LintCache entries stay, so a later edit
    that cannot take them (lines added above launches whose messages name lines) still
    finds every unchanged launch's findings."""
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
    text = _gen().script(2000, 100, 7)
    path = "/tmp/servelint-incremental/taken.sh"
    cache = LintCache()
    first = engine.lint(text, path, cache=cache)
    value = first.launches[50].tokens[1]
    new = text[:value.span.end] + "x" + text[value.span.end:]
    cache.ran = cache.reused = 0
    engine.lint(new, path, cache=cache)
    assert (cache.ran, cache.reused) == (1, 99)
    assert len(cache.entries) >= 100
    cache.ran = 0
    calls = {"rules": 0}
    real_rules = engine.apply_rules

    def counting_rules(*a, **k):
        calls["rules"] += 1
        return real_rules(*a, **k)
    monkeypatch.setattr(engine, "apply_rules", counting_rules)
    monkeypatch.setattr(engine, "_align", lambda *a: (0, 0))  # nothing taken as it was
    got = engine.lint(new + "echo done\n", path, cache=cache)
    assert calls["rules"] == 0
    assert signature(got) == signature(engine.lint(new + "echo done\n", path))


def test_markdown_edit_reads_one_block_and_keeps_the_others(monkeypatch):
    """A Markdown file's shell blocks are kept by their text: an edit reads again only the
    block it touched; the launches of blocks that did not move are the last lint's very
    objects (their host points at the newest text), and the result equals a fresh lint."""
    from servelint.extract import markdown
    blocks = [f"Step {i}\n\n```bash\npython3 -m sglang.launch_server --model-path m{i} --tp_size 2\n```\n"
              for i in range(50)]
    text = "# Deploy\n\n" + "\n".join(blocks)
    path = "/tmp/servelint-incremental/deploy.md"
    cache = LintCache()
    first = engine.lint(text, path, cache=cache)
    assert len(first.launches) == 50
    calls = {"n": 0}
    real = markdown.script_launches

    def counting(*a, **k):
        calls["n"] += 1
        return real(*a, **k)
    monkeypatch.setattr(markdown, "script_launches", counting)
    edited = text.replace("--model-path m40 ", "--model-path m40x ", 1)
    again = engine.lint(edited, path, cache=cache)
    assert calls["n"] == 1
    assert list.__getitem__(again.launches, 3) is list.__getitem__(first.launches, 3)
    assert again.launches[45].host.text is edited
    assert signature(again) == signature(engine.lint(edited, path))
