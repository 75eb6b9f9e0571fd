"""Dockerfiles: SGLang launches in `RUN`, `CMD` and `ENTRYPOINT`.

Docker's reading of an instruction is reproduced before anything is parsed:

- parser directives at the top (`# escape=\\`` makes the backtick the escape character);
- an instruction continues while a line ends with the escape character (trailing spaces
  and tabs allowed); comment lines and empty lines inside a continued instruction are
  removed by Docker before the instruction is read, so they are not part of the command
  (unlike in a shell script, where a comment line ends the command);
- exec form (`CMD ["python3", "-m", ...]`, a JSON array of strings, positions inside each
  JSON string exact, escapes decoded) versus shell form (anything else, run by
  `/bin/sh -c`; an array that is not valid JSON is shell form, as in Docker);
- `RUN --mount=... cmd`: the flags are Docker's, the command starts after them;
- `ENTRYPOINT [..]` + `CMD [..]` in one stage are one command: the entrypoint's words then
  the CMD's. An exec-form entrypoint without a CMD takes its arguments from `docker run`,
  so the launch ends with words that may be anything;
- heredocs: `RUN <<EOF` (or `RUN bash <<EOF`) runs the body as a shell script, and
  `COPY <<EOF /x.sh` with a shell body (a shebang, or a `.sh` target) is read as a script.

Values: exec form does no variable substitution, but a `$VAR` there is the author's
variable, so a word containing `$` is unknown. In shell form the shell expands it
(unknown). Edits keep the instruction valid: removing the last line of a continued
instruction also removes the escape character that continued into it.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from typing import Iterable, Sequence

from servelint.checks.broken_continuation import CHECK as BROKEN_CONTINUATION
from servelint.extract.common import (ExtractResult, ListHost, NthInRegionHost, script_launches,
                                      script_word)
from servelint.extract.shell import ShellHost, find_entry, remove_in_line
from servelint.lintcache import LaunchList, Moved, extract_memo, moved, shifted_launch
from servelint.model import Edit, Fix, Launch, LineIndex, Related, Span, Token

INSTRUCTION = re.compile(r"[ \t]*([A-Za-z]+)(?=[ \t\r]|$)")
DIRECTIVE = re.compile(r"#[ \t]*([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(\S*)[ \t]*\r?$")
HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
KNOWN = {"FROM", "RUN", "CMD", "ENTRYPOINT", "ENV", "ARG", "LABEL", "EXPOSE", "ADD", "COPY",
         "VOLUME", "USER", "WORKDIR", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL",
         "MAINTAINER"}


class Line:
    __slots__ = ("start", "end", "text")

    def __init__(self, start: int, end: int, text: str):
        self.start, self.end, self.text = start, end, text  # end: before the newline


class Instruction:
    def __init__(self, keyword: str, first: int):
        self.keyword = keyword.upper()
        self.first = first  # line number of the keyword
        self.last = first
        self.args_start = 0  # document offset where the arguments start
        # the lines that belong to it, comment and empty continuation lines excluded:
        # (line number, content start, content end, continued)
        self.parts: list[tuple[int, int, int, bool]] = []
        self.heredocs: list[tuple[int, int, str]] = []  # body start, body end, delimiter
        self.next: Instruction | None = None  # CMD, ENTRYPOINT: the instruction after it


class _Lines:
    """The lines of a text as `_lines` gives them, each made when first read from the
    line starts a LineIndex already knows (a 20,000-line file is not split for the few
    lines an edit reads again)."""

    def __init__(self, text: str, starts: Sequence[int]):  # LineIndex.starts: an array
        self.text = text
        self.starts = starts
        self.made: dict[int, Line] = {}

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: int) -> Line:
        got = self.made.get(i)
        if got is None:
            if not 0 <= i < len(self.starts):
                raise IndexError(i)
            start = self.starts[i]
            end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.text)
            got = self.made[i] = Line(start, end, self.text[start:end])
        return got

    def __iter__(self):
        for i in range(len(self.starts)):
            yield self[i]


def _lines(text: str) -> list[Line]:
    out = []
    pos = 0
    for raw in text.split("\n"):
        end = pos + len(raw)
        out.append(Line(pos, end, raw))
        pos = end + 1
    return out


def directives(lines: Iterable[Line]) -> dict[str, str]:
    found: dict[str, str] = {}
    for ln in lines:
        m = DIRECTIVE.match(ln.text)
        if not m:
            break
        key = m.group(1).lower()
        if key in found:
            break
        found[key] = m.group(2)
    return found


def instructions(text: str, lines, escape: str, first: int = 0,
                 stop: int | None = None) -> list[Instruction]:
    """The instructions starting on lines first..stop-1 (an instruction started there may
    run past `stop`: the caller checks)."""
    cont = re.compile(re.escape(escape) + r"[ \t]*\r?$")
    out: list[Instruction] = []
    n = len(lines)
    i = first
    end = n if stop is None else min(stop, n)
    while i < end:
        ln = lines[i]
        stripped = ln.text.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        m = INSTRUCTION.match(ln.text)
        keyword = m.group(1) if m else stripped.split()[0]
        ins = Instruction(keyword, i)
        ins.args_start = ln.start + (m.end() if m else len(ln.text) - len(ln.text.lstrip()))
        content_start = ins.args_start
        j = i
        while True:
            cur = lines[j]
            cm = cont.search(cur.text)
            cstart = content_start if j == i else cur.start
            if cm:
                ins.parts.append((j, cstart, cur.start + cm.start(), True))
            else:
                ins.parts.append((j, cstart, cur.end - (1 if cur.text.endswith("\r") else 0), False))
            ins.last = j
            if not cm:
                break
            j += 1
            while j < n and (not lines[j].text.strip() or lines[j].text.lstrip().startswith("#")):
                j += 1  # Docker drops these before it reads the instruction
            if j >= n:
                break
        # Heredocs start on the instruction's last line and run to their delimiter.
        last_text = text[ins.parts[-1][1]:ins.parts[-1][2]]
        k = ins.last + 1
        for hm in HEREDOC.finditer(last_text):
            strip_tabs = hm.group(1) == "-"
            delim = hm.group(3)
            body_start = lines[k].start if k < n else len(text)
            while k < n:
                t = lines[k].text.rstrip("\r")
                if (t.lstrip("\t") if strip_tabs else t) == delim:
                    break
                k += 1
            body_end = lines[k].start if k < n else len(text)
            ins.heredocs.append((body_start, body_end, delim))
            k += 1
        if ins.heredocs:
            ins.last = min(k - 1, n - 1)
        out.append(ins)
        i = ins.last + 1
    return out


# --- exec form ---------------------------------------------------------------------------------


def logical(text: str, ins: Instruction, shell: bool) -> tuple[str, list[int]]:
    """The instruction's arguments as Docker joins them, with each character's document
    offset (plus one entry for the end). For the shell, a continuation is kept as
    backslash-newline (what the shell makes of it is what Docker's join gives)."""
    chars: list[str] = []
    table: list[int] = []
    for k, (_, s, e, continued) in enumerate(ins.parts):
        chars.extend(text[s:e])
        table.extend(range(s, e))
        if continued and shell:
            chars.append("\\")
            table.append(e)
            nl = text.find("\n", e)
            chars.append("\n")
            table.append(nl if nl >= 0 else e + 1)
        elif not continued and shell and k + 1 < len(ins.parts):
            chars.append("\n")
            table.append(e)
    table.append(ins.parts[-1][2])
    return "".join(chars), table


_JSON_ESC = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_array(s: str) -> list[tuple[int, int, str]] | None:
    """The strings of a JSON array of strings with their [start, end) in s, or None when
    s is not one (Docker then reads the instruction as shell form)."""
    i = 0
    n = len(s)

    def ws(i):
        while i < n and s[i] in " \t\r\n":
            i += 1
        return i

    i = ws(i)
    if i >= n or s[i] != "[":
        return None
    i = ws(i + 1)
    out: list[tuple[int, int, str]] = []
    if i < n and s[i] == "]":
        return out if not s[ws(i + 1):].strip() else None
    while True:
        if i >= n or s[i] != '"':
            return None
        start = i
        i += 1
        val = []
        while True:
            if i >= n:
                return None
            c = s[i]
            if c == '"':
                i += 1
                break
            if c == "\\":
                if i + 1 >= n:
                    return None
                e = s[i + 1]
                if e in _JSON_ESC:
                    val.append(_JSON_ESC[e])
                    i += 2
                    continue
                if e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[i + 2:i + 6]):
                    val.append(chr(int(s[i + 2:i + 6], 16)))
                    i += 6
                    continue
                return None
            if ord(c) < 0x20:
                return None
            val.append(c)
            i += 1
        out.append((start, i, "".join(val)))
        i = ws(i)
        if i < n and s[i] == ",":
            i = ws(i + 1)
            continue
        if i < n and s[i] == "]":
            return out if not s[i + 1:].strip() else None
        return None


