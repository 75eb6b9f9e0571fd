"""Helm chart values: what `{{ .Values.x }}` renders to with the chart's own `values.yaml`.

A template under a chart's `templates/` folder takes its values from `../values.yaml` (the
chart's defaults; an install may override any of them, which servelint cannot see). Where a
launch takes a value literally, servelint reads the value from that file instead of calling
it unknown:

- the action is a lookup `.Values.a.b` (or `$.Values.a.b`, `index .Values "a" "b-c"`),
  optionally through `quote`, `squote`, `toString`, `int` and `default LITERAL` (pipeline or
  prefix form);
- `.Values` is read only where dot is the chart's root (not inside `with`/`range`), `$.Values`
  anywhere, and inside a `define` only when every `include`/`template` of it in the chart
  passes the root (`.` at top level, or `$`);
- the value is a string, a number or a boolean; a missing key, `null`, a list or a map stays
  unknown (whoever installs the chart sets it), never guessed.

Numbers render as Helm renders them: values.yaml is read into float64, printed with Go's `%v`
(`8` -> `8`, `0.85` -> `0.85`, `1000000` -> `1e+06`).

Nothing is executed: actions are matched against this small grammar, values.yaml is parsed
with the safe loader's composer (no construction from tags).
"""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml
else:
    from servelint.lazy import yaml  # PyYAML on first use: a shell file never imports it

from servelint.model import Edit, Finding, Host, LineIndex, Related, Span, Token

