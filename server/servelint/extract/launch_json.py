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

import os
import re
from dataclasses import dataclass

import tree_sitter
import tree_sitter_bash

from servelint.extract.common import ExtractResult, ListHost, add_notice, empty
from servelint.extract.jsonpos import (InnerText, JArray, JObject, JString, MappedHost, deep_notices,
                                       has_lone_surrogate, map_token, parse, remove_elements,
                                       write_string)
from servelint.extract.shell import (CLI_MODULES, LAUNCH_MODULES, OffsetMap, ShellHost, Source,
                                     command_words, make_token)
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
        _local_parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
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
    if not isinstance(root, JObject):
        return []
    configs = root.get("configurations")
    if not isinstance(configs, JArray):
        launch = root.get("launch")  # a .code-workspace file, or settings.json
        configs = launch.get("configurations") if isinstance(launch, JObject) else None
    if not isinstance(configs, JArray):
        return []
    return [c for c in configs.elements if isinstance(c, JObject)]


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
    result = empty()
    doc = parse(text)
    for said in deep_notices(doc, index):
        add_notice(result, said)
    for cfg in _configurations(doc.root):
        launch = _launch(cfg, text, index)
        if launch is not None:
            result.launches.append(launch)
    return result


def _format():
    from servelint.extract import Format
    return Format("launch-json", 20, detect, extract)


FORMAT = _format()
