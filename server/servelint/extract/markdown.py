"""Markdown: launches in fenced code blocks.

- Fences are ``` or ~~~ (three or more), at any indentation (a fence inside a list item
  is indented), closed by a fence of the same character at least as long; a longer outer
  fence keeps inner fences as its content, as CommonMark does. An unclosed fence runs to
  the end of the document.
- Shell blocks: info string bash, sh, shell, zsh, ksh, console, shell-session,
  sh-session, terminal, or no info string at all (a launch is recognised by its first
  word, as in a script, so prose in an unlabeled block is not read as one). Each block
  is parsed on its own, so an unclosed quote in one block cannot swallow the next.
- Prompts: in console/shell-session/terminal blocks, and in any shell block that uses `$ `
  prompts, only prompt lines (`$ `, `# `, `% `, `user@host:~$ `, `(venv) $ `) and the
  lines their backslash continues are commands; output lines are not. The prompt itself
  is not part of the command.
- Placeholders: `<your-model>` (a word in angle brackets, no space after `<`), `<...>`,
  `...` alone, and (read by the shell reader, as in scripts) `[options]`-like bracketed
  words stand for arguments the reader fills in, not shell syntax: each is a placeholder
  (unknown, and nothing about the launch is certain around it).
- Python blocks (python, py, python3, ipython) are read by the Python launcher reader,
  Dockerfile blocks (dockerfile, docker, containerfile) by the Dockerfile reader, with
  offsets mapped into the document.

Every block is read from a copy of the document with everything outside its commands
blanked to spaces (newlines kept), so offsets are the document's own and line-based
fixes edit the Markdown directly.
"""

from __future__ import annotations

import os
import re

from servelint.extract.common import ExtractResult, script_launches
from servelint.extract.shell import PLACEHOLDER, OffsetMap, ShellHost
from servelint.lintcache import LaunchList, Moved, extract_memo, fingerprint, moved, raw_start
from servelint.model import LINE_READS, LineIndex, Span

FENCE = re.compile(r"^([ \t]*(?:>[ \t]?)*[ \t]*)(`{3,}|~{3,})(.*)$")
SHELL_INFO = {"bash", "sh", "shell", "zsh", "ksh", "console", "shell-session", "sh-session",
              "shellsession", "terminal", "shellscript", "bash-session", "zsh-session", ""}
CONSOLE_INFO = {"console", "shell-session", "sh-session", "shellsession", "terminal",
                "bash-session", "zsh-session"}
PYTHON_INFO = {"python", "py", "python3", "ipython", "ipython3"}
DOCKER_INFO = {"dockerfile", "docker", "containerfile"}
PROMPT = re.compile(r"^([ \t]*(?:\([\w.\-]+\)[ \t]+)?(?:[\w.\-]+@[\w.\-]+(?::[^\s$#%]*)?)?[$#%][ \t])")
DOLLAR_PROMPT = re.compile(r"^[ \t]*(?:\([\w.\-]+\)[ \t]+)?(?:[\w.\-]+@[\w.\-]+(?::[^\s$#%]*)?)?\$[ \t]")
ELLIPSIS = re.compile(r"(?<!\S)(\.\.\.|…)(?!\S)")


class Block:
    def __init__(self, info: str, indent: int, start: int, end: int, quoted: bool = False):
        self.info = info  # the first word of the info string, lower case
        self.indent = indent  # columns of the opening fence's indentation
        self.start = start  # document offset of the first content line
        self.end = end  # document offset after the last content line
        self.quoted = quoted  # inside a block quote: content lines start with `>`


_INFO_END = re.compile(r"[\s,{]")


def _info_word(info: str) -> str:
    info = info.strip()
    if info.startswith("{"):  # {bash}, {.bash title="x"}
        info = info.strip("{}").lstrip(".")
    word = _INFO_END.split(info, 1)[0] if info else ""
    return word.lower().lstrip(".")


