"""Shell scripts: find SGLang launches with tree-sitter-bash and map every word back
to its exact place in the document.

tree-sitter is error tolerant (a half-typed script still yields a tree with ERROR
nodes in it) and gives exact byte positions. Only commands that contain the text
`sglang` are looked at, so a long script costs one parse plus a few lookups.
"""

from __future__ import annotations

import bisect
import re
from array import array
from itertools import chain
import threading
from dataclasses import dataclass, field
from typing import Sequence

import tree_sitter

from servelint.checks.broken_continuation import CHECK as BROKEN_CONTINUATION
from servelint.lintcache import _EXTRACT_MEMO, LaunchList, digest, extract_memo, fingerprint, moved, moved_again
from servelint.model import LINE_READS, Edit, Finding, Fix, Launch, LineIndex, Related, Span, Token, write_all

_local = threading.local()


def bash_language() -> object:
    """tree_sitter_bash.language(), read from its compiled `_binding` module without running
    the package's `__init__`, which imports importlib.resources (with pathlib, urllib and
    tempfile: a twelfth of a cold check) for highlight queries servelint never reads. Any
    surprise in the package's layout: the plain import."""
    global _LANGUAGE
    if _LANGUAGE is None:
        try:
            import importlib.machinery
            import importlib.util
            import os

            spec = importlib.util.find_spec("tree_sitter_bash")
            folder = next(iter(spec.submodule_search_locations or ()))  # type: ignore[union-attr]
            binding = next(os.path.join(folder, "_binding" + suffix)
                           for suffix in importlib.machinery.EXTENSION_SUFFIXES
                           if os.path.isfile(os.path.join(folder, "_binding" + suffix)))
            loader = importlib.machinery.ExtensionFileLoader("tree_sitter_bash._binding", binding)
            found = importlib.util.spec_from_loader(loader.name, loader)
            if found is None:
                raise ImportError(loader.name)
            module = importlib.util.module_from_spec(found)
            loader.exec_module(module)
            _LANGUAGE = module.language()
        except Exception:
            import tree_sitter_bash

            _LANGUAGE = tree_sitter_bash.language()
    return _LANGUAGE


_LANGUAGE: object | None = None


def _parser() -> tree_sitter.Parser:
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = tree_sitter.Parser(tree_sitter.Language(bash_language()))
        _local.parser = parser
    return parser


LAUNCH_MODULES = {
    "sglang.launch_server": "launch_server",
    "sglang_router.launch_server": "router",
}
# `python -m sglang.cli.main serve ...` is what the `sglang` console script runs.
CLI_MODULES = {"sglang.cli.main", "sglang.cli"}
SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
# Commands that run another command given later on their line. servelint looks for the
# launch pattern anywhere after one of these, rather than modelling each one's options.
WRAPPERS = {
    "exec", "nohup", "env", "time", "command", "nice", "ionice", "stdbuf", "setsid",
    "sudo", "numactl", "taskset", "timeout", "chrt", "srun", "salloc", "mpirun",
    "mpiexec", "docker", "podman", "nerdctl", "apptainer", "singularity", "enroot",
    "uv", "uvx", "pixi", "conda", "mamba", "micromamba", "poetry", "pipenv", "hatch",
    "rye", "pdm", "xargs", "ray", "kubectl", "ssh", "tini", "dumb-init", "gosu",
    "su-exec", "catchsegv", "strace", "ltrace", "gdb", "nsys", "ncu", "valgrind",
    "CUDA_VISIBLE_DEVICES", "torchrun", "accelerate", "deepspeed",
}
_PYTHON_RE = re.compile(r"^python(\d+(\.\d+)?)?[a-z]?$")
_SAFE_WORD = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")

EXPANSION_TYPES = {
    "simple_expansion", "expansion", "command_substitution", "process_substitution",
    "arithmetic_expansion", "brace_expression",
}
SKIP_TYPES = {
    "variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect",
    "comment",
}


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def is_python(word: str | None) -> bool:
    return word is not None and bool(_PYTHON_RE.match(basename(word)))


# --- positions -----------------------------------------------------------------


class OffsetMap:
    """Maps offsets in an inner text (a `bash -c` script) to document offsets."""

    def __init__(self, base: int = 0, table: list[int] | None = None):
        self.base = base
        self.table = table

    def __call__(self, offset: int) -> int:
        if self.table is None:
            return self.base + offset
        if offset < len(self.table):
            return self.table[offset]
        return self.table[-1] + 1 if self.table else self.base


@dataclass
class Source:
    """A text parsed as shell, and how its offsets map into the document."""

    text: str
    data: bytes
    index: LineIndex
    to_doc: OffsetMap
    quote: str = ""  # "" at top level, "'" or '"' inside a quoted `-c` script
    _line_bytes: dict[int, bytes] = field(default_factory=dict)
    # Spans (document offsets) of `<placeholder>` words masked before parsing.
    placeholders: list[Span] = field(default_factory=list)
    # Arrays assigned in this text, read when a launch expands one (made on first use).
    arrays: "Arrays | None" = None
    # Each node's parent and next siblings, for a large text with many launches (_Family).
    family: "_Family | None" = None

    def doc_span(self, start: int, end: int) -> Span:
        """The document span of [start, end) in this text's characters."""
        return Span(self.to_doc(start), self.to_doc(end))

    def char_offset(self, point: tuple[int, int]) -> int:
        row, col = point
        if row >= len(self.index.starts):
            return len(self.text)
        start = self.index.starts[row]
        if self.index.ascii:
            return start + col
        line = self._line_bytes.get(row)
        if line is None:
            line = self.text[start:self.index.line_end(row) + 1].encode("utf-8")
            self._line_bytes[row] = line
        return start + len(line[:col].decode("utf-8", errors="ignore"))

    def span(self, node) -> Span:
        if self.index.ascii:  # bytes are characters: no conversion needed
            s, e = node.start_byte, node.end_byte
        else:
            s = self.char_offset(node.start_point)
            e = self.char_offset(node.end_point)
        m = self.to_doc
        if m.table is None:
            return Span(m.base + s, m.base + e)
        return Span(m(s), m(e))

    def node_text(self, node) -> str:
        if self.index.ascii:
            return self.text[node.start_byte:node.end_byte]
        return self.text[self.char_offset(node.start_point):self.char_offset(node.end_point)]


# --- parsing: what tree-sitter-bash misreads, and placeholders ------------------------

# A `$` that starts no expansion is a literal `$` to bash (`$PREFILL_NODE0$:5757`), but
# tree-sitter-bash opens an expansion there and swallows the words up to the next `$` into
# an ERROR. Such a `$` is replaced by `%` (one byte, a plain word character) in the bytes
# given to the parser; the text read back is the document's own, so the word's value keeps
# its `$`. `$$` is the shell's process id, not a literal.
_LITERAL_DOLLAR = re.compile(rb"\$(?:\$|(?=[%&)+,./:;<=>\\\]^`}|~]))")

# A documentation placeholder standing for a word: `<model-path>`, `<your model>`, `<...>`.
# The shell would read `<` and `>` as redirections; the placeholder is masked as an
# expansion of the same length before parsing, and its word is unknown.
PLACEHOLDER = re.compile(
    r"(?<![^\s=\"'])<((?:[A-Za-z_](?:[A-Za-z0-9_ .:/|-]*[A-Za-z0-9_.:/|-])?)|\.\.\.|…)>(?=[\s\"']|$)",
    re.M)


def _mask_literal_dollars(data: bytes) -> bytes:
    def sub(m: re.Match) -> bytes:
        return m.group(0) if m.group(0) == b"$$" else b"%"
    return _LITERAL_DOLLAR.sub(sub, data)


def _mask_placeholders(text: str, data: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """Mask `<placeholder>` words (as `$___`, same bytes) and return where they are
    (character offsets in `text`)."""
    if "<" not in text:
        return data, []
    found = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)]
    if not found:
        return data, []
    buf = bytearray(data)
    ascii_text = text.isascii()
    for s, e in found:
        bs = s if ascii_text else len(text[:s].encode("utf-8"))
        be = e if ascii_text else bs + len(text[s:e].encode("utf-8"))
        buf[bs:be] = b"$" + b"_" * (be - bs - 1)
    return bytes(buf), found


UNCLOSED_LIMIT = 256  # more unclosed `${` than this: not a script, a parser's worst case


def parse_shell(text: str, data: bytes) -> tuple[tree_sitter.Tree, list[tuple[int, int]]]:
    """Parse `text` (its UTF-8 `data`), with placeholders masked and, when the tree has
    errors, literal `$` signs masked; returns the tree and the placeholders' offsets."""
    parser = _parser()
    masked, holders = _mask_placeholders(text, data)
    if masked.count(b"${") - masked.count(b"}") > UNCLOSED_LIMIT:
        # tree-sitter-bash takes time quadratic in the number of unclosed `${` (128 KB of
        # them: 26 s); such a text is no script anyone runs, so its `${` are read as `$_`
        # (same length, the words keep their places) and the parse stays linear.
        masked = masked.replace(b"${", b"$_")
    tree = parser.parse(masked)
    if tree.root_node.has_error and b"$" in masked:
        again = _mask_literal_dollars(masked)
        if again != masked:
            tree = parser.parse(again)
    return tree, holders


