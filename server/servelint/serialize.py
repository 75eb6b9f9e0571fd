"""The one way from a finding to a diagnostic: LSP-shaped plain dicts (JSON as the
protocol sends it, camelCase keys, None left out).

Everything that shows a finding goes through here: the fast start
(lsp/bootstrap.py, which answers before pygls and lsprotocol are imported), the pygls
server's publishing (lsp/server.py sends these dicts as they are), `servelint check
--format json|json-lines` (`check_record`, a projection of the same dict) and the golden tests.
No lsprotocol import, so it costs nothing at start-up.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_right
from typing import TYPE_CHECKING, Any

from servelint.lazy import file_uri
from servelint.model import Finding, Fix, LineIndex, Severity, Span

if TYPE_CHECKING:
    from servelint.engine import LintResult
    from servelint.rules import RuleSet

SOURCE = "servelint"
PUBLISH_DIAGNOSTICS = "textDocument/publishDiagnostics"
TAG_UNNECESSARY, TAG_DEPRECATED = 1, 2  # LSP DiagnosticTag


def position(index: LineIndex, offset: int) -> dict:
    line, character = index.position(offset)
    return {"line": line, "character": character}


def lsp_range(index: LineIndex, span: Span) -> dict:
    """A span as an LSP range (zero-based, characters in UTF-16 code units)."""
    return {"start": position(index, span.start), "end": position(index, span.end)}


def _tuple_range(r: tuple[int, int, int, int]) -> dict:
    sl, sc, el, ec = r
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def fixes(f: Finding, index: LineIndex) -> list[dict]:
    return fix_dicts(f.fixes, index)


def fix_dicts(fixes: list[Fix], index: LineIndex) -> list[dict]:
    return [{"title": fx.title, "preferred": fx.preferred, "safe": fx.safe,
             "edits": [{"range": lsp_range(index, e.span), "newText": e.new_text}
                       for e in fx.edits]}
            for fx in fixes]


def related_information(f: Finding, index: LineIndex, uri: str) -> list[dict]:
    """The finding's other places: in the same document, or in another file (a `--config`
    file: `path` with its own `range`)."""
    out = []
    for r in f.related:
        if r.path is None:
            loc = {"uri": uri, "range": lsp_range(index, r.span)}
        elif r.range is not None:
            loc = {"uri": file_uri(os.path.abspath(r.path)), "range": _tuple_range(r.range)}
        else:
            continue
        out.append({"location": loc, "message": r.message})
    return out


def _diagnostic(rng: dict, message: str, severity: int, code: str, href: str | None,
                tags: list[int], related: list[dict], data: dict) -> dict:
    # Keys in lsprotocol's order (Diagnostic's fields), so a round trip through
    # lsprotocol gives the same bytes.
    d = {"range": rng, "message": message, "severity": severity, "code": code}
    if href is not None:
        d["codeDescription"] = {"href": href}
    d["source"] = SOURCE
    if tags:
        d["tags"] = tags
    if related:
        d["relatedInformation"] = related
    d["data"] = data
    return d


def release_of(result: LintResult | None, f: Finding) -> dict | None:
    """The release the finding's launch was judged by (engine.LaunchRelease.as_dict)."""
    if result is None or f.launch_index is None or f.launch_index >= len(result.releases):
        return None
    release = result.releases[f.launch_index].as_dict()
    if any(f is u for u in result.upgrades):
        # Found by the upgrade check: judged as the target, coming from the launch's own.
        return {"version": result.target, "source": "target", "from": release}
    return release


