"""Every output format of `servelint check`, written from the same records.

A record is `serialize.check_record` of the finding's diagnostic (the projection of what
the editor gets), with each fix's `applicability` ("safe": `--fix` applies it; "unsafe":
offered, never applied). The formats:

- text: `path:line:col: severity CODE message`, one line per finding (colour optional);
- json: one array of records; json-lines: one record per line;
- sarif: a SARIF 2.1.0 log (one run; the rules reported, results with their fixes);
- github: GitHub Actions workflow commands (`::error file=...::message`);
- gitlab: a GitLab Code Quality report (Code Climate issues);
- junit: JUnit XML, a testsuite per file, a testcase with a failure per finding.

Streaming formats (text, json-lines, github) are written finding by finding; the others
are documents written when the run ends. Nothing here lints or reads settings: the
command line (cli.py) hands in records and the rules they come from.
"""

from __future__ import annotations

import json
import os
import re
from typing import IO, TYPE_CHECKING, Any, Iterable, Sequence

from servelint import __version__
from servelint.lazy import LazyPattern
from servelint.model import Severity

if TYPE_CHECKING:
    from servelint.rules import RuleSet

FORMATS = ("text", "json", "json-lines", "sarif", "github", "gitlab", "junit")
STREAMED = ("text", "json-lines", "github")
TOOL = "servelint"


# --- records and rules ----------------------------------------------------------------------

def record(path: str, diagnostic: dict) -> dict:
    """The record of one diagnostic (serialize.diagnostic's dict): check_record, with each
    fix's applicability next to its `safe` flag."""
    from servelint.serialize import check_record
    rec = check_record(path, diagnostic)
    rec["fixes"] = [_with_applicability(fx) for fx in rec["fixes"]]
    return rec


def _with_applicability(fx: dict) -> dict:
    out = {}
    for key, value in fx.items():
        out[key] = value
        if key == "title":
            out["applicability"] = "safe" if fx.get("safe") else "unsafe"
    out.setdefault("applicability", "safe" if fx.get("safe") else "unsafe")
    return out


class RuleInfo:
    """What a report says about a code: its name (`underscore-option`), a one-line title and
    its default severity (None when servelint does not know the code's definition).
    Frozen, compared and hashed by value, as a frozen dataclass, without the code a
    dataclass generates at import (issue 16: every cold start paid for it)."""

    __slots__ = ("code", "name", "title", "severity")

    code: str
    name: str
    title: str
    severity: Severity | None

    def __init__(self, code: str, name: str, title: str, severity: Severity | None):
        for attr, value in (("code", code), ("name", name), ("title", title),
                            ("severity", severity)):
            object.__setattr__(self, attr, value)

    def _key(self) -> tuple:
        return (self.code, self.name, self.title, self.severity)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"RuleInfo(code={self.code!r}, name={self.name!r}, title={self.title!r}, "
                f"severity={self.severity!r})")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self):
        # Pickled by its fields (a worker process sends it to the parent, cli.run_parallel):
        # the default would set the slots one by one, which __setattr__ refuses.
        return (RuleInfo, self._key())


def rule_info(code: str, rules: RuleSet | None = None) -> RuleInfo:
    """A code's name, title and default severity: a check's, else a rule's of `rules` (the
    lint's rule set, user packs included), else a bundled rule's of the newest release."""
    from servelint.checks import load_checks
    check = load_checks().get(code)
    if check is not None:
        return RuleInfo(code, check.name, check.title, check.severity)
    rule = rules.by_code(code) if rules is not None else None
    if rule is not None:
        return RuleInfo(code, rule.slug, _short(rule.message), rule.severity)
    from servelint.docs import rule_index
    for c, name, title in rule_index(None):
        if c == code:
            return RuleInfo(code, name, title, None)
    return RuleInfo(code, code.lower(), code, None)


def _short(message: str, width: int = 120) -> str:
    line = " ".join(message.split())
    return line if len(line) <= width else line[:width - 4].rsplit(" ", 1)[0] + " ..."


def _start(rec: dict) -> tuple[int, int]:
    """The record's 1-based line and column (columns in UTF-16 code units, as the range)."""
    s = rec["range"]["start"]
    return s["line"] + 1, s["character"] + 1


def _end(rec: dict) -> tuple[int, int]:
    e = rec["range"]["end"]
    return e["line"] + 1, e["character"] + 1


def shown_path(path: str) -> str:
    """A path as CI annotations want it: relative to the working folder when it lies inside
    it, with `/` separators."""
    if os.path.isabs(path):
        try:
            rel = os.path.relpath(path)
        except ValueError:  # another drive (Windows)
            return path.replace(os.sep, "/")
        if not rel.startswith(os.pardir):
            path = rel
    return path.replace(os.sep, "/")