def _fix_surrogates(v: str) -> str:
    try:
        return v.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeError:
        return v


# --- edits --------------------------------------------------------------------------------------


class DockerEdits:
    """Line-aware removal inside one instruction: whole lines when the words fill them,
    and removing an instruction's last line takes the escape character before it."""

    def __init__(self, text: str, index: LineIndex, ins: Instruction, escape: str):
        self.text = text
        self.index = index
        self.ins = ins
        self.escape = escape

    def _content_lines(self) -> list[int]:
        return [p[0] for p in self.ins.parts]

    def remove(self, s: int, e: int, tail: str = "") -> Edit:
        text, index = self.text, self.index
        l1, l2 = index.line_of(s), index.line_of(e)
        ls, le = index.line_start(l1), index.line_end(l2)
        before, after = text[ls:s], text[e:le].rstrip("\r")
        esc = re.escape(self.escape)
        whole = not before.strip() and re.fullmatch(r"[ \t]*" + tail + r"[ \t]*(" + esc + r"[ \t]*)?", after)
        lines = self._content_lines()
        if whole and l1 != self.ins.first:
            if after.strip().endswith(self.escape) and not (tail and after.strip() == self.escape):
                return Edit(Span(ls, min(le + 1, len(text))), "")
            if l2 == lines[-1] and not after.strip().endswith(self.escape):
                # The instruction's last line: the line before stops continuing.
                prev = [x for x in lines if x < l1]
                if prev:
                    pl = prev[-1]
                    pstart, pend = index.line_start(pl), index.line_end(pl)
                    ptext = text[pstart:pend].rstrip("\r")
                    stripped = ptext.rstrip()
                    if stripped.endswith(self.escape):
                        cut = pstart + len(stripped[:-1].rstrip())
                        keep = le - 1 if text[le - 1:le] == "\r" else le  # \r\n stays whole
                        return Edit(Span(cut, keep), "")
            return Edit(Span(ls, min(le + 1, len(text))), "")
        return remove_in_line(text, s, e, ls, le,
                              at_line_start=not before.strip() and l1 != self.ins.first)