# --- words -----------------------------------------------------------------------


def _unescape(raw: str, escapable: str | None = None) -> str:
    """Remove shell backslash escapes: any character outside quotes (`escapable` None),
    only `escapable` ones inside double quotes. A backslash-newline disappears."""
    if "\\" not in raw:
        return raw
    out = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and (escapable is None or raw[i + 1] in escapable):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _unescape_unquoted(raw: str) -> str:
    return _unescape(raw)


def _unescape_double(raw: str) -> str:
    return _unescape(raw, '$`"\\\n')


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
         "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _unescape_ansi(raw: str) -> str | None:
    out = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            if nxt in _ANSI:
                out.append(_ANSI[nxt])
                i += 2
                continue
            return None  # numeric escapes: rare in launches, treat as unknown
        out.append(c)
        i += 1
    return "".join(out)


@dataclass
class Piece:
    text: str | None
    splat: bool = False


def _pieces(node, src: Source) -> list[Piece]:
    t = node.type
    if t in ("word", "number"):
        return [Piece(_unescape_unquoted(src.node_text(node)))]
    if t == "raw_string":
        return [Piece(src.node_text(node)[1:-1])]
    if t == "ansi_c_string":
        return [Piece(_unescape_ansi(src.node_text(node)[2:-1]))]
    if t in ("string", "translated_string"):
        raw = src.node_text(node)
        base = src.char_offset(node.start_point)
        inner_start = raw.index('"') + 1
        inner_end = len(raw) - 1 if raw.endswith('"') and len(raw) > inner_start else len(raw)
        out: list[Piece] = []
        pos = inner_start
        for child in node.children:
            if child.type not in EXPANSION_TYPES:
                continue
            cs = src.char_offset(child.start_point) - base
            ce = src.char_offset(child.end_point) - base
            if cs > pos:
                out.append(Piece(_unescape_double(raw[pos:cs])))
            ctext = raw[cs:ce]
            splat = ctext in ("$@", "$*", "${@}", "${*}") or "[@]" in ctext or "[*]" in ctext
            out.append(Piece(None, splat=splat))
            pos = ce
        if inner_end > pos:
            out.append(Piece(_unescape_double(raw[pos:inner_end])))
        if not out:
            out.append(Piece(""))
        return out
    if t == "variable_assignment":
        out = []
        for child in node.children:
            if child.type in ("variable_name", "=", "subscript"):
                out.append(Piece(src.node_text(child)))
            else:
                out.extend(_pieces(child, src))
        return out
    if t == "concatenation":
        out = []
        for child in node.children:
            out.extend(_pieces(child, src))
        return out
    # Unquoted expansions, command substitutions, ERROR nodes and anything else the
    # file does not fix: any number of words.
    return [Piece(None, splat=True)]


def make_token(node, src: Source) -> Token:
    t = node.type
    if t == "word" or t == "number":  # the common case, kept cheap
        raw = src.node_text(node)
        return Token(src.span(node), _unescape_unquoted(raw), "", False, raw)
    if t == "raw_string":
        raw = src.node_text(node)
        return Token(src.span(node), raw[1:-1], "", False, raw)
    pieces = _pieces(node, src)
    prefix = ""
    known = True
    for p in pieces:
        if p.text is None:
            known = False
            break
        prefix += p.text
    splat = any(p.splat for p in pieces)
    raw = src.node_text(node)
    if known:  # every piece is known: the prefix is the whole word
        return Token(src.span(node), prefix, prefix="", raw=raw)
    # A lone unquoted expansion may be any number of words; one glued to literal text
    # (`--tp=$TP`, `"$MODEL"`) is exactly one word, unless it expands an array.
    lone = len(pieces) == 1
    return Token(src.span(node), None, prefix=prefix, splat=splat and (lone or "@" in raw or "*" in raw), raw=raw)


_PLAIN_PIECE = re.compile(r"^[^\s$`'\"\\]+$")


