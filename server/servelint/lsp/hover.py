"""Hover text: option documentation from the catalog, rule documentation for findings."""

from __future__ import annotations

import json

from servelint.catalog import Option
from servelint.checks import load_checks
from servelint.docs import doc_url
from servelint.engine import LintResult


def option_markdown(opt: Option, version: str) -> str:
    names = ", ".join(f"`{n}`" for n in opt.names)
    lines = [f"**{opt.name}** (SGLang {version})", "", f"Spellings: {names}"]
    kind = {
        "flag": "switch, takes no value",
        "bool_optional": f"switch; `--no-{opt.name[2:]}` turns it off",
        "value": "takes one value",
        "optional": "takes an optional value",
        "list": f"takes a list of values (nargs {opt.nargs})",
    }.get(opt.kind, opt.kind)
    lines.append(f"Kind: {kind}")
    if opt.type:
        lines.append(f"Type: `{opt.type}`")
    lines.append(f"Default: `{json.dumps(opt.default)}`")
    if opt.choices:
        lines.append("Choices: " + ", ".join(f"`{c}`" for c in opt.choices))
    if opt.removed:
        lines.append(f"**Removed**: {opt.message or 'using it stops the launch'}")
    elif opt.deprecated:
        lines.append("**Deprecated**" + (f": use `{opt.replacement}`" if opt.replacement else ""))
    text = "  \n".join(lines)
    if opt.help:
        text += "\n\n" + opt.help
    return text


def finding_markdown(code: str, message: str) -> str:
    check = load_checks().get(code)
    head = f"**{code}** {message}"
    if check is None:
        return head
    return "\n".join([
        head, "", f"### {check.code} {check.name}", "", check.what.strip(), "",
        "**Why it matters.** " + check.why.strip(), "",
        "**Example**", "```bash", check.example, "```",
        "**Use instead**", "```bash", check.instead, "```",
        f"[Documentation]({doc_url(code)})",
    ])


def hover_at(result: LintResult, offset: int) -> str | None:
    parts = []
    for f in result.findings:
        if f.span.start <= offset <= f.span.end:
            parts.append(finding_markdown(f.code, f.message))
    for parsed in result.parsed:
        if not parsed.launch.span.contains(offset):
            continue
        for use in parsed.uses:
            if use.name_span.start <= offset <= use.name_span.end and use.written:
                parts.append(option_markdown(use.option, parsed.catalog.version))
                break
    if not parts:
        return None
    return "\n\n---\n\n".join(parts)
