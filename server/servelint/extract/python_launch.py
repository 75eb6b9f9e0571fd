"""Python launchers: SGLang launches written in Python source.

What is read (the file is only parsed with `ast`, never imported or run):

- argv lists: any list or tuple literal whose items start a launch
  (`["python3", "-m", "sglang.launch_server", "--model-path", model, "--tp", "2"]`,
  `[sys.executable, "-m", ...]`), wherever it appears (`subprocess.run/Popen/call/
  check_call/check_output`, `os.execv*`, `os.spawnv*`, an assignment). `base + [...]`
  concatenations are read as one launch; `*rest`, names and calls are unknown words
  (a name or call in option position may expand to any number of words). `os.execl*` /
  `os.spawnl*` / `asyncio.create_subprocess_exec` take the words as separate arguments.
  A `bash -c SCRIPT` list reads the script as shell.
- shell strings: the command string of `os.system`, `os.popen`, `subprocess.*`
  (a string command is a shell command), `subprocess.getoutput`,
  `asyncio.create_subprocess_shell` and `shlex.split(...)`, directly or through a name
  assigned once in the file. f-string fields are unknown words.
- `sglang.utils.launch_server_cmd(command, host, port)` and `execute_shell_command`:
  SGLang appends ` --port <port>` (launch_server_cmd only), replaces every backslash by a
  space and splits on whitespace (`str.split()`): no shell quoting, no expansion; leading
  `KEY=VALUE` words are environment assignments.
- `sglang.test.test_utils.popen_launch_server(model, base_url, timeout, api_key,
  other_args, env, return_stdout_stderr, device, pd_separated, num_replicas)`: runs
  `sglang serve --model-path <model> <other_args...> [--device <auto-detected>]
  --host <h> --port <p> [--api-key <k>]`; the words the helper adds sit on the call.
- `sglang.Engine(...)`, `sgl.Engine(...)`, `Engine(...)` imported from SGLang, and
  `ServerArgs(...)`: keyword arguments are ServerArgs fields, read as the options whose
  `dest` they name.

Every token's span is its exact place in the document: string escapes, raw, triple
quoted, implicitly concatenated and f-strings are decoded with a table from each value
character to its source characters (ast column offsets are UTF-8 bytes and are converted).

A file with a syntax error is parsed again with the offending line blanked out (same
length, so every offset stays exact), up to 25 times; launches on blanked lines are not
read. If it still does not parse, nothing is extracted.

With a LintCache, a module is read chunk by chunk (top-level statements) and an edit
reads again only the chunks it changed (see "incremental extraction" below); whatever
that cannot settle exactly is read whole, as described above.

String literals are decoded in `python_literals.py`; the hosts that write fixes into
the source are in `python_hosts.py`.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
import warnings
from typing import Callable, Sequence

from servelint.checks.stray_argument import CHECK as STRAY
from servelint.checks.unknown_option import CHECK as UNKNOWN
from servelint.extract.common import ExtractResult, script_launches, script_word
from servelint.extract.python_hosts import (EngineHost, PyArgvHost, PyWordsHost, _Composite, _Ctx,
                                            _DocView, _NoEdits, _PartsGuard, _PlacedHost,
                                            remove_items)
from servelint.extract.python_literals import (FIELD, Decoded, PySource, decode_literals,
                                               scan_literals)
from servelint.extract.shell import OffsetMap, find_entry
from servelint.lintcache import LaunchList, Moved, extract_memo, moved, raw_start
from servelint.model import LINE_READS, Host, Launch, LineIndex, Span, Token

MAX_REPAIRS = 25

# --- the walker ------------------------------------------------------------------------------

SUBPROCESS = {"subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call",
              "subprocess.check_output"}
SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
               "asyncio.create_subprocess_shell"}
EXEC_V = {"os.execv": 1, "os.execve": 1, "os.execvp": 1, "os.execvpe": 1, "os.spawnv": 2,
          "os.spawnve": 2, "os.spawnvp": 2, "os.spawnvpe": 2, "os.posix_spawn": 1,
          "os.posix_spawnp": 1}
EXEC_L = {"os.execl": (1, 0), "os.execlp": (1, 0), "os.execle": (1, 1), "os.execlpe": (1, 1),
          "os.spawnl": (2, 0), "os.spawnlp": (2, 0), "os.spawnle": (2, 1), "os.spawnlpe": (2, 1),
          "asyncio.create_subprocess_exec": (0, 0)}
WS_SPLIT = {"sglang.utils.launch_server_cmd": True, "sglang.utils.execute_shell_command": False,
            "sglang.test.doc_patch.launch_server_cmd": True}
POPEN_LAUNCH = {"sglang.test.test_utils.popen_launch_server"}
POPEN_PARAMS = ["model", "base_url", "timeout", "api_key", "other_args", "env",
                "return_stdout_stderr", "device", "pd_separated", "num_replicas"]
ENGINES = {"sglang.Engine", "sglang.srt.entrypoints.engine.Engine",
           "sglang.srt.server_args.ServerArgs", "sglang.srt.entrypoints.Engine"}
# Names that mean the helper even when the import is not in this text (a notebook cell,
# a star import).
BARE_HELPERS = {"launch_server_cmd": "sglang.utils.launch_server_cmd",
                "execute_shell_command": "sglang.utils.execute_shell_command",
                "popen_launch_server": "sglang.test.test_utils.popen_launch_server"}


_SEPARATORS = (";", "&&", "||", "&")


def _env_words(words: list[Token]) -> int:
    """How many `KEY=VALUE` words start `words`."""
    k = 0
    while k < len(words):
        t = words[k].text
        if t and "=" in t and not t.startswith(("-", "/")):
            key = t.split("=", 1)[0]
            if key and key.replace("_", "").isalnum():
                k += 1
                continue
        break
    return k


def _after_prefix(words: list[Token]) -> int | None:
    """Where the launch starts in a command string written for a shell although the helper
    splits it on blanks: after `export HF_TOKEN= ;`, `FOO=bar ;`, `cd x &&` (a word that
    is a separator, or that ends with `;`). None when no launch follows a separator."""
    for i, tok in enumerate(words):
        t = tok.text
        if t is None or not (t in _SEPARATORS or (t.endswith(";") and t != ";;")):
            continue
        start = i + 1
        start += _env_words(words[start:])
        if start < len(words) and find_entry(words[start:]) is not None:
            return start
    return None


def _exported(words: list[Token]) -> dict[str, str | None]:
    """The `export KEY=VALUE` assignments of a prefix."""
    env: dict[str, str | None] = {}
    for a, b in zip(words, words[1:]):
        if a.text == "export" and b.text and "=" in b.text:
            key, value = b.text.rstrip(";").split("=", 1)
            if key.replace("_", "").isalnum():
                env[key] = value
    return env


def _literal(node):
    """(True, value) for a literal expression, (False, None) otherwise."""
    try:
        return True, ast.literal_eval(node)
    except Exception:
        return False, None


# --- the extractor ------------------------------------------------------------------------------


def _imported(aliases: dict[str, str], branch_imports: dict[str, set[str]], name: str) -> str | None:
    """What a name was imported as. A name imported in several branches means SGLang's
    object when one of the branches imports it from SGLang (the other is a stand-in,
    such as the docs' CI patch module)."""
    base = aliases.get(name)
    choices = branch_imports.get(name)
    if choices and base is not None and len(choices | {base}) > 1:
        ours = sorted(q for q in choices | {base} if q == "sglang" or q.startswith("sglang."))
        if ours:
            return ours[0]
    return base


class _Extractor:
    def __init__(self, ctx: _Ctx, tree: ast.AST):
        self.ctx = ctx
        self.tree = tree
        self.aliases: dict[str, str] = {}
        # Names imported under a branch (`if is_in_ci(): from patch import x` / `else: from
        # sglang.utils import x`): every module they may come from.
        self.branch_imports: dict[str, set[str]] = {}
        self._bound_at: dict[str, tuple[int, int]] = {}
        self.assigned: dict[str, list] = {}  # name -> [(value, statement)]
        self.augmented: set[str] = set()  # names with `+=`
        self.done: set[int] = set()  # ids of nodes already read
        self.parents: dict[int, ast.AST] = {}
        self.calls: list = []
        self.binops: list = []
        self.lists: list = []

    # names ---------------------------------------------------------------------

    def collect(self) -> None:
        """One pass over the tree: parents, imports, assignments, and the calls, `+`
        expressions and list literals to read."""
        parents = self.parents
        calls, binops, lists = self.calls, self.binops, self.lists
        AST = ast.AST
        Call, BinOp, List, Tuple = ast.Call, ast.BinOp, ast.List, ast.Tuple
        Import, ImportFrom, Assign = ast.Import, ast.ImportFrom, ast.Assign
        AnnAssign, AugAssign, Name = ast.AnnAssign, ast.AugAssign, ast.Name
        stack = [self.tree]
        while stack:
            node = stack.pop()
            for name in node._fields:
                if name == "ctx" or name == "op":
                    continue
                v = getattr(node, name, None)
                if type(v) is list:
                    for x in v:
                        if isinstance(x, AST):
                            parents[id(x)] = node
                            stack.append(x)
                elif isinstance(v, AST):
                    parents[id(v)] = node
                    stack.append(v)
            if isinstance(node, Call):
                calls.append(node)
            elif isinstance(node, BinOp):
                binops.append(node)
            elif isinstance(node, (List, Tuple)):
                lists.append(node)
            elif isinstance(node, Assign):
                for tg in node.targets:
                    if isinstance(tg, Name):
                        self.assigned.setdefault(tg.id, []).append((node.value, node))
            elif isinstance(node, Import):
                branch = self._in_branch(node)
                for a in node.names:
                    if a.asname:
                        self._bind(a.asname, a.name, node)
                        if branch:
                            self.branch_imports.setdefault(a.asname, set()).add(a.name)
                    else:
                        top = a.name.split(".")[0]
                        self.aliases.setdefault(top, top)
            elif isinstance(node, ImportFrom):
                if node.module and not node.level:
                    branch = self._in_branch(node)
                    for a in node.names:
                        if a.name != "*":
                            name = a.asname or a.name
                            self._bind(name, f"{node.module}.{a.name}", node)
                            if branch:
                                self.branch_imports.setdefault(name, set()).add(
                                    f"{node.module}.{a.name}")
            elif isinstance(node, AnnAssign):
                if isinstance(node.target, Name):
                    self.assigned.setdefault(node.target.id, []).append((node.value, node))
            elif isinstance(node, AugAssign):
                if isinstance(node.target, Name):
                    self.augmented.add(node.target.id)

    def _bind(self, name: str, qualified: str, node) -> None:
        """An import binds `name`: the one written last in the file is what the name means
        (the tree is walked in no particular order)."""
        at = (node.lineno, node.col_offset)
        if name not in self.aliases or at >= self._bound_at.get(name, (0, 0)):
            self.aliases[name] = qualified
            self._bound_at[name] = at

    def _in_branch(self, node) -> bool:
        """Whether an import runs only on some paths: inside an `if`/`else`, a `try` (or
        its handlers), or a `match` case of its scope."""
        parents = self.parents
        child = node
        cur = parents.get(id(node))
        while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.ClassDef, ast.Module, ast.Lambda)):
            if isinstance(cur, (ast.If, ast.Try, ast.ExceptHandler, ast.match_case)) or \
                    type(cur).__name__ == "TryStar":
                if not (isinstance(cur, ast.If) and child is cur.test):
                    return True
            child = cur
            cur = parents.get(id(cur))
        return False

    def imported(self, name: str) -> str | None:
        """What a name was imported as (see `_imported`)."""
        return _imported(self.aliases, self.branch_imports, name)

    def aliased(self, name: str) -> bool:
        """Whether the file imports something under `name`."""
        return name in self.aliases

    def dotted(self, func) -> str | None:
        parts = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return None
        base = self.imported(func.id)
        if base is None:
            if not parts and func.id in BARE_HELPERS:
                return BARE_HELPERS[func.id]
            base = {"sgl": "sglang"}.get(func.id, func.id)
        return ".".join([base] + parts[::-1])

    def resolve(self, node, lists: bool = False):
        """A name assigned exactly once in the file: its value; else the node. A name
        that `+=` changes is resolved only to a list (whose changes are read)."""
        if isinstance(node, ast.Name):
            vals = self.assignments(node.id)
            if len(vals) == 1 and vals[0][0] is not None and (
                    lists or not self.is_augmented(node.id)):
                return vals[0][0]
        return node

    def assignments(self, name: str) -> list:
        """The (value, statement) of each assignment of `name` in the file."""
        return self.assigned.get(name, [])

    def is_augmented(self, name: str) -> bool:
        return name in self.augmented

    def module_changes(self, name: str) -> None:
        """Called before the module's top level is searched for changes of `name` (a
        chunk read on its own checks that no other chunk changes it)."""

    def statement(self, name: str):
        vals = self.assignments(name)
        return vals[0][1] if len(vals) == 1 else None

    def _block(self, stmt):
        parent = self.parents.get(id(stmt))
        if parent is None:
            return None
        for fname, value in ast.iter_fields(parent):
            if isinstance(value, list) and any(v is stmt for v in value):
                return id(parent), fname
        return id(parent), None

    def _scope(self, stmt):
        node = stmt
        while True:
            node = self.parents.get(id(node))
            if node is None or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                 ast.Module, ast.ClassDef, ast.Lambda)):
                return node

    def mutations(self, name: str, stmt) -> list[tuple[str, ast.expr, bool, ast.stmt]]:
        """Changes of list `name` after its assignment in the same function: pieces
        (kind, node, conditional) in source order. kind: list | item | splat."""
        scope = self._scope(stmt)
        if scope is None:
            return []
        if isinstance(scope, ast.Module):
            self.module_changes(name)
        home = self._block(stmt)
        start = (stmt.end_lineno, stmt.end_col_offset)
        out: list[tuple[str, ast.expr, bool, ast.stmt]] = []
        stack = [scope]
        found = []
        while stack:
            node = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                      ast.Lambda)):
                    continue
                stack.append(child)
                if isinstance(child, ast.stmt) and (child.lineno, child.col_offset) > start:
                    found.append(child)
        found.sort(key=lambda n: (n.lineno, n.col_offset))
        for st in found:
            cond = self._block(st) != home
            if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and \
                    st.target.id == name and isinstance(st.op, ast.Add):
                out.append(("value", st.value, cond, st))
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                call = st.value
                f = call.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                        f.value.id == name:
                    if f.attr == "extend" and len(call.args) == 1:
                        out.append(("value", call.args[0], cond, st))
                    elif f.attr == "append" and len(call.args) == 1:
                        out.append(("append", call, cond, st))
                    elif f.attr in ("insert", "pop", "remove", "clear"):
                        out.append(("splat", call, cond, st))
        return out

    # strings ---------------------------------------------------------------------

    def decode(self, node) -> Decoded | None:
        """A str constant or f-string node, decoded with its source positions."""
        if not (isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant)
                                                    and isinstance(node.value, str))):
            return None
        s, e = self.ctx.src.span(node)
        parts = scan_literals(self.ctx.text, s, e)
        if not parts:
            return None
        dec = decode_literals(self.ctx.text, parts)
        if isinstance(node, ast.Constant) and dec.value != node.value:
            return None  # never a wrong position
        if isinstance(node, ast.JoinedStr):
            expected = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str)
                               else FIELD for v in node.values)
            if dec.value != expected:
                return None
        return dec

    # tokens of argv items ----------------------------------------------------------

    def item_token(self, node) -> Token:
        ctx = self.ctx
        s, e = ctx.src.span(node)
        raw = ctx.text[s:e]
        span = ctx.dspan(s, e)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return Token(span, node.value, raw=raw)
        if isinstance(node, ast.Starred):
            return Token(span, None, splat=True, raw=raw)
        if isinstance(node, ast.JoinedStr):
            dec = self.decode(node)
            if dec is not None:
                v = dec.value
                if FIELD not in v:
                    return Token(span, v, raw=raw)
                return Token(span, None, prefix=v.split(FIELD, 1)[0], raw=raw)
            return Token(span, None, raw=raw)
        if isinstance(node, ast.Attribute) and self.dotted(node) == "sys.executable":
            return Token(span, None, raw=raw)  # a python, value unknown
        # A name or call may be one word or (a list) several: in option position the
        # reader treats an unknown word as possibly anything.
        return Token(span, None, raw=raw)

    def flatten(self, node, out: list, depth: int = 0, frags: list | None = None) -> None:
        """The items of an argv expression: list/tuple literals joined with `+`, names
        bound once to such a list (with the changes made to it later: `+=`, `.extend`,
        `.append`); anything else is one unknown, splatting item. A change made only under
        a condition is one unknown item here, and its words go to `frags`."""
        if depth > 8:
            out.append(("splat", node))
            return
        if isinstance(node, (ast.List, ast.Tuple)):
            out.append(("list", node))
            return
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            self.flatten(node.left, out, depth + 1, frags)
            self.flatten(node.right, out, depth + 1, frags)
            return
        target = self.resolve(node, lists=True)
        if target is not node and isinstance(target, (ast.List, ast.Tuple, ast.BinOp)) \
                and id(target) not in self.done:
            self.flatten(target, out, depth + 1, frags)
            self.add_mutations(node.id, out, depth, frags)
            return
        out.append(("splat", node))

    def add_mutations(self, name: str, out: list, depth: int, frags: list | None) -> None:
        stmt = self.statement(name)
        if stmt is None:
            return
        for kind, node, cond, st in self.mutations(name, stmt):
            if id(st) in self.done:
                continue
            self.done.add(id(st))
            pieces: list = []
            if kind == "value":
                self.flatten(node, pieces, depth + 1, frags)
            elif kind == "append":
                pieces.append(("args", node))
            else:
                pieces.append(("splat", node))
            if cond:
                out.append(("splat", st))
                if frags is not None and any(k != "splat" for k, _ in pieces):
                    frags.append((st, pieces))
            else:
                out.extend(pieces)

    def argv(self, node, span_node=None) -> None:
        """Read an argv expression (list literal, concatenation) as a launch."""
        first = self._leftmost(node)
        if not isinstance(first, (ast.List, ast.Tuple)) or id(first) in self.done:
            return
        pieces: list = []
        frags: list = []
        self.flatten(node, pieces, frags=frags)
        if not pieces or pieces[0][0] != "list":
            return
        self.done.add(id(node))
        self.argv_pieces(pieces, span_node or node, frags)

    def argv_pieces(self, pieces: list, span_node, frags: Sequence[tuple[ast.stmt, list]] = ()) -> None:
        host = PyArgvHost(self.ctx)
        tokens, nodes = self.piece_tokens(pieces, host)
        launch = self.launch_from_words(tokens, nodes, host, span_node)
        if launch is None:
            return
        for st, fpieces in frags:
            # Words added under a condition: read on their own after an unknown word, so
            # their spelling and values are checked without claiming they are always there.
            ftokens, _ = self.piece_tokens(fpieces, host)
            s, e = self.ctx.src.span(st)
            lead = Token(self.ctx.dspan(s, s), None, splat=True, raw="")
            self.add(Launch(kind=launch.kind, entry=launch.entry, tokens=[lead] + ftokens,
                            host=host, span=self.ctx.dspan(s, e), env=dict(launch.env),
                            anchor=self.anchor(s)))

    def piece_tokens(self, pieces: list, host: "PyArgvHost") -> tuple[list[Token], list]:
        ctx = self.ctx
        tokens: list[Token] = []
        nodes: list = []
        for kind, node in pieces:
            if kind in ("list", "args"):
                self.done.add(id(node))
                elts = node.elts if kind == "list" else node.args
                items = [ctx.src.span(x) for x in elts]
                close = ctx.src.span(node)[1] - 1
                quote = next((ctx.text[ctx.src.span(x)[0]] for x in elts if isinstance(x, ast.Constant)
                              and isinstance(x.value, str) and ctx.text[ctx.src.span(x)[0]] in "'\""), '"')
                c = host.add_container(items, close, quote, whole=kind == "list")
                for k, x in enumerate(elts):
                    tokens.append(host.register(self.item_token(x), c, k))
                    nodes.append(x)
            else:
                s, e = ctx.src.span(node)
                tokens.append(Token(ctx.dspan(s, e), None, splat=True, raw=ctx.text[s:e]))
                nodes.append(None)
        return tokens, nodes

    def launch_from_words(self, tokens: list[Token], nodes: list, host: Host,
                          span_node) -> Launch | None:
        ctx = self.ctx
        s, e = ctx.src.span(span_node)
        entry = find_entry(tokens)
        if entry is None:
            k = script_word(tokens)
            if k is not None and nodes[k] is not None:
                self.shell(nodes[k])
            return None
        kind, at = entry
        env: dict[str, str | None] = {}
        for t in tokens[:at]:
            if t.text and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", t.text):
                key, val = t.text.split("=", 1)
                env.setdefault(key, val)
        launch = Launch(kind=kind, entry=tokens[at], tokens=tokens[at + 1:], host=host,
                        span=ctx.dspan(s, e), env=env, anchor=self.anchor(s))
        self.add(launch)
        return launch

    def anchor(self, s: int) -> int:
        """Where a comment about the launch at source offset `s` goes: the start of the line
        of the innermost statement holding it (`x = launch_server_cmd(` when the command
        string is on the next line), so the comment sits above the statement."""
        stmt = self._statement_at(s)
        if stmt is not None:
            s = stmt
        d = self.ctx.doc(s)
        idx = self.ctx.doc_index
        return idx.line_start(idx.line_of(d))

    def _statement_at(self, s: int) -> int | None:
        stmts = getattr(self, "_stmts", None)
        if stmts is None:
            src = self.ctx.src
            stmts = sorted(src.span(n) for n in ast.walk(self.tree) if isinstance(n, ast.stmt))
            self._stmts = stmts
        k = bisect.bisect_right(stmts, (s, float("inf"))) - 1
        while k >= 0:  # statements nest or are disjoint: the nearest start holding s is innermost
            start, end = stmts[k]
            if start <= s <= end:
                return start
            k -= 1
        return None

    def add(self, launch: Launch) -> None:
        self.ctx.result.launches.append(launch)

    # shell strings --------------------------------------------------------------

    def take_string(self, node):
        """The string `node` names (through a variable), decoded, when it mentions sglang
        and was not read yet, marking it read; (node, None) otherwise."""
        node = self.resolve(node)
        if id(node) in self.done:
            return node, None
        dec = self.decode(node)
        if dec is None or "sglang" not in dec.value:
            return node, None
        self.done.add(id(node))
        return node, dec

    def shell(self, node) -> None:
        """A string that the shell runs."""
        node, dec = self.take_string(node)
        if dec is None:
            return
        ctx = self.ctx
        chars, starts, ends = [], [], []
        for c, s, e in zip(dec.chars, dec.starts, dec.ends):
            if c == FIELD:  # an unknown word for the shell: `$_F`, mapped onto the field
                for k, ch in enumerate("$_F"):
                    chars.append(ch)
                    starts.append(s + k)
                    ends.append(e if k == 2 else s + k + 1)
                continue
            chars.append(c)
            starts.append(s)
            ends.append(e)
        script = "".join(chars)
        table = [ctx.doc(x) for x in starts] + [ctx.doc(ends[-1]) if ends else ctx.doc(dec.parts[-1].body_end)]
        quote = "" if dec.verbatim_lines and ctx.plain else '"'
        found = script_launches(script, table, 0, ctx.doc_text, ctx.doc_index, quote)
        # Tighten token ends: a word's end is the end of its last character's source
        # (not the start of whatever source follows, e.g. a Python `\<newline>`).
        back = {t: k for k, t in enumerate(table[:-1])}
        doc_ends = [ctx.doc(x) for x in ends]
        fields = [ctx.dspan(a, b) for a, b in dec.fields]
        anchor = self.anchor(ctx.src.span(node)[0])
        for launch in found.launches:
            launch.anchor = anchor  # above the statement, not inside the string
            for tok in [launch.entry] + launch.tokens:
                char = back.get(tok.span.end)
                if char is not None and char > 0 and tok.span.end > tok.span.start:
                    tok.span = Span(tok.span.start, max(tok.span.start, doc_ends[char - 1]))
                if tok.text is not None and any(tok.span.overlaps(f) for f in fields):
                    tok.text = None  # a field inside quotes: still unknown
            if len(dec.parts) > 1 and len({(p.quote, "".join(sorted(p.prefix.replace("u", "")))) for p in dec.parts}) > 1:
                launch.host = _PartsGuard(launch.host, [ctx.dspan(p.body_start, p.body_end)
                                                        for p in dec.parts])
            self.add(launch)
        ctx.result.findings.extend(found.findings)

    def words(self, node, port=None, append_port: bool = False, call=None) -> None:
        """`launch_server_cmd`: backslashes become spaces, then str.split()."""
        node, dec = self.take_string(node)
        if dec is None:
            return
        ctx = self.ctx
        host = PyWordsHost(ctx, dec)
        tokens: list[Token] = []
        nodes: list = []
        v = dec.value
        i, n = 0, len(v)
        while i < n:
            if v[i].isspace() or v[i] == "\\":
                i += 1
                continue
            j = i
            while j < n and not (v[j].isspace() or v[j] == "\\"):
                j += 1
            word = v[i:j]
            s, e = dec.span(i, j)
            raw = ctx.text[s:e]
            if FIELD in word:
                tok = Token(ctx.dspan(s, e), None, prefix=word.split(FIELD, 1)[0],
                            splat=word == FIELD, raw=raw)
            else:
                tok = Token(ctx.dspan(s, e), word, raw=raw)
            tokens.append(host.register(tok, s, e))
            nodes.append(None)
            i = j
        # Leading KEY=VALUE words are the environment (execute_shell_command).
        k = _env_words(tokens)
        env: dict[str, str | None] = {}
        for t in tokens[:k]:
            key, _, value = (t.text or "").partition("=")
            env[key] = value
        words = tokens[k:]
        entry = find_entry(words)
        if entry is None:
            cut = _after_prefix(words)
            if cut is None:
                return
            env.update(_exported(words[:cut]))
            words, entry = words[cut:], find_entry(words[cut:])
            assert entry is not None
        kind, at = entry
        launch_tokens = words[at + 1:]
        if append_port and call is not None:
            fs, fe = ctx.src.span(call.func)
            span = ctx.dspan(fs, fe)
            ok, val = (True, None) if port is None else _literal(port)
            text = str(val) if ok and isinstance(val, int) and not isinstance(val, bool) else None
            launch_tokens.append(Token(span, "--port", raw="launch_server_cmd"))
            launch_tokens.append(Token(span, text, raw="launch_server_cmd"))
        s, e = ctx.src.span(node)
        self.add(Launch(kind=kind, entry=words[at], tokens=launch_tokens, host=host,
                        span=ctx.dspan(s, e), env=env, anchor=self.anchor(s)))

    # helpers -------------------------------------------------------------------------

    def popen(self, call: ast.Call) -> None:
        ctx = self.ctx
        args = {}
        for k, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                return
            if k < len(POPEN_PARAMS):
                args[POPEN_PARAMS[k]] = a
        for kw in call.keywords:
            if kw.arg is None:
                return
            args[kw.arg] = kw.value
        if "model" not in args:
            return
        for name, absent in (("pd_separated", False), ("num_replicas", None)):
            if name in args:
                ok, val = _literal(args[name])
                if not ok or val != absent:
                    return  # a PD launcher, not sglang serve
        fs, fe = ctx.src.span(call.func)
        fspan = ctx.dspan(fs, fe)
        fraw = ctx.text[fs:fe]
        none = _NoEdits(ctx)
        host = _Composite(ctx, [], none)
        tokens: list[Token] = []

        def helper(text, node=None, splat=False):
            if node is not None:
                s, e = ctx.src.span(node)
                tok = Token(ctx.dspan(s, e), text, splat=splat, raw=ctx.text[s:e])
            else:
                tok = Token(fspan, text, splat=splat, raw=fraw)
            tokens.append(host.own(tok, none))

        def value_of(node):
            ok, val = _literal(node)
            return str(val) if ok and isinstance(val, (str, int, float)) and not isinstance(val, bool) else None

        helper("--model-path")
        helper(value_of(args["model"]), args["model"])
        other = args.get("other_args")
        if other is not None:
            other = self.resolve(other)
            ok, val = _literal(other)
            if isinstance(other, (ast.Constant, ast.JoinedStr)) and (not ok or isinstance(val, str)):
                s, e = ctx.src.span(other)
                if not (ok and val == ""):
                    ctx.result.findings.append(STRAY.finding(
                        "popen_launch_server passes other_args to the command one item at a time: "
                        "a string becomes one argument per character; write a list of words",
                        ctx.dspan(s, e)))
                    return
            elif not (ok and val is None):
                pieces: list = []
                self.flatten(other, pieces)
                sub = PyArgvHost(ctx)
                words, _ = self.piece_tokens(pieces, sub)
                for tok in words:
                    tokens.append(host.own(tok, sub if sub._loc(tok) else none))
        device = args.get("device")
        ok, dval = _literal(device) if device is not None else (True, "auto")
        if not ok:
            helper(None, device, splat=True)
        elif dval == "auto":
            helper("--device")
            helper(None)  # auto-detected
        host_text = port_text = None
        if "base_url" in args:
            ok, url = _literal(args["base_url"])
            if ok and isinstance(url, str) and url.count(":") == 2:
                _, h, p = url.split(":")
                host_text, port_text = h[2:], p
        url_node = args.get("base_url")
        helper("--host")
        helper(host_text, url_node)
        helper("--port")
        helper(port_text, url_node)
        if "api_key" in args:
            ok, key = _literal(args["api_key"])
            if not ok:
                helper(None, args["api_key"], splat=True)
            elif key:
                helper("--api-key")
                helper(str(key), args["api_key"])
        s, e = ctx.src.span(call)
        entry = Token(fspan, "serve", raw=fraw)
        self.add(Launch(kind="serve", entry=entry, tokens=tokens, host=host,
                        span=ctx.dspan(s, e), env={}, anchor=self.anchor(s)))

    def engine(self, call: ast.Call) -> None:
        ctx = self.ctx
        if any(kw.arg == "server_args" for kw in call.keywords):
            return  # the options come from a ServerArgs object
        items = sorted([ctx.src.span(a) for a in call.args] +
                       [ctx.src.span(k) for k in call.keywords])
        s, e = ctx.src.span(call)
        host = EngineHost(ctx, items, e - 1)
        position = {span: k for k, span in enumerate(items)}
        host.names = {kw.arg: position[ctx.src.span(kw)] for kw in call.keywords if kw.arg}
        tokens: list[Token] = []
        for kw in call.keywords:
            ks, ke = ctx.src.span(kw)
            item = position[(ks, ke)]
            if kw.arg is None:  # **options: any fields
                tokens.append(host.register(Token(ctx.dspan(ks, ke), None, splat=True,
                                                  raw=ctx.text[ks:ke]), item, "splat"))
                continue
            ns, ne = ks, ks + len(kw.arg)
            name_span = ctx.dspan(ns, ne)
            opt = ctx.field(kw.arg)
            if opt is None:
                self.unknown_keyword(kw, host, item, name_span)
                continue
            ok, val = _literal(kw.value)
            vs, ve = ctx.src.span(kw.value)
            vraw = ctx.text[vs:ve]
            if opt.kind in ("flag", "bool_optional") or opt.nargs == 0:
                if not ok:
                    tokens.append(host.register(Token(ctx.dspan(ks, ke), None, raw=ctx.text[ks:ke]),
                                                item, "splat"))
                elif val:
                    tokens.append(host.register(Token(name_span, opt.name, raw=kw.arg), item,
                                                "name", (ns, ne)))
                elif opt.kind == "bool_optional":
                    neg = "--no-" + opt.name[2:]
                    if neg in opt.names:
                        tokens.append(host.register(Token(name_span, neg, raw=kw.arg), item,
                                                    "name", (ns, ne)))
                continue
            tokens.append(host.register(Token(name_span, opt.name, raw=kw.arg), item, "name",
                                        (ns, ne)))
            values = kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) and \
                opt.kind == "list" else [kw.value]
            if not values:
                tokens.append(host.register(Token(ctx.dspan(vs, ve), None, raw=vraw), item,
                                            "value", kw.value))
            for v in values:
                tokens.append(host.register(self.kw_value(v), item, "value", v))
        entry_s, entry_e = ctx.src.span(call.func)
        entry = Token(ctx.dspan(entry_s, entry_e), "Engine", raw=ctx.text[entry_s:entry_e])
        self.add(Launch(kind="launch_server", entry=entry, tokens=tokens, host=host,
                        span=ctx.dspan(s, e), env={}, anchor=self.anchor(s)))

    def kw_value(self, node) -> Token:
        ctx = self.ctx
        s, e = ctx.src.span(node)
        span, raw = ctx.dspan(s, e), ctx.text[s:e]
        ok, val = _literal(node)
        if ok and isinstance(val, bool):
            return Token(span, str(val), raw=raw)
        if ok and isinstance(val, (str, int, float)):
            return Token(span, val if isinstance(val, str) else repr(val), raw=raw)
        return Token(span, None, raw=raw)

    def unknown_keyword(self, kw, host: EngineHost, item: int, name_span: Span) -> None:
        from servelint.suggest import close_matches
        cat = self.ctx.catalog
        dests = sorted({o.dest for o in cat.options if not o.hidden})
        dashed = "--" + kw.arg.replace("_", "-")
        alias = cat.lookup(dashed)
        how = "a command-line alias of"
        if alias is None:
            matches = cat.prefix_matches(dashed)
            if len(matches) == 1:
                alias = cat.lookup(matches[0])
                how = "accepted on the command line as an abbreviation of"
        guesses = [alias.dest] if alias is not None else []
        guesses += [g for g in close_matches(kw.arg, dests)
                    if g not in guesses]
        given = guesses
        guesses = [g for g in guesses if g not in host.names]  # no repeated keyword
        if alias is not None:
            why = f"{dashed} is {how} {alias.name}, whose field is {alias.dest}"
            if alias.dest in host.names:
                why += ", given here too"
        else:
            why = f"SGLang {cat.version}" + (f"; did you mean {given[0]}?" if given else "")
        from servelint.model import Fix
        fixes = []
        for k, g in enumerate(guesses[:3]):
            fixes.append(Fix(f"Replace {kw.arg} with {g}",
                             [self.ctx.edit(*self._name_cell(kw), g)],
                             preferred=(k == 0 and len(guesses) == 1), safe=False))
        s, e = remove_items(self.ctx.text, self.ctx.index, host.items, item, item, host.close)
        fixes.append(Fix(f"Remove {kw.arg}", [self.ctx.edit(s, e, "")], safe=False))
        self.ctx.result.findings.append(UNKNOWN.finding(
            f"unexpected keyword argument '{kw.arg}': ServerArgs has no field {kw.arg} ({why})",
            name_span, fixes=fixes))

    def _name_cell(self, kw) -> tuple[int, int]:
        s, _ = self.ctx.src.span(kw)
        return s, s + len(kw.arg)

    # the walk ------------------------------------------------------------------------

    def run(self) -> None:
        self.collect()
        self.walk()

    def walk(self) -> None:
        """Read the calls, concatenations and lists `collect` found."""
        calls = sorted(self.calls, key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            try:
                self.call(call)
            except Exception:  # one odd call must not lose the rest of the file
                import logging
                logging.getLogger(__name__).debug("python call skipped", exc_info=True)
        # Concatenations and list literals not read through a call.
        for node in self.binops:
            if isinstance(node.op, ast.Add) and \
                    id(node) not in self.done and \
                    not isinstance(self.parents.get(id(node)), ast.BinOp) and \
                    self._launchy(self._leftmost(node)):
                self.argv(node)
        for node in sorted(self.lists, key=lambda n: (n.lineno, n.col_offset)):
            if id(node) not in self.done and \
                    self._launchy(node):
                parent = self.parents.get(id(node))
                if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and \
                        isinstance(parent.targets[0], ast.Name) and \
                        self.statement(parent.targets[0].id) is parent:
                    self.argv(parent.targets[0], span_node=node)  # with its later changes
                else:
                    self.argv(node)
        self.ctx.result.launches.sort(key=lambda l: l.span.start)

    def _leftmost(self, node):
        for _ in range(10):
            if isinstance(node, ast.BinOp):
                node = node.left
            elif isinstance(node, ast.Name):
                target = self.resolve(node, lists=True)
                if target is node:
                    return node
                node = target
            else:
                return node
        return node

    def _launchy(self, node) -> bool:
        return any(isinstance(x, ast.Constant) and isinstance(x.value, str) and "sglang" in x.value
                   for x in getattr(node, "elts", []))

    def call(self, call: ast.Call) -> None:
        name = self.dotted(call.func)
        if name is None:
            if isinstance(call.func, ast.Attribute) and call.func.attr == "split" and not call.args:
                self.split_call(call)
            return
        first = call.args[0] if call.args else None
        if name in SUBPROCESS:
            arg = first if first is not None else next(
                (k.value for k in call.keywords if k.arg == "args"), None)
            if arg is None:
                return
            target = self.resolve(arg)
            if isinstance(target, (ast.Constant, ast.JoinedStr)):
                self.shell(arg)
            else:
                self.argv(arg)
        elif name in SHELL_CALLS or name == "shlex.split":
            if first is not None:
                self.shell(first)
        elif name in EXEC_V:
            k = EXEC_V[name]
            if len(call.args) > k:
                self.argv(call.args[k])
        elif name in EXEC_L:
            k, tail = EXEC_L[name]
            args = call.args[k:len(call.args) - tail]
            if args and any(isinstance(a, ast.Constant) and isinstance(a.value, str) and "sglang" in a.value
                            for a in args):
                self.exec_l(call, args)
        elif name in WS_SPLIT:
            cmd = first if first is not None else next(
                (k.value for k in call.keywords if k.arg == "command"), None)
            if cmd is None:
                return
            port = call.args[2] if len(call.args) > 2 else next(
                (k.value for k in call.keywords if k.arg == "port"), None)
            if isinstance(port, ast.Constant) and port.value is None:
                port = None
            self.words(cmd, port=port, append_port=WS_SPLIT[name], call=call)
        elif name in POPEN_LAUNCH:
            self.popen(call)
        elif name in ENGINES or (name.endswith(".Engine") and name.split(".")[0] == "sglang") or (
                name == "Engine" and not self.aliased("Engine")
                and any(k.arg == "model_path" for k in call.keywords)):
            # A bare Engine(model_path=...) with no import of its own (a notebook cell
            # after the one that imported it) is SGLang's.
            self.engine(call)
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "split" and not call.args:
            self.split_call(call)

    def split_call(self, call: ast.Call) -> None:
        """`"python -m sglang.launch_server ...".split()`: whitespace words."""
        if not isinstance(call.func, ast.Attribute):
            return
        base = call.func.value
        target = self.resolve(base)
        if isinstance(target, (ast.Constant, ast.JoinedStr)):
            self.words(base)

    def exec_l(self, call: ast.Call, args: list) -> None:
        ctx = self.ctx
        host = PyArgvHost(ctx)
        items = [ctx.src.span(a) for a in call.args]
        close = ctx.src.span(call)[1] - 1
        c = host.add_container(items, close, '"')
        offset = call.args.index(args[0])
        tokens = [host.register(self.item_token(a), c, offset + k) for k, a in enumerate(args)]
        self.launch_from_words(tokens, list(args), host, call)


# --- entry points ------------------------------------------------------------------------------


def _parse(text: str):
    """ast of the text, blanking lines that do not parse (same offsets). None if hopeless."""
    current = text
    for _ in range(MAX_REPAIRS + 1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ast.parse(current), current
        except SyntaxError as exc:
            line = exc.lineno
            if not line:
                return None, current
            starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", current)]
            if line - 1 >= len(starts):
                return None, current
            a = starts[line - 1]
            b = starts[line] if line < len(starts) else len(current)
            blank = re.sub(r"[^\r\n]", " ", current[a:b])
            if blank == current[a:b]:
                return None, current
            current = current[:a] + blank + current[b:]
        except (ValueError, RecursionError, MemoryError):
            return None, current
    return None, current


# Big modules: functions and classes that cannot take part in a launch are blanked before
# parsing (offsets unchanged), as the shell reader parses big scripts in windows. A def or
# class takes part when its text names sglang or a name imported from it.
PRUNE_LINES = 2000
_DEF_START = re.compile(r"(?:async[ \t]+def|def|class)[ \t]")
_TRIPLE = re.compile(r"\"\"\"|\'\'\'")
_QUOTE_IN_COMMENT = re.compile(r"#[^\n]*(?:\"\"\"|\'\'\')")
_TOP_LINE = re.compile(r"^(?=[^\s#)\]}])", re.M)
_SGLANG_IMPORT = re.compile(
    r"^[ \t]*(?:import[ \t]+sglang[\w.]*[ \t]+as[ \t]+(\w+)"
    r"|from[ \t]+sglang[\w.]*[ \t]+import[ \t]+(?:\(([^)]*)\)|([^\n#]*)))", re.M)


def _sglang_names(text: str) -> list[str]:
    names = ["sglang", *BARE_HELPERS]
    for m in _SGLANG_IMPORT.finditer(text):
        if m.group(1):
            names.append(m.group(1))
        else:
            for part in re.sub(r"#[^\n]*", "", m.group(2) or m.group(3)).split(","):
                words = part.split()
                if words:
                    names.append(words[-1])
    return [n for n in names if n.isidentifier()]


def prune(text: str) -> str:
    """The text with every top-level def/class that names nothing of SGLang's blanked;
    the text itself when its triple-quoted strings cannot be followed."""
    if _QUOTE_IN_COMMENT.search(text):
        return text  # a triple quote inside a comment: leave the file whole
    strings = _triple_strings(text)
    if strings is None:
        return text
    return _prune_defs(text, _top_starts(text, strings), _sglang_names(text))


def _triple_strings(text: str) -> list[int] | None:
    """start, end, start, end ... of the triple-quoted strings as `prune` pairs them
    (quotes in order, ignoring other strings); None when one is left open."""
    strings: list[int] = []
    open_q = None
    for m in _TRIPLE.finditer(text):
        q = m.group()
        if open_q is None:
            open_q = q
            strings.append(m.start())
        elif q == open_q:
            open_q = None
            strings.append(m.start() + 3)
    return None if open_q is not None else strings


def _top_starts(text: str, strings: list[int]) -> list[int]:
    """Statement starts at column 0 outside triple-quoted strings."""
    return [m.start() for m in _TOP_LINE.finditer(text)
            if bisect.bisect_right(strings, m.start()) % 2 == 0]


def _prune_defs(text: str, starts: list[int], names) -> str:
    """`prune` once the statement starts and SGLang's names are known. Whole words are
    looked for, so the order of `names` does not matter."""
    hits = [m.start() for m in re.finditer(
        r"\b(?:" + "|".join(map(re.escape, names)) + r")\b", text)]
    out: list[str] = []
    last = 0
    n = len(starts)
    i = 0
    while i < n:
        start = starts[i]
        j = i
        while j < n and text.startswith("@", starts[j]):
            j += 1  # decorators belong to the def or class that follows
        if j >= n or not _DEF_START.match(text, starts[j]):
            i = j + 1 if j > i else i + 1
            continue
        end = starts[j + 1] if j + 1 < n else len(text)
        k = bisect.bisect_left(hits, start)
        if k < len(hits) and hits[k] < end:
            i = j + 1
            continue  # names SGLang: read it
        body = text[start:end]
        out.append(text[last:start])
        if "\r" in body:
            out.append(re.sub(r"[^\r\n]", " ", body))
        else:
            out.append("\n".join(" " * len(x) for x in body.split("\n")))
        last = end
        i = j + 1
    out.append(text[last:])
    return "".join(out)


def _catalog(settings):
    from servelint.catalog import load_catalog
    try:
        return load_catalog(settings.sglang_version if settings is not None else "0.5.23")
    except KeyError:
        return load_catalog()


def extract_python(text: str, to_doc: OffsetMap | None = None, doc_text: str | None = None,
                   doc_index: LineIndex | None = None, settings=None,
                   escape: Callable[[str], str] | None = None) -> ExtractResult:
    """Launches in Python source `text`.

    When the source sits inside another document (a notebook cell), `to_doc` maps source
    offsets to document offsets and `doc_text`/`doc_index` describe the document; every
    span is then a document span and every edit is made in the source and mapped. `escape`
    turns new source text into document text (JSON string escaping in a notebook)."""
    if "sglang" not in text:
        return ExtractResult([], [])
    tree = None
    if text.count("\n") > PRUNE_LINES:
        pruned = prune(text)
        if pruned != text:
            try:  # strictly: a pruned text that needs repairs means the pruning misread it
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tree, parsed_text = ast.parse(pruned), pruned
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
    if tree is None:
        tree, parsed_text = _parse(text)
    if tree is None:
        return ExtractResult([], [])
    ctx = _Ctx(text, to_doc, doc_text, doc_index, escape, _catalog(settings))
    if parsed_text != text:
        ctx.text = parsed_text  # blanked lines: offsets unchanged
        ctx.src = PySource(parsed_text)
    try:
        _Extractor(ctx, tree).run()
    except Exception:  # keep what was read; a bug here must not lose the other formats
        import logging
        logging.getLogger(__name__).exception("reading Python launches failed")
        ctx.result.launches.sort(key=lambda l: l.span.start)
    return _detach(ctx)


# --- incremental extraction -------------------------------------------------------------------
#
# With a LintCache (`extract_memo()`), an edit re-reads only the top-level statements it
# touched. The module is cut into chunks, each starting at a line that begins a top-level
# statement (column 0, outside brackets, strings and continuations; a decorator's def,
# `else:` and the like stay with what they continue). Each chunk is parsed on its own:
# when every chunk parses, the whole module parses into the same statements, so reading
# the chunks one by one reads the module. What a chunk's reading takes from the rest of
# the module (imports, how often a name is assigned, `+=`, changes made at the top level)
# is gathered from every chunk's summary first, and each chunk's result is kept with the
# answers it was given: it is re-used while its text and those answers stay the same, its
# launches moved to where the chunk now starts. The pruning of big modules (`prune`) is
# made chunk by chunk with the module's SGLang names. Anything a chunk cannot settle on its
# own (a syntax error anywhere, a name assigned once in another chunk, a triple quote
# `prune` pairs across chunks) makes the lint read the whole module as before.

_MEMO_KEY = "python-chunks"
_STR_BODY = r"(?:\\(?:\r\n|.))"
_SCAN = re.compile(
    r"[rRbBuUfF]{0,2}(?:"
    r'"""(?:[^"\\]|' + _STR_BODY + r'|"(?!""))*(?:"""|\Z)'
    r"|'''(?:[^'\\]|" + _STR_BODY + r"|'(?!''))*(?:'''|\Z)"
    r'|"(?:[^"\\\n]|' + _STR_BODY + r')*(?:"|(?=\n)|\Z)'
    r"|'(?:[^'\\\n]|" + _STR_BODY + r")*(?:'|(?=\n)|\Z))"
    r"|(#[^\n]*)|([(\[{])|([)\]}])|(\\\r?\n)|(\n)", re.S)
_NOT_A_START = re.compile(r"[\s#)\]}\\]|(?:else|elif|except|finally)\b")
_LONE_CR = re.compile(r"\r(?!\n)")


def _scan(text: str, pos: int, old: list[int], sync: int, delta: int) -> tuple[list[int], int]:
    """Chunk starts from `pos` (a chunk start) on. Once past `sync` (the end of the edited
    text), a start that was one before the edit (`old`, moved by `delta`) ends the scan:
    the rest is as before. Returns (starts, index in `old` where the scan stopped, or
    len(old))."""
    starts = [pos]
    depth = 0
    deco = text.startswith("@", pos)
    n = len(text)
    for m in _SCAN.finditer(text, pos):
        k = m.lastindex
        if k is None or k == 1 or k == 4:
            continue
        if k == 2:
            depth += 1
            continue
        if k == 3:
            depth -= 1
            continue
        if depth:
            continue
        p = m.end()
        if p >= n:
            break
        if _NOT_A_START.match(text, p):
            continue
        if deco:  # the def or class of a decorator (or another decorator)
            deco = text[p] == "@"
            continue
        deco = text[p] == "@"
        if p >= sync:
            j = bisect.bisect_left(old, p - delta)
            if j < len(old) and old[j] == p - delta:
                return starts, j
        starts.append(p)
    return starts, len(old)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, step = 0, 4096
    while lo + step <= n and a[lo:lo + step] == b[lo:lo + step]:
        lo += step
    hi = min(lo + step, n)
    while lo < hi:  # a[:lo] == b[:lo]; the first difference is before hi (or none)
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    la, lb = len(a), len(b)
    lo, step = 0, 4096
    while lo + step <= limit and a[la - lo - step:la - lo] == b[lb - lo - step:lb - lo]:
        lo += step
    hi = min(lo + step, limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class _ChunkLines(LineIndex):
    """A chunk's lines, numbered as the document numbers them (messages name lines); an
    offset is the chunk's. A line before the chunk reads as empty: only the shell reader
    looks there, for a backslash that would continue a command onto the launch's line,
    to place the launch's anchor, which the Python reader replaces (`shell`). A line
    after the chunk is noted (the chunk then cannot be read on its own)."""

    def __init__(self, text: str, first: int):
        super().__init__(text)
        self.first = first
        self.outside = False

    def line_of(self, offset: int) -> int:
        return super().line_of(offset) + self.first

    def _local(self, line: int) -> int:
        k = line - self.first
        if k >= len(self.starts):
            self.outside = True
            return len(self.starts) - 1
        return k

    def line_start(self, line: int) -> int:
        k = self._local(line)
        return 0 if k < 0 else super().line_start(k)

    def line_end(self, line: int) -> int:
        k = self._local(line)
        return 0 if k < 0 else super().line_end(k)


class _Facts:
    """What chunks learn from each other: assignment counts, `+=` names, imports (as
    `_Extractor.collect` would gather them from the whole module), and the names changed
    at the module's top level (`_module_changes`)."""

    def __init__(self, units: list["_Unit"]):
        counts: dict[str, int] = {}
        augmented: set[str] = set()
        binds: dict[str, str] = {}
        tops: set[str] = set()
        branch: dict[str, set[str]] = {}
        mods: dict[str, int] = {}
        for u in units:
            if u.key is None:
                continue
            for name, c in u.counts.items():
                counts[name] = counts.get(name, 0) + c
            augmented |= u.augmented
            binds.update(u.binds)  # the chunk written last wins, as in `_bind`
            tops |= u.tops
            for name, qs in u.branch.items():
                branch.setdefault(name, set()).update(qs)
            for name, c in u.mods.items():
                mods[name] = mods.get(name, 0) + c
        aliases = {t: t for t in tops}
        aliases.update(binds)
        self.counts, self.augmented, self.aliases = counts, augmented, aliases
        self.branch, self.mods = branch, mods

    def answer(self, key: tuple[str, str], unit: "_Unit"):
        """What the module says to a chunk's question (see `_ChunkExtractor`)."""
        kind, name = key
        if kind == "a":
            return min(self.counts.get(name, 0), 2)
        if kind == "g":
            return name in self.augmented
        if kind == "i":
            return _imported(self.aliases, self.branch, name)
        if kind == "e":
            return name in self.aliases
        return self.mods.get(name, 0) - unit.mods.get(name, 0)


_MANY = [(None, None), (None, None)]


class _ChunkExtractor(_Extractor):
    """An `_Extractor` over one chunk, asking the module's `_Facts` what the whole module
    would have told it, and writing down every question with its answer (`deps`).
    `foreign` holds the questions whose answer lies in another chunk (a name assigned
    once there, a list changed at the top level there)."""

    facts: _Facts

    def begin(self, ctx: _Ctx, facts: _Facts, own_mods: dict[str, int]) -> None:
        """`own_mods`: the top-level changes of names in the text read (`_module_changes`)."""
        self.ctx = ctx
        self.facts = facts
        self.own_mods = own_mods
        self.deps: dict[tuple[str, str], object] = {}
        self.foreign: set[tuple[str, str]] = set()  # questions answered by other chunks

    def imported(self, name: str) -> str | None:
        v = _imported(self.facts.aliases, self.facts.branch, name)
        self.deps[("i", name)] = v
        return v

    def aliased(self, name: str) -> bool:
        v = name in self.facts.aliases
        self.deps[("e", name)] = v
        return v

    def assignments(self, name: str) -> list:
        g = self.facts.counts.get(name, 0)
        self.deps[("a", name)] = min(g, 2)
        if g == 1:
            own = self.assigned.get(name, [])
            if len(own) != 1:
                self.foreign.add(("a", name))  # assigned once, in another chunk
            return own if own else _MANY
        return [] if g == 0 else _MANY

    def is_augmented(self, name: str) -> bool:
        v = name in self.facts.augmented
        self.deps[("g", name)] = v
        return v

    def module_changes(self, name: str) -> None:
        others = self.facts.mods.get(name, 0) - self.own_mods.get(name, 0)
        self.deps[("m", name)] = others
        if others:
            self.foreign.add(("m", name))


def _module_changes(tree: ast.AST) -> dict[str, int]:
    """Names that statements of the module's top level (outside functions and classes)
    may change as `mutations` reads changes: `x += ...`, `x.method(...)`."""
    out: dict[str, int] = {}
    stack = [tree]
    skip = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, skip):
                continue
            stack.append(child)
            if isinstance(child, ast.AugAssign) and isinstance(child.target, ast.Name):
                name = child.target.id
            elif isinstance(child, ast.Expr) and isinstance(child.value, ast.Call) and \
                    isinstance(child.value.func, ast.Attribute) and \
                    isinstance(child.value.func.value, ast.Name):
                name = child.value.func.value.id
            else:
                continue
            out[name] = out.get(name, 0) + 1
    return out


def _parse_chunk(text: str):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class _Unit:
    """One chunk's text as parsed (`text`, pruned when the module is) and what it says:
    its summary for `_Facts` (`key` None: nothing), and the result of reading it, offsets
    relative to the chunk, with the questions it asked (`deps`) and, when its findings
    name lines, the document line it started on."""

    def __init__(self, text: str, doc: str):
        self.text = text
        self.doc = doc  # the chunk's document text (text is the same, pruned)
        self.key: tuple | None = None
        self.counts: dict[str, int] = {}
        self.augmented: set[str] = set()
        self.binds: dict[str, str] = {}
        self.tops: set[str] = set()
        self.branch: dict[str, set[str]] = {}
        self.mods: dict[str, int] = {}
        self.result: ExtractResult | None = None
        self.deps: dict = {}
        self.foreign: frozenset | None = None  # read, and needs these answers of other chunks
        self.line: int | None = None
        self.pending: _ChunkExtractor | None = None  # parsed in this lint, not yet read

    def summarize(self, ex: _ChunkExtractor) -> None:
        self.counts = {n: len(v) for n, v in ex.assigned.items()}
        self.augmented = set(ex.augmented)
        self.binds = {n: ex.aliases[n] for n in ex._bound_at}
        self.tops = set(ex.aliases) - set(ex._bound_at)
        self.branch = {n: set(q) for n, q in ex.branch_imports.items()}
        self.mods = _module_changes(ex.tree)
        if self.counts or self.augmented or self.binds or self.tops or self.branch or self.mods:
            self.key = (tuple(sorted(self.counts.items())), frozenset(self.augmented),
                        tuple(sorted(self.binds.items())), frozenset(self.tops),
                        tuple(sorted((n, tuple(sorted(q))) for n, q in self.branch.items())),
                        tuple(sorted(self.mods.items())))

    def parse(self) -> bool:
        """Parse and collect (again); False when the text does not parse."""
        tree = _parse_chunk(self.text)
        if tree is None:
            return False
        ex = _ChunkExtractor(None, tree)  # type: ignore[arg-type]
        ex.collect()
        self.pending = ex
        return True


_BLANK = _Unit("", "")


class _PruneFacts:
    """What `prune` needs from one chunk: whether it can be pruned on its own (`alone`),
    a triple quote in a comment (the module is then not pruned), its SGLang names."""

    def __init__(self, text: str):
        self.qic = bool(_QUOTE_IN_COMMENT.search(text))
        self.strings = _triple_strings(text)
        self.starts: list[int] = []
        self.alone = self.strings is not None
        if self.strings is not None:
            self.starts = _top_starts(text, self.strings)
        # A run of decorators at the end would take the next chunk's def with it.
        self.trailing_decorator = bool(self.starts) and text.startswith("@", self.starts[-1])
        self.names: list[str] = []
        for m in _SGLANG_IMPORT.finditer(text):
            if m.group(3) is not None and m.group(3).lstrip().startswith("("):
                self.alone = False  # an unclosed `import (`: its names run on
            if m.group(1):
                self.names.append(m.group(1))
            else:
                for part in re.sub(r"#[^\n]*", "", m.group(2) or m.group(3)).split(","):
                    words = part.split()
                    if words:
                        self.names.append(words[-1])
        self.names = [n for n in self.names if n.isidentifier()]
        self.odd = self.qic or not self.alone or self.trailing_decorator
        self.pruned: tuple[frozenset, str] | None = None  # (names, text) last made

    def prune(self, text: str, names: frozenset) -> str:
        if self.pruned is None or self.pruned[0] != names:
            self.pruned = (names, _prune_defs(text, self.starts, sorted(names)))
        return self.pruned[1]


class _State:
    """The memory of one document's Python extraction between lints. The lists are
    aligned with `chunks` (one entry per chunk)."""

    def __init__(self, catalog):
        self.catalog = catalog
        self.text: str | None = None
        self.starts: list[int] = []
        self.chunks: list[str] = []
        self.pfacts: list = []  # _PruneFacts or None
        self.units: list = []  # _Unit or None (not known)
        self.by_text: dict = {}  # unit key (text, or (document text, pruned text)) -> _Unit
        self.facts: _Facts | None = None  # what every unit with a result was read with
        self.names: frozenset | None = None  # SGLang's names the units were pruned with
        self.pruning = False  # whether the units are pruned
        self.complete = False  # units (and facts) are known for every chunk
        # Per chunk: (start, unit result, the launches placed from it), re-used as they are
        # while the chunk stays where it was (the engine then knows them by identity).
        self.placed: list = []
        self.view = _DocView()  # the newest text, for every placed launch's host
        self.dropped = 0  # chunks replaced since `by_text` was last cleaned


def _splice(old: list, k: int, j: int, count: int, n_old: int) -> list:
    """`old` (one entry per old chunk) with entries k..j-1 replaced by `count` Nones."""
    if len(old) != n_old:
        return [None] * (k + count + n_old - j)
    return old[:k] + [None] * count + old[j:]


def _extract_chunked(text: str, index: LineIndex, settings, memo: dict) -> ExtractResult | None:
    """`extract_python` of a whole document, re-reading only the chunks an edit touched;
    None when the document must be read whole (see above)."""
    catalog = _catalog(settings)
    st = memo.get(_MEMO_KEY)
    if not isinstance(st, _State) or st.catalog is not catalog:
        st = memo[_MEMO_KEY] = _State(catalog)
    if "\r" in text and _LONE_CR.search(text):
        return None  # Python ends lines at a lone \r, the chunks would not
    # 1. Chunks: scan again from a little before the edit to where the old chunks resume.
    old = st.text
    n_old = len(st.chunks)
    if old is None:
        starts, _ = _scan(text, 0, [], len(text) + 1, 0)
        k = j = n_old = 0
    else:
        a = _common_prefix(old, text)
        b = _common_suffix(old, text, min(len(old), len(text)) - a)
        delta = len(text) - len(old)
        if a == len(old) == len(text):
            k = j = n_old  # the same text
            mid: list[int] = []
        else:
            k = bisect.bisect_right(st.starts, max(0, a - 16)) - 1
            mid, j = _scan(text, st.starts[k], st.starts, len(text) - b, delta)
        starts = st.starts[:k] + mid + [s + delta for s in st.starts[j:]]
    n = len(starts)
    m = n - (n_old - j)  # chunks k..m-1 are new; the others are the old ones, moved
    ends = starts[1:] + [len(text)]
    chunks = st.chunks[:k] + [text[starts[i]:ends[i]] for i in range(k, m)] + st.chunks[j:]
    prev_units = st.units
    old_units = _splice(prev_units, k, j, m - k, n_old)
    placed = _splice(st.placed, k, j, m - k, n_old)
    complete = st.complete and old is not None
    old_chunks, old_pf = st.chunks, st.pfacts if len(st.pfacts) == n_old else []
    pf = _splice(st.pfacts, k, j, m - k, n_old)
    st.text, st.starts, st.chunks, st.pfacts = text, starts, chunks, pf
    st.units, st.complete, st.placed = [None] * n, False, [None] * n
    # 2. Pruning (big modules), chunk by chunk.
    pruning = text.count("\n") > PRUNE_LINES
    names = None
    if pruning:
        again = {c: f for c, f in zip(old_chunks[k:j], old_pf[k:j]) if f is not None}
        for i in range(n):
            if pf[i] is None:
                pf[i] = again.get(chunks[i]) or _PruneFacts(chunks[i])
        found = {"sglang", *BARE_HELPERS}
        qic = alone = False
        for f in pf:
            if f.odd:
                qic = qic or f.qic
                alone = alone or not f.alone or (f.trailing_decorator and f is not pf[-1])
            if f.names:
                found.update(f.names)
        if qic:
            pruning = False  # `prune` leaves such a module whole
        elif alone:
            return None
        else:
            names = frozenset(found)
            if st.names is not None and names == st.names:
                names = st.names
    # 3. Units: each chunk's text as parsed (pruned in a big module).
    same = complete and st.pruning == pruning and names is st.names
    units = _units(st, chunks, names, old_units if same else [None] * n)
    if units is None:
        return None  # (pruned: extract_python then reads the module unpruned)
    st.dropped += j - k
    if st.dropped > 64 + len(st.by_text) // 4:  # forget the texts no chunk has any more
        live = {id(u) for u in units}
        st.by_text = {key: u for key, u in st.by_text.items() if id(u) in live}
        st.dropped = 0
    st.pruning, st.names = pruning, names
    # 4. The module's facts: the same as before when the new chunks say what the old ones
    # said; else gathered again, and the results that asked about what changed forgotten.
    facts = st.facts
    if facts is None or not same or \
            [u.key for u in prev_units[k:j]] != [u.key for u in units[k:m]]:
        facts = _Facts(units)
        if st.facts is None or facts.__dict__ != st.facts.__dict__:
            for u in {id(u): u for u in units}.values():
                if (u.result is not None or u.foreign is not None) and \
                        any(facts.answer(key, u) != v for key, v in u.deps.items()):
                    u.result = u.foreign = None
        else:
            facts = st.facts
    st.facts, st.units, st.complete = facts, units, True
    # 5. Read the chunks whose result is not known; those that need others are read
    # together with them (`_clusters`); place every other chunk's launches.
    result = ExtractResult([], [])
    out_launches: list = []  # Launch or Moved
    out_findings = result.findings
    view = st.view
    view.text, view.index = text, index
    try:
        foreign = []
        results: list = [None] * n  # the result each chunk places
        for i in range(n):
            u = units[i]
            if u is _BLANK:
                continue
            if u.result is not None and u.line is not None and u.line != index.line_of(starts[i]):
                # Its findings name lines, and it now starts on another line (or the same
                # text sits twice in the module: a second result, not kept).
                if any(v is u for v in units[:i]):
                    u = _Unit(u.text, u.doc)
                    u.mods = units[i].mods
                else:
                    u.result = None
            if u.result is None and u.foreign is None and \
                    not _read(u, facts, index.line_of(starts[i]), catalog):
                return None
            if u.foreign is not None:
                foreign.append(i)
            results[i] = u.result
        members: set[int] = set()
        if foreign:
            clustered = _clusters(foreign, units, chunks, starts, text, index, facts, catalog)
            if clustered is None:
                return None
            members, out_launches[:], out_findings[:] = clustered
        new_placed: list = [None] * n
        for i in range(n):
            done = results[i]
            if done is None or i in members:
                continue
            start = starts[i]
            was = placed[i]
            if was is not None and was[0] == start and was[1] is done:
                items = was[2]
            else:
                items = [Moved(launch, start, _PlacedHost(launch.host, start, view))
                         for launch in done.launches]
            new_placed[i] = (start, done, items)
            out_launches.extend(items)
            if done.findings:
                out_findings.extend(moved(f, start) for f in done.findings)
        if members:
            out_launches.sort(key=raw_start)
        st.placed = new_placed
    finally:
        for u in units:
            u.pending = None
    result.launches = LaunchList(out_launches)
    return result


class _Pieces:
    """Offsets in chunks written one after another (a blank line between two) to offsets
    in the document; the blank line after a chunk maps to the chunk's end."""

    def __init__(self, pieces: list[tuple[int, int, int]]):
        self.pieces = pieces  # (offset in the joined text, offset in the document, length)
        self.at = [p[0] for p in pieces]

    def __call__(self, offset: int) -> int:
        k = max(0, bisect.bisect_right(self.at, offset) - 1)
        s, d, length = self.pieces[k]
        return d + min(offset - s, length)


def _clusters(foreign: list[int], units: list[_Unit], chunks: list[str], starts: list[int],
              text: str, index: LineIndex, facts: _Facts, catalog):
    """Chunks that need other chunks (a name assigned once elsewhere, a list changed at the
    top level elsewhere) read together with those chunks, as the whole module would read
    them: (the chunks so read, their launches, their findings), None when one fails."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(i: int, keys) -> bool:
        grew = False
        for kind, name in keys:
            for t, u in enumerate(units):
                if u is not _BLANK and name in (u.counts if kind == "a" else u.mods):
                    a, b = find(i), find(t)
                    if a != b:
                        parent[a] = b
                        grew = True
        return grew

    for i in foreign:
        join(i, units[i].foreign)
    while True:
        groups: dict[int, list[int]] = {}
        for i in list(parent):
            groups.setdefault(find(i), []).append(i)
        launches: list[Launch] = []
        findings: list = []
        grew = False
        for group in groups.values():
            group.sort()
            out = _read_together(group, units, chunks, starts, text, index, facts, catalog)
            if out is None:
                return None
            if isinstance(out, set):
                if not join(group[0], out):
                    return None  # nothing more to read with it: cannot happen, be safe
                grew = True
                continue
            launches += out[0]
            findings += out[1]
        if not grew:
            return set(parent), launches, findings


def _read_together(group: list[int], units: list[_Unit], chunks: list[str], starts: list[int],
                   text: str, index: LineIndex, facts: _Facts, catalog):
    """Read chunks `group` as one module (in document offsets): (launches, findings), the
    questions still answered outside the group (a set), or None when reading fails."""
    pieces = []
    pos = 0
    own_mods: dict[str, int] = {}
    for i in group:
        pieces.append((pos, starts[i], len(chunks[i])))
        pos += len(chunks[i]) + 1
        for name, c in units[i].mods.items():
            own_mods[name] = own_mods.get(name, 0) + c
    doc = "\n".join(chunks[i] for i in group)
    src = "\n".join(units[i].text for i in group)
    tree = _parse_chunk(src)
    if tree is None:
        return None
    ctx = _Ctx(doc, _Pieces(pieces), text, index, None, catalog)
    ctx.plain = True  # the chunks' lines are the document's lines
    if src != doc:
        ctx.text = src
        ctx.src = PySource(src)
    ex = _ChunkExtractor(ctx, tree)
    ex.begin(ctx, facts, own_mods)
    try:
        ex.run()
    except Exception:
        return None
    if ex.foreign:
        return ex.foreign
    out = _detach(ctx)
    return out.launches, out.findings


def _units(st: _State, chunks: list[str], names: frozenset | None,
           old_units: list) -> list[_Unit] | None:
    """The unit of every chunk (None when one does not parse); `old_units` holds the
    units known for unchanged chunks."""
    out: list[_Unit] = []
    by_text = st.by_text
    pf = st.pfacts
    for i, doc in enumerate(chunks):
        u = old_units[i]
        if u is not None:
            out.append(u)
            continue
        text = doc if names is None else pf[i].prune(doc, names)
        if not text or text.isspace():
            out.append(_BLANK)
            continue
        key = text if text == doc else (doc, text)
        u = by_text.get(key)
        if u is None:
            u = _Unit(text, doc)
            if not u.parse():
                for v in out:
                    v.pending = None  # no tree is kept past this lint
                return None
            assert u.pending is not None
            u.summarize(u.pending)
            by_text[key] = u
        out.append(u)
    return out


def _read(u: _Unit, facts: _Facts, line: int, catalog) -> bool:
    """Read one unit's launches with the module's facts (`u.result`), or learn that it needs
    other chunks (`u.foreign`). False when reading failed: the whole module is then read,
    as before."""
    if u.pending is None and not u.parse():
        return False
    ex = u.pending
    assert ex is not None
    u.pending = None
    lines = _ChunkLines(u.doc, line)
    ctx = _Ctx(u.doc, None, u.doc, lines, None, catalog)
    if u.text != u.doc:
        ctx.text = u.text
        ctx.src = PySource(u.text)
    ex.begin(ctx, facts, u.mods)
    reads = LINE_READS[0]
    try:
        ex.walk()
    except Exception:
        return False
    if lines.outside:
        return False
    u.deps = ex.deps
    if ex.foreign:
        u.foreign = frozenset(ex.foreign)
        return True
    u.result = _detach(ctx)
    u.line = line if u.result.findings and LINE_READS[0] != reads else None
    return True


def _detach(ctx: _Ctx) -> ExtractResult:
    """What `ctx` read, taken out of it: its launches' hosts keep the context, and a
    context that kept the result would make every result a reference cycle (the server
    sets large results aside from the cycle collector: tests/test_no_cycles.py)."""
    out = ctx.result
    ctx.result = ExtractResult([], [])
    return out


# --- the format -------------------------------------------------------------------------------

PY_SUFFIXES = {".py", ".pyw"}


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    if language_id == "python":
        return True
    if path:
        suffix = os.path.splitext(path)[1].lower()
        if suffix in PY_SUFFIXES:
            return True
        if suffix:
            return False
    first = text[:200].split("\n", 1)[0]
    return first.startswith("#!") and "python" in first


def _extract(text: str, index: LineIndex, path: str | None, settings) -> ExtractResult:
    """The document's launches: chunk by chunk when the lint keeps a memory of the
    document (the engine's LintCache), else (or when that cannot be exact) whole."""
    memo = extract_memo()
    if memo is not None and "sglang" in text:
        found = _extract_chunked(text, index, settings, memo)
        if found is not None:
            return found
    return extract_python(text, None, text, index, settings)


def _format():
    from servelint.extract import Format
    return Format("python", 20, detect, _extract)


FORMAT = _format()
