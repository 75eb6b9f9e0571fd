"""Say, for every bundled rule record, which SGLang releases have the check it makes,
judged from SGLang's own source of each release, and write that into the packs as
`appliesTo` (with `verifiedBy` saying how).

    .venv/bin/python tools/verify_rules.py            # every known release; write the packs
    .venv/bin/python tools/verify_rules.py --check    # exit 1 when the packs say otherwise
    .venv/bin/python tools/verify_rules.py --releases 0.5.3 0.5.14
                                                      # only these; compare, never write

A rule is verified for a release when (a) and (b) hold there.

(a) Its options. Every option its condition names (and its fixes and messageTemplate)
    is in the release's flag catalog, of the same kind as in the reference release
    (switch, single value or list). A value the rule compares an option with (eq, ne,
    notIn, subsetOf) or writes into it (a fix) is accepted by the release's choices when
    the reference's accept it; of a membership list (in, contains) at least one is (a
    listed value the release does not accept cannot be written there, so it changes
    nothing). And the record compiles against that catalog (`build_rule`).

(b) Its validator. A `raise` (or `assert`) somewhere in the release's `sglang/` source
    says the rule's message. Raise and assert statements are found by text and parsed
    one at a time with `ast`; a message is read as literal text and "any text" (implicit
    and `+` concatenation joined, f-string fields, `%` and `.format` placeholders; a
    raised variable is what was assigned to it above the raise) with whitespace runs as
    one space. It says the record's message when
      - it can say errorMessage, or a message that starts with it (a record's
        errorMessage may stop before the value SGLang appends), its literal text saying
        at least half of errorMessage's fixed text (what the messagePattern does not
        leave open);
      - when the record has a messagePattern, some text matches both it and the pattern
        (read as re.match reads it: a prefix, one text per alternative), and, when
        errorMessage stops before the text its pattern goes on with, its literal text
        says half of the pattern's;
      - a bare `assert x` says its test, `self.x`, `cfg.x` and `view(args).x` read alike
        (the records of such asserts quote the test: SGLang prints nothing else).
    And the raise's condition reads what it reads in the reference release, where that
    can be told: the tests of the ifs (and whiles, and loop iterables) around it in its
    function, an assert's test, and what was assigned to the locals these read, must
    name the dest of each of the rule's options that the reference's does, and, of each
    option the rule compares with values, the same choices (among those both releases
    accept) as the reference's.

The reference release is the one the records were written and checked for (0.5.23,
where make conformance has SGLang's own validator judge every record's examples). A
record whose message is found nowhere in the reference's source is reported and keeps
the appliesTo it has. The releases are `servelint.catalog.known_versions()`; the wheels
come from PyPI through tools/catalog_release.py (`download`, cached in --cache).
Writing sets, in every other record, `appliesTo: {sglang: RANGES}` and `verifiedBy:
{method: source, tool: tools/verify_rules.py, releases: RANGES}`: RANGES are the verified
releases as one range string ('>=0.5.14,<=0.5.23'; '==0.5.23' for one release) or, when
they have gaps, a list of them; then it formats the packs as tools/fmt_packs.py does and
rebuilds bundled.json (tools/build_packs.py).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import time
import zipfile
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
PACKS = ROOT / "server" / "servelint" / "rules" / "packs"
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(TOOLS))

import yaml

try:  # the regular expression parser, to read a messagePattern's alternatives
    import re._constants as sre_constants
    import re._parser as sre_parse
except ImportError:  # Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

from servelint.catalog import (
    DEFAULT_VERSION,
    Catalog,
    known_versions,
    load_catalog,
    version_key,
)
from servelint.rules import FAST_LOADER

TOOL = "tools/verify_rules.py"
REFERENCE = DEFAULT_VERSION  # the release the records were written and oracle-checked for
COMPARE_VALUE_OPS = ("eq", "ne", "in", "notIn", "contains", "subsetOf")
# Comparisons that hold when the value is one of the listed ones: a listed value that a
# release does not accept cannot be written there, so it changes nothing. (For the others,
# eq/ne/notIn/subsetOf and a fix's value, it would: `notIn: [a, b]` fires on every other
# value, so b missing, or renamed, in a release makes the rule fire on what it accepts.)
MEMBERSHIP = ("in", "contains")


def default_cache() -> Path:
    import catalog_release
    return catalog_release.DEFAULT_CACHE


# ---------------------------------------------------------------------------
# Messages: what a record says SGLang prints, as literal text and wildcards (None).

Parts = list  # of str (literal text) and None (any text)
HOLE = "\x00"  # a value in a message: only a wildcard of the raise's message takes it
MIN_SAID = 1 / 2  # of errorMessage's fixed text, the share a raise's literal text must say
MAX_ALTERNATIVES = 32


def normalize_parts(parts: Iterable[str | None]) -> Parts:
    """Adjacent literals joined, whitespace runs as one space, wildcards merged, the
    ends stripped."""
    out: Parts = []
    for p in parts:
        if p is None:
            if not out or out[-1] is not None:
                out.append(None)
        elif out and isinstance(out[-1], str):
            out[-1] = out[-1] + p
        else:
            out.append(p)
    out = [re.sub(r"\s+", " ", p) if isinstance(p, str) else None for p in out]
    for k, p in enumerate(out):
        # The ends, and the space next to a wildcard (a value that may be empty or
        # bring its own space), are not compared.
        if isinstance(p, str):
            if k == 0 or out[k - 1] is None:
                p = p.lstrip()
            if k == len(out) - 1 or out[k + 1] is None:
                p = p.rstrip()
            out[k] = p
    kept: Parts = []
    for p in out:
        if p != "" and not (p is None and kept and kept[-1] is None):
            kept.append(p)
    return kept


def literal_length(parts: Parts) -> int:
    return sum(len(p) for p in parts if isinstance(p, str))


def normalize_text(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


_WORD = re.compile(r"[A-Za-z0-9_]+")


def literal_words(parts: Parts) -> set[str]:
    """The words of the literal text; a word that touches a wildcard may be half of a
    longer word in the source, so it is left out."""
    out = set()
    for i, p in enumerate(parts):
        if not isinstance(p, str):
            continue
        for m in _WORD.finditer(p):
            if (m.start() == 0 and i > 0) or (m.end() == len(p) and i < len(parts) - 1):
                continue
            if len(m.group()) >= 3 and not m.group().isdigit():
                out.add(m.group())
    return out


def pattern_alternatives(pattern: str) -> list[Parts]:
    """The texts a messagePattern matches, as literals and wildcards: a group of
    alternatives gives one text per branch (up to MAX_ALTERNATIVES), `x?` gives both,
    anything that repeats or is a class of characters is a wildcard."""
    try:
        tree = sre_parse.parse(pattern)
    except re.error:
        return []
    return [normalize_parts(a) for a in _expand(list(tree))]


def _expand(items: list) -> list[Parts]:
    c = sre_constants
    alts: list[Parts] = [[]]
    for op, av in items:
        piece: list[Parts]
        if op == c.LITERAL:
            piece = [[chr(av)]]
        elif op == c.SUBPATTERN:
            piece = _expand(list(av[-1]))
        elif op == c.BRANCH:
            piece = [x for branch in av[1] for x in _expand(list(branch))]
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, sub = av
            inner = _expand(list(sub))
            if low == 0 and high == 1:
                piece = [[]] + inner
            elif low == high and low <= 8 and len(inner) == 1 and None not in inner[0]:
                piece = [inner[0] * low]
            else:
                piece = [[None]]
        elif op == c.AT:
            continue
        elif op == c.IN and len(av) == 1 and av[0][0] == c.LITERAL:
            piece = [[chr(av[0][1])]]
        else:
            piece = [[None]]
        if len(alts) * len(piece) > MAX_ALTERNATIVES:
            piece = [[None]]
        alts = [a + b for a in alts for b in piece]
    return alts


def canonical_test(node: ast.expr) -> str:
    """An assert's test as text, `self.x`, `cfg.x`, `view(args).x` all read as `x`: the
    same check however the release names the server args. (Rewrites `node`.)"""

    class Strip(ast.NodeTransformer):
        def visit_Attribute(self, n: ast.Attribute) -> ast.AST:
            v = n.value
            if isinstance(v, ast.Name) or (isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
                                           and len(v.args) == 1 and isinstance(v.args[0], ast.Name)):
                return ast.copy_location(ast.Name(n.attr, ast.Load()), n)
            self.generic_visit(n)
            return n

    return ast.unparse(Strip().visit(node))


@dataclass
class Alternative:
    parts: Parts
    literal: int  # literal characters
    words: set[str]
    seq: list  # one item per character, None per wildcard
    text: str  # the text with HOLE for each wildcard


def alternative(parts: Parts) -> Alternative:
    seq: list = []
    for p in parts:
        seq.extend(p if isinstance(p, str) else [None])
    text = "".join(HOLE if p is None else p for p in parts)
    return Alternative(parts, literal_length(parts), literal_words(parts), seq, text)


@dataclass
class Target:
    """One record, as the verification needs it."""
    code: str
    id: str
    pack: str
    record: dict
    message: str  # errorMessage, normalized
    said: str  # errorMessage, normalized, each `{name}` (a value) as HOLE
    said_literal: int  # how much of it is fixed text (not where the pattern has a wildcard)
    patterns: list[Alternative]  # what messagePattern matches (as re.match reads it: a prefix)
    anchored: bool  # the pattern ends with $: not a prefix
    cut: bool  # errorMessage stops before the text its messagePattern goes on with
    expression: str | None  # the message is an assert's own test (a bare assert)
    words: set[str]  # words of the message a raise must have half of (the prefilter's too)
    options: list[str] = field(default_factory=list)  # every option the record names
    condition_options: list[str] = field(default_factory=list)
    compared: list[tuple[str, str, list[Any]]] = field(default_factory=list)  # (option, op, values)


def make_target(rec: dict, pack: str) -> Target:
    from servelint.rules import rule_code
    message = normalize_text(rec["errorMessage"])
    full = _fill_placeholders(message)  # `{name}` in it is a value SGLang fills in
    said = "".join(HOLE if p is None else p for p in full)
    pattern = rec.get("messagePattern")
    patterns = []
    anchored = False
    if isinstance(pattern, str) and pattern:
        anchored = pattern.rstrip().endswith("$") and not pattern.rstrip().endswith("\\$")
        for parts in pattern_alternatives(pattern):
            patterns.append(alternative(parts))
    words = literal_words(full)
    said_literal = len(said.replace(HOLE, ""))
    cut = False
    if patterns:
        words &= set().union(*(a.words for a in patterns))
        cut = True
        for a in patterns:
            at = align(a.parts + [None], said)
            if at is not None and at.end is not None:
                # The pattern's literal text, and whatever errorMessage says after it.
                cut = False
                said_literal = min(said_literal, a.literal + len(said[at.end:].replace(HOLE, "")))
    expression = None
    try:
        tree = ast.parse(re.sub(r"^assert\s+", "", message), mode="eval")
        if not isinstance(tree.body, (ast.Name, ast.Constant, ast.Attribute)):
            expression = canonical_test(tree.body)
    except SyntaxError:
        pass
    cond_opts, compared = condition_refs(rec.get("condition"))
    opts = list(cond_opts)
    for fx in rec.get("fixes") or []:
        for e in fx.get("edits") or []:
            for op in ("remove", "add", "set"):
                if isinstance(e.get(op), str):
                    opts.append(e[op])
                    if "value" in e and op in ("add", "set"):
                        compared.append((e[op], "set", [e["value"]]))
    opts += re.findall(r"\{(--[A-Za-z0-9-]+)\}", rec.get("messageTemplate") or "")
    return Target(code=rule_code(rec), id=str(rec["id"]), pack=pack, record=rec,
                  message=message, said=said, said_literal=said_literal, patterns=patterns,
                  anchored=anchored, cut=cut,
                  expression=expression, words=words,
                  options=list(dict.fromkeys(opts)), condition_options=list(dict.fromkeys(cond_opts)),
                  compared=compared)


def _fill_placeholders(message: str) -> Parts:
    """errorMessage with each `{name}` (a value SGLang prints) as a wildcard."""
    out: Parts = []
    for piece in re.split(r"(\{[^{}\s]+\})", message):
        out.append(None if re.fullmatch(r"\{[^{}\s]+\}", piece) else piece)
    return normalize_parts(out)


def condition_refs(raw: Any) -> tuple[list[str], list[tuple[str, str, list[Any]]]]:
    """The options a raw condition names, and (option, op, values) for each comparison of
    an option with literal values."""
    names: list[str] = []
    compared: list[tuple[str, str, list[Any]]] = []

    def expr(e: Any) -> str | None:
        """Collects the options of an expression; its option when it is one."""
        if isinstance(e, str) and e.startswith("--"):
            names.append(e)
            return e
        if isinstance(e, dict):
            if set(e) == {"option"}:
                return expr(e["option"])
            for args in e.values():
                for a in args if isinstance(args, list) else [args]:
                    expr(a)
        return None

    def walk(c: Any) -> None:
        if not isinstance(c, dict):
            return
        for key in ("all", "any"):
            for x in c.get(key) or []:
                walk(x)
        if "not" in c:
            walk(c["not"])
        for key in ("present", "absent"):
            if isinstance(c.get(key), str):
                names.append(c[key])
        subject = None
        if "option" in c:
            subject = expr(c["option"])
        elif "value" in c:
            subject = expr(c["value"])
        if subject is None and "value" not in c:
            return
        for op, value in c.items():
            if op in ("option", "value"):
                continue
            if isinstance(value, dict) or (isinstance(value, str) and value.startswith("--")):
                expr(value)
            elif subject is not None and op in COMPARE_VALUE_OPS:
                compared.append((subject, op, value if isinstance(value, list) else [value]))

    walk(raw)
    return list(dict.fromkeys(names)), compared


def intersects(a: list, b: list) -> bool:
    """Some text matches both: two sequences of characters and wildcards (None, any
    text, on either side)."""
    n, m = len(a), len(b)
    seen = set()
    todo = [(0, 0)]
    while todo:
        state = todo.pop()
        if state in seen:
            continue
        seen.add(state)
        i, j = state
        if i == n and j == m:
            return True
        x = a[i] if i < n else ""
        y = b[j] if j < m else ""
        if x is None:
            todo.append((i + 1, j))
            if j < m:
                todo.append((i, j + 1))
        if y is None:
            todo.append((i, j + 1))
            if i < n:
                todo.append((i + 1, j))
        if x and y and x == y:
            todo.append((i + 1, j + 1))
    return False


# ---------------------------------------------------------------------------
# Source: the message of each raise/assert of a release, as literals and wildcards.

@dataclass
class Site:
    path: str
    line: int
    parts: Parts | None  # the message; None for an assert without one
    expression: str | None  # an assert's test, when the assert has no message
    source: SourceFile
    node: ast.stmt  # the raise or assert
    seq: list = field(default_factory=list)
    _reads: Reads | None = None

    def __post_init__(self) -> None:
        if self.parts is not None:
            self.seq = alternative(self.parts).seq

    @property
    def reads(self) -> Reads:
        """What the raise's condition reads (its function parsed on first use)."""
        if self._reads is None:
            self._reads = self.source.condition_reads(self)
        return self._reads


