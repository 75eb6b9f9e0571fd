"""SGLang's own `--config` files: YAML whose keys are option names.

SGLang reads such a file (sglang/srt/utils/server_args_config_parser.py) by turning
each key into command-line words and putting them before the command line's own (so
the command line wins):

- `key: true` for a switch (store_true) -> `--key`; `key: false` -> nothing;
- `key: true/false` for any other option -> `--key true` / `--key false`;
- a list -> `--key item item ...` (an empty list -> nothing);
- a mapping -> `--key '<its JSON>'`;
- anything else -> `--key str(value)` (so `null` becomes the word `None`).

The key is used as written: `tp-size: 2` becomes `--tp-size 2`, and `tp_size: 2`
becomes `--tp_size 2`, which SGLang's parser rejects. Options that take a list through
a custom action or are BooleanOptionalAction are refused with "Unsupported config
option". servelint builds exactly those words, with each key and value at its place in
the file, and lets every check and rule read them like a command line.
"""

from __future__ import annotations

import json
import os
import re

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml
else:
    from servelint.lazy import yaml  # PyYAML on first use: a shell file never imports it

from servelint.catalog import Catalog
from servelint.checks.bad_config_file import CHECK as BAD_CONFIG
from servelint.checks.config_unsupported import CHECK as UNSUPPORTED
from servelint.extract.common import ExtractResult, empty
from servelint.model import Edit, Finding, Launch, LineIndex, Span, Token

_KEY_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)\s*:(\s|$)", re.M)
_SAFE_PLAIN = re.compile(r"^[A-Za-z0-9_./@%+,-][A-Za-z0-9_./@%+,: -]*$")


def _catalog(settings):
    from servelint.catalog import load_catalog
    try:
        return load_catalog(settings.sglang_version if settings else "0.5.23")
    except KeyError:
        return load_catalog()


def _known_key(catalog, key: str) -> bool:
    return (catalog.lookup("--" + key) is not None or catalog.by_dest.get(key.replace("-", "_"))
            is not None)


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    if not ((path and path.lower().endswith((".yaml", ".yml"))) or language_id == "yaml"):
        return False
    head = text[:20000]
    keys = _KEY_LINE.findall(head)
    if not keys:
        return False
    from servelint.catalog import load_catalog
    catalog = load_catalog()
    names = [k for k, _ in keys]
    known = sum(1 for k in names if _known_key(catalog, k))
    # A config file is a flat mapping of options; manifests have apiVersion/services/...
    return known >= max(1, int(0.7 * len(names) + 0.999))


# --- YAML nodes to words ------------------------------------------------------------------


def _value(node):
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


def _span(node) -> Span:
    return Span(node.start_mark.index, node.end_mark.index)


def _config_keys(opt) -> set[str]:
    return {opt.dest} | {n[2:].replace("-", "_") for n in opt.names if n.startswith("--")}


def _key_sets(catalog):
    """SGLang's ConfigArgumentMerger: which keys are switches, which are refused."""
    cached = getattr(catalog, "_config_key_sets", None)
    if cached is not None:
        return cached
    switches: set[str] = set()
    supported_keys: set[str] = set()
    refused: dict[str, object] = {}
    supported = []
    for opt in catalog.options:
        is_switch = opt.action == "store_true"
        if is_switch:
            switches |= _config_keys(opt)
        if is_switch or opt.action == "store" or opt.nargs is None:
            supported.append(opt)
            supported_keys |= _config_keys(opt)
    for opt in catalog.options:
        if opt in supported or "--config" in opt.names:
            continue
        for key in _config_keys(opt):
            if key not in supported_keys:
                refused[key] = opt
    catalog._config_key_sets = (switches, refused)
    return catalog._config_key_sets


# Collections open at once beyond which a config file is not read: composing and
# constructing a node recurse once per level (64k levels raised RecursionError), and
# libyaml's scanner is quadratic in flow nesting.
MAX_DEPTH = 200


def _nested_too_deep(text: str, loader) -> int | None:
    """The offset where a collection opens more than MAX_DEPTH deep, else None. Reads
    the parser's events one at a time and stops there, so the cost stays linear."""
    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    depth = 0
    try:
        for ev in yaml.parse(text, Loader=loader):
            cls = type(ev)
            if cls in starts:
                depth += 1
                if depth > MAX_DEPTH:
                    return ev.start_mark.index if ev.start_mark is not None else 0
            elif cls in ends:
                depth -= 1
    except yaml.YAMLError:
        return None  # yaml.compose reports it, at the same place
    return None


