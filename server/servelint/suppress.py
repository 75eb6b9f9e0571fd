"""Suppression comments.

    # servelint: disable=SL002,SL004 -- reason        (the launch that starts below)
    # servelint: disable-file=SL004 -- reason         (the whole file)

- The comment marker is the format's: `#` in shell, YAML, SGLang config files, Dockerfiles
  and Python, `//` in launch.json (JSONC), the block's language inside a Markdown fence (and
  `<!-- servelint: disable-file=... -->` in the Markdown itself). A directive is a line whose
  text, after indentation, is the marker, optional blanks, then `servelint:`; `servelint:`
  anywhere else on a line is not read.
- `disable` applies to the launches whose anchor (`Launch.anchor`, the line a comment about
  the launch sits above) is the first line below it that is not a comment: several comment
  lines may be stacked above a launch. A directive on the line right after a line continued
  with a backslash is part of that command, not above the next one: it applies to nothing
  and is reported (SL095).
- Codes are exact (`SL002`, case-insensitive) or `all`; no prefixes. An unknown code is
  reported (SL095) and silences nothing.
- A finding is silenced by a launch's directive when it belongs to that launch
  (`launch_index`) or its span lies inside the launch's span.
- A code that silenced nothing is reported (SL094, with a safe fix that removes it), unless
  the settings do not enable that code (its findings would not be shown either way, so
  whether it is needed cannot be told). SL094 and SL095 themselves are silenced only by a
  `disable-file` naming them (not by `all`).

Everything here runs only when the text contains `servelint:` (one substring search), apart
from the code actions (`add_actions`), which look at the lines above each finding's launch.
"""

from __future__ import annotations

import bisect
import re
from typing import Callable, Iterable

from servelint.checks.bad_suppression import CHECK as BAD_CHECK
from servelint.checks.unused_suppression import CHECK as UNUSED_CHECK
from servelint.lazy import LazyPattern, Record, field
from servelint.model import Edit, Finding, Fix, Launch, LineIndex, Span

MARK = "servelint:"
UNUSED = UNUSED_CHECK.code
BAD = BAD_CHECK.code
ALL = "ALL"
REASON = "TODO: reason"  # what the code action writes after `--`, for the user to replace
KINDS = ("disable", "disable-file")

HASH = "#"
SLASHES = "//"
MARKERS = {"shell": HASH, "yaml": HASH, "sglang-config": HASH, "dockerfile": HASH,
           "python": HASH, "launch-json": SLASHES}
# Not "notebook" nor "notebook-cell": a notebook's comments live inside JSON strings, and an
# editor's cell must give what `servelint check` gives for the notebook file.
# Markdown: the fence's language; blocks servelint reads are shell, Python or Dockerfile.
SLASH_INFOS = {"json", "jsonc", "json5"}

# Compiled at their first use (servelint/lazy.py): most texts have no suppression comment.
_CODE = LazyPattern(r"[^,\s]+")
_STARTS = {m: LazyPattern(re.escape(m) + r"[ \t]*servelint:") for m in (HASH, SLASHES)}
_HTML_START = LazyPattern(r"<!--[ \t]*servelint:")
_BODY = LazyPattern(r"[ \t]*([A-Za-z][\w-]*)[ \t]*(=?)")
_QUOTE_PREFIX = LazyPattern(r"[ \t]*(?:>[ \t]?)*[ \t]*")
_INDENT = LazyPattern(r"[ \t]*")


def _lead(raw: str, kind: _Line) -> str:
    """A line's indentation (with its block quote markers when the line is quoted)."""
    m = (_QUOTE_PREFIX if kind.quoted else _INDENT).match(raw)
    assert m is not None  # both patterns match the empty string, so every line
    return m.group(0)


class Code(Record):
    text: str  # upper case, as matched against findings
    written: str
    span: Span
    known: bool = True
    used: bool = False


