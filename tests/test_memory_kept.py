"""Memory a lint keeps (issue 16, point 6: a server with a 100,000-line file open stays under
100 MB). Bytes are counted with tracemalloc, so the figures do not move with the machine's
load; each bound has a wide margin over what the code takes, and fails with what it took
before (numbers in the comments, Python 3.11)."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from pathlib import Path

from servelint.args import Reader
from servelint.catalog import load_catalog
from servelint.engine import lint
from servelint.lintcache import LintCache
from servelint.model import LineIndex, Token

ROOT = Path(__file__).resolve().parent.parent


def _bench(name: str):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


def _kept(make) -> tuple[int, object]:
    """Bytes still allocated after `make()` (what it returns is kept alive)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = make()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before, kept
    finally:
        tracemalloc.stop()


def test_line_index_of_100k_lines_is_compact():
    # A list of 100,000 Python ints took 4.0 MB; an array of machine integers 0.4 MB.
    text = "python3 -m sglang.launch_server --model-path m\n" * 100_000
    size, index = _kept(lambda: LineIndex(text))
    assert size < 1_000_000, size
    edited_text = text[:5000] + "x\n" + text[5000:]
    size, edited = _kept(lambda: LineIndex.edited(index, edited_text, 5000, len(text) - 5000))
    assert size < 1_000_000, size
    fresh = LineIndex(edited_text)
    assert list(edited.starts) == list(fresh.starts)
    for offset in (0, 4999, 5000, 5001, 5002, len(edited_text) - 1, len(edited_text)):
        assert edited.line_of(offset) == fresh.line_of(offset)
        assert edited.position(offset) == fresh.position(offset)
    assert edited.position(len(edited_text)) == (100_001, 0)


def test_long_texts_get_wide_offsets():
    from servelint.model import _offsets
    assert _offsets("ab").typecode == "i"

    class Huge(str):
        def __len__(self):
            return 2**31 + 5
    assert _offsets(Huge("ab")).typecode == "q"


def test_equal_words_share_one_string():
    # Every token kept its own copy of `--tp-size`, `--host`, `0.0.0.0`...: 11 MB of the
    # words of an 11,110-launch script.
    gen = _bench("gen")
    text = gen.script(1_000, 50, seed=5)
    result = lint(text, "/nonexistent/memory/run.sh", "shellscript")
    words = [t for launch in result.launches for t in launch.tokens if t.text == "--tp-size"]
    assert len(words) >= 40
    assert len({id(t.text) for t in words}) == 1
    assert len({id(t.raw) for t in words}) == 1
    # Only plain strings: an equal str subclass is another value.
    class Marked(str):
        pass
    marked = Token(words[0].span, Marked("--tp-size"))
    assert type(marked.text) is Marked
    assert type(Token(words[0].span, "--tp-" + "size").text) is str
    # Long words are not shared (a table of every value written would keep them all).
    long_word = "x" * 200
    assert Token(words[0].span, long_word[:199] + "x").text is not \
        Token(words[0].span, long_word[:199] + "x").text


def test_reading_a_launch_keeps_little():
    # Use, Value and Problem had a __dict__ each, and every option name its own span:
    # 5,795 bytes a launch of the benchmark's scripts, now ~3,740.
    gen = _bench("gen")
    text = gen.script(1_800, 200, seed=3)
    launches = list(lint(text, "/nonexistent/memory/run.sh", "shellscript").launches)
    reader = Reader(load_catalog())

    def read_all():
        parsed = [reader.read(launch) for launch in launches]
        for p in parsed:
            p.uses_of("tp_size")  # the table by dest, as the checks make it
        return parsed
    size, parsed = _kept(read_all)
    assert len(parsed) == 200
    assert size / len(parsed) < 4_700, size / len(parsed)


def _per_launch(n: int) -> tuple[float, float]:
    """Bytes a server keeps per launch of a script with `n` launches (9 lines a launch,
    as the 100,000-line, 11,110-launch benchmark): after the open, and after two edits."""
    gen = _bench("gen")
    peers = _bench("peers")
    text = gen.script(n * 9, n, seed=3)

    def open_and_edit():
        cache = LintCache()
        opened = lint(text, "/nonexistent/memory/run.sh", "shellscript", cache=cache)
        return cache, opened
    lint(gen.script(200, 5, seed=1), "/nonexistent/memory/warm.sh", "shellscript")
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        cache, result = open_and_edit()
        gc.collect()
        opened = tracemalloc.get_traced_memory()[0] - before
        edited_text = text
        for at, _old, new in peers.edit_sites(text, 2):
            edited_text = edited_text[:at] + new + edited_text[at + 1:]
            result = lint(edited_text, "/nonexistent/memory/run.sh", "shellscript", cache=cache)
        gc.collect()
        edited = tracemalloc.get_traced_memory()[0] - before - len(edited_text)
        assert result.launches  # kept alive while counted, as the server keeps it
    finally:
        tracemalloc.stop()
    return opened / n, edited / n


def test_kept_per_launch_is_small_and_does_not_grow():
    # Before: ~16,000 bytes a launch after the open (every launch's ParsedLaunch), ~10,300
    # after edits (the fingerprint's tuple per word); with the diffs ~7,100 both.
    small = _per_launch(100)
    large = _per_launch(800)
    for opened, edited in (small, large):
        assert opened < 8_500 and edited < 8_500, (small, large)
    assert large[1] < 1.5 * small[1] + 500, (small, large)