class DockerShellHost(ShellHost):
    """Shell-form instructions: ShellHost's quoting, Docker's continuation lines."""

    name = "dockerfile-shell"

    def __init__(self, text: str, index: LineIndex, edits: DockerEdits):
        super().__init__(text, index, "" if edits.escape == "\\" else "'")
        self.edits = edits

    def remove(self, first: Token, last: Token) -> Edit:
        return self.edits.remove(first.span.start, last.span.end)


def _exec_host(text: str, index: LineIndex, spans: list[Span], ins: Instruction, escape: str,
               close: int) -> ListHost:
    edits = DockerEdits(text, index, ins, escape)

    def remove_elements(i: int, j: int) -> Edit:
        s, e = spans[i].start, spans[j].end
        l1, l2 = index.line_of(s), index.line_of(e)
        after = text[e:index.line_end(l2)].rstrip("\r")
        before = text[index.line_start(l1):s]
        if not before.strip() and l1 != ins.first and re.fullmatch(
                r"[ \t]*,[ \t]*(" + re.escape(escape) + r"[ \t]*)?", after):
            return edits.remove(s, e, tail=",")
        if j + 1 < len(spans):
            return Edit(Span(s, spans[j + 1].start), "")
        if i > 0:
            return Edit(Span(spans[i - 1].end, e), "")
        return Edit(Span(s, e), "")

    def write(value: str) -> str | None:
        return json.dumps(value, ensure_ascii=False)

    return ListHost(text, index, spans, remove_elements, write, name="dockerfile-exec")


class _Joined:
    """ENTRYPOINT + CMD: each edit goes to the host of the array its tokens are in."""

    name = "dockerfile-exec"
    quote_context = ""

    def __init__(self, text: str, index: LineIndex,
                 parts: list[tuple[ListHost, set[tuple[int, int]]]]):
        self.text = text
        self.index = index
        self.parts = parts

    def _h(self, token: Token) -> ListHost | None:
        key = (token.span.start, token.span.end)
        return next((h for h, keys in self.parts if key in keys), None)

    def quote(self, value: str) -> str | None:
        return json.dumps(value, ensure_ascii=False)

    def replace(self, token: Token, value: str) -> Edit | None:
        h = self._h(token)
        return h.replace(token, value) if h else None

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        h = self._h(first)
        return h.replace_words(first, last, words) if h and h is self._h(last) else None

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        h = self._h(token)
        return h.insert_after(token, words) if h else None

    def remove(self, first: Token, last: Token) -> Edit | None:
        h = self._h(first)
        return h.remove(first, last) if h and h is self._h(last) else None


# --- extraction --------------------------------------------------------------------------------