class Reads(NamedTuple):
    names: frozenset[str]  # identifiers (attribute names: the server args' dests)
    strings: frozenset[str]  # string constants (the values options are compared with)




class Aligned(NamedTuple):
    matched: int  # characters of the message said by literal text
    end: int | None  # where the last literal ends in the message; None: the message ends inside


def align(parts: Parts, message: str) -> Aligned | None:
    """How the literal text of a message (`parts`, of a raise) lies in `message`, when
    it can say `message` or a message that starts with it (errorMessage may stop before
    the value SGLang appends); None when it cannot. A HOLE in `message` is taken only by
    a wildcard. Each literal is placed leftmost after the one before it, which finds a
    placement when there is one."""
    pos = matched = 0
    n = len(message)
    for k, part in enumerate(parts):
        if part is None:
            continue
        if k == 0:
            if message.startswith(part):
                pos = matched = len(part)
                continue
            return Aligned(n, None) if part.startswith(message) else None
        idx = message.find(part, pos)
        if idx >= 0:
            matched += len(part)
            pos = idx + len(part)
            continue
        # The message ends inside this literal, or inside the wildcard before it.
        for q in range(pos, n + 1):
            if part.startswith(message[q:]):
                return Aligned(matched + n - q, None)
    if parts and parts[-1] is None:
        return Aligned(matched, pos)
    return Aligned(matched, pos) if pos == n else None