def _fence_lines(text: str) -> list[int]:
    """The start of every line holding ``` or ~~~: only such lines change what blocks()
    reads, and str.find passes over the others (matching each of 24,000 lines took 25 ms
    an edit)."""
    starts = set()
    for mark in ("```", "~~~"):
        i = text.find(mark)
        while i != -1:
            starts.add(text.rfind("\n", 0, i) + 1)
            nl = text.find("\n", i)
            if nl == -1:
                break
            i = text.find(mark, nl + 1)
    return sorted(starts)


def blocks(text: str) -> list[Block]:
    out = []
    n = len(text)
    open_fence = None  # (char, length, info, indent, content start, quoted)
    for pos in _fence_lines(text):
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        line = text[pos:end].rstrip("\r")
        m = FENCE.match(line)
        if open_fence is None:
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                lead = m.group(1)
                open_fence = (m.group(2)[0], len(m.group(2)), _info_word(m.group(3)),
                              len(lead), end + 1, ">" in lead)
        elif m and m.group(2)[0] == open_fence[0] and len(m.group(2)) >= open_fence[1] \
                and not m.group(3).strip():
            out.append(Block(open_fence[2], open_fence[3], min(open_fence[4], n), pos,
                             open_fence[5]))
            open_fence = None
    if open_fence is not None:
        out.append(Block(open_fence[2], open_fence[3], min(open_fence[4], n), n, open_fence[5]))
    return out


def _blocks_kept(text: str, memo: dict | None) -> list[Block]:
    """blocks(text), taken from the last text's when the edit since (the engine's
    `diff`) touched no line holding a fence mark, before or after: the fence lines are
    then the same lines, read the same way, and every block is the last one's, moved by
    the edit's length where it lies after it (24,000 lines: 3,000 fence lines not read
    again)."""
    if memo is None:
        return blocks(text)
    kept, diff = memo.get("markdown-blocks"), memo.get("diff")
    found = None
    if kept is not None and diff is not None and kept[0] is diff[0]:
        old, was = kept
        p, s = diff[1]
        oe, ne, d = len(old) - s, len(text) - s, len(text) - len(old)
        a = text.rfind("\n", 0, p) + 1  # the edit's first line (the same in both texts)
        b_old, b_new = old.find("\n", oe), text.find("\n", ne)
        b_old = len(old) if b_old == -1 else b_old
        b_new = len(text) if b_new == -1 else b_new
        if not any(m in old[a:b_old] or m in text[a:b_new] for m in ("```", "~~~")):
            found = []
            for bl in was:
                if bl.end < a:
                    found.append(bl)
                elif bl.start > b_old:
                    found.append(Block(bl.info, bl.indent, bl.start + d, bl.end + d, bl.quoted))
                else:  # the edit is inside it
                    found.append(Block(bl.info, bl.indent, bl.start, bl.end + d, bl.quoted))
    if found is None:
        found = blocks(text)
    memo["markdown-blocks"] = (text, found)
    return found


def _blank(s: str) -> str:
    return re.sub(r"[^\n]", " ", s)


def _cut(line: str, block: Block) -> int:
    """How much of a content line is the container's, not the code's: the fence's
    indentation (as CommonMark removes it), or the block quote markers."""
    if block.quoted:
        m = re.match(r"[ \t]*(?:>[ \t]?)*", line)
        return m.end() if m else 0
    cut = 0
    while cut < min(block.indent, len(line)) and line[cut] in " \t":
        cut += 1
    return cut


class View:
    """A block's code without its container, each character mapped to the document."""

    def __init__(self):
        self.chars: list[str] = []
        self.table: list[int] = []
        self.unknown: list[Span] = []  # placeholders: one word, value unknown
        self.splats: list[Span] = []  # `...`: any number of words

    def add(self, s: str, at: int) -> None:
        self.chars.extend(s)
        self.table.extend(range(at, at + len(s)))

    @property
    def text(self) -> str:
        return "".join(self.chars)