def config_tokens(text: str, catalog, origin: str | None = None) -> tuple[list[Token], list[Finding]]:
    """The words SGLang makes of a config file, each at its place in the file."""
    findings: list[Finding] = []
    fast = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = fast if text.isascii() else yaml.SafeLoader
    deep = _nested_too_deep(text, loader)
    if deep is not None:
        findings.append(BAD_CONFIG.finding(
            f"servelint does not read this config file: it nests values more than {MAX_DEPTH} "
            f"levels deep (SGLang's options take flat values)", Span(deep, min(deep + 1, len(text)))))
        return [], findings
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = mark.index if mark else 0
        findings.append(BAD_CONFIG.finding(
            f"SGLang cannot read this config file: {getattr(exc, 'problem', exc)}",
            Span(at, min(at + 1, len(text)))))
        return [], findings
    if root is None:
        return [], findings
    if not isinstance(root, yaml.MappingNode):
        findings.append(BAD_CONFIG.finding("Config file must contain a dictionary at root level",
                                           _span(root)))
        return [], findings
    tokens: list[Token] = []
    switches, refused = _key_sets(catalog)
    for knode, vnode in root.value:
        key = str(_value(knode))
        kspan = _span(knode)
        norm = key.replace("-", "_")
        try:
            value = _value(vnode)
        except yaml.YAMLError:
            value = None
        if norm in refused:
            opt = refused[norm]
            findings.append(UNSUPPORTED.finding(
                f"Unsupported config option '{norm}' with action '{_action_class(opt)}' (SGLang "
                f"cannot take {opt.name} from a config file; pass it on the command line)",
                kspan))
            continue
        word = Token(kspan, "--" + key, raw=text[kspan.start:kspan.end], origin=origin)
        if isinstance(value, bool):
            if norm in switches:
                if value:
                    tokens.append(word)
            else:
                tokens += [word, _word(vnode, str(value).lower(), text, origin)]
        elif isinstance(value, list):
            if value:
                tokens.append(word)
                items = vnode.value if isinstance(vnode, yaml.SequenceNode) else []
                for item_node, item in zip(items, value):
                    tokens.append(_word(item_node, str(item), text, origin))
        elif isinstance(value, dict):
            tokens += [word, _word(vnode, json.dumps(value), text, origin)]
        else:
            tokens += [word, _word(vnode, str(value), text, origin)]
    return tokens, findings


_ACTION_CLASSES = {"store_false": "_StoreFalseAction", "store_const": "_StoreConstAction",
                   "count": "_CountAction", "append_const": "_AppendConstAction"}


def _action_class(opt) -> str:
    return _ACTION_CLASSES.get(opt.action, opt.action)


def _word(node, value: str, text: str, origin: str | None) -> Token:
    span = _span(node)
    return Token(span, value, raw=text[span.start:span.end], origin=origin)


# --- editing a config file ------------------------------------------------------------------


def _indent(text: str, start: int) -> str:
    """The blanks at `start` (a line's indentation)."""
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


