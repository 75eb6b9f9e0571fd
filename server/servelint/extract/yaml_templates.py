"""YAML documents as the YAML parser sees them (`yaml_launch` reads them): Go/Helm
template actions (`{{ ... }}`, GitHub `${{ ... }}`) and merge-conflict markers blanked,
keeping every offset and line break; where the values the file does not fix are
(`unknown`), which lines are not YAML (`dropped`, `output`), what `{{ range }}` repeats,
which actions print a value the chart's values.yaml fixes (`subs`, see `helm_values`), and
where documents (`---`, Helm `define` blocks) start.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from servelint.model import LineIndex, Related, Span

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
    subs: list["Sub"] = field(default_factory=list)  # actions printing a value of values.yaml

    def is_unknown(self, start: int, end: int) -> bool:
        return overlaps(self.unknown, start, end)

    def in_repeat(self, offset: int, after: int = -1) -> bool:
        """Whether `offset` is inside a `{{ range }}` block that opens at or after `after`
        (a range around the whole list or launch repeats all of it, not its words)."""
        # {{ range }} blocks nest, so these spans may overlap: a plain scan.
        return any(after <= s <= offset < e for s, e in self.repeat)

    def subs_in(self, start: int, end: int) -> list["Sub"]:
        return [x for x in self.subs if x.start < end and start < x.end] if self.subs else []


@dataclass
class Sub:
    """A template action that prints a value the chart's values.yaml fixes: [start, end)
    in the document, the printed value (`text`, without the quotes the pipeline adds),
    `quote` ('"', "'" or ""), and the related place in values.yaml (None for a template's
    own `default`)."""

    start: int
    end: int
    text: str
    quote: str
    related: Related | None

    @property
    def rendered(self) -> str:
        return self.quote + self.text + self.quote

    @property
    def span(self) -> Span:
        return Span(self.start, self.end)


@dataclass
class Action:
    """One template action as `scan_actions` reads it."""

    start: int
    end: int
    body: str  # between the braces, trim markers and spaces removed
    control: bool
    dot_root: bool  # no with/range between here and the top (or the enclosing define)
    define: str | None  # the enclosing define's name (dot is its argument there)


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


def prepare(text: str, index: LineIndex, chart=None) -> Prepared:
    """The document as the parser sees it. `chart` (a `helm_values.Chart`): the chart the
    document is a template of, whose values.yaml fixes `.Values` lookups."""
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
        actions = scan_actions(text)
        dead = _dead_lines(actions, text, index, chart) if chart is not None else set()
        for line in sorted(dead):
            blank_line(line, False)
        for act in actions:
            s, e = act.start, act.end
            first, last = index.line_of(s), index.line_of(e)
            if first in dead:
                continue  # a branch the chart's values leave out
            ls, le = index.line_start(first), index.line_end(last)
            body, control = act.body, act.control
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
                    elif not control:  # a line of several actions, one of which emits
                        span = (index.line_start(line), index.line_end(line))
                        if span not in prep.output:
                            prep.output.append(span)
                continue
            # An expression inside a line: blanked to a plain word; its value is the one
            # values.yaml sets, or unknown.
            for k in range(s, e):
                if chars[k] not in "\r\n":
                    chars[k] = "_"
            sub = _sub(act, chart) if chart is not None and not control and ".Values" in body else None
            if sub is not None:
                prep.subs.append(sub)
            else:
                prep.unknown.append((s, e))
    prep.text = "".join(chars)
    prep.unknown.sort()
    prep.output.sort()
    prep.repeat.sort()
    prep.subs.sort(key=lambda x: x.start)
    return prep


def scan_actions(text: str) -> list[Action]:
    """Every template action of `text` in order, with the scope it is written in: whether
    dot is the chart's root there and which `define` encloses it. GitHub `${{ ... }}`
    expressions are actions too (never control ones)."""
    out: list[Action] = []
    scopes: list[tuple[str, str | None]] = []  # (keyword, define name)
    for m in _TEMPLATE.finditer(text):
        s, e = m.start(), m.end()
        github = s > 0 and text[s - 1] == "$"
        if github:
            s -= 1
        body = m.group(0)[2:-2].strip().lstrip("-").rstrip("-").strip()
        control = bool(_CONTROL.match(body)) and not github
        define = next((name for kind, name in reversed(scopes) if kind == "define"), None)
        inner = scopes[max((i + 1 for i, (kind, _) in enumerate(scopes) if kind == "define"), default=0):]
        dot_root = all(kind == "if" for kind, _ in inner)  # in a define: dot is its argument
        out.append(Action(s, e, body, control, dot_root, define))
        if not control:
            continue
        word = body.split(None, 1)[0] if body else ""
        if word in ("if", "with", "range", "block"):
            scopes.append((word, define))
        elif word == "define":
            name = _DEFINE_NAME.match(body)
            scopes.append(("define", name.group(1) if name else ""))
        elif word == "end" and scopes:
            scopes.pop()
    return out


_DEFINE_NAME = re.compile(r'^define\s+"([^"]*)"')


def _dead_lines(actions: list[Action], text: str, index: LineIndex, chart) -> set[int]:
    """Lines of `{{ if }}` branches that the chart's values.yaml leaves out: `if X` / `if not
    X` with X a value the file sets (Go's truth: false, 0, "", null and empty collections
    are false), when the if, its else and its end each stand on lines of their own. A value
    values.yaml does not have is unknown: both branches stay."""
    dead: set[int] = set()
    # [keyword, state, last line of the action that opened the current branch]; state: True/
    # False (the branch taken so far), "rest" (every later branch is out), None (unknown)
    stack: list[list] = []

    def alone(act: Action) -> bool:
        a, b = index.line_of(act.start), index.line_of(act.end)
        return _only_actions(text[index.line_start(a):index.line_end(b)])

    for act in actions:
        if not act.control:
            continue
        words = act.body.split(None, 1)
        word = words[0] if words else ""
        line, last = index.line_of(act.start), index.line_of(act.end)
        if word in ("if", "with", "range", "define", "block"):
            state = _condition(act, words[1] if len(words) > 1 else "", chart) \
                if word == "if" and alone(act) else None
            stack.append([word, state, last])
        elif word == "else" and stack:
            top = stack[-1]
            if top[0] != "if" or top[1] is None or not alone(act):
                top[1] = None
                continue
            if top[1] is False or top[1] == "rest":
                dead.update(range(top[2] + 1, line))
            if top[1] is True:
                top[1] = "rest"
            elif top[1] is False:
                rest = words[1] if len(words) > 1 else ""
                top[1] = True if not rest else (_condition(act, rest[2:].strip(), chart)
                                                 if rest.startswith("if") else None)
            top[2] = last
        elif word == "end" and stack:
            top = stack.pop()
            if top[0] == "if" and (top[1] is False or top[1] == "rest") and alone(act):
                dead.update(range(top[2] + 1, line))
    return dead


def _condition(act: Action, expr: str, chart) -> bool | None:
    """The truth of `X` or `not X`, X a `.Values` lookup the chart's values.yaml sets."""
    from servelint.extract.helm_values import truth

    negate = expr.startswith("not ")
    if negate:
        expr = expr[4:].strip()
    if act.define is not None and not chart.define_is_root(act.define):
        return None
    got = truth(expr, chart.values, act.dot_root)
    return None if got is None else (not got if negate else got)


def _sub(act: Action, chart) -> Sub | None:
    """The value an action prints, when it is a `.Values` lookup that the chart's
    values.yaml fixes and `.Values` means the chart's values where it is written."""
    from servelint.extract.helm_values import parse_lookup, render

    look = parse_lookup(act.body)
    if look is None:
        return None
    if act.define is not None and not chart.define_is_root(act.define):
        return None
    if not look.dollar and not act.dot_root:
        return None
    got = render(look, chart.values)
    if got is None:
        return None
    value, hit = got
    related = chart.values.related(hit, value if value else '""') if hit is not None else None
    return Sub(act.start, act.end, value, look.quote, related)


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