def diagnostic(f: Finding, index: LineIndex, uri: str, version: int | None,
               rules: RuleSet | None = None, release: dict | None = None,
               editor: bool = False) -> dict:
    """The finding's diagnostic. `data` carries the document version it was computed for,
    the fixes and the SGLang release the launch was judged by (`servelint check` prints
    them), and SGLang's own message for a rule's finding. `rules` (the lint's RuleSet)
    tells which codes come from a user's rule pack, for the documentation link.

    `editor`: the diagnostic the language server publishes, whose `data` keeps only the
    version and SGLang's message. The editor never reads `data`; it hands it back with a
    code-action request, and the server finds the fixes again in its lint of that version
    (`ServelintServer.current_finding`), as it does for a diagnostic of an older text.
    The fixes and the release were half the bytes of every publish."""
    from servelint.docs import doc_url

    tags = ([TAG_DEPRECATED] if f.deprecated else []) + ([TAG_UNNECESSARY] if f.unnecessary else [])
    data: dict[str, Any] = {"version": version}
    if not editor:
        data["fixes"] = fixes(f, index)
        if release is not None:
            data["release"] = release
    if f.sglang is not None:
        data["sglangMessage"] = f.sglang
    return _diagnostic(lsp_range(index, f.span), f.message, int(f.severity), f.code,
                       doc_url(f.code, rules), tags, related_information(f, index, uri), data)


def finding_diagnostics(f: Finding, index: LineIndex, uri: str, version: int | None,
                        rules: RuleSet | None = None, release: dict | None = None,
                        editor: bool = False) -> list[dict]:
    """The finding, plus a hint on every other flag it involves (a rule's conflict is
    visible on each of its flags, and each offers the same fixes)."""
    main = diagnostic(f, index, uri, version, rules, release, editor)
    out = [main]
    line = main["range"]["start"]["line"] + 1
    href = main.get("codeDescription", {}).get("href")
    for r in f.related:
        if not r.mark or r.path is not None:
            continue
        out.append(_diagnostic(
            lsp_range(index, r.span),
            f"{r.message.split(':')[0]} is part of a problem reported on line {line}: {f.message}",
            int(Severity.HINT), f.code, href, [],
            [{"location": {"uri": uri, "range": main["range"]}, "message": f.message}],
            main["data"]))
    return out


def result_diagnostics(result: LintResult, uri: str, version: int | None,
                       editor: bool = False) -> list[dict]:
    """Every diagnostic of a LintResult, in the order of its findings (`editor`: as the
    language server publishes them, see `diagnostic`)."""
    if not result.findings:
        return []
    index = result.index
    return [d for f in result.findings
            for d in finding_diagnostics(f, index, uri, version, result.rules,
                                         None if editor else release_of(result, f), editor)]


_VERSION_MARK = "\x00servelint:version\x00"  # stands for the version in a kept fragment
_MARK_JSON = json.dumps(_VERSION_MARK).encode("ascii")


def diagnostics_json(result: LintResult, uri: str, version: int | None,
                     editor: bool = False) -> str:
    """`json.dumps(result_diagnostics(result, uri, version, editor))`, compact: the
    `diagnostics_parts` joined."""
    return b"".join(diagnostics_parts(result, uri, version, editor)).decode("ascii")


