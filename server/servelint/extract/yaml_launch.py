"""YAML: Kubernetes manifests, docker compose files, CI and task files (GitHub Actions,
GitLab CI, SkyPilot, ...), Helm templates.

What is read as a launch:

- a container-like mapping (`command` and/or `args`, Kubernetes; `entrypoint` and/or
  `command`, compose): the words of both, in the order the runtime joins them. A
  `bash -c SCRIPT` among them is read as a shell script, with every character of the
  script mapped to its place in the document (`yamlpos`);
- any other list of strings that starts a launch (a Helm `define` emitting list items,
  Argo templates, ...); a list of strings that does not is read as a list of scripts
  (GitLab `script:`, Buildkite `commands:`);
- any other string with `sglang` in it is read as a shell script (`run:`, `script:`,
  `setup:`, ...). A compose `command`/`entrypoint` string is split into words the way
  compose splits it (quotes and backslashes, no shell).

- a custom resource that keeps the command apart from its arguments (`yaml_crds`: llmaz
  BackendRuntime, RoleBasedGroup templates and patches, the generic rule): the pieces joined,
  one launch per list of arguments; arguments that cannot be found are unknown.

Anchors, aliases and merge keys are followed; a launch is read where its text is, once per
image that runs it.

Values the file does not fix are unknown: compose interpolation (`$VAR`, `${VAR:-x}`;
`$$` is a `$`), Kubernetes `$(VAR)` (`$$(VAR)` is literal), Go/Helm templates
`{{ ... }}` (but a `.Values` lookup the chart's values.yaml fixes is that value, see
`helm_values`), GitHub expressions `${{ ... }}`.

Only YAML is parsed (`yaml.parse` with the safe loader's parser, libyaml when present);
nothing in the file is executed.

This module holds the parse into offset-carrying nodes, the walk that finds launches in
them, and the format (`detect`, `extract`, `FORMAT`). Templates and conflict markers are
blanked before parsing in `yaml_templates`; compose command strings are split into words
in `yaml_compose`; fixes are written back into the YAML by the host in `yaml_host`.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from typing import Protocol

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml
else:
    from servelint.lazy import yaml  # PyYAML on first use: a shell file never imports it

from servelint.extract import yamlpos
from servelint.extract.common import (ExtractResult, NthInRegionHost, add_notice, launch_from_tokens,
                                      script_launches, script_word)
from servelint.extract.shell import find_entry
from servelint.extract import yaml_crds
from servelint.extract.helm_values import Source, ValuesHost, chart_of
from servelint.extract.yaml_compose import Word, compose_value, compose_words
from servelint.extract.yaml_host import FixedHost, Part, YamlHost, loader
from servelint.extract.yaml_templates import Prepared, Sub, chunks, overlaps, prepare
from servelint.lintcache import LaunchList, Moved, ShiftedHost, extract_memo, moved, shifted_launch
from servelint.model import LINE_READS, EnvMap, Launch, LineIndex, Span, Token


class _Mark(Protocol):  # yaml.Mark, or libyaml's
    index: int


def _at(mark: _Mark | None) -> int:
    assert mark is not None  # the parser marks every event
    return mark.index

_MAX_RETRIES = 6  # lines blanked where the parser stops, before settling for a partial tree

# Collections open at once beyond which a document is not read further. libyaml's scanner
# looks at every open flow collection for each token, so `[[[[...` 64k deep took 16 s
# (quadratic); the walk below stops at the same depth. No manifest nests anywhere near it.
MAX_DEPTH = 200


class NestedTooDeep(Exception):
    """The parse stopped: a collection opens more than MAX_DEPTH levels deep at `index`
    (an offset into the text given to `compose`)."""

    def __init__(self, index: int):
        super().__init__(f"nested more than {MAX_DEPTH} levels deep")
        self.index = index


def has_launch_hint(text: str) -> bool:
    """Whether `text` may hold a launch (`launch_server`, `sglang.cli`, the word
    `serve`): a document without one costs a few substring searches."""
    if "launch_server" in text or "sglang.cli" in text:
        return True
    at = text.find("serve")
    while at != -1:
        before = text[at - 1:at] if at else ""
        after = text[at + 5:at + 6]
        if not (before and (before.isalnum() or before in "_.-")) \
                and not (after and (after.isalnum() or after in "_-")):
            return True
        at = text.find("serve", at + 5)
    return False


# --- nodes ------------------------------------------------------------------------------


class Node:
    """A YAML node with document offsets. `items` holds a sequence's nodes, or a
    mapping's keys and values alternately; an alias points at its `target`."""

    __slots__ = ("kind", "value", "style", "start", "end", "flow", "items", "target", "partial")

    def __init__(self, kind: str, start: int, end: int, value: str | None = None,
                 style: str | None = None, flow: bool = False):
        self.kind = kind
        self.start = start
        self.end = end
        self.value = value
        self.style = style
        self.flow = flow
        self.items: list[Node] = []
        self.target: Node | None = None
        self.partial = False

    def resolved(self) -> "Node":
        node = self
        for _ in range(50):
            if node.kind != "alias" or node.target is None:
                break
            node = node.target
        return node

    def pairs(self) -> list[tuple["Node", "Node"]]:
        it = self.items
        return [(it[k], it[k + 1]) for k in range(0, len(it) - 1, 2)]

    def get(self, key: str, _depth: int = 0) -> "Node | None":
        """The value of `key` in a mapping, merge keys (`<<: *base`) included."""
        merged = None
        for k, v in self.pairs():
            if k.kind == "scalar" and k.value == key:
                return v
            if k.kind == "scalar" and k.value == "<<" and _depth < 8:
                for m in ([v] if v.resolved().kind == "map" else v.resolved().items):
                    m = m.resolved()
                    if m.kind == "map" and merged is None:
                        merged = m.get(key, _depth + 1)
        return merged

    def keys(self, _depth: int = 0) -> set[str]:
        """The mapping's keys, those it merges (`<<: *base`) included."""
        out = set()
        for k, v in self.pairs():
            if k.kind != "scalar" or k.value is None:
                continue
            if k.value == "<<" and _depth < 8:
                r = v.resolved()
                for m in ([r] if r.kind == "map" else r.items if r.kind == "seq" else []):
                    m = m.resolved()
                    if m.kind == "map":
                        out |= m.keys(_depth + 1)
            else:
                out.add(k.value)
        return out


