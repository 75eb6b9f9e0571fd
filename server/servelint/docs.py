"""Rule documentation for `servelint rule`, hover and the generated docs pages."""

from __future__ import annotations

from servelint.checks import load_checks

DOCS_BASE = "https://github.com/servelint/servelint/blob/main/docs/rules/"


def doc_url(code: str) -> str:
    return f"{DOCS_BASE}{code}.md"


def rule_doc(code: str, version: str | None = None) -> str | None:
    check = load_checks().get(code)
    if check is not None:
        return check.doc_markdown()
    return None


def rule_index(version: str | None = None) -> list[tuple[str, str, str]]:
    return [(c.code, c.name, c.title) for c in sorted(load_checks().values(), key=lambda c: c.code)]


def all_codes(version: str | None = None) -> list[str]:
    return [c for c, _, _ in rule_index(version)]