class _Reader:
    def __init__(self, text: str, index: LineIndex):
        self.text = text
        self.index = index
        self.lines = _Lines(text, index.starts)
        self.escape = directives(self.lines).get("escape", "\\")[:1] or "\\"
        if self.escape not in ("\\", "`"):
            self.escape = "\\"
        self.result = ExtractResult([], [])

    def run(self) -> ExtractResult:
        ins_list = instructions(self.text, self.lines, self.escape)
        stage: list[Instruction] = []
        # A stage built FROM an earlier stage starts with that stage's ENTRYPOINT, CMD
        # and environment: (entrypoint, cmd, env instructions) by stage name.
        named: dict[str, tuple] = {}
        base: tuple = (None, None, [])
        name = None
        for k, ins in enumerate(ins_list):
            if ins.keyword == "FROM":
                final = self.stage(stage, base)
                if name:
                    named[name] = final
                words = [w for w in self.text[ins.args_start:self.index.line_end(ins.last)].split()
                         if not w.startswith("--")]
                base = named.get(words[0].lower(), (None, None, [])) if words else (None, None, [])
                name = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
                stage = []
                continue
            self.instruction(ins_list, k, stage)
        self.stage(stage, base)
        if self.result.launches:
            self.images(ins_list)
        self.result.launches.sort(key=lambda l: l.span.start)
        return self.result

    def instruction(self, ins_list: list[Instruction], k: int, stage: list[Instruction]) -> None:
        """Read the k-th instruction of a stage: a RUN's launches and a COPY/ADD heredoc's
        now, CMD/ENTRYPOINT/ENV kept in `stage` for when the stage ends."""
        ins = ins_list[k]
        nxt = ins_list[k + 1] if k + 1 < len(ins_list) else None
        if ins.keyword == "RUN":
            self.run_instruction(ins, nxt)
        elif ins.keyword in ("CMD", "ENTRYPOINT", "ENV"):
            stage.append(ins)
            if ins.keyword != "ENV":
                ins.next = nxt
        elif ins.keyword in ("COPY", "ADD") and ins.heredocs:
            self.copy_heredoc(ins)

    def read_stage(self, ins_list: list[Instruction], args: dict) -> ExtractResult:
        """The launches and findings of one stage (`ins_list` starts with its FROM, which
        names no earlier stage), as run() reads them, with its image."""
        self.result = ExtractResult([], [])
        stage: list[Instruction] = []
        for k in range(1, len(ins_list)):
            self.instruction(ins_list, k, stage)
        self.stage(stage, (None, None, []))
        image = self.from_image(ins_list[0], args)[0]
        for launch in self.result.launches:
            if launch.image is None:
                launch.image = image
        self.result.launches.sort(key=lambda l: l.span.start)
        return self.result

    def from_image(self, ins: Instruction, args: dict) -> tuple:
        """((image, span) or None, the reference as written, its name or None) of a FROM."""
        body, table = logical(self.text, ins, False)
        words = [m for m in re.finditer(r"\S+", body) if not m.group().startswith("--")]
        if not words:
            return None, "", None
        w = words[0]
        ref = _substitute(w.group(), args)
        name = words[2].group().lower() if len(words) >= 3 and words[1].group().lower() == "as" else None
        return (ref, Span(table[w.start()], table[w.end() - 1] + 1)), w.group(), name

    # images ---------------------------------------------------------------------------

    def images(self, ins_list: list[Instruction]) -> None:
        """Each launch runs in its stage's image: the stage holding it (by position),
        whose `FROM` names an image or an earlier stage (followed to that stage's image).
        `ARG`s before the first `FROM` with a default are substituted in it."""
        args: dict[str, str | None] = {}
        stages: list[tuple[int, tuple[str, Span] | None]] = []
        named: dict[str, tuple[str, Span] | None] = {}
        for ins in ins_list:
            if ins.keyword == "ARG" and not stages:
                body, _ = logical(self.text, ins, False)
                for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)(?:=(\"[^\"]*\"|'[^']*'|\S*))?", body):
                    value = m.group(2)
                    if value is not None and value[:1] in "\"'" and value[-1:] == value[:1] \
                            and len(value) > 1:
                        value = value[1:-1]
                    args[m.group(1)] = value
            elif ins.keyword == "FROM":
                body, table = logical(self.text, ins, False)
                words = [m for m in re.finditer(r"\S+", body) if not m.group().startswith("--")]
                image: tuple[str, Span] | None = None
                name = None
                if words:
                    w = words[0]
                    ref = _substitute(w.group(), args)
                    image = named.get(ref.lower(), (ref, Span(table[w.start()], table[w.end() - 1] + 1)))
                    if len(words) >= 3 and words[1].group().lower() == "as":
                        name = words[2].group().lower()
                stages.append((self.index.line_start(ins.first), image))
                if name:
                    named[name] = image
        # The stage a launch is in: the last one starting at or before it, found by
        # bisection (a Dockerfile of thousands of stages, each launching, cost
        # launches x stages: 16,000 took 12 s here).
        starts = [start for start, _ in stages]  # in file order, so sorted
        for launch in self.result.launches:
            if launch.image is not None:
                continue
            k = bisect.bisect_right(starts, launch.span.start) - 1
            if k >= 0:
                launch.image = stages[k][1]

    # pieces ---------------------------------------------------------------------------

    def env(self, stage: list[Instruction], before: int) -> dict:
        out: dict[str, str | None] = {}
        for ins in stage:
            if ins.keyword != "ENV":  # the container gets every ENV, wherever it is
                continue
            body, _ = logical(self.text, ins, False)
            pairs = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|\S*)", body)
            if not pairs:
                parts = body.strip().split(None, 1)
                if parts:
                    pairs = [(parts[0], parts[1] if len(parts) > 1 else "")]
            for key, val in pairs:
                val = val.strip()
                if val[:1] in "\"'" and val[-1:] == val[:1] and len(val) > 1:
                    val = val[1:-1]
                out[key] = None if "$" in val else val
        return out

    def exec_tokens(self, ins: Instruction):
        """(tokens, host, keys) of an exec-form instruction, or None for shell form."""
        s, table = logical(self.text, ins, False)
        arr = json_array(s)
        if arr is None:
            return None
        spans = [Span(table[a], table[b - 1] + 1) for a, b, _ in arr]
        tokens = []
        for (a, b, val), span in zip(arr, spans):
            val = _fix_surrogates(val)
            raw = self.text[span.start:span.end]
            tokens.append(Token(span, None if "$" in val else val, prefix=val.split("$", 1)[0],
                                raw=raw))
        close = table[len(s.rstrip()) - 1] if s.strip() else ins.args_start
        host = _exec_host(self.text, self.index, spans, ins, self.escape, close)
        return tokens, host, {(t.span.start, t.span.end) for t in tokens}, arr, table

    def launch(self, tokens, host, ins: Instruction, env: dict, extra_span: Span | None = None):
        found = find_entry(tokens)
        if found is None:
            k = script_word(tokens)
            return k
        kind, at = found
        span = Span(self.index.line_start(ins.first), self.index.line_end(ins.last))
        self.result.launches.append(Launch(kind=kind, entry=tokens[at], tokens=tokens[at + 1:],
                                           host=host, span=span, env=dict(env),
                                           anchor=self.index.line_start(ins.first)))
        return None

    def shell_form(self, ins: Instruction, env: dict, skip_flags: bool, nxt=None) -> None:
        script, table = logical(self.text, ins, True)
        if "sglang" not in script:
            return
        start = 0
        if skip_flags:  # RUN --mount=... --network=...: Docker's own flags
            m = re.match(r"(?:[ \t]*--[A-Za-z-]+(?:=\S*)?)*", script)
            start = m.end() if m else 0
        sub = " " * start + script[start:]
        edits = DockerEdits(self.text, self.index, ins, self.escape)
        found = script_launches(sub, table, 0, self.text, self.index, "")
        for launch in found.launches:
            if self.escape == "`":
                # Windows images: the shell may be cmd.exe (backslashes kept) or sh
                # (backslashes are escapes), so a word with a backslash is unknown.
                for tok in launch.tokens:
                    if "\\" in tok.raw and tok.text is not None:
                        tok.text = None
            launch.host = DockerShellHost(self.text, self.index, edits)
            launch.env = {**env, **launch.env}
            launch.anchor = self.index.line_start(ins.first)
            self.result.launches.append(launch)
        for f in found.findings:
            self.result.findings.append(f)
        if found.launches and nxt is not None:
            self.orphans(ins, nxt, found.launches[-1])

    def orphans(self, ins: Instruction, nxt: Instruction, launch: Launch) -> None:
        """Option lines after a launch that Docker reads as an instruction of their own."""
        if not nxt.keyword.startswith("-") or nxt.first != ins.last + 1:
            return
        line = self.lines[nxt.first]
        first_word = line.text.split()[0]
        last = self.lines[ins.parts[-1][0]]
        end = last.end - (1 if last.text.endswith("\r") else 0)
        stripped = self.text[last.start:end].rstrip()
        cut = last.start + len(stripped)
        self.result.findings.append(BROKEN_CONTINUATION.finding(
            f"'{first_word}' is not part of the launch above: line {ins.parts[-1][0] + 1} does not "
            f"end with '{self.escape}', so Docker reads this line as an instruction of its own "
            f"(the build fails: unknown instruction) and SGLang never sees these options",
            Span(line.start + len(line.text) - len(line.text.lstrip()), line.end),
            related=[Related(Span(last.start, end), "the launch ends here")],
            fixes=[Fix("Add the missing line continuation",
                       [Edit(Span(cut, cut), " " + self.escape)], preferred=True)]))
        # Its words are still read as the launch's, so every problem in them shows now.
        script, table = logical(self.text, nxt, True)
        lead = "python -m sglang.launch_server "
        words = script_launches(lead + script, [nxt.args_start] * len(lead) + table, 0,
                                self.text, self.index, "")
        if words.launches:
            launch.tokens.extend(words.launches[0].tokens)

    def run_instruction(self, ins: Instruction, nxt) -> None:
        if ins.heredocs:
            first_line = self.text[ins.parts[0][1]:ins.parts[-1][2]]
            cmd = HEREDOC.sub("", first_line)
            cmd = re.sub(r"(?:^|\s)--[A-Za-z-]+(?:=\S*)?", " ", cmd).strip()
            if cmd == "" or re.fullmatch(r"(?:\S*/)?(?:ba|z|da|k)?sh(?:\s+-\S+)*", cmd):
                for body_start, body_end, _ in ins.heredocs:
                    self.script(body_start, body_end)
            return
        if "sglang" not in self.text[self.index.line_start(ins.first):self.index.line_end(ins.last)]:
            return
        ex = self.exec_tokens(ins)
        if ex is not None:
            tokens, host, _, arr, table = ex
            k = self.launch(tokens, host, ins, {})
            if k is not None:
                self.exec_script(arr, table, k)
            return
        self.shell_form(ins, {}, True, nxt)

    def script(self, start: int, end: int) -> None:
        body = self.text[start:end]
        if "sglang" not in body:
            return
        found = script_launches(body, None, start, self.text, self.index, "")
        self.result.launches.extend(found.launches)
        self.result.findings.extend(found.findings)

    def copy_heredoc(self, ins: Instruction) -> None:
        args = self.text[ins.parts[0][1]:ins.parts[-1][2]]
        for body_start, body_end, _ in ins.heredocs:
            body = self.text[body_start:body_end]
            if body.startswith("#!") and "sh" in body.split("\n", 1)[0] or re.search(r"\.(sh|bash)\b", args):
                self.script(body_start, body_end)

    def exec_script(self, arr, table, k: int) -> None:
        """`["bash", "-c", "script"]`: the script inside a JSON string."""
        a, b, val = arr[k]
        if "sglang" not in val:
            return
        chars, tab = self._json_chars(table, a, b)
        if chars is None:
            return
        found = script_launches(chars, tab, 0, self.text, self.index, '"')
        self.result.launches.extend(found.launches)
        self.result.findings.extend(found.findings)

    def _json_chars(self, table, a: int, b: int):
        """A JSON string's value with each character's document offset."""
        raw = "".join(self.text[table[x]] for x in range(a + 1, b - 1))
        offs = [table[x] for x in range(a + 1, b - 1)]
        out, tab = [], []
        i = 0
        while i < len(raw):
            c = raw[i]
            if c == "\\":
                e = raw[i + 1] if i + 1 < len(raw) else ""
                if e in _JSON_ESC:
                    out.append(_JSON_ESC[e])
                    tab.append(offs[i])
                    i += 2
                    continue
                if e == "u":
                    out.append(chr(int(raw[i + 2:i + 6], 16)))
                    tab.append(offs[i])
                    i += 6
                    continue
                return None, None
            out.append(c)
            tab.append(offs[i])
            i += 1
        tab.append(table[b - 1])
        return "".join(out), tab

    def stage(self, stage: list[Instruction], base: tuple = (None, None, [])) -> tuple:
        """The launch a stage's image runs. Returns its (entrypoint, cmd, env) for the
        stages built from it."""
        own_entry = next((i for i in reversed(stage) if i.keyword == "ENTRYPOINT"), None)
        own_cmd = next((i for i in reversed(stage) if i.keyword == "CMD"), None)
        entry = own_entry or base[0]
        # Setting ENTRYPOINT drops the CMD the base image had.
        cmd = own_cmd or (None if own_entry is not None else base[1])
        envs = list(base[2]) + [i for i in stage if i.keyword == "ENV"]
        final = (entry, cmd, envs)
        if own_entry is None and (own_cmd is None or (
                entry is not None and self.exec_tokens(entry) is None)):
            return final  # the base stage's launch, already read there (a shell-form
            # entrypoint ignores CMD)
        self._stage(entry, cmd, envs)
        return final

    def _stage(self, entry, cmd, stage: list[Instruction]) -> None:
        text_of = lambda i: self.text[self.index.line_start(i.first):self.index.line_end(i.last)]
        if entry is not None:
            env = self.env(stage, entry.first)
            ex = self.exec_tokens(entry)
            if ex is None:  # shell form: CMD is ignored
                if "sglang" in text_of(entry):
                    self.shell_form(entry, env, False, entry.next)
                return
            tokens, host, keys, arr, table = ex
            parts = [(host, keys)]
            cex = self.exec_tokens(cmd) if cmd is not None else None
            tokens = list(tokens)
            if cmd is not None and cex is not None:
                ctokens, chost, ckeys, carr, ctable = cex
                tokens += ctokens
                parts.append((chost, ckeys))
            elif cmd is not None:
                # A shell-form CMD becomes ["/bin/sh", "-c", "<cmd>"] after the entrypoint.
                sub = logical(self.text, cmd, True)[0]
                span = Span(cmd.args_start, self.index.line_end(cmd.last))
                tokens += [Token(span, "/bin/sh"), Token(span, "-c"), Token(span, None, splat=True)]
                del sub
            else:
                # `docker run IMAGE args...` appends words the file does not know.
                close = Span(max(entry.args_start, self.index.line_end(entry.last) - 1),
                             self.index.line_end(entry.last))
                tokens.append(Token(close, None, splat=True, raw="<docker run arguments>"))
            if "sglang" not in text_of(entry) and (cmd is None or "sglang" not in text_of(cmd)):
                return
            host = _Joined(self.text, self.index, parts)
            k = self.launch(tokens, host, entry, env)
            if k is not None:
                if k < len(arr):
                    self.exec_script(arr, table, k)
                elif cex is not None:
                    self.exec_script(cex[3], cex[4], k - len(arr))
            return
        if "sglang" not in text_of(cmd):
            return
        env = self.env(stage, cmd.first)
        ex = self.exec_tokens(cmd)
        if ex is None:
            self.shell_form(cmd, env, False, cmd.next)
            return
        tokens, host, keys, arr, table = ex
        k = self.launch(tokens, host, cmd, env)
        if k is not None:
            self.exec_script(arr, table, k)


