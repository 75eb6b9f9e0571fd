"""The only place where servelint's findings meet LSP types."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from servelint.docs import doc_url
from servelint.model import Finding, LineIndex, Span

SEVERITY = {
    1: lsp.DiagnosticSeverity.Error,
    2: lsp.DiagnosticSeverity.Warning,
    3: lsp.DiagnosticSeverity.Information,
    4: lsp.DiagnosticSeverity.Hint,
}


def to_range(index: LineIndex, span: Span) -> lsp.Range:
    sl, sc = index.position(span.start)
    el, ec = index.position(span.end)
    return lsp.Range(lsp.Position(sl, sc), lsp.Position(el, ec))


def range_dict(index: LineIndex, span: Span) -> dict:
    sl, sc = index.position(span.start)
    el, ec = index.position(span.end)
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def to_diagnostic(f: Finding, index: LineIndex, uri: str, version: int | None) -> lsp.Diagnostic:
    tags = []
    if f.deprecated:
        tags.append(lsp.DiagnosticTag.Deprecated)
    if f.unnecessary:
        tags.append(lsp.DiagnosticTag.Unnecessary)
    related = []
    for r in f.related:
        if r.path is None:
            loc = lsp.Location(uri=uri, range=to_range(index, r.span))
        elif r.range is not None:
            sl, sc, el, ec = r.range
            loc = lsp.Location(uri=Path(r.path).as_uri(),
                               range=lsp.Range(lsp.Position(sl, sc), lsp.Position(el, ec)))
        else:
            continue
        related.append(lsp.DiagnosticRelatedInformation(location=loc, message=r.message))
    data = {
        "version": version,
        "fixes": [
            {"title": fx.title, "preferred": fx.preferred, "safe": fx.safe,
             "edits": [{"range": range_dict(index, e.span), "newText": e.new_text}
                       for e in fx.edits]}
            for fx in f.fixes
        ],
    }
    return lsp.Diagnostic(
        range=to_range(index, f.span),
        message=f.message,
        severity=SEVERITY[int(f.severity)],
        code=f.code,
        code_description=lsp.CodeDescription(href=doc_url(f.code)),
        source="servelint",
        related_information=related or None,
        tags=tags or None,
        data=data,
    )


def to_diagnostics(f: Finding, index: LineIndex, uri: str, version: int | None) -> list[lsp.Diagnostic]:
    """The finding, plus a hint on every other flag it involves (a rule's conflict is
    visible on each of its flags, and each offers the same fixes)."""
    main = to_diagnostic(f, index, uri, version)
    out = [main]
    line = index.position(f.span.start)[0] + 1
    for r in f.related:
        if not r.mark or r.path is not None:
            continue
        out.append(lsp.Diagnostic(
            range=to_range(index, r.span),
            message=f"{r.message.split(':')[0]} is part of a problem reported on line {line}: {f.message}",
            severity=lsp.DiagnosticSeverity.Hint,
            code=f.code,
            code_description=main.code_description,
            source="servelint",
            related_information=[lsp.DiagnosticRelatedInformation(
                location=lsp.Location(uri=uri, range=main.range), message=f.message)],
            data=main.data,
        ))
    return out


def text_edit(raw: dict) -> lsp.TextEdit:
    r = raw["range"]
    return lsp.TextEdit(
        range=lsp.Range(lsp.Position(r["start"]["line"], r["start"]["character"]),
                        lsp.Position(r["end"]["line"], r["end"]["character"])),
        new_text=raw["newText"])
