"""Hover text: option documentation from the catalog, rule documentation for findings."""

from __future__ import annotations

import json

from servelint.catalog import Option
from servelint.checks import load_checks
from servelint.docs import doc_url, rule_url
from servelint.engine import LintResult
from servelint.rules import RuleSet


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


def rule_hover(rule) -> str:
    """A rule record on hover: documentation, why, solutions, tips, before/after, source
    (not its message: the editor shows the finding's right above)."""
    rec = rule.record
    parts = [f"### {rule.code} {rule.slug}", ""]
    if rec.get("documentation"):
        parts += [rec["documentation"], ""]
    why = " ".join(x for x in (rec.get("triggerScenarios"), rec.get("commonSituations")) if x)
    if why:
        parts += ["**Why it fails.** " + why, ""]
    if rec.get("solutions"):
        parts += ["**Solutions**", ""] + [f"- {s}" for s in rec["solutions"]] + [""]
    if rec.get("preventionTips"):
        parts += ["**Prevention**", ""] + [f"- {t}" for t in rec["preventionTips"]] + [""]
    if rec.get("exampleFix"):
        parts += ["**Before and after**", "```bash", rec["exampleFix"].strip(), "```", ""]
    links = []
    if rec.get("githubUrl"):
        links.append(f"[SGLang source]({rec['githubUrl']})")
    url = rule_url(rule)
    if url and url != rec.get("githubUrl"):
        links.append(f"[{rule.code} documentation]({url})")
    parts.append(" · ".join(links))
    return "\n".join(parts)


def finding_markdown(code: str, message: str, rules: RuleSet | None = None) -> str:
    """The documentation of the rule behind a finding. The finding's own message is not
    repeated: the editor shows it right above (VS Code's hover has the diagnostic first)."""
    check = load_checks().get(code)
    if check is None:
        rule = rules.by_code(code) if rules is not None else None
        return rule_hover(rule) if rule is not None else f"**{code}** {message}"
    return "\n".join([
        f"### {check.code} {check.name}", "", check.what.strip(), "",
        "**Why it matters.** " + check.why.strip(), "",
        "**Example**", "```bash", check.example, "```",
        "**Use instead**", "```bash", check.instead, "```",
    ] + ([f"[Documentation]({url})"] if (url := doc_url(code)) else []))


def hover_at(result: LintResult, offset: int) -> str | None:
    parts = []
    rules = result.rules
    shown = set()
    for f in result.findings:
        hit = f.span.start <= offset <= f.span.end or any(
            r.mark and r.span.start <= offset <= r.span.end for r in f.related)
        if hit and f.code not in shown:
            shown.add(f.code)
            parts.append(finding_markdown(f.code, f.message, rules))
    for parsed in result.parsed:
        if not parsed.launch.span.contains(offset):
            continue
        for use in parsed.uses:
            if use.name_span.start <= offset <= use.name_span.end and use.written:
                text = option_markdown(use.option, parsed.catalog.version)
                mentioning = [r for r in (rules.rules if rules else []) if use.option in r.options]
                if mentioning:
                    text += "\n\n**Rules about this option**\n\n" + "\n".join(
                        (f"- [{r.code}]({url}): {r.message}" if (url := rule_url(r)) else
                         f"- {r.code}: {r.message}") for r in mentioning[:12])
                    if len(mentioning) > 12:
                        text += f"\n- ... and {len(mentioning) - 12} more"
                parts.append(text)
                break
    if not parts:
        return None
    return "\n\n---\n\n".join(parts)
