"""A rule pack open in the editor (or named on the command line): its broken records as
SL090 findings where they are, instead of launches."""

from __future__ import annotations

from servelint.catalog import load_catalog
from servelint.checks.broken_rule_pack import CHECK as BROKEN_PACK
from servelint.model import Span
from servelint.rules import load_pack_text
from servelint.settings import Settings

PACK_CODE = BROKEN_PACK.code


def lint_rule_pack(text: str, path: str | None, settings: Settings, result):
    """A rule pack being edited (`result`: the engine's LintResult to fill): its problems
    as findings where they are."""
    try:
        catalog = load_catalog(settings.sglang_version)
    except KeyError:
        catalog = load_catalog()
    pack = load_pack_text(text, path or "<rule pack>", catalog)
    index = result.index
    out = []
    for p in pack.problems:
        line = min(p.line, len(index.starts) - 1)
        start = index.offset(line, p.column)
        end = index.line_end(line)
        if end <= start:
            end = min(start + 1, len(text))
        out.append(BROKEN_PACK.finding(p.message, Span(start, end)))
    result.findings = [f for f in out if settings.wants(f.code)]
    return result