def shell_view(text: str, block: Block) -> View:
    """The block's commands, with prompts and output blanked, as a script."""
    body = text[block.start:block.end]
    lines = body.split("\n")
    contents = [line[_cut(line, block):] for line in lines]
    console = block.info in CONSOLE_INFO or any(DOLLAR_PROMPT.match(c) for c in contents)
    view = View()
    continuing = False
    pos = block.start
    for k, line in enumerate(lines):
        cut = _cut(line, block)
        keep = line[cut:]
        if console:
            m = PROMPT.match(keep)
            if m and not continuing:
                keep = " " * len(m.group(1)) + keep[len(m.group(1)):]
            elif not continuing:
                keep = _blank(keep)
            continuing = keep.strip() != "" and keep.rstrip().endswith("\\")
        else:
            m = DOLLAR_PROMPT.match(keep)
            if m and not continuing:
                keep = " " * m.end() + keep[m.end():]
            continuing = keep.rstrip().endswith("\\")
        base = pos + cut
        quoted = _quote_ranges(keep)

        def placeholder(mm, base=base, quoted=quoted):
            a, b = mm.span()
            view.unknown.append(Span(base + a, base + b))
            width = b - a
            if any(qa < a < qb for qa, qb in quoted) or width < 4:
                return "$" + "_" * (width - 1)
            return '"$' + "_" * (width - 3) + '"'

        keep = PLACEHOLDER.sub(placeholder, keep)
        if keep.strip() == "..." and k + 1 < len(lines) and \
                lines[k + 1][_cut(lines[k + 1], block):].lstrip().startswith("-"):
            # A line of `...` between option lines elides options: the command goes on.
            at = keep.index("...")
            view.splats.append(Span(base + at, base + at + 3))
            keep = keep[:at] + "$_\\" + keep[at + 3:]
            continuing = True
        for mm in ELLIPSIS.finditer(keep):
            view.splats.append(Span(base + mm.start(), base + mm.end()))
        keep = ELLIPSIS.sub(lambda mm: "$" + "_" * (len(mm.group(0)) - 1), keep)
        view.add(keep, base)
        if k + 1 < len(lines):
            view.add("\n", base + len(keep))
        pos += len(line) + 1
    view.table.append(block.end)
    return view


def _quote_ranges(line: str) -> list[tuple[int, int]]:
    """Rough ranges of quoted text on one line (for placeholders inside quotes)."""
    out = []
    i = 0
    while i < len(line):
        c = line[i]
        if c in "'\"":
            j = line.find(c, i + 1)
            if j < 0:
                break
            out.append((i, j))
            i = j + 1
            continue
        i += 1
    return out


def _dedented(text: str, block: Block) -> tuple[str, list[int]]:
    """A block's content without its container, with a table to the document."""
    view = View()
    pos = block.start
    lines = text[block.start:block.end].split("\n")
    for k, line in enumerate(lines):
        cut = _cut(line, block)
        view.add(line[cut:], pos + cut)
        if k + 1 < len(lines):
            view.add("\n", pos + len(line))
        pos += len(line) + 1
    view.table.append(block.end)
    return view.text, view.table