class Directive(Record):
    kind: str  # "disable" | "disable-file"
    line: int
    span: Span  # the comment, for findings about it
    codes: list[Code]
    codes_end: int  # after the last code: where the code action appends one
    target: int | None = None  # disable: the line of the launches it applies to
    launches: list[int] = field(default_factory=list)


class _Line(Record):
    marker: str | None  # the comment marker there (None: no comments, e.g. a notebook)
    html: bool = False  # Markdown outside a fence: `<!-- -->`
    quoted: bool = False  # inside a block quote: lines start with `>`


class Suppressions:
    """The suppression comments of one document (parsed on first use)."""

    def __init__(self, text: str, index: LineIndex, fmt: str | None):
        self.text = text
        self.index = index
        self.fmt = fmt
        self.present = MARK in text
        self._blocks = None
        self._directives: list[Directive] | None = None
        self._targets: dict[int, list[Directive]] | None = None
        self.problems: list[Finding] = []
        self._after: dict[int, int] = {}  # comment line -> the first non-comment line below

    # --- lines and comment markers ----------------------------------------------------

    def line_text(self, line: int) -> str:
        return self.text[self.index.line_start(line):self.index.line_end(line)].rstrip("\r")

    def _markdown_blocks(self):
        if self._blocks is None:
            from servelint.extract.markdown import blocks
            self._blocks = [(b.start, b.end, b.info, b.quoted) for b in blocks(self.text)]
        return self._blocks

    def kind_of(self, line: int) -> _Line:
        if self.fmt == "markdown":
            at = self.index.line_start(line)
            for start, end, info, quoted in self._markdown_blocks():
                if start <= at < end:
                    return _Line(SLASHES if info in SLASH_INFOS else HASH, quoted=quoted)
            return _Line(None, html=True)
        return _Line(MARKERS.get(self.fmt or ""))

    def _content(self, line: int, kind: _Line) -> tuple[str, int]:
        """The line without its indentation (and block quote markers), and where it starts."""
        raw = self.line_text(line)
        cut = len(_lead(raw, kind))
        return raw[cut:], cut

    def is_comment(self, line: int) -> bool:
        kind = self.kind_of(line)
        if kind.marker is None:
            return bool(kind.html) and self._content(line, kind)[0].startswith("<!--")
        return self._content(line, kind)[0].startswith(kind.marker)

    def continued(self, line: int) -> bool:
        """The line before `line` ends with a line-continuing backslash."""
        if line == 0:
            return False
        prev = self.line_text(line - 1)
        trail = len(prev) - len(prev.rstrip("\\"))
        return trail % 2 == 1 and not self.is_comment(line - 1)

    # --- parsing ----------------------------------------------------------------------

    def directives(self) -> list[Directive]:
        if self._directives is None:
            self._directives = self._parse() if self.present else []
        return self._directives

    def _parse(self) -> list[Directive]:
        out: list[Directive] = []
        text, index = self.text, self.index
        seen: set[int] = set()
        data = self._data_lines()
        pos = text.find(MARK)
        while pos != -1:
            line = index.line_of(pos)
            if line not in seen:
                seen.add(line)
                d = None if line in data else self._directive(line, pos)
                if d is not None:
                    out.append(d)
            pos = text.find(MARK, pos + len(MARK))
        return out

    def _directive(self, line: int, pos: int) -> Directive | None:
        kind = self.kind_of(line)
        content, cut = self._content(line, kind)
        ls = self.index.line_start(line)
        if kind.html:
            m = _HTML_START.match(content)
        elif kind.marker is not None:
            m = _STARTS[kind.marker].match(content)
        else:
            return None
        if m is None or ls + cut + m.end() != pos + len(MARK):
            return None  # not a comment line, or `servelint:` is not what the comment starts with
        body_start = ls + cut + m.end()
        body_end = ls + len(self.line_text(line))
        if kind.html:
            close = self.text.rfind("-->", body_start, body_end)
            if close == -1:
                self._bad(Span(ls + cut, body_end), "this HTML comment is not closed on its "
                          "line: write <!-- servelint: disable-file=CODE -- reason -->")
                return None
            body_end = close
        # The comment only: an HTML comment can share its line with Markdown text after it.
        comment = Span(ls + cut, body_end + 3 if kind.html else ls + len(self.line_text(line)))
        body = self.text[body_start:body_end]
        m = _BODY.match(body)
        if m is None or m.group(1).lower() not in KINDS or not m.group(2):
            word = m.group(1) if m else body.strip()[:20]
            self._bad(comment, f"servelint cannot read this comment ('{word}'): write "
                      "'servelint: disable=CODE -- reason' above a launch or "
                      "'servelint: disable-file=CODE -- reason'")
            return None
        directive = m.group(1).lower()
        rest_start = body_start + m.end()
        dash = self.text.find("--", rest_start, body_end)
        codes_stop = body_end if dash == -1 else dash
        codes: list[Code] = []
        for cm in _CODE.finditer(self.text, rest_start, codes_stop):
            codes.append(Code(cm.group(0).upper(), cm.group(0), Span(cm.start(), cm.end())))
        if not codes:
            self._bad(comment, f"this suppression names no code: write "
                      f"'servelint: {directive}=CODE -- reason' (CODE: SL002, or all)")
            return None
        d = Directive(directive, line, comment, codes, codes[-1].span.end)
        if directive == "disable":
            if kind.html:
                self._bad(comment, "in Markdown text only disable-file is read; to silence one "
                          "launch, write the comment inside its code block, above the command")
                return None
            if self.continued(line):
                self._bad(comment, "this suppression follows a line continued with a backslash, "
                          "so it is part of that command and applies to nothing: put it above "
                          "the whole command")
                return None
            below = self._after_comments(line + 1)
            last = len(self.index.starts) - 1
            if below <= last and self.line_text(below).strip(" \t>"):
                d.target = below
        return d

    def _after_comments(self, line: int) -> int:
        """The first line at or after `line` that is not a comment line. Remembered for
        every comment line passed, so a run of n comment lines costs n, not n squared (4,000
        suppression lines in a row took 10 s)."""
        memo = self._after
        passed = []
        last = len(self.index.starts) - 1
        while line <= last and line not in memo and self.is_comment(line):
            passed.append(line)
            line += 1
        end = memo.get(line, line)
        for n in passed:
            memo[n] = end
        return end

    def _bad(self, span: Span, message: str) -> None:
        self.problems.append(BAD_CHECK.finding(message, span))

    # --- applying ---------------------------------------------------------------------

    def apply(self, findings: list[Finding], launches: list[Launch], wants: Callable[[str], bool],
              known: Callable[[str], bool]) -> list[Finding]:
        """`findings` without the silenced ones, plus SL094 for each code that silenced
        nothing and SL095 for each comment servelint cannot use."""
        directives = self.directives()
        if not directives and not self.problems:
            return findings
        by_line: dict[int, list[int]] = {}
        for n, launch in enumerate(launches):
            by_line.setdefault(self.index.line_of(launch.anchor), []).append(n)
        self._below_cache: dict[int, list[int]] = {}
        file_codes: dict[str, list[Code]] = {}
        launch_codes: dict[int, dict[str, list[Code]]] = {}
        for d in directives:
            for c in d.codes:
                if c.text != ALL and not known(c.text):
                    c.known = False
                    self.problems.append(BAD_CHECK.finding(
                        f"unknown code '{c.written}' in this suppression: servelint has no such "
                        "rule, so it silences nothing (codes are exact, like SL002, or all; "
                        "a reason goes after --)", c.span))
            good = [c for c in d.codes if c.known]
            if d.kind == "disable-file":
                for c in good:
                    file_codes.setdefault(c.text, []).append(c)
            elif d.target is not None:
                d.launches = by_line.get(d.target, []) + [
                    n for n in self._starting_in(d.target, launches)
                    if n not in by_line.get(d.target, [])]
                for n in d.launches:
                    slot = launch_codes.setdefault(n, {})
                    for c in good:
                        slot.setdefault(c.text, []).append(c)
        # A finding with no launch_index (an extractor's) belongs to the launch whose span
        # holds it: the nearest launch with a suppression that starts before it.
        starts = sorted((launches[n].span.start, n) for n in launch_codes)
        out = []
        for f in findings:
            hits = _hits(file_codes, f.code)
            owner = f.launch_index
            if owner is None and starts:
                k = bisect.bisect_right(starts, (f.span.start, len(launches))) - 1
                if k >= 0 and _inside(f.span, launches[starts[k][1]].span):
                    owner = starts[k][1]
            if owner is not None and owner in launch_codes:
                hits.extend(_hits(launch_codes[owner], f.code))
            if hits:
                for c in hits:
                    c.used = True
                continue
            out.append(f)
        extra = list(self.problems)
        for d in directives:
            unused = [c for c in d.codes if c.known and not c.used and c.text not in (UNUSED, BAD)
                      and (c.text == ALL or wants(c.text))]
            keep = [c for c in d.codes if c not in unused]
            below = None
            if unused and d.kind == "disable" and not d.launches:
                below = self._misplaced(d, unused, out, launches)
            for c in unused:
                extra.append(self._unused(d, c, keep, below, launches))
        meta = {UNUSED: file_codes.get(UNUSED, []), BAD: file_codes.get(BAD, [])}
        for f in extra:
            if meta.get(f.code):
                for c in meta[f.code]:
                    c.used = True
                continue
            out.append(f)
        return out

    def _unused(self, d: Directive, c: Code, keep: list[Code], below: tuple[int, list[str]] | None,
                launches: list[Launch]) -> Finding:
        name = "anything" if c.text == ALL else c.written
        if d.kind == "disable-file":
            message = "unused suppression: nothing is reported in this file" if c.text == ALL \
                else f"unused suppression: {c.written} is not reported anywhere in this file"
        elif d.target is None:
            message = f"unused suppression of {name}: no launch starts right below this comment " \
                      "(a blank line or the end of the file follows it)"
        elif not d.launches:
            message = f"unused suppression of {name}: no launch starts on the line below"
            nxt = self._next_launch(d.line, launches)
            if self.fmt == "yaml" and nxt is not None and launches[nxt].host.name != "yaml":
                message += " (in a literal block script, the comment goes inside the script, " \
                           "above the command)"
        elif c.text == ALL:
            message = "unused suppression: nothing is reported on the launch below"
        else:
            message = f"unused suppression: {c.written} is not reported on the launch below"
        if below is not None:
            # Misplaced rather than unused: what it names is reported on the next launch.
            n, codes = below
            line = self.index.line_of(launches[n].anchor) + 1
            message += (f"; {', '.join(codes)} is reported on the launch below (line {line}): if "
                        f"this comment is meant for it, put it right above line {line}. Fix-all "
                        "leaves both the comment and those findings to you")
            fixes = []
            move = self._move(d, launches[n])
            if move is not None:
                fixes.append(move)
            fixes.append(Fix("Remove the suppression comment", [Edit(self._removal(d), "")],
                             safe=False))
            return UNUSED_CHECK.finding(message, c.span, fixes=fixes, unnecessary=True)
        if keep:
            i = d.codes.index(c)
            if i > 0:
                cut = Span(d.codes[i - 1].span.end, c.span.end)
            else:
                cut = Span(c.span.start, d.codes[1].span.start)
            fix = Fix(f"Remove {c.written} from the suppression", [Edit(cut, "")], preferred=True)
        else:
            fix = Fix("Remove the unused suppression comment", [Edit(self._removal(d), "")],
                      preferred=True)
        return UNUSED_CHECK.finding(message, c.span, fixes=[fix], unnecessary=True)

    # --- what a comment is above ----------------------------------------------------------

    def _next_launch(self, line: int, launches: list[Launch]) -> int | None:
        """The launch whose anchor is the nearest below `line` (the first in the file order
        among equals)."""
        best: tuple[int, int] | None = None
        for n, launch in enumerate(launches):
            at = self.index.line_of(launch.anchor)
            if at > line and (best is None or at < best[0]):
                best = (at, n)
        return None if best is None else best[1]

    def _misplaced(self, d: Directive, unused: list[Code], findings: list[Finding],
                   launches: list[Launch]) -> tuple[int, list[str]] | None:
        """A `disable` comment that applies to no launch while a code it names is reported on
        the launch below it was put in the wrong place, not forgotten. Returns that launch
        and the codes reported there, and makes those findings' fixes unsafe: fix-all must
        not repair what the user meant to silence (nor, having repaired it, find the comment
        unused and remove it)."""
        n = self._next_launch(d.line, launches)
        if n is None:
            return None
        span = launches[n].span
        names = {c.text for c in unused}
        hit: list[Finding] = []
        for f in findings:
            if f.code in (UNUSED, BAD) or not (ALL in names or f.code in names):
                continue
            owner = f.launch_index
            if owner is None and _inside(f.span, span):
                owner = n
            if owner == n:
                hit.append(f)
        if not hit:
            return None
        for f in hit:
            f.fixes = [Fix(x.title, x.edits, preferred=x.preferred, safe=False) for x in f.fixes]
        codes = sorted({f.code for f in hit})
        return n, codes

    def _move(self, d: Directive, launch: Launch) -> Fix | None:
        """Move the comment line `d` to right above the launch (unsafe: it changes what is
        silenced, so only a person applies it)."""
        line = self.index.line_of(launch.anchor)
        if line <= d.line:
            return None
        kind = self.kind_of(line)
        if kind.marker is None:
            return None
        raw = self.line_text(d.line)
        comment = raw[len(_lead(raw, self.kind_of(d.line))):]
        start = self.index.line_start(line)
        indent = _lead(self.line_text(line), kind)
        insert = Edit(Span(start, start), f"{indent}{comment}{self._newline(line)}")
        return Fix(f"Move this suppression above line {line + 1}",
                   [Edit(self._removal(d), ""), insert], preferred=True, safe=False)

    def _starting_in(self, target: int, launches: list[Launch]) -> list[int]:
        """Launches that start inside the construct that starts on line `target`, beyond
        those anchored on it: in YAML, the value of a key written on the lines below it (a
        block list `command:` + `- python3`, a `run: |` script, `args:` + `- |`), in
        Python, the statement (`cmd = [` with the list's words on the lines below)."""
        cache = self._below_cache
        if target in cache:
            return cache[target]
        found: list[int] = []
        if self.fmt == "yaml":
            block = _yaml_value(self, target)
            if block is not None:
                lo, hi = block
                found = [n for n, l in enumerate(launches)
                         if lo <= l.span.start < hi or lo <= l.anchor < hi]
        elif self.fmt == "python":
            stmt = _python_statement(self.text, self.index, target)
            if stmt is not None:
                lo, hi = stmt
                found = [n for n, l in enumerate(launches) if lo <= l.entry.span.start < hi]
        cache[target] = found
        return found

    def _data_lines(self) -> set[int]:
        """Lines a suppression-looking comment on which is data, not a comment: in Python,
        the lines inside a string (a docstring, a triple-quoted script). Read with Python's
        own tokenizer; a file it cannot read keeps every line."""
        if self.fmt == "shell":
            return _heredoc_lines(self.text, self.index)
        if self.fmt in ("yaml", "sglang-config"):
            return _yaml_scalar_lines(self.text)
        if self.fmt != "python":
            return set()
        import io
        import tokenize
        inside: set[int] = set()
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                    inside.update(range(tok.start[0], tok.end[0]))  # 1-based: the lines after the first
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return set()
        return inside

    def _removal(self, d: Directive) -> Span:
        """What removing a suppression comment removes: its whole line when nothing else is
        on it (but indentation or a block quote's `>`), else the comment and the spaces
        after it only (Markdown text after `<!-- ... -->` stays)."""
        start, end = self.index.line_start(d.line), self.index.line_end(d.line)
        before = self.text[start:d.span.start]
        after = self.text[d.span.end:end].rstrip("\r")
        if not after.strip() and not before.strip(" \t>"):
            return self._whole_line(d.line)
        cut = d.span.end + (len(after) - len(after.lstrip(" \t")) if after.strip() else len(after))
        return Span(d.span.start, cut)

    def _whole_line(self, line: int) -> Span:
        start = self.index.line_start(line)
        end = self.index.line_end(line)
        if end < len(self.text):
            return Span(start, end + 1)
        return Span(start - 1 if start > 0 else start, end)  # the last line: its newline before

    # --- code actions -----------------------------------------------------------------

    def add_actions(self, findings: Iterable[Finding], launches: list[Launch]) -> None:
        """Append to each finding the unsafe fixes "Disable CODE for this launch" and "...
        for this file" (never applied by fix-all or --fix: they hide, they do not repair)."""
        if MARKERS.get(self.fmt or "") is None and self.fmt != "markdown":
            return
        launch_actions: dict[tuple[int, str], Fix | None] = {}
        file_actions: dict[str, Fix | None] = {}
        for f in findings:
            if f.code in (UNUSED, BAD):
                continue
            n = f.launch_index
            if n is None:
                n = next((k for k, l in enumerate(launches) if _inside(f.span, l.span)), None)
            if n is not None and 0 <= n < len(launches) and launches[n].kind != "config":
                key = (self.index.line_of(launches[n].anchor), f.code)
                if key not in launch_actions:
                    launch_actions[key] = self._launch_action(key[0], f.code)
                action = launch_actions[key]
                if action is not None:
                    f.fixes.append(action)
            if f.code not in file_actions:
                file_actions[f.code] = self._file_action(f.code)
            action = file_actions[f.code]
            if action is not None:
                f.fixes.append(action)

    def _launch_action(self, line: int, code: str) -> Fix | None:
        kind = self.kind_of(line)
        if kind.marker is None:
            return None
        title = f"Disable {code} for this launch"
        if self._targets is None:
            self._targets = {}
            for d in self.directives():
                if d.kind == "disable" and d.target is not None:
                    self._targets.setdefault(d.target, []).append(d)
        above = self._targets.get(line, [])
        if above:
            d = max(above, key=lambda d: d.line)  # the one nearest the launch
            if any(c.text in (code, ALL) for c in d.codes):
                return None
            return Fix(title, [Edit(Span(d.codes_end, d.codes_end), f",{code}")], safe=False)
        start = self.index.line_start(line)
        raw = self.line_text(line)
        indent = _lead(raw, kind)
        new = f"{indent}{kind.marker} servelint: disable={code} -- {REASON}{self._newline(line)}"
        return Fix(title, [Edit(Span(start, start), new)], safe=False)

    def _file_action(self, code: str) -> Fix | None:
        title = f"Disable {code} for this file"
        existing = [d for d in self.directives() if d.kind == "disable-file"]
        if existing:
            d = existing[0]
            if any(c.text in (code, ALL) for c in d.codes):
                return None
            return Fix(title, [Edit(Span(d.codes_end, d.codes_end), f",{code}")], safe=False)
        line = self._file_line()
        start = self.index.line_start(line) if line < len(self.index.starts) else len(self.text)
        if start == 0 and self.text.startswith("\ufeff"):
            start = 1  # after the byte order mark, which must stay first
        nl = self._newline(0)
        if self.fmt == "markdown":
            new = f"<!-- servelint: disable-file={code} -- {REASON} -->{nl}"
        else:
            new = f"{MARKERS[self.fmt or '']} servelint: disable-file={code} -- {REASON}{nl}"
        if start == len(self.text) and self.text and not self.text.endswith("\n"):
            new = nl + new.rstrip("\r\n")
        return Fix(title, [Edit(Span(start, start), new)], safe=False)

    def _file_line(self) -> int:
        """Where a disable-file comment is inserted: the top, after what must stay first
        (a shebang, a Python coding line, Dockerfile parser directives, Markdown front matter)."""
        last = len(self.index.starts) - 1
        line = 0
        first = self.line_text(0)
        if self.fmt == "markdown":
            if first.strip() == "---":
                for k in range(1, last + 1):
                    if self.line_text(k).strip() in ("---", "..."):
                        return k + 1
            return 0
        if first.startswith("#!"):
            line = 1
        if self.fmt == "python":
            while line <= min(last, 1) and re.match(r"[ \t\f]*#.*?coding[:=]", self.line_text(line)):
                line += 1
        elif self.fmt == "dockerfile":
            while line <= last and re.match(r"#[ \t]*[A-Za-z]+[ \t]*=", self.line_text(line)):
                line += 1
        return line

    def _newline(self, line: int) -> str:
        end = self.index.line_end(min(line, len(self.index.starts) - 1))
        return "\r\n" if end > 0 and self.text[end - 1:end] == "\r" else "\n"


