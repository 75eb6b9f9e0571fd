"""VS Code `launch.json`: debug configurations that start an SGLang server.

A configuration launches SGLang when its `"module"` is `sglang.launch_server` or
`sglang_router.launch_server` (the entry token is the module's string), when it is
`sglang.cli.main` and its first argument is `serve` (the entry is that argument), or when
its `"program"` is a launcher script (`.../sglang/launch_server.py`, `.../sglang_router/
launch_server.py`, or `.../sglang/cli/main.py` / the `sglang` console script followed by
`serve`).

`"args"` is either an array (each string element is one argv word, exactly; an element
with a VS Code variable `${...}` or a non-string element is a word the file does not fix)
or one string, which VS Code hands to the shell unmodified: it is read as shell words,
with positions mapped through the JSON string's escapes. `"env"` becomes the launch's
environment. The configurations of a `.code-workspace` file (`"launch": {...}`) are read
as well.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass

import tree_sitter

from servelint.extract.common import (ExtractResult, ListHost, RegionHost, add_notice,
                                      empty)
from servelint.extract.jsonpos import (InnerText, JArray, JObject, JString, MappedHost, deep_notices,
                                       has_lone_surrogate, map_token, parse, parse_value_at,
                                       remove_elements,
                                       write_string)
from servelint.extract.shell import (CLI_MODULES, LAUNCH_MODULES, OffsetMap, ShellHost, Source,
                                     command_words, make_token)
from servelint.lintcache import LaunchList, Moved, extract_memo, shifted_launch
from servelint.model import Edit, Launch, LineIndex, Span, Token, write_all

_CONFIGS = re.compile(r'"configurations"\s*:\s*\[')
_PROGRAMS = (
    ("sglang/launch_server.py", "launch_server"),
    ("sglang_router/launch_server.py", "router"),
)
_SERVE_PROGRAMS = ("sglang/cli/main.py", "sglang/cli/__main__.py")


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    base = os.path.basename(path or "").lower()
    if base == "launch.json" or base.endswith(".code-workspace"):
        return True
    if language_id in ("json", "jsonc") or base.endswith((".json", ".jsonc")):
        return _CONFIGS.search(text) is not None
    return False


# --- words --------------------------------------------------------------------------------


def _word(node, text: str) -> Token:
    """One element of an `args` array as an argv word."""
    raw = text[node.start:node.end]
    if not isinstance(node, JString) or node.value is None or not node.closed \
            or has_lone_surrogate(node.value):
        return Token(node.span, None, raw=raw)  # not a string, or one still being typed
    value = node.value
    at = value.find("${")
    if at >= 0 and "}" in value[at:]:
        # VS Code substitutes variables before the launch: unknown here. `${command:...}`
        # (pickArgs) may stand for any number of words.
        return Token(node.span, None, prefix=value[:at], splat=value.startswith("${command:"), raw=raw)
    return Token(node.span, value, raw=raw)


def _variable_text(node) -> str | None:
    if isinstance(node, JString) and node.value is not None and not has_lone_surrogate(node.value):
        v = node.value
        return None if "${" in v else v
    return None


_local_parser = None


def _shell_parser() -> tree_sitter.Parser:
    global _local_parser
    if _local_parser is None:
        from servelint.extract.shell import bash_language
        _local_parser = tree_sitter.Parser(tree_sitter.Language(bash_language()))
    return _local_parser


def shell_words(text: str) -> list[Token]:
    """The words a shell makes of `text` when it follows a command name (VS Code passes
    a string `args` to the shell as is), with spans in `text` coordinates. Only the first
    command counts: after `;`, `&&` or `|` the words belong to another command."""
    script = ": " + text
    data = script.encode("utf-8")
    tree = _shell_parser().parse(data)
    src = Source(script, data, LineIndex(script), OffsetMap(-2), "")
    node = tree.root_node.descendant_for_byte_range(0, 1)
    while node is not None and node.type != "command":
        node = node.parent
    if node is None:
        return []
    words, _ = command_words(node)
    tokens = [make_token(w, src) for w in words[1:]]
    return [t for t in tokens if t.span.start >= 0]


# --- hosts --------------------------------------------------------------------------------


@dataclass
class ArgsHost(ListHost):
    """Edits of an `args` array. Words added after the entry (the `module`, which is not
    an element) go first in the array."""

    open_at: int | None = None  # offset right after the array's `[`, None without an array

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        if any((token.span.start, token.span.end) == (s.start, s.end) for s in self.elements):
            return super().insert_after(token, words)
        parts = write_all(self.write, words)
        if self.open_at is None or parts is None:
            return None
        if self.elements:
            at = self.elements[0].start
            return Edit(Span(at, at), "".join(p + self.separator for p in parts))
        return Edit(Span(self.open_at, self.open_at), self.separator.join(parts))


# --- configurations -------------------------------------------------------------------------


def _configurations(root) -> list[JObject]:
    return _configurations_at(root)[0]


def _configurations_at(root) -> tuple[list[JObject], int]:
    """The configuration objects, and the nesting depth the parser read them at."""
    if not isinstance(root, JObject):
        return [], 0
    configs = root.get("configurations")
    depth = 2
    if not isinstance(configs, JArray):
        launch = root.get("launch")  # a .code-workspace file, or settings.json
        configs = launch.get("configurations") if isinstance(launch, JObject) else None
        depth = 3
    if not isinstance(configs, JArray):
        return [], 0
    return [c for c in configs.elements if isinstance(c, JObject)], depth


def _program_kind(program: str) -> str | None:
    """`launch_server`/`router` for a launcher script, `serve` for SGLang's CLI."""
    p = program.replace("\\", "/")
    tail = p[p.rfind("}") + 1:] if "}" in p else p  # after `${workspaceFolder}`
    for suffix, kind in _PROGRAMS:
        if tail.endswith("/" + suffix) or tail == suffix:
            return kind
    if tail.endswith(_SERVE_PROGRAMS) or tail.rsplit("/", 1)[-1] == "sglang":
        return "serve"
    return None