def fixable(rec: dict) -> bool:
    return any(fx["applicability"] == "safe" for fx in rec["fixes"])


# --- text -----------------------------------------------------------------------------------

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
SEVERITY_COLOR = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "information": "\x1b[1;34m",
                  "hint": "\x1b[36m"}


def text_line(rec: dict, color: bool = False) -> str:
    line, col = _start(rec)
    sev, code = rec["severity"], rec["code"]
    if not color:
        return f"{rec['path']}:{line}:{col}: {sev} {code} {rec['message']}"
    return (f"{BOLD}{rec['path']}{RESET}:{line}:{col}: {SEVERITY_COLOR.get(sev, '')}{sev}{RESET} "
            f"{BOLD}{code}{RESET} {rec['message']}")


def fix_lines(rec: dict) -> list[str]:
    """The fixes of a finding, for `--show-fixes` under its text line."""
    return [f"    fix ({fx['applicability']}): {fx['title']}" for fx in rec["fixes"]]


# --- github -----------------------------------------------------------------------------

GITHUB_LEVEL = {"error": "error", "warning": "warning", "information": "notice", "hint": "notice"}


def github_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's runner reads it back."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A workflow command's property value (`file=`, `title=`): the message escapes, and
    `:` and `,`, which end a value."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(rec: dict) -> str:
    line, col = _start(rec)
    end_line, end_col = _end(rec)
    props = [("file", shown_path(rec["path"])), ("line", str(line)), ("col", str(col)),
             ("endLine", str(end_line)), ("endColumn", str(end_col)), ("title", rec["code"])]
    said = ",".join(f"{k}={github_property(v)}" for k, v in props)
    return f"::{GITHUB_LEVEL[rec['severity']]} {said}::{github_data(rec['message'])}"


# --- json --------------------------------------------------------------------------------

def json_document(records: Sequence[dict]) -> str:
    return json.dumps(list(records), ensure_ascii=False, indent=2)


def json_line(rec: dict) -> str:
    return json.dumps(rec, ensure_ascii=False)


# --- sarif ---------------------------------------------------------------------------------

SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def artifact_uri(path: str) -> str:
    """A SARIF artifact location: a relative path as a relative URI reference (resolved
    against the folder servelint ran in), an absolute one as a `file:` URI."""
    if os.path.isabs(path):
        from pathlib import Path
        return Path(path).as_uri()
    from urllib.parse import quote
    return quote(path.replace(os.sep, "/"))


def _region(rng: dict) -> dict:
    """An LSP range (zero-based, end exclusive) as a SARIF region (1-based lines and
    columns, `endColumn` one past the last character, columns in UTF-16 code units)."""
    s, e = rng["start"], rng["end"]
    return {"startLine": s["line"] + 1, "startColumn": s["character"] + 1,
            "endLine": e["line"] + 1, "endColumn": e["character"] + 1}


def _sarif_fix(rec: dict, fx: dict) -> dict:
    return {
        "description": {"text": fx["title"]},
        "artifactChanges": [{
            "artifactLocation": {"uri": artifact_uri(rec["path"])},
            "replacements": [{"deletedRegion": _region(e["range"]),
                              "insertedContent": {"text": e["newText"]}}
                             for e in fx["edits"]],
        }],
        "properties": {"applicability": fx["applicability"]},
    }


def sarif_document(records: Sequence[dict], infos: dict[str, RuleInfo]) -> dict:
    codes = sorted({rec["code"] for rec in records})
    index = {code: n for n, code in enumerate(codes)}
    urls = {rec["code"]: rec["url"] for rec in records if rec.get("url")}
    rules = []
    for code in codes:
        info = infos.get(code) or RuleInfo(code, code.lower(), code, None)
        rule: dict[str, Any] = {"id": code, "name": info.name,
                                "shortDescription": {"text": info.title}}
        if code in urls:
            rule["helpUri"] = urls[code]
        if info.severity is not None:
            rule["defaultConfiguration"] = {"level": SARIF_LEVEL[info.severity.label]}
        rules.append(rule)
    results = []
    for rec in records:
        result: dict[str, Any] = {
            "ruleId": rec["code"],
            "ruleIndex": index[rec["code"]],
            "level": SARIF_LEVEL[rec["severity"]],
            "message": {"text": rec["message"]},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": artifact_uri(rec["path"])},
                "region": _region(rec["range"]),
            }}],
        }
        if rec["fixes"]:
            result["fixes"] = [_sarif_fix(rec, fx) for fx in rec["fixes"]]
        props: dict[str, Any] = {"severity": rec["severity"]}
        if "release" in rec:
            props["sglangRelease"] = rec["release"]["version"]
        if "sglangMessage" in rec:
            props["sglangMessage"] = rec["sglangMessage"]
        result["properties"] = props
        results.append(result)
    driver: dict[str, Any] = {"name": TOOL, "version": __version__, "rules": rules}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "columnKind": "utf16CodeUnits",
                      "results": results}]}