def compose(text: str, base: int) -> tuple[list[Node], Exception | None]:
    """The documents of `text` as Nodes (offsets + base). On a YAML error, what was read
    before it, with the collections still open marked `partial`. A collection opening
    more than MAX_DEPTH deep stops the parse the same way (error NestedTooDeep): libyaml
    gives events one at a time, so reading stops before the nesting costs quadratic time."""
    roots: list[Node] = []
    stack: list[Node] = []
    anchors: dict[str, Node] = {}
    error = None
    if text.startswith("\ufeff") and loader() is not yaml.SafeLoader:
        base += 1  # libyaml's marks do not count a byte order mark that starts the text

    # The event classes once, not through the lazy module for every event (a large
    # document has millions of events).
    scalar_ev, alias_ev, seq_start = yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent
    starts = (seq_start, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    items = roots.append  # where the next node goes: the open collection's items, or roots
    try:
        for ev in yaml.parse(text, Loader=loader()):
            if isinstance(ev, scalar_ev):
                node = Node("scalar", base + _at(ev.start_mark), base + _at(ev.end_mark),
                            ev.value, ev.style or "")
                if ev.anchor:
                    anchors[ev.anchor] = node
                items(node)
            elif isinstance(ev, starts):
                node = Node("seq" if isinstance(ev, seq_start) else "map",
                            base + _at(ev.start_mark), base + _at(ev.end_mark),
                            flow=bool(ev.flow_style))
                if ev.anchor:
                    anchors[ev.anchor] = node
                if len(stack) >= MAX_DEPTH:
                    raise NestedTooDeep(_at(ev.start_mark))
                items(node)
                stack.append(node)
                items = node.items.append
            elif isinstance(ev, ends):
                node = stack.pop()
                node.end = base + _at(ev.end_mark)
                items = stack[-1].items.append if stack else roots.append
            elif isinstance(ev, alias_ev):
                node = Node("alias", base + _at(ev.start_mark), base + _at(ev.end_mark))
                node.target = anchors.get(ev.anchor) if ev.anchor is not None else None
                items(node)
    except (yaml.YAMLError, NestedTooDeep) as exc:
        error = exc
        at = _error_offset(exc, text)
        for node in stack:
            node.partial = True
            node.end = base + at
    return roots, error


def _error_offset(exc: Exception, text: str) -> int:
    if isinstance(exc, NestedTooDeep):
        return min(exc.index, len(text))
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return len(text)
    index = getattr(mark, "index", None)
    if isinstance(index, int) and 0 <= index <= len(text):
        return index
    return len(text)


# --- values -------------------------------------------------------------------------------


_K8S_VAR = re.compile(r"\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)")


def k8s_value(s: str) -> tuple[str | None, str]:
    """Kubernetes expands `$(VAR)` in command and args; `$$` is a literal `$`.
    Returns (text, prefix): text None when the value depends on a variable."""
    if "$" not in s:
        return s, ""
    out = []
    i = 0
    while i < len(s):
        if s.startswith("$$", i):
            out.append("$")
            i += 2
            continue
        m = _K8S_VAR.match(s, i)
        if m:
            return None, "".join(out)
        out.append(s[i])
        i += 1
    return "".join(out), ""


# --- reading a document -------------------------------------------------------------------------


@dataclass
class Ctx:
    text: str  # the original document
    index: LineIndex
    prep: Prepared
    mode: str = "k8s"  # "k8s" or "compose"
    result: ExtractResult = field(default_factory=lambda: ExtractResult([], []))
    seen: set[int] = field(default_factory=set)
    scripts: set[int] = field(default_factory=set)  # scalars already read as scripts
    merged: set[int] = field(default_factory=set)  # mappings merged into others (`<<: *x`)
    handled: set[int] = field(default_factory=set)  # mappings a custom resource's reading took
    open: bool = False  # a runtime another object completes (yaml_crds.OPEN)


def _dash_before(text: str, start: int, limit: int) -> int | None:
    """Offset of the '-' that introduces a block sequence item starting at `start`."""
    i = start - 1
    while i >= limit and text[i] in " \t\r\n":
        i -= 1
    if i >= limit and text[i] == "-" and (i == 0 or text[i - 1] in " \t\r\n"):
        return i
    return None


def _item_token(ctx: Ctx, node: Node, after: int = -1) -> Token:
    """The word a list element gives the program, where the element is written. `after`:
    where the list opens (a `{{ range }}` opening before it repeats the whole list)."""
    start, end = node.start, node.end
    if node.kind == "scalar":
        start = yamlpos.skip_properties(ctx.prep.text, node.start, node.end)
        if node.style in ("|", ">"):
            d = yamlpos.decode(ctx.prep.text, node.start, node.end, node.value or "")
            if d.exact:
                end = max(start + 1, d.end)
    span = Span(start, max(start, end))
    raw = ctx.text[span.start:span.end]
    target = node.resolved()
    if target.kind != "scalar" or target.value is None:
        return Token(span, None, raw=raw)
    value: str | None = target.value
    prep = ctx.prep
    if prep.subs:
        subs = prep.subs_in(target.start, target.end)
        if subs:
            value = _with_values(ctx, target, subs)
    text, prefix = (None, "") if value is None else \
        compose_value(value) if ctx.mode == "compose" else k8s_value(value)
    if prep.unknown and (prep.is_unknown(span.start, span.end)
                         or (target is not node and prep.is_unknown(target.start, target.end))):
        text, prefix = None, ""
    splat = False
    if prep.repeat and prep.in_repeat(span.start, after):
        text, splat = None, True
    return Token(span, text, prefix=prefix, splat=splat, raw=raw)


_PLAIN_UNSAFE = ("\n", ": ", " #", "\t")


def _with_values(ctx: Ctx, node: Node, subs: list[Sub]) -> str | None:
    """The value of a scalar with the values.yaml values its template actions print, as
    YAML reads the rendered text; None when that is not certain."""
    d = yamlpos.decode(ctx.prep.text, node.start, node.end, node.value or "")
    if not d.exact or d.table is None:
        return None
    style = d.style
    value = d.value
    table = d.table
    if style == "plain" and len(subs) == 1 and value:
        only = subs[0]
        if all(only.start <= o < only.end for o in table[:len(value)]):
            # The whole scalar is the action: YAML reads the printed value (`- {{ .Values.tp
            # | quote }}` is `- "8"`); an empty unquoted one is null, not a word.
            return only.text if only.text or only.quote else None
    out: list[str] = []
    for ch, _, x in _spliced(value, table, subs):
        if x is None:
            out.append(ch)
            continue
        if style == "plain":
            piece = x.rendered
            if any(u in piece for u in _PLAIN_UNSAFE) or piece.endswith(":"):
                return None
        elif style in ('"', "'"):
            if x.quote == style or style in x.text or (style == '"' and "\\" in x.text):
                return None
            piece = x.rendered
        else:  # a block scalar
            piece = x.rendered
            if "\n" in piece:
                return None
        out.append(piece)
    return "".join(out)


def _list_open(ctx: Ctx, seq: Node) -> int:
    """Where a list opens: its `[`, or the end of what is written before its first `- `
    (the key), template lines blanked."""
    if seq.flow:
        return seq.start
    text = ctx.prep.text
    i = seq.start - 1
    while i >= 0 and text[i] in " \t\r\n":
        i -= 1
    return i + 1


def _seq_part(ctx: Ctx, seq: Node) -> tuple[Part, list[Token], list[Token]]:
    """A sequence of strings as a Part: (part, its words with any unknown stretches the
    template or error lines inside it stand for, one token per item)."""
    after = _list_open(ctx, seq) if ctx.prep.repeat else -1
    items = [_item_token(ctx, item, after) for item in seq.items]
    dashes = [None if seq.flow else _dash_before(ctx.text, item.start, seq.start)
              for item in seq.items]
    indent = 0
    if not seq.flow:
        first = next((d for d in dashes if d is not None), seq.start)
        # YAML ends a line at \r too (the index's lines end at \n only)
        indent = first - (max(ctx.text.rfind("\n", 0, first), ctx.text.rfind("\r", 0, first)) + 1)
    part = Part("flow" if seq.flow else "block", [t.span for t in items], dashes, indent)
    tokens = items
    hidden = _hidden_lines(ctx, seq.start, seq.end)
    if hidden or seq.partial:
        extra = [Token(Span(s, e), None, splat=True, raw="") for s, e in hidden]
        if seq.partial:
            extra.append(Token(Span(seq.end, seq.end), None, splat=True, raw=""))
        tokens = sorted(items + extra, key=lambda t: (t.span.start, t.span.end))
    return part, tokens, items


def _hidden_lines(ctx: Ctx, start: int, end: int) -> list[tuple[int, int]]:
    """Lines in [start, end) that a template (or a YAML error) hides and that may hold
    words."""
    out = ctx.prep.output
    if not out:
        return []
    i = bisect.bisect_left(out, (start, start))
    found = []
    while i < len(out) and out[i][0] < end:
        found.append(out[i])
        i += 1
    return found


def _contains_marker(node: Node | None) -> bool:
    if node is None:
        return False
    node = node.resolved()
    if node.kind == "scalar":
        return node.value is not None and "sglang" in node.value
    if node.kind == "seq":
        return any(_contains_marker(i) for i in node.items)
    return False




def _words_part(ctx: Ctx, node: Node) -> tuple[Part, list[Token], yamlpos.Decoded, list[Word]]:
    """A compose `command`/`entrypoint` string: its words, where they are written."""
    d = yamlpos.decode(ctx.prep.text, node.start, node.end, node.value or "")
    words = compose_words(d.value)
    tokens = []
    for w in words:
        span = Span(d.offset(w.start), d.offset(w.end)) if d.exact else Span(d.start, d.end)
        text = w.text
        if text is not None and ctx.prep.unknown and ctx.prep.is_unknown(span.start, span.end):
            text = None
        tokens.append(Token(span, text, prefix=w.prefix if text is None else "", splat=w.splat,
                            raw=ctx.text[span.start:span.end] if d.exact else ""))
    kind = "words" if d.exact else "fixed"
    return Part(kind, [t.span for t in tokens]), tokens, d, words


# --- containers and lists -----------------------------------------------------------------------


def _container(ctx: Ctx, node: Node, first_key: str, second_key: str,
               open_ended: bool = False) -> set[int]:
    """A Kubernetes container (command + args) or a compose service (entrypoint +
    command): one launch from the words of both. Returns the ids of the nodes read.
    `open_ended`: arguments may be added elsewhere (another object completes this one), so a
    launch written without any is not known to lack them."""
    values = [v for v in (node.get(first_key), node.get(second_key)) if v is not None]
    return _command_launch(ctx, values, _env(node, whole=True), [(node.start, node.end)], open_ended)


def _command_launch(ctx: Ctx, values: list[Node], env: dict, within: list[tuple[int, int]],
                    open_ended: bool = False) -> set[int]:
    """One launch from the words of `values` (lists, or compose strings) in order: a
    container's command and args, or the pieces a custom resource keeps apart. `within`:
    the mappings they are written in (template lines there may emit more words)."""
    if not any(_contains_marker(v) for v in values):
        return set()
    parts: list[Part] = []
    groups: list[list[Token]] = []  # the words of each part
    tokens: list[Token] = []
    # where each word comes from, for `bash -c SCRIPT`: (token, item node) or
    # (token, (decoded string, word))
    origin: dict[int, object] = {}
    consumed: set[int] = set()
    for value in values:
        v = value.resolved()
        if v.kind == "seq" and all(i.resolved().kind == "scalar" for i in v.items):
            part, toks, items = _seq_part(ctx, v)
            for item, tok in zip(v.items, items):
                origin[id(tok)] = item
        elif v.kind == "scalar" and ctx.mode == "compose":
            part, toks, d, words = _words_part(ctx, v)
            for w, tok in zip(words, toks):
                origin[id(tok)] = (d, w)
        else:
            continue
        consumed.update((id(v), id(value)))
        parts.append(part)
        groups.append(toks)
        tokens.extend(toks)
    if not tokens:
        return consumed
    hidden = [h for a, b in within for h in _hidden_lines(ctx, a, b)
              if not any(t.splat and t.span.start == h[0] for t in tokens)]
    if hidden:
        stretch = Token(Span(*max(hidden)), None, splat=True, raw="")
        tokens.append(stretch)
        groups[-1] = groups[-1] + [stretch]
    if all(p.kind == "fixed" for p in parts):
        host: object = FixedHost(ctx.text, ctx.index)
    else:
        host = YamlHost(ctx.text, ctx.index, parts)
    if not _launch_or_script(ctx, tokens, host, origin, env, open_ended) and len(parts) == 2:
        # `command: [/entrypoint.sh]` + `args: [python3, -m, sglang.launch_server, ...]`:
        # an entrypoint script that runs its arguments.
        _launch_or_script(ctx, groups[1], host, origin, env, open_ended)
    return consumed


def _launch_or_script(ctx: Ctx, tokens: list[Token], host, origin: dict, env: dict | None = None,
                      open_ended: bool = False) -> bool:
    """The launch these words start, or the launches in the script of `bash -c SCRIPT`.
    Returns False when they are neither. `open_ended`: a launch with no argument written
    here may get its arguments elsewhere (they are an unknown stretch)."""
    real = [t for t in tokens if t.span.end > t.span.start or t.text is not None]
    if not real:
        return False
    span = Span(min(t.span.start for t in real), max(t.span.end for t in real))
    launch = launch_from_tokens(tokens, host, span, env)
    if launch is not None:
        if open_ended and not launch.tokens:
            end = launch.entry.span.end
            launch.tokens.append(Token(Span(end, end), None, splat=True, raw=""))
        ctx.result.launches.append(launch)
        return True
    at = script_word(tokens)
    if at is None:
        return False
    if tokens[at].text == "--" and at + 1 < len(tokens):
        at += 1  # `bash -c -- SCRIPT`
    src = origin.get(id(tokens[at]))
    if isinstance(src, Node):
        _script(ctx, src)
    elif isinstance(src, tuple):
        d, w = src
        if d.exact and not w.unknown and w.chars:
            script = "".join(c for c, _ in w.chars)
            table = [d.offset(i) for _, i in w.chars]
            table.append(d.offset(w.chars[-1][1] + 1))
            _run_script(ctx, script, table, "'", d.start, d.end)
        elif w.chars:
            _run_script(ctx, "".join(c for c, _ in w.chars), None, "'", d.start, d.end)
    return True


def _env(node: Node, key: str = "env", whole: bool = False) -> EnvMap:
    """A container's `env` (Kubernetes) or a service's `environment` (compose); `key`: another
    name for the Kubernetes form (llmaz's `envs`). `whole`: the node is a container or a
    service, so its environment is complete unless it also reads variables from elsewhere
    (`envFrom`, `env_file`) or passes the host's through (a compose name without a value)."""
    env = EnvMap()
    env.complete = whole and node.get("envFrom") is None and node.get("env_file") is None
    value = node.get(key) or node.get("environment")
    if value is None:
        return env
    value = value.resolved()
    if value.kind == "seq":
        for item in value.items:
            item = item.resolved()
            if item.kind == "map":
                name, val = item.get("name"), item.get("value")
                if name is not None and name.resolved().kind == "scalar":
                    given = val.resolved() if val is not None else None
                    env[name.resolved().value or ""] = (given.value if given is not None
                                                        and given.kind == "scalar" else None)
            elif item.kind == "scalar" and item.value and "=" in item.value:
                key, text = item.value.split("=", 1)
                env[key] = text
            elif item.kind == "scalar":
                env.complete = False  # `- NAME`: the host's value, if it has one
    elif value.kind == "map":
        for k, v in value.pairs():
            given = v.resolved()
            if k.kind == "scalar":
                if given.kind == "scalar" and not given.value and given.style in (None, "plain"):
                    env.complete = False  # `NAME:` with no value: the host's, if it has one
                    continue
                env[k.value or ""] = given.value if given.kind == "scalar" else None
    return env


def _sequence(ctx: Ctx, seq: Node) -> bool:
    """A list of strings outside a container: an argv that starts a launch, `bash -c`,
    or else a list of scripts (GitLab `script:`). Returns True when it was read."""
    if not all(i.resolved().kind == "scalar" for i in seq.items) or not _contains_marker(seq):
        return False
    part, tokens, items = _seq_part(ctx, seq)
    origin = {id(tok): item for item, tok in zip(seq.items, items)}
    if _launch_or_script(ctx, tokens, YamlHost(ctx.text, ctx.index, [part]), origin):
        return True
    for item in seq.items:
        _script(ctx, item)
    return True


# --- scripts --------------------------------------------------------------------------------


def _script(ctx: Ctx, node: Node) -> None:
    """A string holding a shell script."""
    node = node.resolved()
    if node.kind != "scalar" or not node.value or "sglang" not in node.value or id(node) in ctx.scripts:
        return
    ctx.scripts.add(id(node))
    d = yamlpos.decode(ctx.prep.text, node.start, node.end, node.value)
    if d.table is None:  # not exact
        _run_script(ctx, d.value, None, "'", d.start, d.end)
        return
    # A literal block's lines are the document's lines: line-based shell edits work
    # there. Elsewhere only plain words are written.
    quote = "" if d.style == "|" else "'"
    script, table = d.value, d.table
    if ctx.mode == "compose" and "$$" in script:
        # Compose turns `$$` into `$` before the shell sees the script.
        chars, offs = [], []
        i = 0
        while i < len(script):
            chars.append(script[i])
            offs.append(table[i])
            i += 2 if script.startswith("$$", i) else 1
        script, table = "".join(chars), offs + [table[-1]]
    _run_script(ctx, script, table, quote, d.start, d.end, literal=d.style == "|")


def _run_script(ctx: Ctx, script: str, table: list[int] | None, quote: str, start: int, end: int,
                literal: bool = False) -> None:
    if table is None:
        # Positions inside this scalar are not known exactly: everything found in it
        # covers the whole scalar, and nothing is edited.
        res = script_launches(script, [start] * len(script) + [end], 0, ctx.text, ctx.index, "'")
        whole = Span(start, end)
        host = FixedHost(ctx.text, ctx.index)
        for launch in res.launches:
            for t in [launch.entry] + launch.tokens:
                t.span = whole
                t.raw = ""  # nothing inside the token is located either
            launch.span = whole
            launch.host = host
        for f in res.findings:
            f.span = whole
            f.fixes = []
            for r in f.related:
                r.span = whole
        _collect(ctx, res)
        return
    if ctx.prep.dropped:
        script, table = _drop_lines(ctx, script, table, literal)
    if ctx.prep.subs:
        script, table = _substitute(ctx, script, table)
    if ctx.prep.unknown:
        script = _mask_unknown(ctx, script, table)
    res = script_launches(script, table, 0, ctx.text, ctx.index, quote)
    if not literal:
        # The script's lines are not the document's lines (YAML folds them): what the
        # shell reader proposes about line continuations would not hold here.
        for f in res.findings:
            f.fixes = []
    _collect(ctx, res)


def _drop_lines(ctx: Ctx, script: str, table: list[int], literal: bool) -> tuple[str, list[int]]:
    """Leave out of a script the lines that are not part of it: template actions and
    merge-conflict markers go; a line that a template fills (or the parser could not
    read) becomes one unknown word."""
    index, prep = ctx.index, ctx.prep
    lo, hi = index.line_of(min(table)), index.line_of(max(table))
    if not any(lo <= ln <= hi for ln in prep.dropped):
        return script, table
    outputs = {index.line_of(s) for s, _ in prep.output}
    chars: list[str] = []
    offs: list[int] = []
    prev_line = -1
    for c, o in zip(script, table):
        line = index.line_of(o)
        if line not in prep.dropped:
            chars.append(c)
            offs.append(o)
            prev_line = -1
            continue
        if line == prev_line:
            continue
        prev_line = line
        stand_in = "${_}" if line in outputs else ""
        stand_in = stand_in + "\n" if literal and stand_in else (" " + stand_in + " " if not literal else "")
        for ch in stand_in:
            chars.append(ch)
            offs.append(index.line_start(line))
    offs.append(table[-1])
    return "".join(chars), offs


def _substitute(ctx: Ctx, script: str, table: list[int]) -> tuple[str, list[int]]:
    """Template actions in a script that print a values.yaml value: the printed text (with
    the quotes the pipeline adds) takes their place, as Helm renders it, each of its
    characters mapped to the action's start. A value with a line break stays unknown."""
    lo, hi = min(table), max(table) + 1
    subs = [x for x in ctx.prep.subs_in(lo, hi) if "\n" not in x.rendered]
    if not subs:
        return script, table
    chars: list[str] = []
    offs: list[int] = []
    for ch, o, x in _spliced(script, table, subs):
        if x is None:
            chars.append(ch)
            offs.append(o)
            continue
        for c in x.rendered:
            chars.append(c)
            offs.append(x.start)
    offs.append(table[-1])
    return "".join(chars), offs


def _spliced(text: str, table: list[int], subs: list[Sub]):
    """Walk `text`, whose characters sit at the document offsets `table`: each character
    outside the template actions `subs` as (char, offset, None), each run of characters
    inside one action once, as ("", its first offset, the action)."""
    i, n = 0, len(text)
    while i < n:
        o = table[i]
        x = next((x for x in subs if x.start <= o < x.end), None)
        if x is None:
            yield text[i], o, None
            i += 1
            continue
        while i < n and x.start <= table[i] < x.end:
            i += 1
        yield "", o, x


def _mask_unknown(ctx: Ctx, script: str, table: list[int]) -> str:
    """Template expressions in a script become shell expansions of the same length, so
    that the shell reader sees an unknown value there."""
    spans = ctx.prep.unknown
    if not script or not overlaps(spans, min(table), max(table) + 1):
        return script
    chars = list(script)
    i, n = 0, len(chars)
    while i < n:
        o = table[i]
        k = bisect.bisect_right(spans, (o, float("inf"))) - 1
        if k >= 0 and spans[k][0] <= o < spans[k][1]:
            j = i
            while j < n and spans[k][0] <= table[j] < spans[k][1]:
                j += 1
            length = j - i
            if length >= 4:
                chars[i:j] = list("${" + "_" * (length - 3) + "}")
            elif length >= 2:
                chars[i:j] = list("$" + "_" * (length - 1))
            i = j
        else:
            i += 1
    return "".join(chars)


def _collect(ctx: Ctx, res: ExtractResult) -> None:
    ctx.result.launches.extend(res.launches)
    ctx.result.findings.extend(res.findings)


# --- walking the tree -------------------------------------------------------------------------


def walk(ctx: Ctx, node: Node, depth: int = 0, key: str | None = None) -> None:
    """Find the launches under `node`; `key` is the mapping key it is the value of (for a
    list's items, the list's key)."""
    if node is None or id(node) in ctx.seen or depth > 200:
        return
    ctx.seen.add(id(node))
    if node.kind == "alias":
        return  # read where it is defined
    if node.kind == "scalar":
        if node.value and "sglang" in node.value:
            _script(ctx, node)
        return
    if node.kind == "seq":
        if not _sequence(ctx, node):
            for item in node.items:
                walk(ctx, item, depth + 1, key)
        return
    if id(node) in ctx.merged:
        return  # read as part of the mappings that merge it
    before = len(ctx.result.launches)
    consumed: set[int] = set()
    keys = node.keys()
    if id(node) in ctx.handled:
        # a custom resource's pieces, already joined
        for name in ("command", "args"):
            piece = node.get(name)
            if piece is not None:
                consumed |= {id(piece), id(piece.resolved())}
    elif ctx.mode == "compose" and ("command" in keys or "entrypoint" in keys):
        consumed = _container(ctx, node, "entrypoint", "command")
    elif ("command" in keys or "args" in keys) and _is_container(node):
        if "args" not in keys and not _container_like(key, keys):
            consumed = _generic_split(ctx, node)
        else:
            consumed = _container(ctx, node, "command", "args", open_ended=ctx.open)
    for k, v in node.pairs():
        if id(v) in consumed or id(v.resolved()) in consumed:
            ctx.seen.add(id(v))
            continue
        walk(ctx, v, depth + 1, k.value if k.kind == "scalar" else None)
    if len(ctx.result.launches) > before:
        # The innermost mapping naming an image gives it to the launches read inside it
        # that have none yet (a `docker run` in a script names its own).
        image = _image_here(ctx, node, keys)
        if image is not None:
            for launch in ctx.result.launches[before:]:
                if launch.image is None:
                    launch.image = image


def _container_like(key: str | None, keys: set[str]) -> bool:
    """A mapping that is a container: an item of a `containers` list, the value of a key that
    holds one (`container`, OME's `runner`, Dynamo's `mainContainer`, ...), or a mapping
    with a `name` and an `image`."""
    return key in yaml_crds.CONTAINER_LISTS or key in yaml_crds.CONTAINER_KEYS \
        or ("name" in keys and "image" in keys)


def _generic_split(ctx: Ctx, node: Node) -> set[int]:
    """A `command` list in a mapping that is not a container (a custom resource's spec).
    When it ends with an SGLang entrypoint, its arguments are elsewhere: in a sibling list
    whose key names arguments, or in the `args` of each item of a sibling list of mappings
    (one launch each); when neither is there they are unknown."""
    command = node.get("command")
    if command is None or command.resolved().kind != "seq" or not _ends_with_entry(ctx, command.resolved()):
        return _container(ctx, node, "command", "args")
    alternatives: list[Node] = []
    for k, v in node.pairs():
        if k.kind != "scalar" or k.value in (None, "command", "<<"):
            continue
        r = v.resolved()
        if r.kind != "seq" or not r.items:
            continue
        if yaml_crds.ARGS_KEY.match(k.value or "") and all(i.resolved().kind == "scalar" for i in r.items):
            alternatives.append(v)
        elif all(i.resolved().kind == "map" for i in r.items):
            found = [i.resolved().get("args") for i in r.items]
            alternatives.extend(a for a in found if a is not None and a.resolved().kind == "seq")
    return _join(ctx, command, alternatives, _env(node), [(node.start, node.end)])


def _ends_with_entry(ctx: Ctx, seq: Node) -> bool:
    if not _contains_marker(seq) or not all(i.resolved().kind == "scalar" for i in seq.items):
        return False
    words = [Token(Span(i.start, i.end), i.resolved().value) for i in seq.items]
    found = find_entry(words)
    return found is not None and found[1] == len(words) - 1


def _join(ctx: Ctx, command: Node, alternatives: list[Node], env: dict,
          within: list[tuple[int, int]], image: tuple[str, Span] | None = None) -> set[int]:
    """One launch per alternative list of arguments after `command`; with none, one launch
    whose arguments are unknown. Returns the ids of the nodes read."""
    consumed = {id(command), id(command.resolved())}
    before = len(ctx.result.launches)
    if not alternatives:
        _command_launch(ctx, [command], env, within, open_ended=True)
    for args in alternatives:
        consumed |= {id(args), id(args.resolved())}
        ctx.seen.add(id(args))
        _command_launch(ctx, [command, args], env, within + [(args.start, args.end)])
    if image is not None:
        for launch in ctx.result.launches[before:]:
            if launch.image is None:
                launch.image = image
    return consumed


def _custom_resource(ctx: Ctx, root: Node) -> None:
    """Resources that split a launch (`yaml_crds`): join the pieces before the walk, and
    leave the mappings read out of it."""
    kind = yaml_crds.kind_of(root)
    if not kind:
        return
    ctx.open = yaml_crds.is_open(root)
    split = yaml_crds.split_for(root)
    if split is not None:
        command = yaml_crds.first(root, split.command)
        if command is None or command.resolved().kind != "seq" or not _contains_marker(command):
            return
        alternatives = [a for a in yaml_crds.at_path(root, split.args) if a.resolved().kind == "seq"]
        holder = yaml_crds.first(root, split.command.rsplit(".", 1)[0]) if "." in split.command else root
        image = None
        if split.image:
            image = _scalar_image(ctx, yaml_crds.first(root, split.image))
            tag = _scalar_image(ctx, yaml_crds.first(root, split.tag)) if split.tag else None
            if image is not None and tag is not None and ":" not in image[0].rsplit("/", 1)[-1]:
                image = (f"{image[0]}:{tag[0]}", image[1])
        env = _env(holder, "envs") if holder is not None else {}
        ctx.seen.update(_join(ctx, command, alternatives, env, [(command.start, command.end)], image))
        if holder is not None:
            ctx.handled.add(id(holder.resolved()))
        return
    if kind == "RoleBasedGroup" and yaml_crds.api_group(root) == yaml_crds.RBG_GROUP:
        _role_based_group(ctx, root)


def _role_based_group(ctx: Ctx, root: Node) -> None:
    """Each role's pods: its template (inline, or a roleTemplate with the reference's patch),
    with the leader's and the worker's patch over it; containers merged by name."""
    spec = root.get("spec")
    if spec is None or spec.resolved().kind != "map":
        return
    templates: dict[str, Node] = {}
    for item in yaml_crds.at_path(spec, "roleTemplates[]"):
        name, template = item.resolved().get("name"), item.resolved().get("template")
        if name is not None and template is not None and name.resolved().value:
            templates[name.resolved().value or ""] = template
    for role in yaml_crds.at_path(spec, "roles[]"):
        role = role.resolved()
        if role.kind != "map":
            continue
        holder = next((h.resolved() for h in (role.get(k) for k in yaml_crds.RBG_HOLDERS)
                       if h is not None and h.resolved().kind == "map"), role)
        layers: list[Node] = []
        template = holder.get("template") or role.get("template")
        ref = holder.get("templateRef") or role.get("templateRef")
        if template is not None:
            layers.append(template)
        elif ref is not None and ref.resolved().kind == "map":
            name = ref.resolved().get("name")
            base = templates.get(name.resolved().value or "") if name is not None else None
            if base is None:
                continue
            layers.append(base)
            patch = ref.resolved().get("patch") or role.get("templatePatch")
            if patch is not None:
                layers.append(patch)
        else:
            continue
        lws = role.get("leaderWorkerSet")
        pods: list[list[Node]] = []
        for leader_key, worker_key in yaml_crds.RBG_POD_PATCHES:
            where = holder if leader_key == "leaderTemplatePatch" else \
                (lws.resolved() if lws is not None else None)
            if where is None or where.kind != "map":
                continue
            for patch_key in (leader_key, worker_key):
                patch = where.get(patch_key)
                pods.append(layers + ([patch] if patch is not None else []))
        if not pods:
            pods = [layers]
        _pods(ctx, pods)


def _pods(ctx: Ctx, pods: list[list[Node]]) -> None:
    """Launches of pods given as layers of pod templates (each later one patches the
    earlier ones); a container's launch shared by several pods is read once."""
    done: set[tuple] = set()
    for layers in pods:
        merged: dict[str, list[Node]] = {}  # container name -> its mappings, layer by layer
        order: list[str] = []
        for layer in layers:
            for lst in ("spec.containers[]", "spec.initContainers[]"):
                for c in yaml_crds.at_path(layer, lst):
                    c = c.resolved()
                    if c.kind != "map":
                        continue
                    ctx.handled.add(id(c))
                    name_node = c.get("name")
                    name = name_node.resolved().value if name_node is not None else None
                    name = name or f"#{id(c)}"
                    if name not in merged:
                        merged[name] = []
                        order.append(name)
                    merged[name].append(c)
        for name in order:
            maps = merged[name]
            command = next((m.get("command") for m in reversed(maps) if m.get("command") is not None), None)
            args = next((m.get("args") for m in reversed(maps) if m.get("args") is not None), None)
            image_node = next((m.get("image") for m in reversed(maps) if m.get("image") is not None), None)
            key = (id(command), id(args), id(image_node))
            if key in done:
                continue
            done.add(key)
            env: dict[str, str | None] = {}
            for m in maps:
                env.update(_env(m))
            values = [v for v in (command, args) if v is not None]
            before = len(ctx.result.launches)
            _command_launch(ctx, values, env, [(m.start, m.end) for m in maps])
            image = _image_value(ctx, image_node)
            for launch in ctx.result.launches[before:]:
                if launch.image is None:
                    launch.image = image


# --- images -------------------------------------------------------------------------------------


def _scalar_image(ctx: Ctx, node: Node | None, prefix: str = "") -> tuple[str, Span] | None:
    """A scalar image reference as (text, span of its text). A value a template fills is
    given as written (`lmsysorg/sglang:{{ .Values.tag }}`): what reads it sees no release
    there. With `prefix` (SkyPilot's `docker:`), only a value starting with it counts, and
    the prefix is left out."""
    if node is None:
        return None
    target = node.resolved()
    if target.kind != "scalar" or not target.value:
        return None
    start = yamlpos.skip_properties(ctx.prep.text, node.start, node.end) if node is target \
        else target.start
    end = target.end
    if target.style in ("'", '"') and end - start >= 2:
        start, end = start + 1, end - 1
    value = target.value
    subs = ctx.prep.subs_in(target.start, target.end)
    if subs:
        value = _with_values(ctx, target, subs) or ctx.text[start:end]
    if ctx.prep.unknown and ctx.prep.is_unknown(start, end):
        value = ctx.text[start:end]
    value = value.strip()
    if prefix:
        if not value.startswith(prefix):
            return None
        value = value[len(prefix):]
        if ctx.text.startswith(prefix, start):
            start += len(prefix)
    return value, Span(start, max(start, end))


def _image_value(ctx: Ctx, node: Node | None) -> tuple[str, Span] | None:
    """`image: REF`, GitLab's `image: {name: REF}`, or a chart's `image: {repository: R,
    tag: T}` (given as `R:T`, at the mapping)."""
    if node is None:
        return None
    target = node.resolved()
    if target.kind == "scalar":
        return _scalar_image(ctx, node)
    if target.kind != "map":
        return None
    name = target.get("name")
    if name is not None:
        return _scalar_image(ctx, name)
    repo, tag = _scalar_image(ctx, target.get("repository")), _scalar_image(ctx, target.get("tag"))
    if repo is not None:
        text = f"{repo[0]}:{tag[0]}" if tag is not None else repo[0]
        return text, Span(target.start, target.end)
    return None


def _image_here(ctx: Ctx, node: Node, keys: set[str]) -> tuple[str, Span] | None:
    """The image a mapping gives the launches read inside it: its `image:` (a Kubernetes
    container of any resource, a compose service, a dstack task, a GitLab job), a GitHub
    Actions job's `container:` (a string or `{image:}`), a SkyPilot task's `resources:
    image_id: docker:REF` (or the first `any_of`/`ordered` entry naming one)."""
    # `get` sees merged keys too (`<<: *engine` holding the image)
    found = _image_value(ctx, node.get("image"))
    if found is not None:
        return found
    if "steps" in keys or "runs-on" in keys:
        container = node.get("container")
        if container is not None:
            c = container.resolved()
            found = _scalar_image(ctx, container) if c.kind == "scalar" else \
                _scalar_image(ctx, c.get("image")) if c.kind == "map" else None
            if found is not None:
                return found
    resources = node.get("resources")
    if resources is not None and resources.resolved().kind == "map":
        r = resources.resolved()
        found = _scalar_image(ctx, r.get("image_id"), "docker:")
        if found is not None:
            return found
        for key in ("any_of", "ordered"):
            options = r.get(key)
            if options is None or options.resolved().kind != "seq":
                continue
            for option in options.resolved().items:
                option = option.resolved()
                if option.kind == "map":
                    found = _scalar_image(ctx, option.get("image_id"), "docker:")
                    if found is not None:
                        return found
    return None


def _is_container(node: Node) -> bool:
    """`command`/`args` given as lists: a container (Kubernetes, Argo, LeaderWorkerSet...)."""
    for key in ("command", "args"):
        v = node.get(key)
        if v is not None and v.resolved().kind == "seq":
            return True
    return False


def _merge_sources(root: Node) -> set[int]:
    """Mappings that other mappings merge (`<<: *base`): their keys are read there."""
    out: set[int] = set()
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen or node.kind in ("scalar", "alias"):
            continue
        seen.add(id(node))
        if node.kind == "map":
            for k, v in node.pairs():
                if k.kind == "scalar" and k.value == "<<":
                    r = v.resolved()
                    for m in ([r] if r.kind == "map" else r.items if r.kind == "seq" else []):
                        if m.resolved().kind == "map":
                            out.add(id(m.resolved()))
        stack.extend(node.items)
    return out


def _document_mode(root: Node) -> str:
    r = root.resolved()
    if r.kind == "map" and "services" in r.keys() and "apiVersion" not in r.keys():
        return "compose"
    return "k8s"


# --- the format -------------------------------------------------------------------------------


def extract(text: str, index: LineIndex, path: str | None = None, settings=None) -> ExtractResult:
    result = ExtractResult([], [])
    if "sglang" not in text or not has_launch_hint(text):
        return result
    chart = chart_of(path) if ".Values" in text and "{{" in text else None
    prep = prepare(text, index, chart)
    # With a LintCache, a document's launches are kept by its text and moved to where it
    # now starts (lintcache.py); not with templates, whose passes span documents.
    memo = extract_memo()
    if memo is not None and (chart is not None or prep.subs or prep.unknown or prep.repeat
                             or prep.dropped):
        memo = None
    if memo is not None:
        again = _compose_edited(text, index, prep, memo)
        if again is not None:
            return again
    old = memo.get("yaml-documents", {}) if memo is not None else {}
    kept: dict[tuple, tuple] = {}
    # Two passes: every document is parsed first (lines the parser stops at blanked in
    # its own text), then the blanked documents are put back into prep.text in one join,
    # then the documents are walked. Blanking into prep.text line by line cost the whole
    # text each time: thousands of documents with an error cost quadratic time.
    plan: list[tuple] = []
    for start, end in chunks(prep, text):
        piece = text[start:end]
        if "sglang" not in piece or not has_launch_hint(piece):
            continue
        doc_key = (piece, prep.text[start:end])
        hit = old.get(doc_key)
        if hit is not None and hit[3] is not None and hit[3] != index.line_of(start):
            hit = None  # its findings name line numbers, and the document moved
        if hit is not None:
            plan.append((start, end, doc_key, hit, None))
            continue
        reads = LINE_READS[0]
        parsed = _parse_chunk(text, index, prep, start, end, result)
        plan.append((start, end, doc_key, None, (parsed, LINE_READS[0] != reads)))
    blanked = [(start, end, got[0].text) for start, end, _, _, got in plan
               if got is not None and got[0].blanked]
    if blanked:
        pieces, last = [], 0
        for start, end, chunk in blanked:
            pieces += [prep.text[last:start], chunk]
            last = end
        pieces.append(prep.text[last:])
        prep.text = "".join(pieces)
    for start, end, doc_key, hit, got in plan:
        if hit is not None:
            kept[doc_key] = hit
            was, launches, findings, _ = hit
            d = start - was
            result.launches.extend(shifted_launch(l, d, ShiftedHost(l.host, d, text, index))
                                   for l in launches)
            result.findings.extend(moved(f, d) for f in findings)
            continue
        parsed, read_lines = got
        n_launches, n_findings = len(result.launches), len(result.findings)
        reads = LINE_READS[0]
        _walk_chunk(text, index, prep, parsed, result)
        if memo is not None and not parsed.blanked and not parsed.noticed:
            found = result.findings[n_findings:]
            kept[doc_key] = (start, result.launches[n_launches:], [moved(f, 0) for f in found],
                             index.line_of(start) if found and (read_lines or LINE_READS[0] != reads)
                             else None)
    if memo is not None:
        memo["yaml-documents"] = kept
    _unknown_pass(prep, result)
    if prep.subs:
        _attach_values(prep, result.launches)
    # The same words reached twice (an alias of an anchored list, a mapping merged into
    # several services) are one launch, unless they run in different images: each image's
    # release judges them (a finding both make is reported once, engine.lint drops the
    # repeat). Where the words were also read without an image (the anchored node itself,
    # an `x-` block), the services' images stand.
    groups: dict[tuple, list[Launch]] = {}
    for launch in result.launches:
        key = (launch.entry.span.start, launch.entry.span.end,
               tuple((t.span.start, t.span.end) for t in launch.tokens))
        group = groups.setdefault(key, [])
        image = launch.image[0] if launch.image is not None else None
        if all((l.image[0] if l.image is not None else None) != image for l in group):
            group.append(launch)
    result.launches = [l for group in groups.values() for l in group
                       if l.image is not None or len(group) == 1]
    result.launches.sort(key=lambda l: l.span.start)
    result.findings.sort(key=lambda f: (f.span.start, f.code))
    if memo is not None:
        memo[_COMPOSE_MEMO] = None
        if len(plan) == 1 and plan[0][4] is not None and not plan[0][4][0].blanked \
                and not plan[0][4][0].noticed and plan[0][4][0].error is None:
            memo[_COMPOSE_MEMO] = _keep_services(text, index, plan[0][4][0].roots, result)
            if memo[_COMPOSE_MEMO] is not None:
                # Its one document is kept by its services: keeping it whole as well would
                # hold this text and its launches for nothing (an edit changes it).
                memo["yaml-documents"] = {}
    return result


# --- an edit inside one compose service -------------------------------------------------------
#
# With a LintCache (lintcache.extract_memo), a compose file that is one document whose
# services stand alone (no alias, anchor or merge key anywhere, the services a block
# mapping whose keys start their lines at one column, every launch inside a service) keeps
# its services: their places, launches and findings. An edit inside one service (after
# its key line's first character, before the next service's key line) parses that
# service's lines on their own (the same events as in the document: a block mapping at
# that column, ended where the next key starts) and walks them as the document's walk
# does; when they read as one service without a problem, the other services are what a
# whole reading gives, moved by the edit's length. The launches above the edit are the
# last lint's very objects, those below lintcache.Moved ones; their host (_ServiceHost)
# reads its service again from the document's newest text when first asked for an edit,
# so no old text stays alive. Anything else is read whole.

_COMPOSE_MEMO = "yaml-compose"
# Keys that would make the root or the services mapping take part in a service's reading
# (a container, an image given to everything inside, a merge).
_NOT_AROUND = {"command", "entrypoint", "args", "image", "container", "resources", "steps",
               "runs-on", "<<"}


class _ComposeDoc:
    """The newest text of a document, shared by the hosts of its kept launches."""

    def __init__(self, text: str, index: LineIndex, column: int):
        self.text, self.index, self.column = text, index, column


class _ServiceHost(NthInRegionHost):
    """The host of the `nth` launch of the service at [start, end) of the document's
    newest text (common.NthInRegionHost)."""

    __slots__ = ()

    def _launches(self) -> list | None:
        doc = self.doc
        read = _read_service(doc.text, doc.index, Prepared(doc.text), doc.column, self.start,
                             self.end)
        return None if read is None else read.launches


def _plain_tree(node: Node) -> bool:
    """No alias and no merge key under `node`."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.kind == "alias":
            return False
        if n.kind == "map" and any(k.kind == "scalar" and k.value == "<<" for k in n.items[::2]):
            return False
        stack.extend(n.items)
    return True


def _read_service(text: str, index: LineIndex, prep: Prepared, column: int, start: int,
                  end: int, last: bool = False) -> ExtractResult | None:
    """The launches and findings of the service written at [start, end) of `text` (line
    starts), read as the document's walk reads it; None unless those lines are one
    service, keyed at `column`, that stands alone (no alias, anchor or merge key)."""
    if text.startswith("&", start + column) or text[start:start + column].strip():
        return None
    roots, error = compose(prep.text[start:end], start)
    if error is not None or len(roots) != 1 or roots[0].kind != "map" or roots[0].flow \
            or len(roots[0].items) != 2:
        return None
    key, value = roots[0].items
    if key.kind != "scalar" or key.start != start + column or not _plain_tree(roots[0]) \
            or _has_anchor(prep.text[start:end]):
        return None
    if not last:
        # In the document, the collections this service closes end where the next key starts.
        stack = [value]
        while stack:
            n = stack.pop()
            if n.kind in ("map", "seq") and n.end == end:
                n.end = end + column
                stack.extend(n.items)
    result = ExtractResult([], [])
    ctx = Ctx(text, index, prep, "compose", result)
    walk(ctx, value, 2, key.value)
    if result.launches:
        _settle_anchors([value], result.launches, index)
    result.launches.sort(key=lambda l: l.span.start)
    result.findings.sort(key=lambda f: (f.span.start, f.code))
    return result


# Where an anchor (`&name`) may be written: at a line's start, after a blank or a flow
# indicator. A shell's `&&`, `2>&1` and ` & ` do not match (a quoted ` &x` does, and only
# makes the text read whole).
_ANCHOR = re.compile(r"(?:^|[\s\[{,])&[^\s&,\[\]{}]", re.M)


def _has_anchor(piece: str) -> bool:
    """Whether a YAML text may define an anchor."""
    return "&" in piece and _ANCHOR.search(piece) is not None


def _kept_service(ref: _ComposeDoc, start: int, end: int, found: ExtractResult) -> tuple:
    items = [Moved(shifted_launch(l, 0, None), 0, _ServiceHost(ref, start, end, n, l.host))
             for n, l in enumerate(found.launches)]
    return (start, end, items, [moved(f, 0) for f in found.findings], bool(found.findings))


def _keep_services(text: str, index: LineIndex, roots: list[Node], result: ExtractResult):
    """The memo of a compose file whose services stand alone (see above), else None."""
    if len(roots) != 1:
        return None
    root = roots[0]
    if root.kind != "map" or root.flow or _document_mode(root) != "compose" \
            or root.keys() & _NOT_AROUND or not _plain_tree(root) or _has_anchor(text):
        return None
    services = root.get("services")
    if services is None or services.kind != "map" or services.flow or len(services.items) < 2 \
            or services.keys() & _NOT_AROUND:
        return None
    keys = services.items[::2]
    column = keys[0].start - index.line_start(index.line_of(keys[0].start))
    starts = []
    for k in keys:
        ls = index.line_start(index.line_of(k.start))
        if k.kind != "scalar" or k.start - ls != column or column == 0:
            return None
        starts.append(ls)
    # The last service ends where the next key of the root starts, or at the end.
    after = [k.start for k in root.items[::2] if k.start > services.end - 1 and k.start >= starts[-1]]
    stop = index.line_start(index.line_of(after[0])) if after else len(text)
    if after and after[0] != stop:
        return None
    bounds = starts + [stop]
    ref = _ComposeDoc(text, index, column)
    prep = Prepared(text)
    regions = []
    launches = sorted(result.launches, key=lambda l: l.span.start)
    findings = list(result.findings)
    at = fat = 0
    for j in range(len(starts)):
        a, b = bounds[j], bounds[j + 1]
        mine = []
        while at < len(launches) and launches[at].span.start < b:
            if launches[at].span.start < a or launches[at].span.end > b:
                return None  # a launch outside the services, or across two
            mine.append(launches[at])
            at += 1
        theirs = []
        while fat < len(findings) and findings[fat].span.start < b:
            if findings[fat].span.start < a:
                return None
            theirs.append(findings[fat])
            fat += 1
        regions.append(_kept_service(ref, a, b, ExtractResult(mine, theirs)))
    if at < len(launches) or fat < len(findings):
        return None
    return (ref, regions, stop == len(text))


def _compose_edited(text: str, index: LineIndex, prep: Prepared, memo: dict) -> ExtractResult | None:
    """The launches of `text` when the last text's services were kept and the edit since
    lies inside one of them (see above); None: read the text whole."""
    kept, diff = memo.get(_COMPOSE_MEMO), memo.get("diff")
    if kept is None or diff is None or kept[0].text is not diff[0] or prep.text is not text:
        return None
    ref, regions, to_end = kept
    old = ref.text
    p, s = diff[1]
    oe = len(old) - s  # the edit replaced old[p:oe]
    d = len(text) - len(old)
    k = bisect.bisect_left(regions, p, key=lambda r: r[0]) - 1  # the last one starting before p
    if k < 0 or regions[k][1] < oe or not has_launch_hint(text):
        return None
    start, end = regions[k][0], regions[k][1] + d
    if end < len(text) and text[end - 1] != "\n":
        return None
    if d and text.count("\n", p, len(text) - s) != old.count("\n", p, oe) \
            and any(r[4] for r in regions[k + 1:]):
        return None  # lines added or removed above findings that name lines
    last = k == len(regions) - 1 and to_end
    found = _read_service(text, index, prep, ref.column, start, end, last)
    if found is None:
        return None
    ref.text, ref.index = text, index  # every kept host reads the newest text from now on
    result = ExtractResult(LaunchList(), [])
    new_regions = regions[:k]
    for r in new_regions:
        result.launches.extend(r[2])
        result.findings.extend(moved(f, 0) for f in r[3])
    new = _kept_service(ref, start, end, found)
    new_regions.append(new)
    result.launches.extend(new[2])
    result.findings.extend(found.findings)
    for a, b, items, findings, lines in regions[k + 1:]:
        if d:
            items = [it.again(d, _ServiceHost(ref, a + d, b + d, n, it.host))
                     for n, it in enumerate(items)]
            findings = [moved(f, d) for f in findings]
            a, b = a + d, b + d
        result.launches.extend(items)
        result.findings.extend(moved(f, 0) for f in findings)
        new_regions.append((a, b, items, findings, lines))
    memo[_COMPOSE_MEMO] = (ref, new_regions, to_end)
    return result


def _attach_values(prep: Prepared, launches: list[Launch]) -> None:
    """Launches with words whose value values.yaml sets get a host that says where (for
    related information) and leaves those words alone (the value is set in values.yaml)."""
    for launch in launches:
        sources = []
        for t in [launch.entry] + launch.tokens:
            if t.text is None:
                continue
            for x in prep.subs_in(t.span.start, max(t.span.end, t.span.start + 1)):
                if x.related is not None:
                    sources.append(Source(t.span, x.related))
        if sources:
            launch.host = ValuesHost(launch.host, sources)


@dataclass
class _Parsed:
    """One document parsed: its nodes, the error that stopped the parser (None: read to
    the end), its text with the lines the parser stopped at blanked, whether any were
    (`blanked`), and whether a notice was given about it (`noticed`)."""

    start: int
    end: int
    roots: list[Node]
    error: Exception | None
    text: str
    blanked: bool
    noticed: bool


def _parse_chunk(text: str, index: LineIndex, prep: Prepared, start: int, end: int,
                 result: ExtractResult) -> _Parsed:
    chunk = prep.text[start:end]
    roots, error = compose(chunk, start)
    tried: set[int] = set()
    blanked = noticed = False
    for _ in range(_MAX_RETRIES):
        if error is None:
            break
        at = start + _error_offset(error, chunk)
        line = index.line_of(min(at, len(text) - 1 if text else 0))
        if line in tried:
            break
        tried.add(line)
        ls, le = index.line_start(line), index.line_end(line)
        if ls < start or le > end:
            break
        if isinstance(error, NestedTooDeep):
            add_notice(result, f"line {line + 1}: YAML nested more than {MAX_DEPTH} levels "
                               f"deep; that line is not read")
            noticed = True
        # Blank the line the parser stopped at; what it held is unknown.
        a, b = ls - start, le - start
        chunk = chunk[:a] + "".join(c if c in "\r\n" else " " for c in chunk[a:b]) + chunk[b:]
        blanked = True
        prep.dropped.add(line)
        bisect.insort(prep.output, (ls, le))
        roots, error = compose(chunk, start)
    if isinstance(error, NestedTooDeep):
        at = start + _error_offset(error, chunk)
        add_notice(result, f"line {index.line_of(min(at, max(len(text) - 1, 0))) + 1}: YAML "
                           f"nested more than {MAX_DEPTH} levels deep; the document is not "
                           f"read past it")
        noticed = True
    return _Parsed(start, end, roots, error, chunk, blanked, noticed)


def _walk_chunk(text: str, index: LineIndex, prep: Prepared, parsed: _Parsed,
                result: ExtractResult) -> None:
    """The launches of a parsed document (prep.text holds its blanked text by now)."""
    roots, error, start, end = parsed.roots, parsed.error, parsed.start, parsed.end
    before = len(result.launches)
    for root in roots:
        ctx = Ctx(text, index, prep, _document_mode(root), result)
        ctx.merged = _merge_sources(root)
        if root.kind == "map" and ctx.mode == "k8s":
            _custom_resource(ctx, root)
        walk(ctx, root)
    if len(result.launches) > before:
        _settle_anchors(roots, result.launches[before:], index)
    if error is not None:
        # Past the point the parser could not read: the shell lines of block scalars
        # (their lines are the document's lines) are still found.
        at = start + _error_offset(error, parsed.text)
        ls = index.line_start(index.line_of(min(at, max(len(text) - 1, 0))))
        rest = prep.text[ls:end]
        if "sglang" in rest:
            res = script_launches(rest, None, ls, text, index, "'")
            result.launches.extend(res.launches)
            result.findings.extend(res.findings)


def _settle_anchors(roots: list[Node], launches: list, index: LineIndex) -> None:
    """A comment line inside a folded, plain or quoted scalar is part of the string (or ends
    it), not a YAML comment: a launch that starts on a later line of such a scalar has its
    anchor (where a suppression comment goes) on the scalar's first line, the line of the
    key or list item (`command: >`, `- >-`). Literal blocks (`|`) keep the launch's own line:
    their lines are the script's lines, where `#` starts a shell comment."""
    spans = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node.kind == "scalar":
            if node.style != "|" and index.line_of(node.end) > index.line_of(node.start):
                spans.append((node.start, node.end))
        elif node.kind in ("seq", "map"):
            stack.extend(node.items)
    if not spans:
        return
    spans.sort()
    starts = [s for s, _ in spans]
    for launch in launches:
        k = bisect.bisect_left(starts, launch.anchor) - 1  # scalars never nest
        if k >= 0 and spans[k][0] < launch.anchor < spans[k][1]:
            launch.anchor = index.line_start(index.line_of(spans[k][0]))


def _unknown_pass(prep: Prepared, result: ExtractResult) -> None:
    """Every word written over a template expression is unknown, whatever quoting
    surrounds it; words inside `{{ range }}` may occur any number of times."""
    if not prep.unknown and not prep.repeat:
        return
    for launch in result.launches:
        for t in [launch.entry] + launch.tokens:
            if t.text is not None and prep.is_unknown(t.span.start, t.span.end):
                t.text = None
                t.prefix = ""
            if prep.repeat and t.text is not None and t is not launch.entry \
                    and prep.in_repeat(t.span.start, launch.span.start):
                t.text = None
                t.splat = True


YAML_SUFFIXES = (".yaml", ".yml")
TEMPLATE_SUFFIXES = (".tpl", ".tmpl", ".gotmpl", ".j2", ".jinja", ".jinja2")
YAML_LANGUAGES = {"yaml", "dockercompose", "helm", "github-actions-workflow", "azure-pipelines",
                  "ansible", "yaml-textmate"}
_KEY = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?=[ \t]|$)", re.M)
_CONTENT = [
    re.compile(r"^apiVersion:[ \t]*\S.*\n(?:.*\n)*?kind:[ \t]*\S|^kind:[ \t]*\S.*\n(?:.*\n)*?apiVersion:[ \t]*\S", re.M),
    re.compile(r"^services:[ \t]*(?:#.*)?$", re.M),
    re.compile(r"^jobs:[ \t]*(?:#.*)?$(?:.*\n)*?.*\b(?:runs-on|steps|script|stage):", re.M),
    re.compile(r"^(?:run|setup):[ \t]*[|>]", re.M),
    re.compile(r"^stages:[ \t]*(?:#.*)?$", re.M),
    re.compile(r"^\{\{-?\s*define\b", re.M),
]