def _substitute(word: str, args: dict[str, str | None]) -> str:
    """`$NAME`, `${NAME}`, `${NAME:-default}` in a `FROM` word, from the ARGs declared
    before the first `FROM`; a variable without a value stays as written."""
    if "$" not in word:
        return word

    def one(m: re.Match) -> str:
        name = m.group(1) or m.group(4)
        value = args.get(name)
        op, alt = m.group(2), m.group(3)
        if op == "-":
            return value if value else (alt or "")
        if op == "+":
            return (alt or "") if value else ""
        return value if value is not None else m.group(0)

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?([-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)",
                  one, word)


# --- the format ---------------------------------------------------------------------------------


# Names other formats claim: a file named so is never sniffed as a Dockerfile.
OTHER_SUFFIXES = {".py", ".pyw", ".pyi", ".ipynb", ".sh", ".bash", ".zsh", ".ksh", ".yaml", ".yml",
                  ".json", ".jsonc", ".json5", ".md", ".markdown", ".mdx", ".toml", ".tpl",
                  ".cfg", ".ini", ".txt", ".rst", ".js", ".ts", ".env", ".lock"}
SNIFF_BYTES = 8192


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    if language_id in ("dockerfile", "containerfile"):
        return True
    if path:
        low = os.path.basename(path).lower()
        if (low in ("dockerfile", "containerfile") or low.endswith((".dockerfile", ".containerfile"))
                or low.startswith(("dockerfile.", "containerfile."))):
            return True
        if os.path.splitext(low)[1] in OTHER_SUFFIXES:
            return False
        if low.startswith(("dockerfile-", "dockerfile_", "containerfile-", "containerfile_")):
            return True  # Dockerfile-cu124, Dockerfile_npu
    if language_id not in (None, "", "plaintext"):
        return False
    return looks_like_dockerfile(text)