def _env(cfg: JObject) -> dict[str, str | None]:
    env = cfg.get("env")
    out: dict[str, str | None] = {}
    if isinstance(env, JObject):
        for m in env.members:
            if m.key.value is not None:
                out[m.key.value] = _variable_text(m.value)
    return out


def _launch(cfg: JObject, text: str, index: LineIndex) -> Launch | None:
    module = cfg.get("module")
    program = cfg.get("program")
    args = cfg.get("args")
    kind = None
    entry: Token | None = None
    if isinstance(module, JString) and module.value is not None and not has_lone_surrogate(module.value):
        name = module.value.strip()
        if name in LAUNCH_MODULES:
            kind = LAUNCH_MODULES[name]
            entry = Token(module.span, name, raw=text[module.start:module.end])
        elif name in CLI_MODULES:
            kind = "serve"
    elif isinstance(program, JString) and program.value is not None \
            and not has_lone_surrogate(program.value):
        kind = _program_kind(program.value)
        if kind in ("launch_server", "router"):
            entry = Token(program.span, program.value, raw=text[program.start:program.end])
    if kind is None:
        return None
    anchor = index.line_start(index.line_of(cfg.start))
    env = _env(cfg)
    if isinstance(args, JString):
        if args.value is None or not args.closed:
            return None
        return _string_args(kind, entry, args, cfg, text, index, env, anchor)
    if isinstance(args, JArray):
        array = args
        tokens = [_word(e, text) for e in array.elements]
        host = ArgsHost(text, index, [e.span for e in array.elements],
                        lambda i, j: remove_elements(text, index, array, i, j),
                        write_string, separator=", ", name="launch-json", open_at=args.start + 1)
    else:
        tokens = []
        host = ArgsHost(text, index, [], lambda i, j: Edit(Span(0, 0), ""), write_string,
                        name="launch-json", open_at=None)
    if entry is None:  # `serve` must be the first argument
        if not tokens or tokens[0].text != "serve":
            return None
        entry, tokens = tokens[0], tokens[1:]
    return Launch(kind=kind, entry=entry, tokens=tokens, host=host, span=cfg.span, env=env,
                  anchor=anchor)


def _string_args(kind, entry, args: JString, cfg, text, index, env, anchor) -> Launch | None:
    inner = InnerText.of_strings([args])
    if inner is None:
        return None
    shell_host = ShellHost(inner.text, LineIndex(inner.text), "")
    host = MappedHost(text, index, shell_host, inner, {}, head=(0, "", " "), name="launch-json")
    tokens = []
    for w in shell_words(inner.text):
        m = map_token(w, inner, text)
        host.bind(m, w)
        tokens.append(m)
    if entry is None:
        if not tokens or tokens[0].text != "serve":
            return None
        entry, tokens = tokens[0], tokens[1:]
    return Launch(kind=kind, entry=entry, tokens=tokens, host=host, span=cfg.span, env=env,
                  anchor=anchor)