def _split_broken(node, src: Source) -> list[Token]:
    """The words of a node that tree-sitter could not read (it holds an ERROR): split at
    blanks outside quotes, so no word is lost. A plain piece is known; any other piece is
    one unknown word (an unquoted lone expansion: any number of words)."""
    raw = src.node_text(node)
    base = src.char_offset(node.start_point)
    out: list[Token] = []
    i, n = 0, len(raw)
    while i < n:
        while i < n and raw[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        start = i
        quote = ""
        while i < n:
            c = raw[i]
            if quote:
                if c == "\\" and quote == '"':
                    i += 2
                    continue
                if c == quote:
                    quote = ""
            elif c == "\\":
                if i + 1 < n and raw[i + 1] == "\n":
                    break  # a line continuation separates words
                i += 2
                continue
            elif c in "'\"":
                quote = c
            elif c in " \t\r\n":
                break
            i += 1
        i = min(i, n)
        piece = raw[start:i]
        span = src.doc_span(base + start, base + i)
        if not piece:
            pass  # a line continuation between words
        elif _PLAIN_PIECE.match(piece):
            out.append(Token(span, piece, "", False, piece))
        else:
            lit = re.match(r"[^$`'\"\\]*", piece)
            prefix = lit.group(0) if lit else ""
            lone = piece.startswith("$") and not any(q in piece for q in "'\"")
            out.append(Token(span, None, prefix=prefix, splat=lone, raw=piece))
        if i < n and raw[i] == "\\":
            i += 2
    return out


def command_tokens(node, words: list, src: Source) -> list[Token]:
    """The tokens of a command's words; words that hold a parse error are split, and an
    ERROR that tree-sitter put right after the command on its last line (`a$[x --tp 2`)
    is read as more of its words."""
    trailing = _next_sibling(node, src) if node.type == "command" else None
    if trailing is not None and (trailing.type != "ERROR"
                                 or trailing.start_point[0] != node.end_point[0]):
        trailing = None
    if not node.has_error and trailing is None:
        return [make_token(w, src) for w in words]
    out: list[Token] = []
    for w in words:
        text = src.node_text(w) if w.has_error or w.type == "ERROR" else ""
        if text and any(c in text for c in " \t\n"):
            out.extend(_split_broken(w, src))
        else:
            out.append(make_token(w, src))
    if trailing is not None:
        more = _split_broken(trailing, src)
        if more and out and trailing.start_byte == node.end_byte:
            # glued to the last word: one word the file does not fix
            last = out.pop()
            first = more.pop(0)
            out.append(Token(Span(last.span.start, first.span.end), None, last.literal_start,
                             False, last.raw + first.raw))
        out.extend(more)
    return out


def command_words(node: tree_sitter.Node) -> tuple[list[tree_sitter.Node], list[tree_sitter.Node]]:
    """The argument-like children of a `command` node, and its prefix assignments."""
    words: list[tree_sitter.Node] = []
    assigns: list[tree_sitter.Node] = []
    for child in node.children:
        t = child.type
        if t == "command_name":
            words.extend(c for c in child.children if c.is_named)
            if not child.children:
                words.append(child)
        elif t == "variable_assignment":
            if not words:
                assigns.append(child)
        elif t in SKIP_TYPES or not child.is_named:
            continue
        else:
            words.append(child)
    return words, assigns


# --- documentation placeholders ----------------------------------------------------------

# `[options]`, `[other parameters]`, `[--tp-size N]`, `[...]`: a bracket that opens on a
# letter, `-`, `<`, `.`, `$` or `_` (not `[1,2]`, a value) and closes a few words later.
_BRACKET_OPEN = re.compile(r"^\[(?:[A-Za-z<.$_-]|$)")
_ELLIPSES = ("...", "…")


def _placeholder(span: Span, raw: str) -> Token:
    return Token(span, None, "", True, raw, placeholder=True)


def doc_placeholders(args: list[Token], holders: list[Span]) -> list[Token]:
    """A launch's arguments with documentation placeholders made unknown: masked
    `<placeholder>` words (`holders`), `...`, and bracketed runs such as `[options]` or
    `[other parameters]` (one token for the run). Each stands for any arguments."""
    if holders:
        for t in args:
            for h in holders:
                if t.span == h:
                    t.text, t.splat, t.placeholder = None, True, True
                elif t.span.overlaps(h):  # `--model-path=<path>`: one word, value unknown
                    t.text, t.placeholder = None, True
    if not any(t.raw[:1] == "[" or t.raw in _ELLIPSES for t in args):
        return args
    out: list[Token] = []
    i, n = 0, len(args)
    while i < n:
        t = args[i]
        if t.raw in _ELLIPSES:
            out.append(_placeholder(t.span, t.raw))
            i += 1
            continue
        if t.raw[:1] == "[" and _BRACKET_OPEN.match(t.raw):
            j = i
            while j < n and j < i + 12 and not args[j].raw.endswith("]"):
                j += 1
            if j < n and args[j].raw.endswith("]"):
                out.append(_placeholder(Span(t.span.start, args[j].span.end),
                                        " ".join(a.raw for a in args[i:j + 1])))
                i = j + 1
                continue
        out.append(t)
        i += 1
    return out


# --- arrays ------------------------------------------------------------------------------

_ARRAY_REF = re.compile(r'^(")?\$\{([A-Za-z_][A-Za-z0-9_]*)\[([@*])\]\}(")?$')
_GLOB_CHARS = re.compile(r"[*?\[]")
_LOOPS = {"for_statement", "c_style_for_statement", "while_statement"}
# Statements whose place inside these is understood (see Arrays.value).
_BLOCKS = {"program", "compound_statement", "do_group", "subshell", "list", "if_statement",
           "elif_clause", "else_clause", "case_statement", "case_item", "negated_command",
           "command_substitution", "pipeline", "redirected_statement"} | _LOOPS
# Commands that may assign the variable named in their arguments.
_ASSIGNING_COMMANDS = {"read", "mapfile", "readarray", "printf", "eval", "let", "getopts",
                       "source", ".", "declare", "typeset", "local", "export", "readonly"}


def array_ref(tok: Token) -> tuple[str, str, bool] | None:
    """(name, `@` or `*`, quoted) when `tok` is exactly `"${A[@]}"`, `${A[*]}`, ..."""
    if tok.text is not None or "[" not in tok.raw:
        return None
    m = _ARRAY_REF.match(tok.raw)
    if m is None or bool(m.group(1)) != bool(m.group(4)):
        return None
    return m.group(2), m.group(3), bool(m.group(1))


def _named_before(parent, child) -> list:
    out = []
    for c in parent.children:
        if c.id == child.id:
            break
        if c.is_named:
            out.append(c)
    return out


def _function_of(node) -> str | None:
    while node is not None:
        if node.type == "function_definition":
            name = node.child_by_field_name("name")
            return name.text.decode("utf-8", "replace") if name is not None and name.text else None
        node = node.parent
    return None


class Arrays:
    """The values of the arrays a script assigns, as far as the script fixes them.

    A launch that expands `"${A[@]}"` gets A's elements as its words, with their spans at
    the array, when the script assigns A before the launch in code whose order is known:
    `A=( ... )` (also in `declare`/`local`), then `A+=( ... )` appends. Statements that
    may or may not run (an `if`, a loop, `cond && ...`) and change A only by appending add
    "any words" at that place; any other change there (a reassignment, `A[i]=`, `read -a`,
    `eval`, a call of a function that changes A), a loop around the launch that changes A,
    the start of a function (its caller's value) or of the script (a sourced script's
    caller) make the value unknown from that point. Nothing is guessed."""

    def __init__(self, src: Source, root, host: "ShellHost"):
        self.src = src
        self.root = root
        self.host = host
        self._mods: dict[str, tuple[list[int], list[str]]] = {}
        self._ifs: bool | None = None

    # -- where the script changes a variable --

    def mods(self, name: str) -> tuple[list[int], list[str]]:
        """The byte offsets (sorted) where the script changes `name`, and how: `set`
        (`A=( ... )`), `append` (`A+=( ... )`), `empty` (`unset A`, `local A`), `other`."""
        found = self._mods.get(name)
        if found is None:
            found = self._scan(name)
            self._mods[name] = found
        return found

    def _scan(self, name: str) -> tuple[list[int], list[str]]:
        data = self.src.data
        out: list[tuple[int, str]] = []
        funcs: set[str] = set()
        for m in re.finditer(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])", data):
            node = self.root.descendant_for_byte_range(m.start(), m.end())
            kind = self._kind(node, m.start(), m.end())
            if kind is not None:
                out.append((m.start(), kind))
                f = _function_of(node)
                if f:
                    funcs.add(f)
        done: set[str] = set()
        for _ in range(8):  # a call of a function that changes it changes it too
            todo = funcs - done
            if not todo:
                break
            for f in todo:
                done.add(f)
                pat = rb"(?<![A-Za-z0-9_.-])" + re.escape(f.encode()) + rb"(?![A-Za-z0-9_.-])"
                for m in re.finditer(pat, data):
                    node = self.root.descendant_for_byte_range(m.start(), m.end())
                    if node.parent is not None and node.parent.type == "command_name":
                        out.append((m.start(), "other"))
                        g = _function_of(node)
                        if g:
                            funcs.add(g)
        out.sort()
        return [s for s, _ in out], [k for _, k in out]

    def _kind(self, node, start: int, end: int) -> str | None:
        exact = node.start_byte == start and node.end_byte == end
        parent = node.parent
        if exact and node.type == "variable_name" and parent is not None:
            pt = parent.type
            if pt == "variable_assignment":
                decl = parent.parent if parent.parent is not None and \
                    parent.parent.type == "declaration_command" else None
                if decl is not None and _odd_declaration(decl):
                    return "other"
                op = parent.children[1].type if len(parent.children) > 1 else "="
                value = parent.child_by_field_name("value")
                is_array = value is not None and value.type == "array"
                if op == "+=":
                    return "append" if is_array else "other"
                return "set" if is_array else "other"
            if pt == "subscript":
                up = parent.parent
                return "other" if up is not None and up.type == "variable_assignment" else None
            if pt == "declaration_command":
                if _odd_declaration(parent):
                    return "other"
                keyword = parent.children[0].type
                flags = "".join(src_text(c) for c in parent.named_children
                                if src_text(c).startswith("-"))
                if "g" not in flags and (keyword == "local" or (
                        keyword in ("declare", "typeset") and _function_of(parent) is not None)):
                    return "empty"  # a new local variable
                return None  # `declare -a A`, `export A`: the value stays
            if pt == "unset_command":
                flags = "".join(src_text(c) for c in parent.named_children
                                if src_text(c).startswith("-"))
                return None if "f" in flags else "empty"
            if pt in ("for_statement", "c_style_for_statement"):
                return "other"
        # A word in some command: only commands that assign their argument count.
        x = node
        for _ in range(12):
            if x is None:
                return None
            if x.type in ("expansion", "simple_expansion", "arithmetic_expansion"):
                return None  # a read
            if x.type == "command":
                cmd = x.child_by_field_name("name")
                word = src_text(cmd).rsplit("/", 1)[-1] if cmd is not None else ""
                return "other" if word in _ASSIGNING_COMMANDS else None
            if x.type in ("for_statement", "c_style_for_statement"):
                return "other"
            x = x.parent
        return None

    def _inside(self, node, mods: tuple[list[int], list[str]]) -> list[str]:
        starts, kinds = mods
        lo = bisect.bisect_left(starts, node.start_byte)
        hi = bisect.bisect_left(starts, node.end_byte)
        return kinds[lo:hi]

    # -- the value at a place --

    def _effect(self, stmt, name: str, mods) -> str | None:
        """What a statement that runs before the place does to the array."""
        if stmt.type in ("comment", "function_definition"):
            return None
        kinds = self._inside(stmt, mods)
        if not kinds:
            return None
        if stmt.type in ("variable_assignment", "declaration_command", "unset_command") \
                and len(kinds) == 1:
            return {"set": "set", "append": "append", "empty": "empty"}.get(kinds[0], "unknown")
        # Runs maybe, or more than once: appends add unknown words, anything else is unknown.
        return "maybe" if all(k == "append" for k in kinds) else "unknown"

    def _before(self, parent, child) -> list:
        t = parent.type
        if t in ("pipeline", "redirected_statement", "case_statement", "function_definition") \
                or t in _LOOPS:
            return []
        if t == "if_statement" and child.type in ("elif_clause", "else_clause"):
            out = []
            for c in parent.children:  # only the conditions ran
                if c.type == "then":
                    break
                if c.is_named:
                    out.append(c)
            return out
        return _named_before(parent, child)

    def value(self, name: str, node, depth: int) -> list[Token | None] | None:
        """The words of array `name` just before `node` runs (None items: any number of
        words the file does not fix), or None when nothing is known."""
        mods = self.mods(name)
        if not mods[0]:
            return None  # never assigned here: an unknown variable
        ops: list[tuple[str, object]] = []  # nearest first
        child, parent = node, node.parent
        while True:
            if parent is None:
                ops.append(("unknown", None))  # the script's start: its caller's value
                break
            stop = False
            for stmt in reversed(self._before(parent, child)):
                effect = self._effect(stmt, name, mods)
                if effect is None:
                    continue
                ops.append((effect, stmt))
                if effect in ("set", "empty", "unknown"):
                    stop = True
                    break
            if stop:
                break
            t = parent.type
            if t in _LOOPS:
                kinds = self._inside(parent, mods)
                if kinds and not all(k == "append" for k in kinds):
                    ops.append(("unknown", None))  # a loop that changes it
                    break
                if kinds:  # earlier rounds of a loop that appends to it
                    ops.append(("maybe", None))
            elif t not in _BLOCKS:
                ops.append(("unknown", None))  # a function's start (its caller's value)
                break
            child, parent = parent, parent.parent
        words: list[Token | None] = []
        for effect, stmt in reversed(ops):
            if effect == "unknown":
                words = [None]
            elif effect == "empty":
                words = []
            elif effect == "maybe":
                words.append(None)
            else:
                elements = self._elements(stmt, name, depth)
                words = elements if effect == "set" else words + elements
        return words

    def _elements(self, stmt, name: str, depth: int) -> list[Token | None]:
        assign = stmt
        if stmt.type == "declaration_command":
            assign = next((c for c in stmt.named_children if c.type == "variable_assignment"
                           and src_text(c.child_by_field_name("name")) == name), None)
        value = assign.child_by_field_name("value") if assign is not None else None
        if value is None or value.type != "array":
            return [None]
        segment = self.src.to_doc(self.src.char_offset(assign.start_point))
        out: list[Token | None] = []
        for el in value.named_children:
            if el.type == "comment":
                continue
            toks = command_tokens(el, [el], self.src) if el.has_error else [make_token(el, self.src)]
            for tok in toks:
                ref = array_ref(tok)
                if ref is not None:
                    inner = self.expand(tok, ref, stmt, depth + 1) if depth < 8 else None
                    out.extend(inner if inner is not None else [tok])
                    continue
                if tok.text is None and tok.raw.startswith("[") and "]=" in tok.raw:
                    out.append(None)  # `[3]=x`: an element at an index
                    continue
                self.host.segments[(tok.span.start, tok.span.end)] = segment
                out.append(tok)
        return out

    def ifs_changed(self) -> bool:
        if self._ifs is None:
            self._ifs = re.search(r"(?<![A-Za-z0-9_])IFS\+?=", self.src.text) is not None
        return self._ifs

    def expand(self, ref_tok: Token, ref: tuple[str, str, bool], at, depth: int = 0) -> list[Token] | None:
        """The words that `ref_tok` (`"${A[@]}"` ...) expands to at the statement `at`, or
        None when the script does not fix them."""
        name, how, quoted = ref
        words = self.value(name, at, depth)
        if words is None or words == [None]:
            return None
        if (how == "*" or not quoted) and self.ifs_changed():
            return None
        out: list[Token] = []
        unknown = False
        last_unknown = False
        for w in words:
            if w is None:
                unknown = True
                if not last_unknown:  # words the file does not fix: the reference itself
                    out.append(Token(ref_tok.span, None, ref_tok.prefix, True, ref_tok.raw))
                last_unknown = True
            else:
                out.append(w)
                last_unknown = False
        if how == "*" and quoted:  # one word: the elements joined by a space
            if unknown or any(t.text is None for t in out):
                return [Token(ref_tok.span, None, "", False, ref_tok.raw)]
            return [Token(ref_tok.span, " ".join(t.text or "" for t in out), "", False, ref_tok.raw)]
        if quoted:
            return out
        split: list[Token] = []  # unquoted: each element is split into words and globbed
        for t in out:
            if t.span == ref_tok.span:
                split.append(t)
            elif t.text is None:
                t.splat = True
                split.append(t)
            elif t.text == "":
                continue
            elif any(c in t.text for c in " \t\n") or _GLOB_CHARS.search(t.text):
                split.append(Token(t.span, None, "", True, t.raw))
            else:
                split.append(t)
        return split