def looks_like_dockerfile(text: str) -> bool:
    """Whether a text that no name identifies is a Dockerfile: parser directives or
    comments, then a first instruction `FROM` or `ARG` (as Docker requires), then only
    instructions Docker knows, written in upper case, at least two of them and a `FROM`
    among them. A shell script (`set -e`, `echo`), YAML (`FROM: x`), Python (`from x
    import y`) or a text in which one line is not an instruction is not one."""
    head = text[:SNIFF_BYTES]
    if not head.lstrip().startswith(("FROM", "ARG", "#")) or head.startswith("#!"):
        return False  # the cheap exit for nearly every other file (a shebang: a script)
    if len(text) > SNIFF_BYTES:
        cut = head.rfind("\n")
        head = head[:cut] if cut > 0 else head
    lines = _lines(head)
    escape = directives(lines).get("escape", "\\")[:1] or "\\"
    if escape not in ("\\", "`"):
        escape = "\\"
    found = instructions(head, lines, escape)
    if len(found) < 2:
        return False
    written = [head[lines[i.first].start:lines[i.first].end].lstrip(" \t").split(None, 1)[0]
               for i in found]
    if written[0] not in ("FROM", "ARG") or "FROM" not in written:
        return False
    return all(w in KNOWN for w in written)


def extract_dockerfile(text: str, index: LineIndex | None = None) -> ExtractResult:
    if "sglang" not in text:
        return ExtractResult([], [])
    index = index or LineIndex(text)
    memo = extract_memo()
    if memo is not None:
        got = _edited(text, index, memo)
        if got is None:
            got = _by_stages(text, index, memo)
        if got is not None:
            return got
    return _Reader(text, index).run()


