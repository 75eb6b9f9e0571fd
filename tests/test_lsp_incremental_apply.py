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
    rng = random.Random(3)
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