def extract(text: str, index: LineIndex, path: str | None, settings) -> ExtractResult:
    memo = extract_memo()
    if memo is not None:
        again = _extract_edited(text, index, memo)
        if again is not None:
            return again
    result = empty()
    doc = parse(text)
    for said in deep_notices(doc, index):
        add_notice(result, said)
    configs, depth = _configurations_at(doc.root)
    kept: list[tuple[int, int, Moved | None]] = []
    ref = _Document(text, index, depth)
    for cfg in configs:
        launch = _launch(cfg, text, index)
        item = None if launch is None else Moved(_without_host(launch), 0, _ConfigHost(ref, cfg.start, launch.host))
        if item is not None and launch is not None:
            # A Moved stands in for its launch in the LaunchList made below.
            result.launches.append(item if memo is not None else launch)  # type: ignore[arg-type]
        kept.append((cfg.start, cfg.end, item))
    if memo is not None:
        result.launches = LaunchList(result.launches)
        # Kept only for a text read without a problem: its configurations are then read
        # the same way wherever an edit leaves them (_extract_edited).
        memo[_MEMO] = (ref, kept) if not doc.errors else None
    return result


# --- an edit inside one configuration ---------------------------------------------------------
#
# With a LintCache (lintcache.extract_memo), the configurations of the last text are kept:
# their places and their launches. An edit that falls inside one configuration object,
# leaving its `{` and `}` alone, reads that object again (jsonpos.parse_value_at, at the
# depth the whole parse met it); when it reads to the same closing brace without a
# problem, every other configuration is what a whole parse would read (the parser reaches
# them in the same state, over the same text), moved by the edit's length. The launches
# above the edit are the last lint's very objects, those below lintcache.Moved ones,
# copied when read. Their host (_ConfigHost) reads its configuration again from the
# document's newest text when first asked for an edit: one `_Document` per document is
# kept and pointed at the newest text, so no old text stays alive.

_MEMO = "launch-json"


class _Document:
    """The newest text of a document, shared by the hosts of its kept launches."""

    def __init__(self, text: str, index: LineIndex, depth: int):
        self.text, self.index, self.depth = text, index, depth


def _without_host(launch: Launch) -> Launch:
    """A copy of `launch` (tokens shared) that holds no text: the memo keeps it."""
    return shifted_launch(launch, 0, None)


class _ConfigHost(RegionHost):
    """The host of a kept launch whose configuration starts at `start` of the document's
    newest text (common.RegionHost)."""

    __slots__ = ("start",)

    def __init__(self, doc: _Document, start: int, like):
        super().__init__(doc, like)
        self.start = start

    def _host(self):
        # Not kept: a host holds the text it was made for (one configuration read again
        # per edit asked for is cheap).
        doc = self.doc
        node, _, _ = parse_value_at(doc.text, self.start, doc.depth)
        launch = _launch(node, doc.text, doc.index) if isinstance(node, JObject) else None
        return launch.host if launch is not None else self._read_only()


def _extract_edited(text: str, index: LineIndex, memo: dict) -> ExtractResult | None:
    """The launches of `text` when the last text's configurations were kept and the edit
    since lies inside one of them (see above); None: read the text whole."""
    kept, diff = memo.get(_MEMO), memo.get("diff")
    if kept is None or diff is None or kept[0].text is not diff[0]:
        return None
    ref, configs = kept
    old = ref.text
    p, s = diff[1]
    oe = len(old) - s  # the edit replaced old[p:oe]
    d = len(text) - len(old)
    k = bisect.bisect_left(configs, p, key=lambda c: c[0]) - 1  # the last one starting before p
    if k < 0 or configs[k][1] <= oe:
        return None  # not inside a configuration, or its closing brace changed
    start, end, _ = configs[k]
    node, after, problems = parse_value_at(text, start, ref.depth)
    if problems or not isinstance(node, JObject) or not node.closed or after != end + d:
        return None
    if k + 1 < len(configs) and text.find("\n", len(text) - s, configs[k + 1][0] + d) == -1:
        return None  # the next configuration's line (its launch's anchor) holds the edit
    ref.text, ref.index = text, index  # every kept host reads the newest text from now on
    launch = _launch(node, text, index)
    result = empty()
    items = [c[2] for c in configs[:k] if c[2] is not None]
    edited = None if launch is None else Moved(_without_host(launch), 0,
                                               _ConfigHost(ref, start, launch.host))
    new_configs = configs[:k]
    new_configs.append((start, end + d, edited))
    if edited is not None:
        items.append(edited)
    if d:
        for a, b, item in configs[k + 1:]:
            if item is not None:
                item = item.again(d, _ConfigHost(ref, a + d, item.host))
                items.append(item)
            new_configs.append((a + d, b + d, item))
    else:
        new_configs += configs[k + 1:]
        items += [c[2] for c in configs[k + 1:] if c[2] is not None]
    result.launches = LaunchList(items)
    memo[_MEMO] = (ref, new_configs)
    return result


def _format():
    from servelint.extract import Format
    return Format("launch-json", 20, detect, extract)


FORMAT = _format()