# --- stage by stage, and an edit inside one stage ------------------------------------------------
#
# With a LintCache (lintcache.extract_memo), a Dockerfile whose stages stand alone (no FROM
# names an earlier stage, nothing but ARGs before the first FROM) is read stage by stage
# and its stages are kept: their places, launches and findings. An edit inside one stage
# (after its FROM line's first character, before the next FROM line) reads that stage's
# lines again; when its instructions end before the next FROM line, which is then read as
# before (Docker reads a line knowing only whether the line before continued), the other
# stages are what a whole reading gives, moved by the edit's length. The launches above
# the edit are the last lint's very objects, those below lintcache.Moved ones; their host
# (_StageHost) reads its stage again from the document's newest text when first asked for
# an edit, so no old text stays alive. Anything else is read whole.

_MEMO = "dockerfile"


class _Document:
    """The newest text of a document, shared by the hosts of its kept launches."""

    def __init__(self, text: str, index: LineIndex, escape: str, args: dict):
        self.text, self.index, self.escape, self.args = text, index, escape, args


class _StageHost(NthInRegionHost):
    """The host of the `nth` launch of the stage at [start, end) of the document's newest
    text (common.NthInRegionHost)."""

    __slots__ = ()

    def _launches(self) -> list | None:
        doc = self.doc
        read = _read_region(doc.text, doc.index, doc.escape, doc.args, self.start, self.end)
        return None if read is None else read[0].launches


def _read_region(text: str, index: LineIndex, escape: str, args: dict, start: int,
                 end: int) -> tuple[ExtractResult, Instruction] | None:
    """One stage written at [start, end) of `text` (start and end line starts), read on
    its own: None unless its instructions start with a FROM, hold no other, and end
    before `end`."""
    reader = _Reader.__new__(_Reader)
    reader.text, reader.index, reader.escape = text, index, escape
    reader.lines = _Lines(text, index.starts)
    first = index.line_of(start)
    stop = index.line_of(end) if end < len(text) else len(index.starts)
    if index.line_start(first) != start or (end < len(text) and index.line_start(stop) != end):
        return None
    ins_list = instructions(text, reader.lines, escape, first, stop)
    if not ins_list or ins_list[0].keyword != "FROM" or ins_list[-1].last >= stop \
            or any(i.keyword == "FROM" for i in ins_list[1:]):
        return None
    return reader.read_stage(ins_list, args), ins_list[0]


