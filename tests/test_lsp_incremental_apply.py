"""The server applies an editor's incremental edit by slicing the text at the range's
offsets (lsp/server.py patches pygls 2.1.1, which rewrote the whole text line by line).
Checked against a plain reading of the protocol: lines end at \\n, \\r\\n or \\r only,
columns count UTF-16 code units, a column past a line's end means the line's end, a line
past the last means the end of the text."""

import random
import re

from lsprotocol import types
from pygls.workspace.text_document import TextDocument

import servelint.lsp.server  # noqa: F401  (installs the patch)

LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def reference_offset(text: str, line: int, character: int) -> int:
    lines = [m.group() for m in LINE.finditer(text)]
    if line >= len(lines):
        return len(text)
    start = sum(len(x) for x in lines[:line])
    content = lines[line].rstrip("\r\n") if lines[line].endswith(("\r\n", "\n", "\r")) else lines[line]
    if lines[line].endswith("\r\n"):
        content = lines[line][:-2]
    elif lines[line].endswith(("\n", "\r")):
        content = lines[line][:-1]
    units = 0
    for k, ch in enumerate(content):
        if units >= character:
            return start + k
        units += 2 if ord(ch) > 0xFFFF else 1
    return start + len(content)


def test_random_incremental_edits_match_the_protocol():
    random_edits(random.Random(3))


def test_a_large_documents_edits_built_in_pieces_match_the_protocol(monkeypatch):
    """A large document's new text is built from pieces of the old (server.splice); here
    every document counts as large (pieces of 2 characters)."""
    monkeypatch.setattr(servelint.lsp.server, "SPLICE_CHUNK", 2)
    random_edits(random.Random(4))


def test_splice_is_slicing():
    rng = random.Random(5)
    for _ in range(2000):
        text = "".join(rng.choice(["a", "é", "😀", "\n", "xyz"]) for _ in range(rng.randrange(0, 30)))
        a = rng.randrange(len(text) + 1)
        b = rng.randrange(a, len(text) + 1)
        insert = rng.choice(["", "7", "ü", "😀😀", "long insert\n"])
        for chunk in (1, 2, 3, 7, None):
            assert servelint.lsp.server.splice(text, a, b, insert, chunk) == text[:a] + insert + text[b:]


def test_an_edit_of_a_large_document_makes_one_new_copy_of_it():
    """Slicing a 7 MB text at an edit held both slices and the new text at once (twice
    the document besides the old text); built in place, the new text is the only copy."""
    import tracemalloc

    line = "--tp-size 2 --model-path /models/m \\\n"
    text = line * 200_000
    n = len(text)
    at = (200_000 // 3) * len(line) + 10  # the "2" of a line a third of the way down
    doc = TextDocument("file:///big.sh", text)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        doc.apply_change(types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(200_000 // 3, 10),
                              end=types.Position(200_000 // 3, 11)), text="4"))
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert doc.source == text[:at] + "4" + text[at + 1:]
    assert peak < 1.4 * n, peak / n  # the slicing way: 2.0 n


def random_edits(rng: random.Random) -> None:
    pieces = ["a", "b", "é", "😀", "\n", "\r\n", "\r", "\f", "\u2028", " ", "--tp 2"]
    for trial in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40)))
        doc = TextDocument("file:///t.sh", text)
        for step in range(8):
            n_lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 2
            p1 = (rng.randrange(n_lines), rng.randrange(12))
            p2 = (rng.randrange(n_lines), rng.randrange(12))
            p1, p2 = sorted([p1, p2])
            new_text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 4)))
            a = reference_offset(text, *p1)
            b = max(a, reference_offset(text, *p2))
            text = text[:a] + new_text + text[b:]
            doc.apply_change(types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(*p1), end=types.Position(*p2)),
                text=new_text))
            assert doc.source == text, (trial, step)


def test_an_edited_line_index_of_a_long_text_is_the_index_read_again():
    """LineIndex.edited moves the offsets below an edit 8,192 at a time: texts with tens of
    thousands of lines after the edit, edits that add, remove and keep lines."""
    from servelint.model import LineIndex

    rng = random.Random(6)
    text = "".join(rng.choice(["a", "bc", "--tp 2", "\n", "\n\n"]) for _ in range(60_000))
    index = LineIndex(text)
    for insert in ["", "x", "\n", "abc\n\nd", "é\n"]:
        a = rng.randrange(len(text) // 4)
        b = rng.randrange(a, a + 50)
        new = text[:a] + insert + text[b:]
        got = LineIndex.edited(index, new, a, len(text) - b)
        assert list(got.starts) == list(LineIndex(new).starts)
        text, index = new, got