def _looks_like_yaml(head: str) -> bool:
    if head.startswith("#!"):
        return False
    return any(p.search(head) for p in _CONTENT)


def _looks_like_sglang_config(head: str) -> bool:
    """Top-level keys that are mostly SGLang option names: a `--config` file."""
    keys = [k for k in _KEY.findall(head)]
    if not keys:
        return False
    try:
        from servelint.catalog import load_catalog
        catalog = load_catalog()
    except Exception:
        return False
    known = sum(1 for k in keys if catalog.lookup("--" + k) is not None
                or catalog.by_dest.get(k.replace("-", "_")) is not None)
    return known * 2 >= len(keys)


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    head = text[:8192]
    suffix = ""
    if path:
        base = os.path.basename(path).lower()
        suffix = os.path.splitext(base)[1]
        if base.endswith(YAML_SUFFIXES) or any(base.endswith(y + t) for y in YAML_SUFFIXES
                                               for t in TEMPLATE_SUFFIXES):
            return not _config_without_launch(head, text)
    if language_id in YAML_LANGUAGES:
        return not _config_without_launch(head, text)
    if language_id not in (None, "", "plaintext"):
        return False
    if path and suffix not in ("",) + TEMPLATE_SUFFIXES:
        return False
    return _looks_like_yaml(head)


def _config_without_launch(head: str, text: str) -> bool:
    if "sglang" in text and has_launch_hint(text):
        return False
    if _looks_like_yaml(head):
        return False
    return _looks_like_sglang_config(head)


def _format():
    from servelint.extract import Format
    return Format("yaml", 30, detect, extract)


FORMAT = _format()