def says(site: Site, target: Target) -> bool:
    """The raise's message reads as the record's: the raise can say the errorMessage (or
    a message that starts with it) and, when the record has a messagePattern, some text
    matches both the raise and the pattern (as re.match reads it: a prefix). And the
    raise's literal text says enough of it: half of the errorMessage's fixed text (the
    text where the pattern has no wildcard), or, when errorMessage stops before the text
    its pattern goes on with, half of the pattern's. A bare assert says its own test."""
    if site.parts is None:
        return site.expression is not None and site.expression == target.expression
    at = align(site.parts, target.said)
    if at is None:
        return False
    tail = [] if target.anchored else [None]
    if target.patterns and not any(intersects(site.seq, a.seq + tail) for a in target.patterns):
        return False
    if not target.cut:
        return at.matched >= MIN_SAID * target.said_literal
    for a in target.patterns:
        there = align(site.parts, a.text.rstrip(HOLE))
        if there is not None and there.matched * 2 >= a.literal:
            return True
    return False


_FMT_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsa%]")
_FMT_BRACE = re.compile(r"\{\{|\}\}|\{[^{}]*\}")


def _split_format(text: str, brace: bool) -> Parts:
    out: Parts = []
    pos = 0
    for m in (_FMT_BRACE if brace else _FMT_PERCENT).finditer(text):
        out.append(text[pos:m.start()])
        tok = m.group()
        out.append(tok[0] if tok in ("{{", "}}", "%%") else None)
        pos = m.end()
    out.append(text[pos:])
    return out