_MAX_BYTES = 1 << 20  # a values.yaml larger than this is not read
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_LOOKUP = re.compile(r"^(\$?)\.Values((?:\." + _NAME + r")+)$")
_INDEX = re.compile(r'^index\s+(\$?)\.Values((?:\s+"[^"\\]*")+)$')
_STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"$|^`([^`]*)`$')
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_FILTERS = {"quote", "squote", "toString", "int"}
_YAML_INT = re.compile(r"^[-+]?[0-9]+$")
_YAML_FLOAT = re.compile(r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")


# --- Go's rendering of a value -------------------------------------------------------------------


def go_float(x: float) -> str:
    """Go's `%v` of a float64 (`strconv.FormatFloat(x, 'g', -1, 64)`): the shortest digits
    that read back as x, in exponent form (at least two exponent digits) when the decimal
    exponent is below -4 or at least 6."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign = "-" if x < 0 else ""
    digits, point = _shortest(abs(x))
    exp = point - 1
    if exp < -4 or exp >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _shortest(x: float) -> tuple[str, int]:
    """(digits, point) with x == 0.DIGITS * 10**point, DIGITS the shortest that read back
    as x (Python's repr and Go's shortest formatting agree on them)."""
    text = repr(x)
    mantissa, _, e = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + (int(e) if e else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    return stripped.rstrip("0") or "0", point


def go_string(value: object) -> str | None:
    """How `{{ value }}` prints a value read from values.yaml, or None when the file does not
    fix it (null, a list, a map)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return go_float(float(value))
    if isinstance(value, str):
        return value
    return None


def _empty(value: object) -> bool:
    """Sprig's `empty`, which `default` tests."""
    return value is None or value is False or value == 0 or value == "" or value == [] or value == {}


# --- values.yaml ----------------------------------------------------------------------------------


@dataclass
class Hit:
    """A value of values.yaml: the Python value (str, int, float, bool; None for null or a
    collection), its span in the file and the path as written in the template."""

    value: object
    span: Span
    path: str


NOT_A_MAPPING = object()  # ValuesFile.node_at: a key before the last holds no mapping


@dataclass
class ValuesFile:
    path: str
    text: str
    root: object  # a yaml.Node, or None when the file does not parse
    _index: LineIndex | None = None

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    def node_at(self, keys: tuple[str, ...]):
        """The node at `keys`; NOT_A_MAPPING when a key before the last holds no mapping,
        None when a mapping lacks the key. Of repeated keys the last one wins, as in
        Helm's parser."""
        node = self.root
        for key in keys:
            if not isinstance(node, yaml.MappingNode):
                return NOT_A_MAPPING
            node = next((v for k, v in reversed(node.value)
                         if isinstance(k, yaml.ScalarNode) and k.value == key), None)
            if node is None:
                return None
        return node

    def lookup(self, keys: tuple[str, ...]) -> Hit | None:
        """The node at `keys`, or None when the file has no such key."""
        node = self.node_at(keys)
        if not isinstance(node, yaml.Node):
            return None
        return Hit(_scalar(node), Span(node.start_mark.index, node.end_mark.index),
                   ".Values." + ".".join(keys))

    def related(self, hit: Hit, shown: str) -> Related:
        sl, sc = self.index.position(hit.span.start)
        el, ec = self.index.position(hit.span.end)
        return Related(hit.span, f"{hit.path} is {shown} in {os.path.basename(self.path)}",
                       path=self.path, range=(sl, sc, el, ec))


def _scalar(node: yaml.Node) -> object:
    """The value Helm reads from a scalar node (YAML 1.1 through Go's parser, as float64 for
    numbers); None when the file does not fix a plain value."""
    if not isinstance(node, yaml.ScalarNode):
        return None
    tag = node.tag
    text = node.value
    if tag == "tag:yaml.org,2002:str":
        if node.style is None and text in ("y", "Y", "n", "N"):
            return None  # Go's YAML 1.1 parser reads these as booleans, PyYAML as strings
        return text
    if tag == "tag:yaml.org,2002:bool":
        return text.lower() in ("true", "yes", "on")
    if tag == "tag:yaml.org,2002:int" and _YAML_INT.match(text):
        return int(text)
    if tag == "tag:yaml.org,2002:float" and _YAML_FLOAT.match(text):
        return float(text)
    return None  # null, timestamps, hex/octal/sexagesimal numbers, .inf: left unknown


# --- the chart around a template ---------------------------------------------------------------


_CACHE: dict[str, tuple[tuple[int, int], "Chart | None"]] = {}


@dataclass
class Chart:
    """A chart: its folder, its values.yaml, and (computed on demand) which `define`
    blocks every caller gives the root context."""

    folder: str
    values: ValuesFile
    _roots: dict[str, bool] | None = None
    _roots_key: tuple = ()

    def define_is_root(self, name: str) -> bool:
        key = _templates_key(os.path.join(self.folder, "templates"))
        if self._roots is None or key != self._roots_key:
            self._roots = _root_defines(os.path.join(self.folder, "templates"))
            self._roots_key = key
        return self._roots.get(name, False)


def chart_of(path: str | None) -> Chart | None:
    """The chart a template file belongs to: the nearest folder above it named `templates`
    whose parent holds `values.yaml` (a regular file of at most 1 MiB)."""
    if not path:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(8):
        if os.path.basename(folder) == "templates":
            chart = os.path.dirname(folder)
            return _load(chart)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _load(chart: str) -> Chart | None:
    values = os.path.join(chart, "values.yaml")
    try:
        st = os.stat(values)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_BYTES:
        return None
    key = (st.st_mtime_ns, st.st_size)
    cached = _CACHE.get(values)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        with open(values, "rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
        text = raw.decode("utf-8", errors="replace")
        from servelint.extract.yaml_host import loader
        root = yaml.compose(text, Loader=loader()) if "\0" not in text else None
    except (OSError, yaml.YAMLError):
        text, root = "", None
    result = Chart(chart, ValuesFile(values, text, root)) if root is not None else None
    _CACHE[values] = (key, result)
    return result


def _templates_key(folder: str) -> tuple:
    out = []
    try:
        for dirpath, _dirs, files in os.walk(folder):
            for name in files:
                if name.endswith((".yaml", ".yml", ".tpl", ".txt")):
                    full = os.path.join(dirpath, name)
                    try:
                        st = os.stat(full)
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode) and st.st_size <= _MAX_BYTES:
                        out.append((full, st.st_mtime_ns, st.st_size))
    except OSError:
        pass
    return tuple(sorted(out))


_CALL = re.compile(r'^(?:include|template)\s+"([^"]+)"\s+(\S+)')


def _root_defines(folder: str) -> dict[str, bool]:
    """For each `define` of the chart's templates: whether every `include`/`template` of it
    passes the root context. A define nobody calls is not."""
    from servelint.extract.yaml_templates import scan_actions

    calls: dict[str, list[tuple[bool, str | None]]] = {}  # name -> [(passes root?, caller define)]
    for full, _m, _s in _templates_key(folder):
        try:
            with open(full, encoding="utf-8", errors="replace") as fh:
                text = fh.read(_MAX_BYTES)
        except OSError:
            continue
        if "include" not in text and "template" not in text:
            continue
        for act in scan_actions(text):
            m = _CALL.match(act.body)
            if not m:
                continue
            arg = m.group(2).rstrip(")")
            root = arg == "$" or (arg == "." and act.dot_root)
            calls.setdefault(m.group(1), []).append((root, act.define))
    roots = {name: all(r for r, _ in sites) for name, sites in calls.items()}
    # A call inside another define passes the root only when that define gets the root.
    for _ in range(5):
        changed = False
        for name, sites in calls.items():
            ok = all(r and (d is None or roots.get(d, False)) for r, d in sites)
            if ok != roots[name]:
                roots[name] = ok
                changed = True
        if not changed:
            break
    return roots


# --- template actions that read a value -----------------------------------------------------------


@dataclass
class Lookup:
    keys: tuple[str, ...]
    dollar: bool  # `$.Values`: the root wherever it is written
    quote: str = ""  # '"' or "'" when the pipeline quotes the value
    default: object = None  # `default LITERAL`
    has_default: bool = False
    to_int: bool = False


def _literal(word: str) -> tuple[bool, object]:
    m = _STRING.match(word)
    if m:
        if m.group(2) is not None:
            return True, m.group(2)
        body = m.group(1)
        if "\\" in body:
            return False, None
        return True, body
    if _NUMBER.match(word):
        try:
            return True, float(word) if any(c in word for c in ".eE") else int(word)
        except ValueError:
            return False, None
    if word in ("true", "false"):
        return True, word == "true"
    return False, None


def _value_term(term: str) -> tuple[tuple[str, ...], bool] | None:
    m = _LOOKUP.match(term)
    if m:
        return tuple(m.group(2).split(".")[1:]), bool(m.group(1))
    m = _INDEX.match(term)
    if m:
        return tuple(re.findall(r'"([^"\\]*)"', m.group(2))), bool(m.group(1))
    return None


def parse_lookup(body: str) -> Lookup | None:
    """A template action (the text between `{{` and `}}`, trim markers removed) that prints
    one value of values.yaml, as a Lookup; None for anything else."""
    stages = [s.strip() for s in _split_pipes(body)]
    if not stages or any(not s for s in stages):
        return None
    head = stages[0].split()
    filters: list[list[str]] = []
    # prefix forms: `quote .Values.x`, `default "y" .Values.x`
    if head and head[0] in _FILTERS | {"default"} and len(head) >= 2:
        if head[0] == "default":
            if len(head) < 3:
                return None
            filters.append(["default", head[1]])
            term = _value_term(" ".join(head[2:]))
        else:
            filters.append([head[0]])
            term = _value_term(" ".join(head[1:]))
        if term is None:
            return None
    else:
        term = _value_term(stages[0])
        if term is None:
            return None
    for stage in stages[1:]:
        words = stage.split()
        if words[0] in _FILTERS and len(words) == 1:
            filters.append(words)
        elif words[0] == "default" and len(words) == 2:
            filters.append(words)
        else:
            return None
    look = Lookup(term[0], term[1])
    for f in filters:
        if f[0] == "default":
            if look.quote or look.to_int:
                return None  # a default after a conversion: not modelled
            ok, lit = _literal(f[1])
            if not ok:
                return None
            look.default, look.has_default = lit, True
        elif f[0] in ("quote", "squote"):
            if look.quote:
                return None
            look.quote = '"' if f[0] == "quote" else "'"
        elif f[0] == "int":
            if look.quote:
                return None
            look.to_int = True
        # toString: the printed form already is the string
    return look


def _split_pipes(body: str) -> list[str]:
    out, cur, quote = [], [], ""
    for c in body:
        if quote:
            cur.append(c)
            if c == quote:
                quote = ""
        elif c in "\"`":
            quote = c
            cur.append(c)
        elif c == "|":
            out.append("".join(cur))
            cur = []
        elif c in "()":
            return []  # sub-pipelines are not modelled
        else:
            cur.append(c)
    out.append("".join(cur))
    return out


def render(look: Lookup, values: ValuesFile) -> tuple[str, Hit | None] | None:
    """(the printed value without the quotes the pipeline adds, the values.yaml entry it
    came from) or None when the chart does not fix it."""
    hit = values.lookup(look.keys)
    value = hit.value if hit is not None else None
    if hit is not None and value is None and not look.has_default:
        return None
    if look.has_default and (hit is None or _empty(value)):
        if hit is not None and value is None and not _is_null(values, look.keys):
            return None  # a list or a map (or a value Go reads otherwise): not fixed
        value, hit = look.default, None
    if look.to_int:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, str):
            if not _YAML_INT.match(value.strip()):
                return None
            value = int(value.strip())
        elif isinstance(value, (int, float)):
            value = int(value)  # Go's cast truncates toward zero
        else:
            return None
    text = go_string(value)
    if text is None:
        return None
    if look.quote == '"' and any(c in text for c in '"\\') or any(not c.isprintable() for c in text):
        return None
    if look.quote == "'" and "'" in text:
        return None
    return text, hit