def diagnostics_parts(result: LintResult, uri: str, version: int | None,
                      editor: bool = False) -> list[bytes]:
    """The JSON of `result_diagnostics(result, uri, version, editor)` in pieces, to be
    joined once (`publish_frame` joins them into the message itself), made from each
    finding's kept fragment where it is still right.

    A finding the engine's cache re-used (lintcache.moved, or a launch the edit did not
    touch) shares a holder with the copy it came from (a finding serialized here for the
    first time gets one, so the next lint's copies find its JSON). Its text around it is
    the same (the cache key holds it), so where its start has the same LSP position, the
    same release (not in the editor's form: no release there) and the same rules, its
    diagnostics are the same JSON but for the document version, which is spliced in: an
    edit serializes only the findings it changed (a 2,222-launch script's 556 diagnostics
    took 27 ms to build and 15 ms to encode). The fragments are ASCII bytes (json.dumps
    escapes the rest), so the message is encoded once, and as one block."""
    if not result.findings:
        return [b"[]"]
    index = result.index
    rules = result.rules
    releases = result.releases
    upgrades = {id(u) for u in result.upgrades} if result.upgrades else ()
    ver = json.dumps(version).encode("ascii")
    # LineIndex.position, inlined for an ASCII text (the common case; a call per finding
    # was 40% of this loop).
    starts = index.lsp_starts if index.ascii else None
    out: list[bytes] = []
    append = out.append
    for f in result.findings:
        append(b",")
        at = f.span.start
        if starts is not None:
            line = bisect_right(starts, at) - 1
            pos: tuple[int, int] = (line, at - starts[line])
        else:
            pos = index.position(at)
        if editor:
            release = None
        else:
            release = (releases[f.launch_index] if f.launch_index is not None
                       and f.launch_index < len(releases) else None)
        holder = f.serial
        if holder is not None:
            was = holder[0]
            if was is not None and was[1] == pos and was[3] is rules and was[4] is editor \
                    and was[0] == uri and (was[2] is release or was[2] == release) \
                    and id(f) not in upgrades:
                append(ver.join(holder[1]))
                continue
        made = json.dumps(finding_diagnostics(
            f, index, uri, _VERSION_MARK, rules,  # type: ignore[arg-type]
            None if editor else release_of(result, f), editor), separators=(",", ":"))
        pieces = made[1:-1].encode("ascii").split(_MARK_JSON)
        if id(f) not in upgrades:
            key = (uri, pos, release, rules, editor)
            if holder is None:
                f.serial = [key, pieces]
            else:
                holder[0], holder[1] = key, pieces
        append(ver.join(pieces))
    out[0] = b"["  # the first finding's separator: the array's start
    append(b"]")
    return out


def publish_params(uri: str, version: int | None, diagnostics: list[dict]) -> dict:
    """PublishDiagnosticsParams as lsprotocol would send them (no version: left out)."""
    params: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics}
    if version is not None:
        params["version"] = version
    return params


def publish_frame(uri: str, version: int | None, diagnostics: list[bytes],
                  content_type: str | None = None) -> bytes:
    """The whole publishDiagnostics message, framed (Content-Length, and `content_type`
    when given), around diagnostics already encoded (`diagnostics_parts`): the same JSON
    as `publish_params` would give, made with one join (one block of the message's size;
    each large block is a fresh mapping that the kernel fills page by page)."""
    head = json.dumps({"jsonrpc": "2.0", "method": PUBLISH_DIAGNOSTICS, "params": {"uri": uri}},
                      separators=(",", ":"))[:-2] + ',"diagnostics":'
    tail = "}}" if version is None else f',"version":{json.dumps(version)}}}}}'
    length = len(head) + sum(map(len, diagnostics)) + len(tail)
    header = f"Content-Length: {length}\r\n"
    if content_type is not None:
        header += f"Content-Type: {content_type}\r\n"
    return b"".join([(header + "\r\n" + head).encode("ascii"), *diagnostics, tail.encode("ascii")])


def check_record(path: str, d: dict) -> dict:
    """One record of `servelint check --format json` (one line of `json-lines`): a projection of the LSP diagnostic
    (`range` zero-based, UTF-16 characters; `severity` as a word; `url` the code's
    documentation, when it has one; `fixes` with `safe` and `preferred`; `sglangMessage`,
    for a rule's finding, SGLang's own message with the launch's values)."""
    rec = {"path": path, "range": d["range"], "severity": Severity(d["severity"]).label,
           "code": d["code"], "message": d["message"], "fixes": d["data"]["fixes"]}
    href = d.get("codeDescription", {}).get("href")
    if href is not None:
        rec["url"] = href
    if "sglangMessage" in d["data"]:
        rec["sglangMessage"] = d["data"]["sglangMessage"]
    if "release" in d["data"]:
        rec["release"] = d["data"]["release"]
    return rec


def pack_problem_diagnostic(problem) -> dict:
    """A broken rule record (rules.PackProblem) as an SL090 diagnostic at its position, for
    `servelint check` when the pack file itself is not among the linted files."""
    from servelint.checks.broken_rule_pack import CHECK
    from servelint.docs import doc_url

    pos = {"line": problem.line, "character": problem.column}
    return _diagnostic({"start": pos, "end": dict(pos)}, problem.message, int(CHECK.severity),
                       CHECK.code, doc_url(CHECK.code), [], [], {"version": None, "fixes": []})