def skeleton(node: ast.AST | None) -> Parts | None:
    """A string expression as literals and wildcards; None when it is not one."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return [v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None
                for v in node.values]
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            left, right = skeleton(node.left), skeleton(node.right)
            if left is None and right is None:
                return None
            return (left or [None]) + (right or [None])
        if isinstance(node.op, ast.Mod):
            left = skeleton(node.left)
            if left is None:
                return None
            out: Parts = []
            for p in left:
                out.extend(_split_format(p, brace=False) if isinstance(p, str) else [None])
            return out
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"):
        base = skeleton(node.func.value)
        if base is None:
            return None
        out = []
        for p in base:
            out.extend(_split_format(p, brace=True) if isinstance(p, str) else [None])
        return out
    return None


def _segment(lines: list[str], node: ast.AST) -> str:
    """The source lines a node spans."""
    return "\n".join(lines[node.lineno - 1:getattr(node, "end_lineno", None) or node.lineno])


def _assignments(scope: ast.AST) -> dict[str, list[tuple[int, ast.expr, bool]]]:
    """name -> (line, value, is +=) for the simple assignments of a function body (not of
    the functions nested in it), in line order."""
    out: dict[str, list[tuple[int, ast.expr, bool]]] = {}
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out.setdefault(node.targets[0].id, []).append((node.lineno, node.value, False))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out.setdefault(node.target.id, []).append((node.lineno, node.value, False))
        elif (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
              and isinstance(node.target, ast.Name)):
            out.setdefault(node.target.id, []).append((node.lineno, node.value, True))
        todo.extend(ast.iter_child_nodes(node))
    for v in out.values():
        v.sort(key=lambda t: t[0])
    return out


def _resolve(assigns: dict[str, list[tuple[int, ast.expr, bool]]], name: str, line: int) -> list[Parts]:
    """What a raised variable holds: each assignment to it above the raise (in the same
    function), `+=` appended to the assignment before it."""
    out: list[Parts] = []
    current: Parts | None = None
    for lineno, value, augmented in assigns.get(name, []):
        if lineno >= line:
            break
        sk = skeleton(value)
        if augmented:
            if current is not None:
                current = current + (sk or [None])
                out.append(current)
            continue
        current = sk
        if sk is not None:
            out.append(sk)
    return out


_STATEMENT = re.compile(r"^[ \t]*(?:raise|assert)\b", re.MULTILINE)
_DEF = re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]")
WINDOW = 12  # lines around a raise that the prefilter reads (its message, its variable)
LONGEST = 60  # lines a raise statement may span


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


class SourceFile:
    """One module of a release. Its raise and assert statements are found by text, and
    only those whose surroundings may say a target's message are parsed, one statement
    at a time; the function around a raise is parsed when a message matches (for what
    its condition reads) or is a variable (for what was assigned to it). Parsing every
    module of a release would take a minute."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.lines = text.split("\n")
        self._functions: dict[int, tuple[ast.AST, int] | None] = {}
        self._module: ast.AST | None | bool = False

    def statements(self) -> list[int]:
        """Zero-based lines where a raise or assert statement starts."""
        out = []
        line, pos = 0, 0
        for m in _STATEMENT.finditer(self.text):
            line += self.text.count("\n", pos, m.start())
            pos = m.start()
            out.append(line)
        return out

    def window_words(self, i: int) -> set[str]:
        return set(_WORD.findall("\n".join(self.lines[max(0, i - WINDOW):i + WINDOW])))

    def statement(self, i: int) -> ast.Raise | ast.Assert | None:
        """The raise/assert starting on zero-based line i, line numbers as in the file."""
        indent = _indent(self.lines[i])
        buf: list[str] = []
        for k in range(i, min(i + LONGEST, len(self.lines))):
            line = self.lines[k]
            buf.append(line[min(indent, _indent(line)):])
            try:
                tree = ast.parse("\n".join(buf))
            except (SyntaxError, ValueError):
                continue
            node = tree.body[0] if tree.body else None
            if not isinstance(node, (ast.Raise, ast.Assert)):
                return None
            ast.increment_lineno(node, i)
            return node
        return None

    def sites_at(self, i: int) -> list[Site]:
        """The messages the raise/assert on zero-based line i can say."""
        node = self.statement(i)
        if node is None:
            return []
        exprs: list[ast.expr] = []
        if isinstance(node, ast.Assert):
            if node.msg is None:
                return [Site(self.path, i + 1, None, canonical_test(node.test), self, node)]
            exprs = [node.msg]
        elif isinstance(node.exc, ast.Call):
            call = node.exc
            exprs = (list(call.args) + [k.value for k in call.keywords if k.arg in ("msg", "message")])[:2]
        elif node.exc is not None:
            exprs = [node.exc]
        out = []
        for e in exprs:
            if isinstance(e, ast.Name):
                found = self._variable(i, e.id)
            else:
                sk = skeleton(e)
                found = [sk] if sk is not None else []
            out += [Site(self.path, i + 1, normalize_parts(sk), None, self, node) for sk in found]
        return out

    def _variable(self, i: int, name: str) -> list[Parts]:
        path = self._path_to(i)
        scope = next((n for n in reversed(path) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                     path[0] if path else None)
        return _resolve(_assignments(scope), name, i + 1) if scope is not None else []

    def condition_reads(self, site: Site) -> Reads:
        """The identifiers and strings the raise's condition reads: the tests of the ifs
        (and whiles) around it in its function, the iterables of the loops around it, an
        assert's own test, and what was assigned (above the raise) to the local names
        these read."""
        i = site.line - 1
        exprs: list[ast.AST] = []
        scope: ast.AST | None = None
        for anc in self._path_to(i):
            if isinstance(anc, (ast.If, ast.While)):
                exprs.append(anc.test)
            elif isinstance(anc, (ast.For, ast.AsyncFor)):
                exprs.append(anc.iter)
            elif isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
                exprs, scope = [], anc
        if isinstance(site.node, ast.Assert):
            exprs.append(site.node.test)
        names = {n.id for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name)}
        if scope is not None and names:
            assigns = _assignments(scope)
            for name in names:
                exprs += [value for line, value, _ in assigns.get(name, []) if line < site.line]
        strings = frozenset(n.value for e in exprs for n in ast.walk(e)
                            if isinstance(n, ast.Constant) and isinstance(n.value, str))
        return Reads(frozenset(_WORD.findall("\n".join(ast.unparse(e) for e in exprs))), strings)

    def _path_to(self, i: int) -> list[ast.AST]:
        """The nodes from the module (or the function parsed alone) down to the statement
        on zero-based line i, exclusive; line numbers as in the file."""
        tree = self._tree_around(i)
        if tree is None:
            return []
        path: list[ast.AST] = []
        node: ast.AST | None = tree
        line = i + 1
        while node is not None:
            path.append(node)
            nxt = None
            for child in ast.iter_child_nodes(node):
                start = getattr(child, "lineno", None)
                if start is not None and isinstance(child, ast.stmt) and start <= line <= (child.end_lineno or start):
                    nxt = None if start == line and isinstance(child, (ast.Raise, ast.Assert)) else child
                    break
            node = nxt
        return path

    def _tree_around(self, i: int) -> ast.AST | None:
        start, end = self._function(i)
        if start is not None:
            if start not in self._functions:
                prefix = self.lines[start][:_indent(self.lines[start])]
                body = "\n".join(l.removeprefix(prefix)
                                 for l in self.lines[start:end])
                try:
                    tree = ast.parse(body)
                    ast.increment_lineno(tree, start)
                    self._functions[start] = (tree, start)
                except (SyntaxError, ValueError):
                    self._functions[start] = None
            found = self._functions[start]
            if found is not None:
                return found[0]
        if self._module is False:
            try:
                self._module = ast.parse(self.text)
            except (SyntaxError, ValueError):
                self._module = None
        return self._module if isinstance(self._module, ast.AST) else None

    def _function(self, i: int) -> tuple[int | None, int]:
        """The lines [start, end) of the function around line i (None: none found)."""
        lines = self.lines
        cur = _indent(lines[i])
        start = None
        for j in range(i - 1, -1, -1):
            s = lines[j]
            if not s.strip() or s.lstrip().startswith(("#", ")", "]", "}")):
                continue  # a closing bracket belongs to the statement it closes
            ind = _indent(s)
            if ind < cur:
                cur = ind
                if _DEF.match(s):
                    start = j
                    break
                if cur == 0:
                    break
        if start is None:
            return None, len(lines)
        top = _indent(lines[start])
        end = len(lines)
        for k in range(start + 1, len(lines)):
            s = lines[k]
            if not s.strip() or s.lstrip().startswith("#"):
                continue
            if _indent(s) <= top and not s.lstrip().startswith((")", "]", "}")):
                end = k
                break
        return start, end


