"""A large script's kept launches are thin (issue 16, point 6): their words are not kept
between lints but read again from their window when asked (model.Launch.thin,
extract/shell.py ShellHost.reread_tokens). Bytes are counted with tracemalloc."""

from __future__ import annotations

from servelint import engine
from servelint.extract import shell
from servelint.lintcache import LintCache
from servelint.model import LINE_READS, Launch

from test_memory_kept import _bench, _per_launch


def test_large_script_keeps_launches_thin():
    # Every launch's tokens (Token, Span, two offsets: ~200 bytes a word) were kept:
    # ~7,100 bytes a launch after the open, ~7,450 after edits; thin, ~3,500 and ~3,850.
    opened, edited = _per_launch(800)
    assert opened < 5_000 and edited < 5_000, (opened, edited)


def _words(launch: Launch) -> list[tuple]:
    return [(t.span.start, t.span.end, t.text, t.prefix, t.splat, t.raw, t.origin,
             t.placeholder) for t in launch.tokens]


def test_thin_launches_read_their_words_again_exactly(monkeypatch):
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
    text = _bench("gen").script(600, 40, seed=9)
    path = "/nonexistent/memory/thin.sh"
    cache = LintCache()
    result = engine.lint(text, path, "shellscript", cache=cache)
    stored = [list.__getitem__(result.launches, i) for i in range(len(result.launches))]
    assert len(stored) == 40 and all(x.is_thin for x in stored)
    # Lines added at the top: the launches below are moved (thin copies, read where they
    # now are), an edit in the middle re-checks one launch.
    middle = result.launches[20].tokens[1].span.end
    for new in ("# one\n# two\n" + text, text[:middle] + "7" + text[middle:]):
        result = engine.lint(new, path, "shellscript", cache=cache)
        fresh = engine.lint(new, path, "shellscript")
        reads = LINE_READS[0]
        got = [_words(launch) for launch in result.launches]
        assert LINE_READS[0] == reads  # reading again is not a check asking for lines
        assert got == [_words(launch) for launch in fresh.launches]
        assert [launch.entry.span for launch in result.launches] == \
            [launch.entry.span for launch in fresh.launches]
        # hover's reading of one launch (result.parsed reads it again when asked)
        assert [u.written for u in result.parsed[20].uses] == \
            [u.written for u in fresh.parsed[20].uses]