def _odd_declaration(decl) -> bool:
    """`declare -A` (associative), `-n` (a name reference), `-g`...: not a plain array."""
    flags = "".join(src_text(c) for c in decl.named_children if src_text(c).startswith("-"))
    return any(f in flags for f in "Ani")


def src_text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def expand_arrays(args: list[Token], node, src: Source, host: "ShellHost") -> list[Token]:
    """A launch's arguments with `"${A[@]}"`-like words replaced by the array's words
    where the script fixes them (see `Arrays`)."""
    out: list[Token] = []
    for tok in args:
        ref = array_ref(tok) if tok.splat else None
        if ref is not None:
            if src.arrays is None:
                root = node
                while root.parent is not None:
                    root = root.parent
                src.arrays = Arrays(src, root, host)
            words = src.arrays.expand(tok, ref, node)
            if words is not None:
                out.extend(words)
                continue
        out.append(tok)
    return out


# --- entrypoints ---------------------------------------------------------------------


def find_entry(tokens: list[Token]) -> tuple[str, int] | None:
    """Where the launch starts in a command's words: (kind, index of the entry token).

    The arguments are the tokens after the entry token."""
    if not tokens:
        return None
    first = tokens[0].text
    if first is not None:
        b = basename(first)
        if not (is_python(first) or b == "sglang" or b in WRAPPERS or b in SHELLS or "=" in first):
            return None
    for i, tok in enumerate(tokens):
        text = tok.text
        if text is None:
            continue
        if text == "-m" and i + 1 < len(tokens):
            mod = tokens[i + 1].text
            if mod in LAUNCH_MODULES:
                return LAUNCH_MODULES[mod], i + 1
            if mod in CLI_MODULES and i + 2 < len(tokens) and tokens[i + 2].text == "serve":
                return "serve", i + 2
        if basename(text) == "sglang" and i + 1 < len(tokens) and tokens[i + 1].text == "serve":
            return "serve", i + 1
    return None


def find_shell_script(tokens: list[Token]) -> int | None:
    """Index of the script word of `bash -c '...'` (behind any wrapper), or None.
    `bash -c -- SCRIPT` takes the word after `--`."""
    for i, tok in enumerate(tokens[:-1]):
        if tok.text is not None and basename(tok.text) in SHELLS:
            seen_c = False
            for j in range(i + 1, len(tokens)):
                opt = tokens[j].text
                if seen_c and opt == "--":
                    return j + 1 if j + 1 < len(tokens) else None
                if opt is None or not opt.startswith("-"):
                    return j if seen_c else None
                if not opt.startswith("--") and "c" in opt[1:]:
                    seen_c = True
            return None
    return None


# --- the container image a command runs its words in ---------------------------------------

# `docker run` (podman, nerdctl: the same) options that take no value; every other option
# without `=` takes the next word.
_RUN_SWITCHES = {
    "--rm", "--detach", "--interactive", "--tty", "--privileged", "--init", "--read-only",
    "--publish-all", "--no-healthcheck", "--oom-kill-disable", "--help", "--quiet",
    "--disable-content-trust", "--sig-proxy", "--use-api-socket", "--replace", "--rmi",
    "--read-only-tmpfs", "--http-proxy", "--no-hosts", "--tls-verify", "--env-host",
    "--passwd", "--all-tags", "-it", "-ti",
}
_RUN_SHORT_SWITCHES = set("ditPq")
_GLOBAL_SWITCHES = {"-D", "--debug", "--tls", "--tlsverify", "--remote", "-r"}
_IMAGE_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@#+-]*$")
_COMMAND_WORDS = SHELLS | {"sglang", "env", "exec", "nohup", "/bin/sh", "/bin/bash"}


def _is_command_word(text: str | None) -> bool:
    return text is not None and (is_python(text) or basename(text) in _COMMAND_WORDS
                                 or text == "-m")


def _image_of(tok: Token) -> tuple[str, Span]:
    return (tok.text if tok.text is not None else tok.raw), tok.span


def _docker_run_image(words: list[Token], start: int) -> tuple[str, Span] | None:
    """The image word of `docker run [options] IMAGE [command]`, `words[start]` being the
    first word after `run`."""
    i = start
    n = len(words)
    while i < n:
        tok = words[i]
        text = tok.text
        if text is None:
            if tok.splat and i + 1 < n:
                nxt = words[i + 1].text
                # `docker run $OPTS IMAGE cmd`: an unquoted expansion holds options, and
                # the word after it is the image when it reads as one.
                if nxt is not None and not nxt.startswith("-") and _IMAGE_WORD.match(nxt) \
                        and not _is_command_word(nxt) and "=" not in nxt:
                    return _image_of(words[i + 1])
                if nxt is not None and nxt.startswith("-"):
                    i += 1
                    continue
            return _image_of(tok)
        if text == "--":
            return _image_of(words[i + 1]) if i + 1 < n else None
        if text.startswith("--"):
            i += 1 if ("=" in text or text in _RUN_SWITCHES) else 2
            continue
        if text.startswith("-") and len(text) > 1:
            letters = text[1:]
            if all(c in _RUN_SHORT_SWITCHES for c in letters):
                i += 1
            elif len(letters) == 1 or all(c in _RUN_SHORT_SWITCHES for c in letters[:-1]):
                i += 2  # `-e X`, `-itv X`: the last letter takes the next word
            else:
                i += 1  # `-p8000:8000`: the value is attached
            continue
        return _image_of(tok)
    return None