def find_sites(sources: Iterable[tuple[str, str]], targets: list[Target]) -> dict[str, list[Site]]:
    """code -> the raise sites that say the target's message. A raise is looked at for
    a target when the lines around it hold one of the target's three rarest words (in
    this release) and a third of its words."""
    windows: list[tuple[SourceFile, int, set[str]]] = []
    df: Counter[str] = Counter()
    for path, text in sources:
        if "raise" not in text and "assert" not in text:
            continue
        f = SourceFile(path, text)
        for i in f.statements():
            ws = f.window_words(i)
            windows.append((f, i, ws))
            df.update(ws)
    by_rare: dict[str, list[Target]] = {}
    for t in targets:
        words = t.words or literal_words(_fill_placeholders(t.message))
        for w in sorted((w for w in words if df[w]), key=lambda w: (df[w], w))[:3]:
            by_rare.setdefault(w, []).append(t)
    out: dict[str, list[Site]] = {t.code: [] for t in targets}
    for f, i, ws in windows:
        cands = {id(t): t for w in ws.intersection(by_rare) for t in by_rare[w]}
        cands = {k: t for k, t in cands.items() if len(t.words & ws) * 3 >= len(t.words)}
        if not cands:
            continue
        for site in f.sites_at(i):
            for t in cands.values():
                if says(site, t):
                    out[t.code].append(site)
    return out