def truth(expr: str, values: ValuesFile, dot_root: bool) -> bool | None:
    """Go's truth of a `.Values` lookup (`if .Values.x`): false, 0, "", null and empty
    collections are false. None when values.yaml does not have the key (an install may set
    it) or `.Values` is not the chart's values where it is written."""
    term = _value_term(expr.strip())
    if term is None or (not term[1] and not dot_root):
        return None
    node = values.node_at(term[0])
    if not isinstance(node, yaml.Node):
        return None
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        return bool(node.value)
    if not isinstance(node, yaml.ScalarNode):
        return None
    if node.tag == "tag:yaml.org,2002:null":
        return False
    value = _scalar(node)
    if value is None:
        return None
    return not _empty(value)


def _is_null(values: ValuesFile, keys: tuple[str, ...]) -> bool:
    node = values.node_at(keys)
    if node is NOT_A_MAPPING:
        return False
    return node is None or (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null")


# --- findings about a value that values.yaml sets ------------------------------------------------


@dataclass
class Source:
    """A word of a launch that holds a value from values.yaml: where the word is, and the
    related location in values.yaml."""

    span: Span
    related: Related


@dataclass
class ValuesHost:
    """The host of a launch some of whose words come from values.yaml: those words are not
    rewritten in the template (the value is set in values.yaml); everything else is edited
    by the launch's own host. `sources` say where each such word's value is set."""

    inner: Host
    sources: list[Source] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.text = self.inner.text
        self.index = self.inner.index
        self.name = self.inner.name
        self.quote_context = self.inner.quote_context

    def _fixed(self, start: int, end: int) -> bool:
        return any(s.span.start < end and start < s.span.end for s in self.sources)

    def quote(self, value: str) -> str | None:
        return self.inner.quote(value)

    def replace(self, token: Token, value: str) -> Edit | None:
        if self._fixed(token.span.start, token.span.end):
            return None
        return self.inner.replace(token, value)

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        if self._fixed(first.span.start, last.span.end):
            return None
        return self.inner.replace_words(first, last, words)

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        return self.inner.insert_after(token, words)

    def remove(self, first: Token, last: Token) -> Edit | None:
        return self.inner.remove(first, last)


def relate_values(findings: list[Finding], host: object) -> None:
    """Give each finding about a word whose value values.yaml sets (its span or a related
    place in this document covers the word) the place in values.yaml as related
    information. `host` is the launch's host; only a ValuesHost has sources."""
    sources = getattr(host, "sources", None)
    if not sources:
        return
    for f in findings:
        places = [f.span] + [r.span for r in f.related if r.path is None]
        for s in sources:
            if any(p.start < s.span.end and s.span.start < p.end
                   or (p.start == p.end == s.span.start) for p in places):
                if all(r.path != s.related.path or r.span != s.related.span for r in f.related):
                    f.related.append(s.related)