# --- gitlab -------------------------------------------------------------------------------

GITLAB_SEVERITY = {"error": "major", "warning": "minor", "information": "info", "hint": "info"}


_LINE_REFERENCE = LazyPattern(r"\b(lines?) \d+(?:(?:-|\u2013| to | and )\d+)?")


def gitlab_document(records: Sequence[dict]) -> list[dict]:
    """Code Quality issues. The fingerprint hashes the path, the code, the message (with the
    line numbers it mentions taken out) and how many identical findings came before in that
    file, not the line: a finding keeps its fingerprint when lines are added above it, so
    GitLab does not see it as new."""
    from hashlib import sha256  # here: hashlib loads OpenSSL, a cost only this format needs
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for rec in records:
        path = shown_path(rec["path"])
        key = (path, rec["code"], _LINE_REFERENCE.sub(r"\1", rec["message"]))
        n = seen.get(key, 0)
        seen[key] = n + 1
        digest = sha256("\0".join([*key, str(n)]).encode("utf-8")).hexdigest()
        line, _ = _start(rec)
        end_line, _ = _end(rec)
        out.append({
            "type": "issue",
            "check_name": rec["code"],
            "description": f"{rec['code']} {rec['message']}",
            "categories": ["Bug Risk"],
            "severity": GITLAB_SEVERITY[rec["severity"]],
            "fingerprint": digest,
            "location": {"path": path, "lines": {"begin": line, "end": end_line}},
        })
    return out


# --- junit ----------------------------------------------------------------------------------

def junit_document(records: Sequence[dict], files: Iterable[str]) -> str:
    """A testsuite per file linted (files with findings from elsewhere, such as a rule pack,
    too), a testcase with a failure per finding; a file without findings has one passing
    testcase. No file at all is an empty, valid <testsuites>."""
    import xml.etree.ElementTree as ET
    by_file: dict[str, list[dict]] = {p: [] for p in files}
    for rec in records:
        by_file.setdefault(rec["path"], []).append(rec)
    root = ET.Element("testsuites", name=TOOL, tests=str(sum(max(1, len(r)) for r in by_file.values())),
                      failures=str(len(records)), errors="0")
    for path, recs in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(max(1, len(recs))),
                              failures=str(len(recs)), errors="0", skipped="0")
        if not recs:
            ET.SubElement(suite, "testcase", name="no findings", classname=path, file=path)
            continue
        for rec in recs:
            line, col = _start(rec)
            case = ET.SubElement(suite, "testcase", name=f"{rec['code']} at {line}:{col}",
                                 classname=path, file=path, line=str(line))
            failure = ET.SubElement(case, "failure", type=rec["severity"],
                                    message=f"{rec['code']} {rec['message']}")
            failure.text = text_line(rec)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


# --- statistics ----------------------------------------------------------------------------

def statistics(records: Sequence[dict], infos: dict[str, RuleInfo]) -> list[dict]:
    """A row per code: how many findings, its name, how many have a safe fix; most frequent
    first, then by code."""
    rows: dict[str, dict] = {}
    for rec in records:
        code = rec["code"]
        row = rows.get(code)
        if row is None:
            info = infos.get(code)
            row = rows[code] = {"code": code, "name": info.name if info else code.lower(),
                                "count": 0, "fixable": 0}
        row["count"] += 1
        row["fixable"] += fixable(rec)
    return sorted(rows.values(), key=lambda r: (-r["count"], r["code"]))


def statistics_lines(rows: Sequence[dict]) -> list[str]:
    if not rows:
        return []
    width = max(len(str(r["count"])) for r in rows)
    code_width = max(len(r["code"]) for r in rows)
    out = []
    for r in rows:
        line = f"{r['count']:>{width}}  {r['code']:<{code_width}}  {r['name']}"
        if r["fixable"]:
            line += f"  ({r['fixable']} fixable with --fix)"
        out.append(line)
    return out


# --- the reporter ----------------------------------------------------------------------------