# ---------------------------------------------------------------------------
# A release's source, read from its wheel.

def wheel_sources(version: str, cache: Path) -> Iterator[tuple[str, str]]:
    import catalog_release
    wheel = catalog_release.download(version, cache)
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("sglang/") and name.endswith(".py"):
                yield name, zf.read(name).decode("utf-8", "replace")


# ---------------------------------------------------------------------------
# Options: the catalog side.

def kind_class(kind: str) -> str:
    return {"flag": "switch", "bool_optional": "switch", "list": "list"}.get(kind, "value")


def _accepted(value: Any, choices: tuple[Any, ...] | None) -> bool:
    if choices is None or value is None:
        return True
    if isinstance(value, bool):
        return any(c is value for c in choices)
    return any(str(c) == str(value) and not isinstance(c, bool) for c in choices)


def option_problems(target: Target, catalog: Catalog, reference: Catalog) -> list[str]:
    """Why the record's options do not hold in `catalog` (empty: they do)."""
    problems = []
    for name in target.options:
        ref, opt = reference.lookup(name), catalog.lookup(name)
        if opt is None:
            problems.append(f"no option {name}")
        elif ref is not None and kind_class(ref.kind) != kind_class(opt.kind):
            problems.append(f"{name} is a {kind_class(opt.kind)}, not a {kind_class(ref.kind)}")
    for name, op, values in target.compared:
        ref, opt = reference.lookup(name), catalog.lookup(name)
        if ref is None or opt is None:
            continue
        known = [v for v in values if not isinstance(v, (dict, list)) and _accepted(v, ref.choices)]
        gone = [v for v in known if not _accepted(v, opt.choices)]
        if op in MEMBERSHIP:
            # A value the release does not accept cannot be written there: it only
            # leaves the list, and what the rule fires on stays the same.
            if known and len(gone) == len(known):
                problems.append(f"{name} accepts none of {known!r}")
        else:
            problems += [f"{name} does not accept {v!r}" for v in gone]
    if not problems:
        from servelint.rules import build_rule
        from servelint.rules.condition import ConditionError
        try:
            build_rule(target.record, catalog, target.pack)
        except ConditionError as exc:
            problems.append(str(exc))
    return problems


# ---------------------------------------------------------------------------
# One release.

@dataclass
class Verdict:
    ok: bool
    why: str  # the site found, or why not
    sites: list[str] = field(default_factory=list)


class Baseline(NamedTuple):
    """What the raise of a rule reads in the reference release, for the other releases
    to read too (what cannot be told there is not asked)."""
    options: list[str]  # the rule's condition options whose dest the condition reads
    # option -> the values of it the condition names: those its choices accept (None
    # when it has none), and those the rule itself compares it with
    choices: dict[str, list[str] | None]
    compared: dict[str, list[str]]


def _compared_values(t: Target) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, _, values in t.compared:
        out.setdefault(name, set()).update(v for v in values if isinstance(v, str))
    return out


def baseline(t: Target, sites: list[Site], catalog: Catalog) -> Baseline:
    """From the reference's site that reads most of the rule's options."""
    named = [(n, catalog.lookup(n)) for n in t.condition_options]
    opts = [(n, o) for n, o in named if o is not None]
    best = max(sites, key=lambda s: sum(o.dest in s.reads.names for _, o in opts), default=None)
    if best is None:
        return Baseline([], {}, {})
    read = [n for n, o in opts if o.dest in best.reads.names]
    choices: dict[str, list[str] | None] = {}
    compared: dict[str, list[str]] = {}
    for name, values in _compared_values(t).items():
        o = catalog.lookup(name)
        if o is None:
            continue
        choices[name] = (sorted(v for v in best.reads.strings if _accepted(v, o.choices))
                         if o.choices is not None else None)
        compared[name] = sorted(best.reads.strings & values)
    return Baseline(read, choices, compared)


def reads_as(site: Site, base: Baseline, catalog: Catalog, reference: Catalog,
             t: Target | None = None) -> str | None:
    """Why the raise's condition does not read what the reference's does (None: it does):
    the dest of each option the reference's reads, and the same values of each option
    the rule compares with values (when the reference's names any): among the choices
    both releases accept, or, for an option without choices, among the values the rule
    compares it with."""
    missing = []
    for name in base.options:
        o = catalog.lookup(name)
        if o is not None and o.dest not in site.reads.names:
            missing.append(o.dest)
    if missing:
        return "the raise's condition does not read " + ", ".join(missing)
    rule_values = _compared_values(t) if t is not None else {}
    for name, values in base.choices.items():
        o, r = catalog.lookup(name), reference.lookup(name)
        if o is None or r is None:
            continue
        if not values and not base.compared.get(name):
            continue  # the reference's condition names none of its values: cannot tell
        if values is not None and o.choices is not None:
            want = {v for v in values if _accepted(v, o.choices)}
            have = {v for v in site.reads.strings if _accepted(v, o.choices) and _accepted(v, r.choices)}
        else:
            want = set(base.compared.get(name, []))
            have = set(site.reads.strings) & rule_values.get(name, set(want))
        if want != have:
            return f"the raise's condition names {sorted(have)} of {name}, not {sorted(want)}"
    return None