def _kept(ref: _Document, start: int, end: int, found: ExtractResult) -> tuple:
    """A stage as the memo keeps it: (start, end, launches, findings, names lines)."""
    items = [Moved(shifted_launch(l, 0, None), 0, _StageHost(ref, start, end, n, l.host))
             for n, l in enumerate(found.launches)]
    return (start, end, items, [moved(f, 0) for f in found.findings], bool(found.findings))


def _by_stages(text: str, index: LineIndex, memo: dict) -> ExtractResult | None:
    """The whole text read stage by stage and kept (see above); None when its stages do
    not stand alone."""
    memo[_MEMO] = None
    reader = _Reader(text, index)
    ins_list = instructions(text, reader.lines, reader.escape)
    froms = [k for k, ins in enumerate(ins_list) if ins.keyword == "FROM"]
    if not froms or any(ins.keyword != "ARG" for ins in ins_list[:froms[0]]):
        return None
    args: dict[str, str | None] = {}
    for ins in ins_list[:froms[0]]:
        body, _ = logical(text, ins, False)
        for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)(?:=(\"[^\"]*\"|'[^']*'|\S*))?", body):
            value = m.group(2)
            if value is not None and value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
                value = value[1:-1]
            args[m.group(1)] = value
    names: set[str] = set()
    refs: set[str] = set()
    for k in froms:
        image, written, name = reader.from_image(ins_list[k], args)
        here = {written.lower(), image[0].lower()} if image is not None else set()
        if here & names:
            return None  # built from an earlier stage: read whole
        refs |= here
        if name:
            names.add(name)
    ref = _Document(text, index, reader.escape, args)
    stages = []
    result = ExtractResult(LaunchList(), [])
    for j, k in enumerate(froms):
        start = index.line_start(ins_list[k].first)
        end = index.line_start(ins_list[froms[j + 1]].first) if j + 1 < len(froms) else len(text)
        found = reader.read_stage(ins_list[k:froms[j + 1] if j + 1 < len(froms) else len(ins_list)], args)
        kept = _kept(ref, start, end, found)
        stages.append(kept)
        result.launches.extend(kept[2])
        result.findings.extend(found.findings)
    memo[_MEMO] = (ref, stages, names, refs)
    return result


def _edited(text: str, index: LineIndex, memo: dict) -> ExtractResult | None:
    """The launches of `text` when the last text's stages were kept and the edit since
    lies inside one of them (see above); None: read the text again."""
    kept, diff = memo.get(_MEMO), memo.get("diff")
    if kept is None or diff is None or kept[0].text is not diff[0]:
        return None
    ref, stages, names, refs = kept
    old = ref.text
    p, s = diff[1]
    oe = len(old) - s  # the edit replaced old[p:oe]
    d = len(text) - len(old)
    k = bisect.bisect_left(stages, p, key=lambda st: st[0]) - 1  # the last one starting before p
    if k < 0 or stages[k][1] < oe:
        return None
    start, end = stages[k][0], stages[k][1] + d
    if end < len(text) and text[end - 1] != "\n":
        return None
    if d and text.count("\n", p, len(text) - s) != old.count("\n", p, oe) \
            and any(st[4] for st in stages[k + 1:]):
        return None  # lines added or removed above findings that name lines
    read = _read_region(text, index, ref.escape, ref.args, start, end)
    if read is None:
        return None
    found, from_ins = read
    probe = _Reader.__new__(_Reader)
    probe.text, probe.index = text, index
    image, written, name = probe.from_image(from_ins, ref.args)
    here = {written.lower(), image[0].lower()} if image is not None else set()
    # Every name and reference seen is kept (an old one stays: that only reads whole
    # more often).
    if here & names or (name and name in refs):
        return None  # a stage now built from another, or named as one is built from
    refs = refs | here
    names = names | ({name} if name else set())
    ref.text, ref.index = text, index  # every kept host reads the newest text from now on
    new_stage = _kept(ref, start, end, found)
    result = ExtractResult(LaunchList(), [])
    new_stages = stages[:k]
    for st in new_stages:
        result.launches.extend(st[2])
        result.findings.extend(moved(f, 0) for f in st[3])
    new_stages.append(new_stage)
    result.launches.extend(new_stage[2])
    result.findings.extend(found.findings)
    for a, b, items, findings, lines in stages[k + 1:]:
        if d:
            items = [it.again(d, _StageHost(ref, a + d, b + d, n, it.host)) for n, it in enumerate(items)]
            findings = [moved(f, d) for f in findings]
            a, b = a + d, b + d
        result.launches.extend(items)
        result.findings.extend(moved(f, 0) for f in findings)
        new_stages.append((a, b, items, findings, lines))
    memo[_MEMO] = (ref, new_stages, names, refs)
    return result


def _extract(text: str, index: LineIndex, path: str | None, settings) -> ExtractResult:
    return extract_dockerfile(text, index)


def _format():
    from servelint.extract import Format
    return Format("dockerfile", 20, detect, _extract)


FORMAT = _format()