_HEREDOC = LazyPattern(r"<<(-?)[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z_][\w.-]*))")


def _yaml_scalar_lines(text: str) -> set[int]:
    """The lines (0-based, as `Suppressions` counts them) inside YAML block scalars (`|`,
    `>`) and quoted scalars that go on over several lines, where a `# servelint:` line is
    text (a ConfigMap's note), not a comment. A scalar that names `sglang` is a script
    servelint reads (`args: [bash, -c, |...]`): a comment there is the script's own, and
    suppresses as in a shell file (docs/safety.md). Read with PyYAML's scanner up to
    the first place it cannot read (a Helm template): the lines after that keep being read
    as comments."""
    from servelint.lazy import yaml
    inside: set[int] = set()
    try:
        for tok in yaml.scan(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(tok, yaml.ScalarToken) and tok.style in ("|", ">", "'", '"') \
                    and tok.end_mark.line > tok.start_mark.line and "sglang" not in tok.value:
                last = tok.end_mark.line if tok.end_mark.column > 0 else tok.end_mark.line - 1
                inside.update(range(tok.start_mark.line + 1, last + 1))
    except yaml.YAMLError:
        pass
    return inside


def _heredoc_lines(text: str, index: LineIndex) -> set[int]:
    """The lines of a shell script's here-documents (`cat <<EOF` ... `EOF`): their text is
    data for the command that reads it, so a `# servelint:` line there is no suppression.
    `<<-` strips leading tabs from the closing word; `<<<` (a here-string) opens none."""
    if "<<" not in text:
        return set()
    out: set[int] = set()
    line, n = 0, len(index.starts)
    while line < n:
        raw = text[index.line_start(line):index.line_end(line)].rstrip("\r")
        opened = [] if raw.lstrip().startswith("#") else [
            (m.group(1) == "-", m.group(2) or m.group(3) or m.group(4))
            for m in _HEREDOC.finditer(raw) if raw[max(0, m.start() - 1):m.start()] != "<"]
        line += 1
        for strip, word in opened:  # bodies follow one after another, in order
            while line < n:
                body = text[index.line_start(line):index.line_end(line)].rstrip("\r")
                if (body.lstrip("\t") if strip else body) == word:
                    line += 1
                    break
                out.add(line)
                line += 1
    return out


def _hits(codes: dict[str, list[Code]], code: str) -> list[Code]:
    return codes.get(code, []) + codes.get(ALL, [])


def _inside(span: Span, outer: Span) -> bool:
    return outer.start <= span.start and span.end <= outer.end


# --- constructs that start on a line -----------------------------------------------------------

_YAML_PROPS = LazyPattern(r"(?:[|>](?:[-+]?[1-9]?|[1-9][-+])|&\S+|![^\s]*)")
_SEQ_HEADER = LazyPattern(r"-(?:[ \t]+(?:[|>](?:[-+]?[1-9]?|[1-9][-+])|&\S+|![^\s]*))*[ \t]*(?:#.*)?")


def _yaml_key(content: str) -> int | None:
    """Where the value of a `key:` line starts (after its colon), or None when `content`
    (a line without indentation or `- `) is not a mapping key."""
    if not content or content[0] in "#[{":
        return None
    if content[0] in "\"'":
        q = content[0]
        i = 1
        while i < len(content):
            if content[i] == "\\" and q == '"':
                i += 2
                continue
            if content[i] == q:
                if q == "'" and content[i + 1:i + 2] == "'":
                    i += 2
                    continue
                break
            i += 1
        rest = content[i + 1:].lstrip(" \t")
        return len(content) - len(rest) + 1 if rest.startswith(":") else None
    m = re.search(r":(?=[ \t]|$)", content)
    if m is None or " #" in content[:m.start()]:
        return None
    return m.end()


def _yaml_value(sup: Suppressions, target: int) -> tuple[int, int] | None:
    """[start, end) offsets of the value of the key on line `target` when that value is
    written on the lines below (nothing but a block scalar indicator, an anchor or a tag
    after the colon) and is not a mapping (a list of words, or a scalar)."""
    raw = sup.line_text(target)
    m = re.match(r"[ \t]*(?:-[ \t]+)*", raw)
    assert m is not None
    col = m.end()
    after = _yaml_key(raw[col:])
    if after is None:
        return None
    rest = raw[col + after:]
    cut = re.search(r"(?:^|[ \t])#", rest)
    if cut:
        rest = rest[:cut.start()]
    if any(not _YAML_PROPS.fullmatch(w) for w in rest.split()):
        return None  # a value on the key's line (`command: [bash, -c]`, `image: x`)
    last = len(sup.index.starts) - 1
    line = target + 1
    first = None
    end_line = target
    while line <= last:
        text = sup.line_text(line)
        body = text.lstrip(" \t")
        if not body or body.startswith("#"):
            line += 1
            continue
        indent = len(text) - len(body)
        if indent > col or (indent == col and body.startswith("-") and body[1:2] in ("", " ", "\t")):
            if first is None:
                first = body
            end_line = line
            line += 1
            continue
        break
    if first is None:
        return None
    if any(w[0] in "|>" for w in rest.split()):
        return sup.index.line_start(target + 1), sup.index.line_end(end_line)  # a block scalar
    head = re.match(r"(?:-[ \t]+)*", first)
    assert head is not None
    if _yaml_key(first[head.end():]) is not None and not _SEQ_HEADER.fullmatch(first):
        return None  # a mapping (`containers:` + `- name: x`, `spec:`): too wide for one comment
    return sup.index.line_start(target + 1), sup.index.line_end(end_line)


def _python_statement(text: str, index: LineIndex, line: int) -> tuple[int, int] | None:
    """[start, end) offsets of the simple statement (or a compound statement's header)
    that starts on `line`, read with `tokenize` from that line on; None when the lines do
    not tokenize as a statement start."""
    import io
    import tokenize
    start = index.line_start(line)
    reader = io.StringIO(text[start:]).readline
    depth = 0
    try:
        for tok in tokenize.generate_tokens(reader):
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or (
                    tok.type == tokenize.OP and tok.string == ";" and depth == 0):
                row, col = tok.start
                if line + row - 1 >= len(index.starts):
                    return start, len(text)
                return start, index.line_start(line + row - 1) + col
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return None