def container_image(words: list[Token]) -> tuple[str, Span] | None:
    """The container image that the words of one command (the launch's words before its
    entrypoint, or before a `bash -c` script) run in: `docker|podman|nerdctl [container]
    run [options] IMAGE`, `srun|salloc --container-image[=]IMAGE` (pyxis),
    `apptainer|singularity exec|run [options] docker://IMAGE`, `kubectl run NAME
    --image[=]IMAGE`. The image's text is its value, or its source text when the file
    does not fix it (`$IMAGE`). None when no such command holds the words."""
    for i, tok in enumerate(words):
        text = tok.text
        if text is None:
            continue
        b = basename(text)
        if b in ("docker", "podman", "nerdctl"):
            j = i + 1
            # global options (`--context x`, `-H host`) and `container` before `run`
            while j < len(words) and j <= i + 6:
                w = words[j].text
                if w == "run":
                    return _docker_run_image(words, j + 1)
                if w == "container" or (w is not None and w.startswith("-")):
                    alone = w == "container" or "=" in (w or "") or w in _GLOBAL_SWITCHES
                    j += 1 if alone else 2
                    continue
                break
        elif b in ("srun", "salloc", "sbatch"):
            found = _image_option(words, i + 1, "--container-image")
            if found is not None:
                return found
        elif b in ("apptainer", "singularity"):
            for j in range(i + 1, len(words)):
                w = words[j].text
                if w is not None and w.startswith(("docker://", "oras://")):
                    return _image_of(words[j])
        elif b == "kubectl" and i + 1 < len(words) and words[i + 1].text == "run":
            found = _image_option(words, i + 2, "--image")
            if found is not None:
                return found
    return None


def _image_option(words, start: int, flag: str):
    """The value of `flag IMAGE` or `flag=IMAGE` among words[start:], with its span (the
    value only, when the word is written plainly)."""
    for j in range(start, len(words)):
        w = words[j].text
        if w is None:
            continue
        if w.startswith(flag + "="):
            value = w.split("=", 1)[1]
            span = words[j].span
            off = len(words[j].raw) - len(value) if words[j].raw.endswith(value) else 0
            return value, Span(span.start + off, span.end) if off else span
        if w == flag and j + 1 < len(words):
            return _image_of(words[j + 1])
    return None


# --- the host: editing a shell document ---------------------------------------------------


class ShellHost:
    """Edits of a shell document that keep the script runnable."""

    name = "shell"

    def __init__(self, text: str, index: LineIndex, quote: str = ""):
        self.text = text
        self.index = index
        self.quote_context = quote
        # Words of a launch written in an array, by span: the array's offset. Words from two
        # places (an array and the command, two arrays) are never edited as one run.
        self.segments: dict[tuple[int, int], int] = {}
        # A large script's windows (_extract_windows, with a LintCache), where their texts
        # start and end in self.text (not the windows: they hold the launches, which hold
        # this host): where the words of a thin launch (model.Launch.thin) are read again.
        self.window_starts: array | None = None
        self.window_ends: array = array("q")

    @property
    def rereads(self) -> bool:
        """Its launches may be thin (model.Launch.thin): a large script read in windows."""
        return self.window_starts is not None

    def reread_tokens(self, launch: Launch) -> list[Token]:
        """The words of a thin launch of the newest text, read again from its window (as
        _extract_windows read them), else from a reading of the whole text; only a launch
        with the same fingerprint at the same place is taken."""
        start, want = launch.span.start, launch.fingerprint
        reads = LINE_READS[0]  # reading again is not the checks asking for line numbers
        try:
            starts = self.window_starts if self.window_starts is not None else ()
            k = bisect.bisect_right(starts, start) - 1
            if 0 <= k < len(self.window_ends) and start <= self.window_ends[k]:
                parsed = _parse_window(self.text[starts[k]:self.window_ends[k]] + "\n", starts[k])
                if parsed is not None:
                    part = ShellResult([], [])
                    _launches_in(*parsed, ShellHost(self.text, self.index, ""), part, 0)
                    got = self._same(part.launches, start, want)
                    if got is not None:
                        return got
            token = _EXTRACT_MEMO.set(None)  # a plain reading, whatever lint is running
            try:
                got = self._same(extract_shell(self.text, self.index).launches, start, want)
            finally:
                _EXTRACT_MEMO.reset(token)
            if got is not None:
                return got
        finally:
            LINE_READS[0] = reads
        raise LookupError(f"the launch at offset {start} is not in the document's newest text")

    def _same(self, launches: list[Launch], start: int, want: tuple | None) -> list[Token] | None:
        for found in launches:
            if found.span.start == start:
                found.host = self
                found.fingerprint = None
                if fingerprint(found) == want:
                    return found.tokens
        return None

    def _apart(self, first: Token, last: Token) -> bool:
        seg = self.segments
        return bool(seg) and seg.get((first.span.start, first.span.end), -1) != \
            seg.get((last.span.start, last.span.end), -1)

    def quote(self, value: str) -> str | None:
        if value and _SAFE_WORD.match(value):
            return value
        if self.quote_context:
            return None  # inside a quoted `-c` script: only plain words are safe
        return "'" + value.replace("'", "'\"'\"'") + "'"

    def replace(self, token: Token, value: str) -> Edit | None:
        quoted = self.quote(value)
        return None if quoted is None else Edit(token.span, quoted)

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        quoted = write_all(self.quote, words)
        if quoted is None:
            return None
        return Edit(Span(token.span.end, token.span.end), " " + " ".join(quoted))

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        quoted = write_all(self.quote, words)
        if quoted is None or self._apart(first, last):
            return None
        return Edit(Span(first.span.start, last.span.end), " ".join(quoted))

    def remove(self, first: Token, last: Token) -> Edit | None:
        if self._apart(first, last):
            return None
        return remove_words(self.text, self.index, first.span.start, last.span.end)


def remove_words(text: str, index: LineIndex, s: int, e: int) -> Edit:
    """Delete the words in [s, e) so that a continued command still continues."""
    ls_line = index.line_of(s)
    le_line = index.line_of(e)
    ls = index.line_start(ls_line)
    le = index.line_end(le_line)
    before = text[ls:s]
    after = text[e:le]
    if not before.strip() and after.strip() in ("&", ";"):
        after = ""  # the words are the whole command: its terminator goes with them
    if not before.strip() and after.strip() in ("", "\\"):
        if after.strip() == "\\":
            return Edit(Span(ls, min(le + 1, len(text))), "")
        # The last line of a continued command: also drop the previous line's
        # trailing backslash, or the next command would be glued onto this one.
        if ls_line > 0:
            prev_end = index.line_end(ls_line - 1)
            prev = text[index.line_start(ls_line - 1):prev_end]
            stripped = prev.rstrip()
            if stripped.endswith("\\"):
                cut = index.line_start(ls_line - 1) + len(stripped[:-1].rstrip())
                keep = le - 1 if text[le - 1:le] == "\r" else le  # the line's \r\n stays whole
                return Edit(Span(cut, keep), "")
        return Edit(Span(ls, min(le + 1, len(text))), "")
    return remove_in_line(text, s, e, ls, le, at_line_start=not before.strip())


_OTHER_BREAKS = "\x85\u2028\u2029"


def remove_in_line(text: str, s: int, e: int, ls: int, le: int, at_line_start: bool) -> Edit:
    """Delete words that share their line with others, with the blanks that separated
    them: the ones after when the words start the line, else the ones before. A line
    break of YAML that is none for the editor (NEL, U+2028, U+2029) starts a line too:
    the blanks after one are a block scalar's indentation, which must stay."""
    start = s
    if not at_line_start:
        while start > ls and text[start - 1] in " \t":
            start -= 1
        if start > ls and text[start - 1] in _OTHER_BREAKS:
            at_line_start = True
    if at_line_start:
        end = e
        while end < le and text[end] in " \t":
            end += 1
        return Edit(Span(s, end), "")
    return Edit(Span(start, e), "")


# --- extraction ------------------------------------------------------------------------


@dataclass
class ShellResult:
    launches: list[Launch]
    findings: list[Finding]


# Above this size a script is parsed in windows around the launches (see below).
WINDOW_THRESHOLD = 256 * 1024


def extract_shell(text: str, index: LineIndex | None = None, to_doc: OffsetMap | None = None,
                  doc_text: str | None = None, doc_index: LineIndex | None = None,
                  quote: str = "", depth: int = 0) -> ShellResult:
    """Find every launch in a shell text. For a nested `-c` script, `to_doc` maps its
    offsets into the document and `doc_text`/`doc_index` describe the document."""
    result = ShellResult([], [])
    if "sglang" not in text:
        return result
    index = index or LineIndex(text)
    if depth == 0 and to_doc is None and len(text) > WINDOW_THRESHOLD:
        windowed = _extract_windows(text, index)
        if windowed is not None:
            return windowed
    doc_text = text if doc_text is None else doc_text
    doc_index = index if doc_index is None else doc_index
    data = text.encode("utf-8")
    src = Source(text, data, index, to_doc or OffsetMap(), quote)
    tree, holders = parse_shell(text, data)
    src.placeholders = [src.doc_span(s, e) for s, e in holders]
    host = ShellHost(doc_text, doc_index, quote)
    _launches_in(tree, src, host, result, depth)
    result.launches.sort(key=lambda l: l.span.start)
    return result


