"""Golden tests: every `bad_*` file has its expected findings (and the text after every
safe fix); every `ok_*` file lints clean.

Set SERVELINT_UPDATE_GOLDEN=1 to rewrite the expected files, then review the diff.
"""

import os
from pathlib import Path

import pytest

from servelint.engine import lint
from servelint.edits import apply_edits, fix_all_edits
from servelint.model import Severity
from servelint.serialize import diagnostic

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SERVELINT_UPDATE_GOLDEN") == "1"
CASES = sorted(p for p in GOLDEN.rglob("*") if p.is_file() and p.name.startswith(("bad_", "ok_"))
               and not p.name.endswith((".expected", ".fixed")))


def parse_errors(text: str, path: Path) -> int:
    if path.suffix != ".sh":
        return 0
    import tree_sitter
    import tree_sitter_bash
    tree = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language())).parse(text.encode())
    count = 0
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            count += 1
        stack.extend(node.children)
    return count


def render(path: Path, text: str) -> str:
    """The findings as the editor and `check --format json` get them (servelint/serialize.py),
    one line each, with their fixes."""
    result = lint(text, path=str(path))
    lines = []
    for f in result.findings:
        d = diagnostic(f, result.index, path.resolve().as_uri(), None, result.rules)
        start, end = d["range"]["start"], d["range"]["end"]
        lines.append(f"{start['line'] + 1}:{start['character'] + 1}-{end['line'] + 1}:"
                     f"{end['character'] + 1} {Severity(d['severity']).label} {d['code']} {d['message']}")
        for fx in d["data"]["fixes"]:
            mark = "*" if fx["preferred"] else "-"
            safe = "safe" if fx["safe"] else "unsafe"
            lines.append(f"    {mark} fix ({safe}): {fx['title']}")
    return "\n".join(lines) + ("\n" if lines else "")


@pytest.mark.parametrize("path", CASES, ids=[str(p.relative_to(GOLDEN)) for p in CASES])
def test_golden(path: Path):
    text = path.read_text(encoding="utf-8")
    got = render(path, text)
    if path.name.startswith("ok_"):
        assert got == "", f"{path.name} should lint clean:\n{got}"
        return
    assert got, f"{path.name} should have findings"
    expected = path.with_name(path.name + ".expected")
    result = lint(text, path=str(path))
    fixed_text = apply_edits(text, fix_all_edits(result.findings))
    fixed = path.with_name(path.name + ".fixed")
    if UPDATE:
        expected.write_text(got, encoding="utf-8")
        if fixed_text != text:
            fixed.write_text(fixed_text, encoding="utf-8")
        elif fixed.exists():
            fixed.unlink()
    assert expected.exists(), f"missing {expected.name}; run with SERVELINT_UPDATE_GOLDEN=1"
    assert got == expected.read_text(encoding="utf-8")
    if fixed.exists():
        assert fixed_text == fixed.read_text(encoding="utf-8")
        # The fixed file must still parse as cleanly as the original did.
        assert parse_errors(fixed_text, path) <= parse_errors(text, path)
    else:
        assert fixed_text == text