def extract_markdown(text: str, index: LineIndex | None = None, settings=None) -> ExtractResult:
    result = ExtractResult([], [])
    if "sglang" not in text:
        return result
    index = index or LineIndex(text)
    # With a LintCache, a shell block's launches are kept by the block's text and moved to
    # where the block now starts (lintcache.py): an edit re-reads only the blocks it touched.
    memo = extract_memo()
    old = memo.get("markdown-shell", {}) if memo is not None else {}
    kept: dict[tuple, tuple] = {}
    # One host per quote context and document, kept between lints and pointed at the
    # newest text (as extract/shell.py's windows): a kept block's launches are the very
    # objects of the last lint where the block did not move, copied when read where it did
    # (lintcache.Moved), and no host holds an old text.
    hosts: dict[str, ShellHost] = memo.setdefault("markdown-hosts", {}) if memo is not None else {}
    for kept_host in hosts.values():
        kept_host.text, kept_host.index, kept_host.segments = text, index, {}
    items: list = []  # the launches in document order (Launch or lintcache.Moved)
    for block in _blocks_kept(text, memo):
        body = text[block.start:block.end]
        if "sglang" not in body:
            continue
        key = (body, block.info, block.indent, block.quoted)
        hit = old.get(key) if block.info in SHELL_INFO else None
        if hit is not None and hit[3] is not None and hit[3] != index.line_of(block.start):
            hit = None  # its findings name line numbers, and the block moved to other lines
        if hit is not None:
            kept[key] = hit
            was, launches, findings, _ = hit
            d = block.start - was
            if d == 0:
                items.extend(launches)
            else:
                items.extend(Moved(launch, d, launch.host) for launch in launches)
            if findings:
                result.findings.extend(moved(f, d) for f in findings)
            continue
        reads = LINE_READS[0]
        if block.info in SHELL_INFO:
            view = shell_view(text, block)
            found = script_launches(view.text, view.table, 0, text, index, "")
            for launch in found.launches:
                for tok in [launch.entry] + launch.tokens:
                    if any(tok.span.overlaps(p) for p in view.unknown):
                        tok.text = None
                        tok.placeholder = True
                    if any(tok.span.overlaps(p) for p in view.splats):
                        tok.text = None
                        tok.splat = True
                        tok.placeholder = True
                items.append(launch)
            result.findings.extend(found.findings)
            if memo is not None and all(
                    isinstance(l.host, ShellHost) and not l.host.segments for l in found.launches):
                for launch in found.launches:
                    q = launch.host.quote_context
                    if q not in hosts:
                        hosts[q] = ShellHost(text, index, q)
                    launch.host = hosts[q]
                    fingerprint(launch)
                kept[key] = (block.start, found.launches, [moved(f, 0) for f in found.findings],
                             index.line_of(block.start) if found.findings and LINE_READS[0] != reads
                             else None)
        elif block.info in PYTHON_INFO:
            from servelint.extract.python_launch import extract_python
            code, table = _dedented(text, block)
            mapping = OffsetMap(table=table)
            found = extract_python(code, mapping, text, index, settings)
            items.extend(found.launches)
            result.findings.extend(found.findings)
        elif block.info in DOCKER_INFO and not block.quoted:
            from servelint.extract.dockerfile import DockerShellHost, _Reader
            sub = _blank(text[:block.start]) + body + _blank(text[block.end:])
            found = _Reader(sub, index).run()
            for launch in found.launches:
                launch.host.text = text
                if isinstance(launch.host, DockerShellHost):
                    launch.host.edits.text = text
                items.append(launch)
            result.findings.extend(found.findings)
    if memo is not None:
        memo["markdown-shell"] = kept
    starts = [raw_start(x) for x in items]
    if any(a > b for a, b in zip(starts, starts[1:])):
        items = sorted(LaunchList(items), key=lambda l: l.span.start)  # copies the moved ones
    result.launches = LaunchList(items)
    return result


# --- the format ---------------------------------------------------------------------------------

MD_SUFFIXES = {".md", ".markdown", ".mdown", ".mkd", ".mdx"}


def detect(path: str | None, language_id: str | None, text: str) -> bool:
    if language_id in ("markdown", "mdx"):
        return True
    if not path:
        return False
    return os.path.splitext(path)[1].lower() in MD_SUFFIXES


def _extract(text: str, index: LineIndex, path: str | None, settings) -> ExtractResult:
    return extract_markdown(text, index, settings)


def _format():
    from servelint.extract import Format
    return Format("markdown", 20, detect, _extract)


FORMAT = _format()