class _Family:
    """Each node's parent and next siblings, and the leaves in order, found in one walk of
    the tree. tree-sitter finds a node's parent or next sibling, and the node at an
    offset, by walking down from the root: on a chain of thousands of commands (`bash -c
    "a && b && ..."`, a 208 KB Dockerfile CMD) each launch cost the whole chain. Made only
    for a large text with many launches (FAMILY_BYTES, FAMILY_LAUNCHES)."""

    def __init__(self, root):
        parent: dict[int, object] = {}
        after: dict[int, object] = {}
        after_named: dict[int, object] = {}
        leaves = []
        stack = [root]
        while stack:
            node = stack.pop()
            kids = node.children
            if not kids:
                leaves.append(node)
                continue
            # Siblings with one of no width (error recovery's MISSING tokens and empty
            # nodes) are left to tree-sitter, which passes over some of them.
            plain = all(kid.end_byte > kid.start_byte and not kid.is_missing for kid in kids)
            later = later_named = None
            for kid in reversed(kids):
                key = kid.id
                parent[key] = node
                if plain:
                    after[key] = later
                    after_named[key] = later_named
                later = kid
                if kid.is_named:
                    later_named = kid
            stack.extend(kids)
        leaves.sort(key=lambda n: n.start_byte)
        self.parent = parent
        self.after = after
        self.after_named = after_named
        self.leaves = leaves
        self.starts = [n.start_byte for n in leaves]

    def at(self, root, start: int, end: int):
        """root.descendant_for_byte_range(start, end), found by bisection when a leaf
        holds the range."""
        i = bisect.bisect_right(self.starts, start) - 1
        if i >= 0:
            leaf = self.leaves[i]
            if leaf.start_byte <= start and end <= leaf.end_byte:
                return leaf
        return root.descendant_for_byte_range(start, end)


FAMILY_BYTES = 64 * 1024
FAMILY_LAUNCHES = 64


def _parent(node, src: Source):
    fam = src.family
    return node.parent if fam is None else fam.parent.get(node.id)


def _next_sibling(node, src: Source):
    fam = src.family
    if fam is None or node.id not in fam.after:
        return node.next_sibling
    return fam.after[node.id]


def _next_named_sibling(node, src: Source):
    fam = src.family
    if fam is None or node.id not in fam.after_named:
        return node.next_named_sibling
    return fam.after_named[node.id]


def _launches_in(tree, src: Source, host: ShellHost, result: ShellResult, depth: int) -> None:
    text = src.text
    if src.family is None and len(src.data) > FAMILY_BYTES \
            and text.count("sglang", 0) > FAMILY_LAUNCHES:
        src.family = _Family(tree.root_node)
    fam = src.family
    seen: set[int] = set()
    held: set[str] = set()  # arrays whose elements name the entrypoint: `CMD=(python3 -m sglang...)`
    cpos = bpos = 0  # a character offset and its UTF-8 byte offset, moved forward
    for m in re.finditer(r"sglang", text):
        if src.index.ascii:
            bstart = m.start()
        else:  # encode only what lies since the last one: the whole prefix was quadratic
            bpos += len(text[cpos:m.start()].encode("utf-8"))
            cpos = m.start()
            bstart = bpos
        node = tree.root_node.descendant_for_byte_range(bstart, bstart + 6) if fam is None \
            else fam.at(tree.root_node, bstart, bstart + 6)
        array = None
        while node is not None and node.type != "command":
            if node.type == "array" and array is None:
                array = node
            node = _parent(node, src)
        if array is not None and node is None:
            assign = _parent(array, src)
            name = assign.child_by_field_name("name") if assign is not None else None
            if assign is not None and assign.type == "variable_assignment" and name is not None \
                    and name.type == "variable_name":
                held.add(src_text(name))
            continue
        if node is None or node.id in seen:
            continue
        seen.add(node.id)
        _command(node, src, host, result, depth)
    # The commands that run such an array: `setsid "${CMD[@]}" > log &`.
    for name in sorted(held):
        cpos = bpos = 0
        for m in re.finditer(r"\$\{" + re.escape(name) + r"\[[@*]\]\}", text):
            if src.index.ascii:
                bstart = m.start()
            else:
                bpos += len(text[cpos:m.start()].encode("utf-8"))
                cpos = m.start()
                bstart = bpos
            node = tree.root_node.descendant_for_byte_range(bstart, bstart + 2) if fam is None \
                else fam.at(tree.root_node, bstart, bstart + 2)
            while node is not None and node.type != "command":
                node = _parent(node, src)
            if node is None or node.id in seen:
                continue
            seen.add(node.id)
            _command(node, src, host, result, depth)


def _continued(line: str) -> bool:
    return line.rstrip().endswith("\\")


class _Lines:
    """`text.split("\\n")`, each line cut out when asked (an edit looks at a few)."""

    __slots__ = ("text", "starts", "n")

    def __init__(self, text: str, index: LineIndex):
        self.text = text
        self.starts = index.starts
        self.n = len(index.starts)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> str:
        end = self.starts[i + 1] - 1 if i + 1 < self.n else len(self.text)
        return self.text[self.starts[i]:end]


def _window_lines(lines: "_Lines", index: LineIndex, text: str, first: int, last: int,
                  floor: int) -> list[list[int]]:
    """The windows (first line, last line) of the occurrences of `sglang` on lines
    `first`..`last`; a window never reaches back above line `floor`."""
    n = len(lines)
    lo = index.line_start(first)
    hi = index.line_end(last) if last < n else len(text)
    marker_lines = sorted({index.line_of(m.start()) for m in _SGLANG.finditer(text, lo, hi)})
    windows: list[list[int]] = []
    for ml in marker_lines:
        if windows and windows[-1][0] <= ml <= windows[-1][1]:
            continue
        s = ml
        while s > floor and _continued(lines[s - 1]):
            s -= 1
        e = ml
        while e < n - 1 and _continued(lines[e]):
            e += 1
        j = e + 1
        while j < n:
            stripped = lines[j].strip()
            if stripped.startswith("#"):
                j += 1
                continue
            if stripped.startswith("-"):
                e = j
                while e < n - 1 and _continued(lines[e]):
                    e += 1
                j = e + 1
                continue
            break
        if windows and s <= windows[-1][1] + 1:
            windows[-1][1] = max(windows[-1][1], e)
        else:
            windows.append([s, e])
    return windows


_SGLANG = re.compile(r"sglang")
# How many launches one reading of a large script's windows keeps with their words until
# their checks ran (model.Launch.thin); the others are thin at once and read again when
# checked: a peak of ~3.6 KB a launch for at most this many launches. A script with more
# pays a second reading of the others on its first lint (11,110 launches: 3.3 -> ~4 s;
# 2,222 launches: nothing).
KEEP_WORDS = 1000


def _parse_window(sub: str, start: int) -> "tuple[object, Source] | None":
    """A window's text (document offset `start`) parsed on its own, or None when it does
    not parse cleanly (it may start inside a multi-line string)."""
    data = sub.encode("utf-8")
    tree, holders = parse_shell(sub, data)
    if tree.root_node.has_error:
        return None
    src = Source(sub, data, LineIndex(sub), OffsetMap(start), "")
    src.placeholders = [src.doc_span(a, b) for a, b in holders]
    return tree, src


_NO_SEGMENTS: dict = {}  # a window without array words (never written to)


@dataclass(slots=True)
class _Window:
    """A window of the last lint of a document (LintCache memo): its lines, where it
    started, the launches it gave as stored in the result (Launch or lintcache.Moved), the
    findings of its parse (offsets of `start`), and the words of arrays (ShellHost.segments)."""

    first: int
    last: int
    start: int
    end: int  # where its text ends in the document (the window is that text and "\n")
    key: bytes  # lintcache.digest of its text: a copy per window kept the document twice
    items: list
    findings: Sequence[Finding]
    segments: dict
    line: int | None  # the line its findings were made for, when they name line numbers


