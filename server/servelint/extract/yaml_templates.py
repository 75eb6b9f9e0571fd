"""YAML documents as the YAML parser sees them (`yaml_launch` reads them): Go/Helm
template actions (`{{ ... }}`, GitHub `${{ ... }}`) and merge-conflict markers blanked,
keeping every offset and line break; where the values the file does not fix are
(`unknown`), which lines are not YAML (`dropped`, `output`), what `{{ range }}` repeats,
and where documents (`---`, Helm `define` blocks) start.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from servelint.model import LineIndex

_DOC_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.M)
# A template action on one line, or a (possibly multi-line) template comment.
_TEMPLATE = re.compile(r"\{\{-?\s*/\*.*?\*/\s*-?\}\}|\{\{[^\n]*?\}\}", re.S)
# Template actions that emit nothing.
_CONTROL = re.compile(r"^(?:(?:if|else|end|range|with|define|block|break|continue)\b|/\*|\$\w*\s*:?=)")


@dataclass
class Prepared:
    """The document as the YAML parser sees it: the same length and line breaks as the
    original, with template actions and merge-conflict markers blanked."""

    text: str
    unknown: list[tuple[int, int]] = field(default_factory=list)  # values the file does not fix
    dropped: set[int] = field(default_factory=set)  # lines that are not YAML (and not script)
    output: list[tuple[int, int]] = field(default_factory=list)  # dropped lines that may emit words
    repeat: list[tuple[int, int]] = field(default_factory=list)  # inside {{ range }}: any count
    bounds: list[int] = field(default_factory=list)  # extra document boundaries (line starts)

    def is_unknown(self, start: int, end: int) -> bool:
        return overlaps(self.unknown, start, end)

    def in_repeat(self, offset: int) -> bool:
        # {{ range }} blocks nest, so these spans may overlap: a plain scan.
        return any(s <= offset < e for s, e in self.repeat)


def overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) meets one of `spans` (sorted, disjoint)."""
    i = bisect.bisect_left(spans, (end, end)) - 1
    while i >= 0:
        s, e = spans[i]
        if e <= start:
            return False  # disjoint and sorted: the earlier ones end earlier still
        if s < end:
            return True
        i -= 1
    return False


def prepare(text: str, index: LineIndex) -> Prepared:
    prep = Prepared(text)
    if "<<<<<<<" not in text and "{{" not in text:
        return prep
    chars = list(text)

    def blank_line(line: int, output: bool) -> None:
        s, e = index.line_start(line), index.line_end(line)
        for k in range(s, e):
            if chars[k] not in "\r\n":
                chars[k] = " "
        prep.dropped.add(line)
        if output:
            prep.output.append((s, e))

    if "<<<<<<<" in text:
        # Merge conflicts: keep our side; blank the markers and their side.
        state = None
        for line in range(len(index.starts)):
            s = index.line_start(line)
            head = text[s:s + 8]
            if head.startswith("<<<<<<<"):
                state = "ours"
                blank_line(line, False)
            elif state and head.startswith("|||||||"):
                state = "base"
                blank_line(line, False)
            elif state and head.startswith("======="):
                state = "theirs"
                blank_line(line, False)
            elif state and head.startswith(">>>>>>>"):
                state = None
                blank_line(line, False)
            elif state in ("base", "theirs"):
                blank_line(line, False)

    if "{{" in text:
        stack: list[tuple[str, int]] = []  # (keyword, line start)
        for m in _TEMPLATE.finditer(text):
            s, e = m.start(), m.end()
            if text[s - 1:s] == "$" and s > 0:
                s -= 1  # GitHub `${{ ... }}`
            first, last = index.line_of(s), index.line_of(e)
            ls, le = index.line_start(first), index.line_end(last)
            body = m.group(0)[2:-2].strip().lstrip("-").rstrip("-").strip()
            control = bool(_CONTROL.match(body)) and not text[s] == "$"
            word = body.split(None, 1)[0] if body else ""
            only = _only_actions(text[ls:le])
            if control:
                if word in ("if", "with", "range", "define", "block"):
                    stack.append((word, ls))
                    if word == "define":
                        prep.bounds.append(ls)
                elif word == "end" and stack:
                    kind, start = stack.pop()
                    if kind == "range":
                        prep.repeat.append((start, le))
                    elif kind == "define":
                        prep.bounds.append(index.line_start(min(last + 1, len(index.starts) - 1))
                                           if last + 1 < len(index.starts) else len(text))
            if only and text[s] != "$":
                for line in range(first, last + 1):
                    if line not in prep.dropped:
                        blank_line(line, not control)
                continue
            # An expression inside a line: an unknown value, blanked to a plain word.
            for k in range(s, e):
                if chars[k] not in "\r\n":
                    chars[k] = "_"
            prep.unknown.append((s, e))
    prep.text = "".join(chars)
    prep.unknown.sort()
    prep.output.sort()
    prep.repeat.sort()
    return prep


def _only_actions(line: str) -> bool:
    rest = _TEMPLATE.sub("", line)
    return not rest.strip() and "{{" in line


def chunks(prep: Prepared, original: str) -> list[tuple[int, int]]:
    """Document ranges: `---` lines, and Helm `define` blocks, start new ones."""
    starts = {0}
    starts.update(m.start() for m in _DOC_START.finditer(prep.text))
    starts.update(b for b in prep.bounds if 0 <= b < len(original))
    cuts = sorted(starts) + [len(original)]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]

