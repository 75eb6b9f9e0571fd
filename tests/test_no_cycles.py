"""A lint result is freed by reference counting alone: the server sets a large document's
result aside from the cycle collector (gc.freeze, lsp/server.py settle_after_lint), so a
reference cycle in it would keep the whole result alive after the document changed."""

import gc
import sys
from pathlib import Path

import pytest

from servelint.engine import lint
from servelint.lintcache import LintCache

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p for p in GOLDEN.rglob("bad_*") if p.is_file()
               and not p.name.endswith((".expected", ".fixed")))[:40]


def unreachable_after(make) -> list[str]:
    """The servelint objects that dropping what `make` returns leaves to the cycle
    collector (made once before, so that what a first lint imports is not counted). The
    standard library's own cycles (ast.literal_eval's recursive closures) are not ours."""
    make()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        made = make()
        del made
        gc.collect()
        return sorted({type(o).__name__ for o in gc.garbage
                       if type(o).__module__.startswith("servelint")})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_a_dropped_result_of_a_cached_lint_leaves_no_cycles():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gen
    finally:
        sys.path.pop(0)
    text = gen.script(2000, 200, seed=8)
    cache = LintCache()
    lint(text, "/tmp/servelint-cycles/b.sh", cache=cache)
    edited = text.replace("--tp-size 2", "--tp-size 4", 1)
    assert unreachable_after(lambda: lint(edited, "/tmp/servelint-cycles/b.sh", cache=cache)) == []


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_a_dropped_result_leaves_no_cycles(path: Path):
    text = path.read_text(encoding="utf-8")
    assert unreachable_after(lambda: lint(text, str(path))) == []