def _extract_windows(text: str, index: LineIndex) -> ShellResult | None:
    """A large script, parsed only around its launches.

    Each window is the logical line holding an occurrence of `sglang` (the lines its
    backslash continuations join), plus the comment and option lines right after it
    (SL020 looks at those). Windows are parsed on their own, with offsets mapped back
    into the document. A window that does not parse cleanly (it may start inside a
    multi-line string) makes the whole script fall back to one full parse: returns None.

    With a LintCache (an editor's document), the windows above and below the edit are
    taken from the last lint as they were (lintcache.text_diff): those above stay where
    they were, those below move by the edit's length (their launches are copied only when
    read, lintcache.Moved); only the lines the edit touched are looked at again.
    """
    if "=(" in text and ("[@]}" in text or "[*]}" in text):
        return None  # arrays: a launch's words (or its entrypoint) may sit outside any window
    lines = _Lines(text, index)
    n = len(lines)
    memo = extract_memo()
    if memo is None:
        result = ShellResult([], [])
        host = ShellHost(text, index, "")
        for s, e in _window_lines(lines, index, text, 0, n - 1, 0):
            start = index.line_start(s)
            sub = text[start:index.line_end(e)] + "\n"
            parsed = _parse_window(sub, start)
            if parsed is None:
                return None
            _launches_in(*parsed, host, result, 0)
        result.launches.sort(key=lambda l: l.span.start)
        return result

    # One host per document, kept between lints and pointed at the newest text: every
    # launch of the result edits through it (a host per lint would keep each old text).
    kept_host = memo.get("shell-host")
    host = kept_host if isinstance(kept_host, ShellHost) else ShellHost(text, index, "")
    memo["shell-host"] = host
    host.text, host.index, host.segments = text, index, {}
    old: list[_Window] = memo.get("shell-windows") or []
    diff = memo.get("diff")
    before: list[_Window] = []  # kept as they are
    after: list[_Window] = []  # kept, moved by d
    d = dlines = 0
    if old and diff is not None:
        was, (p, s_len) = diff
        d = len(text) - len(was)
        old_index = memo.get("shell-index")
        if old_index is not None and old_index.text is was:
            first_changed = index.line_of(p)
            last_changed_old = old_index.line_of(len(was) - s_len)
            dlines = len(index.starts) - len(old_index.starts)
            # The windows are in document order and apart, so their first and last lines
            # rise: the ones above the edit (their last line and the next before it) and
            # the ones below it (their first line and the one above after it) are two
            # slices, found by bisection (a loop over 2,222 windows cost a millisecond).
            k = bisect.bisect_left(old, first_changed - 1, key=lambda w: w.last)
            before = old[:k]
            j = bisect.bisect_right(old, last_changed_old + 1, key=lambda w: w.first)
            if dlines:  # lines moved: not below a window whose findings name lines
                for i in range(len(old) - 1, j - 1, -1):
                    if old[i].line is not None:
                        j = i + 1
                        break
            after = old[j:]
    while True:
        a = before[-1].last + 1 if before else 0
        b = after[0].first + dlines - 1 if after else n - 1
        middle = _window_lines(lines, index, text, a, b, a) if a <= b else []
        if middle and before and middle[0][0] <= before[-1].last + 1:
            before.pop()  # it would have grown into the edited lines: read it again
            continue
        if middle and after and middle[-1][1] + 1 >= after[0].first + dlines:
            after.pop(0)
            continue
        break
    # The windows the edit may have moved or changed, by their text.
    by_text = {w.key: w for w in old[len(before):len(old) - len(after)]} if middle else {}
    made: list[_Window] = list(before)
    if host.window_starts is None:
        host.window_starts = array("q")  # its launches may be thin (set again below)
    fresh = 0  # launches read in this lint
    for s, e in middle:
        start = index.line_start(s)
        end = index.line_end(e)
        sub = text[start:end] + "\n"
        key = digest(sub)
        hit = by_text.get(key)
        if hit is not None and hit.line is not None and hit.line != s:
            hit = None  # its findings name line numbers, and the window moved to other lines
        if hit is not None:
            shift = start - hit.start
            made.append(_Window(s, e, start, end, key,
                                [moved_again(i, shift, host) for i in hit.items]
                                if shift else hit.items,
                                hit.findings, hit.segments, hit.line))
            continue
        parsed = _parse_window(sub, start)
        if parsed is None:
            return None
        part = ShellResult([], [])
        own = ShellHost(text, index, "")
        reads = LINE_READS[0]
        _launches_in(*parsed, own, part, 0)
        part.launches.sort(key=lambda l: l.span.start)
        for launch in part.launches:
            launch.host = host
            fingerprint(launch)
            fresh += 1
            if fresh > KEEP_WORDS:
                # Past the first KEEP_WORDS launches of one reading, a launch is thin from
                # the start (its words are read again when its checks ask): the words of
                # every launch of a whole large script were all alive at once, and the
                # memory they left free when dropped stayed with the process.
                launch.thin()
        # () and one shared empty mapping where a window has no findings or array words
        # (most of them: an empty list and dict each were 120 bytes a window).
        made.append(_Window(s, e, start, end, key, part.launches,
                            [moved(f, -start) for f in part.findings] if part.findings else (),
                            {(a - start, b - start): seg - start
                             for (a, b), seg in own.segments.items()}
                            if own.segments else _NO_SEGMENTS,
                            s if part.findings and LINE_READS[0] != reads else None))
    if d == 0 and dlines == 0:
        made.extend(after)  # an edit that kept the length: nothing below it moved
    else:
        for w in after:
            made.append(_Window(w.first + dlines, w.last + dlines, w.start + d, w.end + d, w.key,
                                [moved_again(i, d, host) for i in w.items] if d else w.items,
                                w.findings, w.segments, w.line))
    memo["shell-windows"] = made
    memo["shell-index"] = index
    host.window_starts = array("q", [w.start for w in made])
    host.window_ends = array("q", [w.end for w in made])
    # One pass in C over the windows' launches; the few windows with findings or array
    # words (kept relative to the window's start) are picked out by comprehensions (a
    # loop with a call per window cost 2 ms for 2,222 windows).
    launches = LaunchList(chain.from_iterable([w.items for w in made]))
    findings: list[Finding] = [moved(f, w.start) for w in [w for w in made if w.findings]
                               for f in w.findings]
    for w in [w for w in made if w.segments]:
        for (a, b), seg in w.segments.items():
            host.segments[(a + w.start, b + w.start)] = seg + w.start
    return ShellResult(launches, findings)


_EXPORT = re.compile(r"^[ \t]*(?:export|declare[ \t]+-x)[ \t]+((?:[A-Za-z_][A-Za-z0-9_]*(?:=(?:'[^'\n]*'|\"[^\"\n]*\"|[^\s;#]*))?[ \t]*)+)"
                     r"|^[ \t]*unset[ \t]+([A-Za-z_][A-Za-z0-9_ \t]*)", re.M)
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:=('[^'\n]*'|\"[^\"\n]*\"|[^\s;#]*))?")


_EXPORTS = threading.local()  # per thread: (text, its export lines, where the last query stopped)


def exported(text: str, upto: int) -> dict[str, str | None]:
    """The variables a script exports before offset `upto` (`export NAME=value`, `declare
    -x`), as the launch's environment; a value with an expansion is None (set, value not
    fixed); `unset NAME` takes one out again. Read line by line, not by control flow.

    The export lines of a text are found once, and a query after the last one goes on
    from where that one stopped: a script's launches are asked in order, and scanning from
    the top for each made 2,222 launches cost 2.7 s."""
    memo = getattr(_EXPORTS, "memo", None)
    if memo is None or memo[0] is not text:
        # (Even the test for the two words, made for each launch, cost 2 x 0.7 ms a launch
        # in a 700 KB text.)
        has = "export" in text or "declare" in text
        memo = [text, list(_EXPORT.finditer(text)) if has else [], 0, {}, 0]
        _EXPORTS.memo = memo
    _, found, k, known, at = memo
    if not found:
        return {}
    if upto < at:
        k, known = 0, {}
    env = dict(known)
    while k < len(found) and found[k].end() <= upto:
        _apply_export(found[k], env)
        k += 1
    memo[2], memo[3], memo[4] = k, dict(env), upto
    if k < len(found) and found[k].start() < upto:
        # An export line the launch's own offset cuts (`export A=1 && python -m ...`):
        # read as the text up to `upto` shows it.
        for m in _EXPORT.finditer(text, found[k].start(), upto):
            _apply_export(m, env)
    return env


def _apply_export(m: re.Match, env: dict[str, str | None]) -> None:
    if m.group(2):
        for name in m.group(2).split():
            env.pop(name, None)
        return
    for name, value in _ASSIGN.findall(m.group(1)):
        if value[:1] in ("'", '"'):
            quoted = value[1:-1]
            env[name] = None if value[0] == '"' and ("$" in quoted or "`" in quoted) else quoted
        elif value:
            env[name] = None if "$" in value or "`" in value else value
        elif "=" in m.group(1).split(name, 1)[1][:1]:
            env[name] = ""
        else:
            env.setdefault(name, None)  # `export NAME`: set if the shell had it


def logical_line_start(index: LineIndex, line: int) -> int:
    """The first line of the logical line that `line` belongs to: a command that starts on a
    line continued with a backslash (`cd /x && \\`) starts, for a comment above it, where
    that continued line starts (a comment after the backslash would cut the command)."""
    text = index.text
    while line > 0:
        prev = text[index.line_start(line - 1):index.line_end(line - 1)].rstrip("\r")
        if not prev.endswith("\\") or (len(prev) - len(prev.rstrip("\\"))) % 2 == 0:
            break
        line -= 1
    return line