def verify_release(version: str, targets: list[Target], cache: Path,
                   bases: dict[str, Baseline] | None) -> tuple[str, dict[str, Verdict], dict[str, Baseline], float]:
    """Verdicts for every target on one release. With `bases` None this is the reference
    release, and what each found raise's condition reads is returned to hold the other
    releases to."""
    start = time.perf_counter()
    catalog = load_catalog(version)
    reference = load_catalog(REFERENCE)
    sites = find_sites(wheel_sources(version, cache), targets)
    verdicts: dict[str, Verdict] = {}
    found: dict[str, Baseline] = {}
    for t in targets:
        where = [f"{s.path}:{s.line}" for s in sites[t.code]]
        if bases is None:
            found[t.code] = baseline(t, sites[t.code], catalog)
        problems = option_problems(t, catalog, reference)
        if problems:
            verdicts[t.code] = Verdict(False, "options: " + "; ".join(problems), where)
            continue
        if not sites[t.code]:
            verdicts[t.code] = Verdict(False, "message not found in the source")
            continue
        base = (bases or found)[t.code]
        why = [reads_as(s, base, catalog, reference, t) for s in sites[t.code]]
        good = [s for s, w in zip(sites[t.code], why) if w is None]
        if not good:
            verdicts[t.code] = Verdict(False, str(why[0]), where)
            continue
        verdicts[t.code] = Verdict(True, f"{good[0].path}:{good[0].line}", where)
    return version, verdicts, found, time.perf_counter() - start


# ---------------------------------------------------------------------------
# Ranges.

def ranges(verified: Iterable[str], releases: list[str]) -> list[str]:
    """The verified releases as maximal runs of consecutive known releases, each
    '>=A,<=B' (or '==A')."""
    ok = set(verified)
    out: list[str] = []
    run: list[str] = []
    for v in releases + [None]:  # type: ignore[list-item]
        if v is not None and v in ok:
            run.append(v)
            continue
        if run:
            out.append(f"=={run[0]}" if len(run) == 1 else f">={run[0]},<={run[-1]}")
            run = []
    return out


def spec_of(runs: list[str]) -> str | list[str]:
    return runs[0] if len(runs) == 1 else runs


# ---------------------------------------------------------------------------
# Packs.

def load_targets() -> list[Target]:
    out = []
    for path in sorted(PACKS.glob("*.yaml")):
        for rec in yaml.load(path.read_text(encoding="utf-8"), Loader=FAST_LOADER) or []:
            out.append(make_target(rec, f"servelint/rules/packs/{path.name}"))
    return out


VERDICTS = ROOT / "tests" / "data" / "conformance" / "verdicts.jsonl"
CONFORMANCE = "tools/conformance.py"


def validator_said(t: Target, rows: list[dict]) -> bool:
    """SGLang's own validator (the reference release, run by make conformance: its
    verdicts are checked in) rejected one of the record's trigger examples with the
    record's message (its messagePattern, or errorMessage read as tests/test_conformance.py
    reads it)."""
    pattern = t.record.get("messagePattern")
    for row in rows:
        if not row.get("source", "").startswith(f"rule:{t.code}:trigger:") or row.get("verdict") != "rejected":
            continue
        error = row.get("error") or ""
        said = error.split(": ", 1)[1] if ": " in error else error
        if pattern:
            try:
                if re.match(pattern, said):
                    return True
            except re.error:
                pass
        if said and (t.record["errorMessage"].startswith(said) or said.startswith(t.record["errorMessage"])):
            return True
    return False


def verdict_rows() -> list[dict]:
    if not VERDICTS.exists():
        return []
    return [json.loads(line) for line in VERDICTS.read_text(encoding="utf-8").splitlines() if line.strip()]


def unverified_claim(t: Target, rows: list[dict]) -> dict | None:
    """The verifiedBy of a record without source evidence: the validator's, when it has
    that, else none."""
    if validator_said(t, rows):
        return {"method": "validator", "tool": CONFORMANCE, "releases": f"=={REFERENCE}"}
    return None


def wanted_fields(spec: str | list[str]) -> dict[str, Any]:
    return {"appliesTo": {"sglang": spec},
            "verifiedBy": {"method": "source", "tool": TOOL, "releases": spec}}