class Reporter:
    """Writes one run's findings in one format to `out`."""

    def __init__(self, fmt: str, out: IO[str], *, color: bool = False, show_fixes: bool = False,
                 stats: bool = False):
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}")
        self.fmt = fmt
        self.out = out
        self.color = color
        self.show_fixes = show_fixes
        self.stats = stats
        self.records: list[dict] = []
        self.infos: dict[str, RuleInfo] = {}
        self.files: list[str] = []
        self._files: set[str] = set()

    def _write(self, line: str) -> None:
        print(line, file=self.out)

    def file(self, path: str) -> None:
        """A file that was linted (JUnit gives a clean one its own passing testsuite)."""
        if path not in self._files:
            self._files.add(path)
            self.files.append(path)

    def add(self, rec: dict, info: RuleInfo) -> None:
        self.records.append(rec)
        self.infos.setdefault(rec["code"], info)
        if self.stats:
            return
        if self.fmt == "text":
            self._write(text_line(rec, self.color))
            if self.show_fixes:
                for line in fix_lines(rec):
                    self._write(line)
        elif self.fmt == "json-lines":
            self._write(json_line(rec))
        elif self.fmt == "github":
            self._write(github_line(rec))

    def text(self, line: str) -> None:
        """A line only the text format shows (the upgrade summary)."""
        if self.fmt == "text" and not self.stats:
            self._write(line)

    def close(self) -> None:
        if self.stats:
            rows = statistics(self.records, self.infos)
            if self.fmt in ("json", "json-lines"):
                self._write(json.dumps(rows, ensure_ascii=False, indent=2))
            else:
                for line in statistics_lines(rows):
                    self._write(line)
        elif self.fmt == "json":
            self._write(json_document(self.records))
        elif self.fmt == "sarif":
            self._write(json.dumps(sarif_document(self.records, self.infos),
                                   ensure_ascii=False, indent=2))
        elif self.fmt == "gitlab":
            self._write(json.dumps(gitlab_document(self.records), ensure_ascii=False, indent=2))
        elif self.fmt == "junit":
            self._write(junit_document(self.records, self.files))
        self.out.flush()


# --- unified diff ----------------------------------------------------------------------------

def _lines(text: str) -> list[str]:
    """Lines with their `\\n` (a `\\r` before it stays part of the line)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _shortest_edit(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int]]:
    """Myers' O((N+M)D) shortest edit script between two line lists, as steps
    ("=", i, j) keep a[i] (== b[j]), ("-", i, j) delete a[i], ("+", i, j) insert b[j]
    (i, j: where the step starts in a and b)."""
    n, m = len(a), len(b)
    v = {1: 0}
    trace: list[dict[int, int]] = []
    for d in range(n + m + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[k - 1] < v[k + 1]):
                x = v[k + 1]
            else:
                x = v[k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[k] = x
            if x >= n and y >= m:
                return _backtrack(trace, n, m)
    raise AssertionError("unreachable: an edit script has at most N+M steps")


def _backtrack(trace: list[dict[int, int]], n: int, m: int) -> list[tuple[str, int, int]]:
    steps: list[tuple[str, int, int]] = []
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        k = x - y
        prev_k = k + 1 if (k == -d or (k != d and v[k - 1] < v[k + 1])) else k - 1
        prev_x = v[prev_k]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            x -= 1
            y -= 1
            steps.append(("=", x, y))
        if d > 0:
            steps.append(("+", prev_x, prev_y) if x == prev_x else ("-", prev_x, prev_y))
        x, y = prev_x, prev_y
    steps.reverse()
    return steps


def _range(start: int, length: int) -> str:
    """A hunk header's range: 1-based start, the length left out when it is 1, and the line
    before the hunk as the start of an empty range."""
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def unified_diff(old: str, new: str, name: str, context: int = 3) -> str:
    """`old` -> `new` as a unified diff of file `name` (`--- name` / `+++ name`), "" when
    they are equal."""
    if old == new:
        return ""
    a, b = _lines(old), _lines(new)
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while (tail < len(a) - head and tail < len(b) - head
           and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]):
        tail += 1
    steps = [("=", i, i) for i in range(head)]
    steps += [(t, i + head, j + head)
              for t, i, j in _shortest_edit(a[head:len(a) - tail], b[head:len(b) - tail])]
    steps += [("=", len(a) - tail + i, len(b) - tail + i) for i in range(tail)]
    changed = [p for p, s in enumerate(steps) if s[0] != "="]
    groups: list[list[int]] = []
    for p in changed:
        if groups and p - groups[-1][1] - 1 <= 2 * context:
            groups[-1][1] = p
        else:
            groups.append([p, p])
    out = [f"--- {name}\n", f"+++ {name}\n"]
    for first, last in groups:
        lo, hi = max(0, first - context), min(len(steps), last + context + 1)
        hunk = steps[lo:hi]
        old_start, new_start = hunk[0][1], hunk[0][2]
        old_len = sum(1 for t, _, _ in hunk if t != "+")
        new_len = sum(1 for t, _, _ in hunk if t != "-")
        out.append(f"@@ -{_range(old_start, old_len)} +{_range(new_start, new_len)} @@\n")
        for t, i, j in hunk:
            line = b[j] if t == "+" else a[i]
            out.append(("+" if t == "+" else "-" if t == "-" else " ") + line)
            if not line.endswith("\n"):
                out.append("\n\\ No newline at end of file\n")
    return "".join(out)