class ConfigHost:
    """Edits of a config file: an option is a `key: value` line."""

    name = "sglang-config"
    quote_context = ""

    def __init__(self, text: str, index: LineIndex, tokens: list[Token]):
        self.text = text
        self.index = index
        self.keys = {id(t) for t in tokens if t.text and t.text.startswith("--")
                     and self.text[t.span.start:t.span.end] == t.text[2:]}

    def _is_key(self, token: Token) -> bool:
        return id(token) in self.keys

    def quote(self, value: str) -> str:
        if _SAFE_PLAIN.match(value) and not value.endswith(":") and ": " not in value:
            loaded = yaml.safe_load(value)
            if str(loaded) == value or (isinstance(loaded, (int, float)) and not isinstance(loaded, bool)):
                return value
        return json.dumps(value)

    def _entry(self, words: list[str]) -> list[str]:
        lines, i = [], 0
        while i < len(words):
            key = words[i][2:]
            vals = []
            i += 1
            while i < len(words) and not words[i].startswith("--"):
                vals.append(words[i])
                i += 1
            if not vals:
                lines.append(f"{key}: true")
            elif len(vals) == 1:
                lines.append(f"{key}: {self.quote(vals[0])}")
            else:
                lines.append(f"{key}: [{', '.join(self.quote(v) for v in vals)}]")
        return lines

    def replace(self, token: Token, value: str) -> Edit | None:
        if self._is_key(token):
            return Edit(token.span, value[2:] if value.startswith("--") else value)
        q = self.quote(value)
        return None if q is None else Edit(token.span, q)

    def _last_line(self, first: Token, last: Token) -> int:
        """The last line of a key's entry: the last word's line, or a later line indented
        deeper than the key (a value written on the next line, `key:\n  true`, or a block
        list), so that an edit of the entry leaves no part of it behind."""
        key_indent = len(_indent(self.text, self.index.line_start(self.index.line_of(first.span.start))))
        le_line = self.index.line_of(max(last.span.end - 1, last.span.start))
        line = le_line + 1
        while line < len(self.index.starts):
            body = self.text[self.index.line_start(line):self.index.line_end(line)]
            if body.strip() and len(body) - len(body.lstrip(" \t")) <= key_indent:
                break  # the next entry (or a comment at the key's depth)
            if body.strip():
                le_line = line
            line += 1
        return le_line

    def _line_span(self, first: Token, last: Token) -> Span:
        """The whole lines of a key's entry, its last newline included."""
        ls = self.index.line_start(self.index.line_of(first.span.start))
        end = self.index.line_end(self._last_line(first, last))
        return Span(ls, min(end + 1, len(self.text)))

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        if not self._is_key(first):
            return None
        span = self._line_span(first, last)
        indent = self.text[span.start:first.span.start]
        nl = "\r\n" if "\r\n" in self.text else "\n"  # the file's own line ends
        return Edit(span, "".join(f"{indent}{line}{nl}" for line in self._entry(words)))

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        end = self.index.line_end(self._last_line(token, token))
        key_line_start = self.index.line_start(self.index.line_of(token.span.start))
        indent = _indent(self.text, key_line_start)
        nl = "\r\n" if "\r\n" in self.text else "\n"
        if self.text[end - 1:end] == "\r":
            end -= 1  # before the line's \r\n, never inside it
        new = "".join(f"{nl}{indent}{l}" for l in self._entry(words))
        return Edit(Span(end, end), new)

    def remove(self, first: Token, last: Token) -> Edit:
        if self._is_key(first):
            return Edit(self._line_span(first, last), "")
        return Edit(Span(first.span.start, last.span.end), "")


def config_launch(text: str, index: LineIndex, catalog, origin: str | None = None):
    tokens, findings = config_tokens(text, catalog, origin)
    host = ConfigHost(text, index, tokens)
    entry = Token(Span(0, 0), "--config", raw="")
    # The file is the launch: a suppression comment goes above its first key (the header
    # comments and blank lines before it are not where a comment about the launch can stack).
    first = re.search(r"(?m)^[ \t]*[^\s#]", text)
    anchor = first.start() if first else 0
    launch = Launch(kind="config", entry=entry, tokens=tokens, host=host,
                    span=Span(0, len(text)), anchor=anchor)
    return launch, findings


def _extract(text: str, index: LineIndex, path: str | None, settings) -> ExtractResult:
    catalog = _catalog(settings)
    launch, findings = config_launch(text, index, catalog)
    result = empty()
    result.findings.extend(findings)
    if launch.tokens:
        result.launches.append(launch)
    return result


def read_config_file(path: str, catalog: Catalog) -> tuple[str, list[Token], list[Finding]] | str:
    """The text, words and findings of a config file named by `--config`, or the reason
    it cannot be read."""
    if not path.lower().endswith((".yaml", ".yml")):
        return f"Config file must be YAML format, got: {os.path.splitext(path)[1]}"
    from servelint.files import NotRegular, TooLarge, read_text
    from servelint.schema import MAX_FILE_BYTES
    if not os.path.exists(path):
        return f"Config file not found: {path}"
    try:
        # as a linted file is read: a regular file only, at most the default size cap (a
        # config of tens of megabytes would keep every lint of its launch busy)
        got = read_text(path, True, MAX_FILE_BYTES)
    except TooLarge as exc:
        return (f"the config file {path} has {exc.args[0]:,} bytes, more than the "
                f"{MAX_FILE_BYTES:,} servelint reads: not checked")
    except NotRegular:
        return f"the config file {path} is not a regular file: not read"
    except OSError as exc:
        return f"cannot read the config file {path}: {exc}"
    if got is None:
        return f"the config file {path} is binary (it holds NUL bytes): not read"
    text = got
    tokens, findings = config_tokens(text, catalog, origin=path)
    fatal = [f for f in findings if f.code == BAD_CONFIG.code]
    if fatal:
        return f"{path}: {fatal[0].message}"
    return text, tokens, findings


def _format():
    from servelint.extract import Format
    return Format("sglang-config", 25, detect, _extract, marker=None)


FORMAT = _format()