def write_packs(results: dict[str, str | list[str]],
                unverified: dict[str, dict | None] | None = None) -> list[str]:
    """Set appliesTo/verifiedBy of each record in `results` (code -> spec), and the
    verifiedBy of the `unverified` ones (code -> claim, None: none) leaving their
    appliesTo as it is; returns the packs changed."""
    unverified = unverified or {}
    import fmt_packs
    from servelint.rules import rule_code
    changed = []
    for path in sorted(PACKS.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        head = []
        for line in text.splitlines(keepends=True):
            if not line.startswith("#"):
                break
            head.append(line)  # the pack's leading comment, kept as fmt_packs keeps it
        data = yaml.load(text, Loader=FAST_LOADER)
        for i, rec in enumerate(data):
            code = rule_code(rec)
            if code in unverified:
                rec.pop("verifiedBy", None)
                claim = unverified[code]
                if claim is not None:
                    at = list(rec).index("appliesTo") + 1 if "appliesTo" in rec else len(rec)
                    items = list(rec.items())
                    data[i] = dict(items[:at] + [("verifiedBy", claim)] + items[at:])
                continue
            spec = results.get(code)
            if spec is None:
                continue
            new: dict[str, Any] = {}
            for k, v in rec.items():
                if k == "verifiedBy":
                    continue
                new[k] = v
                if k == "appliesTo":
                    new.update(wanted_fields(spec))
            if "appliesTo" not in new:
                new.update(wanted_fields(spec))
            data[i] = new
        body = yaml.dump(data, Dumper=fmt_packs._Dumper, sort_keys=False, allow_unicode=True,
                         width=100, default_flow_style=False, indent=2)
        out = fmt_packs.formatted("".join(head) + body)
        if out != text:
            path.write_text(out, encoding="utf-8")
            changed.append(path.name)
    return changed


def pack_spec(rec: dict) -> Any:
    applies = rec.get("appliesTo")
    return applies.get("sglang") if isinstance(applies, dict) else applies


def compare(targets: list[Target], results: dict[str, dict[str, Verdict]], releases: list[str],
            every: list[str], subset: bool) -> tuple[dict[str, str | list[str]], list[str], list[Target]]:
    """What the packs should say (code -> RANGES, for the rules with evidence in the
    reference), where they say otherwise, and the rules without evidence. With `subset`
    only `releases` were verified: a rule's verdicts there are compared with the
    releases its appliesTo names among them."""
    from servelint.rules import version_matches
    missing = [t for t in targets if not results[REFERENCE][t.code].ok]
    specs: dict[str, str | list[str]] = {}
    differ = []
    rows = verdict_rows() if missing else []
    for t in missing:
        claim = unverified_claim(t, rows)
        if t.record.get("verifiedBy") != claim:
            differ.append(f"{t.code}: the pack says verifiedBy {t.record.get('verifiedBy')!r}; "
                          f"it is {claim!r}")
    for t in targets:
        if t in missing:
            continue
        verified = [v for v in releases if results[v][t.code].ok]
        if subset:
            have = [v for v in releases if version_matches(t.record.get("appliesTo"), v)]
            if have != verified:
                differ.append(f"{t.code}: the pack says {have}, the source says {verified}")
            continue
        spec = spec_of(ranges(verified, every))
        specs[t.code] = spec
        if (t.record.get("appliesTo") != {"sglang": spec}
                or t.record.get("verifiedBy") != wanted_fields(spec)["verifiedBy"]):
            differ.append(f"{t.code}: the pack says {pack_spec(t.record)!r}, the source says {spec!r}")
    return specs, differ, missing


# ---------------------------------------------------------------------------

def run(releases: list[str], cache: Path, jobs: int,
        log=lambda s: print(s, file=sys.stderr)) -> tuple[list[Target], dict[str, dict[str, Verdict]], dict[str, float]]:
    """Verdicts per release (the reference release always included)."""
    targets = load_targets()
    timings: dict[str, float] = {}
    _, ref_verdicts, bases, took = verify_release(REFERENCE, targets, cache, None)
    timings[REFERENCE] = took
    log(f"{REFERENCE}: {sum(v.ok for v in ref_verdicts.values())}/{len(targets)} verified ({took:.1f} s)")
    results = {REFERENCE: ref_verdicts}
    others = [v for v in releases if v != REFERENCE]
    if jobs > 1 and len(others) > 1:
        with ProcessPoolExecutor(jobs) as pool:
            futures = [pool.submit(verify_release, v, targets, cache, bases) for v in others]
            for fut in futures:
                version, verdicts, _, took = fut.result()
                results[version] = verdicts
                timings[version] = took
                log(f"{version}: {sum(v.ok for v in verdicts.values())}/{len(targets)} verified ({took:.1f} s)")
    else:
        for v in others:
            version, verdicts, _, took = verify_release(v, targets, cache, bases)
            results[version] = verdicts
            timings[version] = took
            log(f"{version}: {sum(x.ok for x in verdicts.values())}/{len(targets)} verified ({took:.1f} s)")
    return targets, results, timings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only compare with the packs; exit 1 on a difference")
    ap.add_argument("--releases", nargs="+", metavar="VERSION",
                    help="verify only these releases (compared with the packs, never written)")
    ap.add_argument("--cache", type=Path, default=None, help="wheel cache (tools/catalog_release.py's)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--report", type=Path, help="write every verdict as JSON here")
    args = ap.parse_args(argv)
    cache = args.cache or default_cache()
    every = sorted(known_versions(), key=version_key)
    releases = every if not args.releases else sorted(args.releases, key=version_key)
    unknown = [v for v in releases if v not in every]
    if unknown:
        ap.error(f"not a known release: {', '.join(unknown)}")
    started = time.perf_counter()
    targets, results, timings = run(releases, cache, args.jobs)
    total = time.perf_counter() - started

    specs, differ, missing = compare(targets, results, releases, every, subset=bool(args.releases))
    rows = verdict_rows()
    for t in missing:
        v = results[REFERENCE][t.code]
        print(f"{t.code}: no source evidence in {REFERENCE} ({v.why}); appliesTo kept: "
              f"{pack_spec(t.record)!r}; SGLang's validator "
              f"{'rejects' if validator_said(t, rows) else 'was not seen to reject'} its triggers "
              f"with its message ({VERDICTS.relative_to(ROOT)})")
    if args.report:
        args.report.write_text(json.dumps({
            "releases": releases, "timings": timings,
            "verdicts": {t.code: {v: [results[v][t.code].ok, results[v][t.code].why, results[v][t.code].sites]
                                  for v in releases} for t in targets},
        }, indent=1), encoding="utf-8")
    print(f"{len(targets)} rules, {len(releases)} releases, {len(missing)} without source evidence, "
          f"{total:.1f} s", file=sys.stderr)
    if args.check or args.releases:
        for line in differ:
            print(line)
        return 1 if differ else 0
    rows = verdict_rows()
    changed = write_packs(specs, {t.code: unverified_claim(t, rows) for t in missing})
    if changed:
        import build_packs
        build_packs.main([])
    print(f"{len(changed)} pack(s) written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