def _command(node, src: Source, host: ShellHost, result: ShellResult, depth: int) -> None:
    words, assigns = command_words(node)
    tokens = command_tokens(node, words, src)
    entry = find_entry(tokens)
    ctext = src.node_text(node)
    arrays = "[@]}" in ctext or "[*]}" in ctext
    if entry is None and arrays:
        # `"${CMD[@]}"` where the script's array holds the command itself
        expanded = expand_arrays(tokens, node, src, host)
        entry = find_entry(expanded) if expanded != tokens else None
        if entry is not None:
            tokens = expanded
    if entry is None:
        script = find_shell_script(tokens)
        if script is not None and depth < 3:
            before = len(result.launches)
            _nested(words[script], src, host, result, depth)
            if len(result.launches) > before:
                image = container_image(tokens[:script])
                for nested in result.launches[before:]:
                    if nested.image is None:
                        nested.image = image
        return
    kind, at = entry
    args = tokens[at + 1:]
    if src.placeholders or "[" in ctext or "..." in ctext or "…" in ctext:
        args = doc_placeholders(args, src.placeholders)
    if arrays:
        args = expand_arrays(args, node, src, host)
    env: dict[str, str | None] = exported(src.text, src.char_offset(node.start_point))
    for a in assigns:
        name = a.child_by_field_name("name")
        value = a.child_by_field_name("value")
        if name is not None:
            env[src.node_text(name)] = make_token(value, src).text if value is not None else ""
    for i, tok in enumerate(tokens[:at]):
        if tok.text and "=" in tok.text and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", tok.text) and i > 0:
            k, v = tok.text.split("=", 1)
            env.setdefault(k, v)
    start = src.span(node).start
    anchor = host.index.line_start(logical_line_start(host.index, host.index.line_of(start)))
    launch = Launch(kind=kind, entry=tokens[at], tokens=args, host=host,
                    span=src.span(node), env=env, anchor=anchor,
                    image=container_image(tokens[:at]))
    result.launches.append(launch)
    # Options that a broken continuation cut off are still read as this launch's, so
    # every problem in them is reported now rather than after the continuation is fixed.
    cur = node
    for _ in range(1000):
        orphan = _broken_continuation(cur, src, launch, result)
        if orphan is None:
            break
        launch.tokens.extend(make_token(w, src) for w in orphan_words(orphan))
        cur = orphan


def _nested(word, src: Source, host: ShellHost, result: ShellResult, depth: int) -> None:
    """Parse the script of `bash -c '...'` with offsets mapped into the document."""
    raw = src.node_text(word)
    base = src.char_offset(word.start_point)
    if word.type == "raw_string":
        inner = raw[1:-1] if raw.endswith("'") and len(raw) > 1 else raw[1:]
        table = None
        mapping = OffsetMap(src.to_doc(base + 1))
        if src.to_doc.table is not None:
            table = [src.to_doc(base + 1 + k) for k in range(len(inner) + 1)]
            mapping = OffsetMap(table=table)
        quote = "'"
    elif word.type == "string":
        # Expansions stay in the script as written; the inner parse reads them as unknown.
        body = raw[1:-1] if raw.endswith('"') and len(raw) > 1 else raw[1:]
        chars: list[str] = []
        table = []
        i = 0
        while i < len(body):
            c = body[i]
            if c == "\\" and i + 1 < len(body) and body[i + 1] in '$`"\\\n':
                if body[i + 1] != "\n":
                    chars.append(body[i + 1])
                    table.append(src.to_doc(base + 1 + i))
                i += 2
                continue
            chars.append(c)
            table.append(src.to_doc(base + 1 + i))
            i += 1
        table.append(src.to_doc(base + 1 + len(body)))
        inner = "".join(chars)
        mapping = OffsetMap(table=table)
        quote = '"'
    elif word.type == "word":
        inner = src.node_text(word)
        mapping = OffsetMap(src.to_doc(base))
        quote = "'"
    else:
        return
    nested = extract_shell(inner, None, mapping, host.text, host.index, quote, depth + 1)
    result.launches.extend(nested.launches)
    result.findings.extend(nested.findings)


def orphan_words(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """Every word of a command cut off from a launch, `--x=1` assignments included."""
    out: list[tree_sitter.Node] = []
    for child in node.children:
        t = child.type
        if t == "command_name":
            out.extend(c for c in child.children if c.is_named)
        elif t == "variable_assignment" or (child.is_named and t not in SKIP_TYPES):
            out.append(child)
    return out


def _broken_continuation(node, src: Source, launch: Launch, result: ShellResult):
    """Options on the lines after a launch that bash runs as a separate command: report
    them and return that command's node."""
    end_line = node.end_point[0]
    sib = _next_named_sibling(node, src)
    comments = []
    while sib is not None and sib.type == "comment":
        comments.append(sib)
        sib = _next_named_sibling(sib, src)
    if sib is None or sib.start_point[0] > end_line + 1 + len(comments):
        return None
    if sib.start_point[0] <= end_line:
        return None  # on the launch's own line (`launch | -x`, `launch; -x`): no line continuation is missing
    if sib.type != "command":
        return None
    text = src.node_text(sib).lstrip()
    if not text.startswith("-"):
        return None
    def doc_line(row: int) -> int:
        return launch.host.index.line_of(src.to_doc(src.index.line_start(row))) + 1

    line_of_sib = sib.start_point[0]
    line_end = src.index.line_end(line_of_sib)
    span = Span(src.to_doc(src.char_offset(sib.start_point)), src.to_doc(line_end))
    last_line = src.index.line_end(end_line)
    last_text = src.text[src.index.line_start(end_line):last_line]
    first_word = text.split()[0]
    stripped = last_text.rstrip()
    if comments and comments[0].start_point[0] == end_line:
        # `--flag \  # note`: the backslash escapes a space, and the comment ends the command.
        c = comments[0]
        cstart = src.char_offset(c.start_point)
        between = src.text[src.char_offset(node.end_point):cstart]
        if "\\" not in between:
            return None
        bs = src.char_offset(node.end_point) + between.index("\\")
        reason = (f"the backslash on line {doc_line(end_line)} is followed by a space, so it escapes "
                  f"the space instead of continuing the line, and the comment after it ends the "
                  f"command")
        fixes = [Fix("Make it a line continuation (drops the comment)",
                     [Edit(Span(src.to_doc(bs), src.to_doc(src.char_offset(c.end_point))), "\\")],
                     preferred=True, safe=False)]
        related = [Related(Span(src.to_doc(bs), src.to_doc(bs + 1)), "this backslash escapes a space")]
    elif comments:
        c = comments[0]
        reason = f"the comment on line {doc_line(c.start_point[0])} ends the continued command"
        cstart = src.index.line_start(c.start_point[0])
        fixes = []
        if len(comments) == 1 and not src.quote:
            fixes.append(Fix("Remove the comment line inside the continued command",
                             [Edit(Span(src.to_doc(cstart),
                                        src.to_doc(src.index.line_end(c.start_point[0]) + 1)), "")],
                             preferred=True, safe=False))
        related = [Related(src.span(c), "this comment ends the command")]
    elif stripped.endswith("\\") and stripped != last_text:
        reason = f"the backslash at the end of line {doc_line(end_line)} is followed by spaces"
        fixes = [Fix("Remove the spaces after the line continuation",
                     [Edit(Span(src.to_doc(src.index.line_start(end_line) + len(stripped)),
                                src.to_doc(last_line)), "")], preferred=True)]
        related = [Related(Span(src.to_doc(src.index.line_start(end_line)), src.to_doc(last_line)),
                           "the launch ends here")]
    elif not stripped.endswith("\\"):
        reason = f"line {doc_line(end_line)} does not end with a backslash"
        at = last_line - 1 if src.text[last_line - 1:last_line] == "\r" else last_line  # before \r\n
        fixes = [Fix("Add the missing line continuation",
                     [Edit(Span(src.to_doc(at), src.to_doc(at)), " \\")], preferred=True)]
        related = [Related(Span(src.to_doc(src.index.line_start(end_line)), src.to_doc(last_line)),
                           "the launch ends here")]
    else:
        return None
    result.findings.append(BROKEN_CONTINUATION.finding(
        f"'{first_word}' is not part of the launch above: {reason}. The shell runs this "
        f"line as a separate command, and SGLang never sees these options",
        span, related=related, fixes=fixes))
    return sib


# --- the format ------------------------------------------------------------------------

SHELL_SUFFIXES = {".sh", ".bash", ".zsh", ".ksh", ".bats"}
SHELL_LANGUAGES = {"shellscript", "sh", "bash", "zsh", "shell"}


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    import os
    if language_id in SHELL_LANGUAGES:
        return True
    if path:
        base = os.path.basename(path)
        suffix = os.path.splitext(base)[1].lower()
        if suffix in SHELL_SUFFIXES:
            return True
        if suffix and suffix not in (".txt", ".env", ".cmd", ".run"):
            return False
    first = text[:200].split("\n", 1)[0]
    return first.startswith("#!") and any(sh in first for sh in ("sh", "bash", "zsh"))


def _extract(text: str, index: LineIndex, path: str | None, settings) -> ShellResult:
    return extract_shell(text, index)


def _format():
    from servelint.extract import Format
    return Format("shell", 50, detect, _extract)


FORMAT = _format()
