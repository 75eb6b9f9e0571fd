"""Hover text: option documentation from the catalog, rule documentation for findings."""

from __future__ import annotations

import json
import re

from servelint.catalog import Option, history, version_key
from servelint.checks import load_checks
from servelint.docs import doc_url, rule_url
from servelint.engine import LintResult
from servelint.lintcache import LaunchList, Moved
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
    lines += option_history(opt.name, version)
    text = "  \n".join(lines)
    if opt.help:
        text += "\n\n" + opt.help
    return text


def option_history(name: str, version: str, max_defaults: int = 3) -> list[str]:
    """Hover lines on when `name` came, changed its default, kind or choices, and was
    deprecated, up to `version`; and what later releases do to it (deprecate, retire,
    remove), from `servelint.catalog.history()`."""
    try:
        events = history().events(name)
        key = version_key(version)
    except (KeyError, ValueError):
        return []
    now = [e for e in events if version_key(e.version) <= key]
    later = [e for e in events if version_key(e.version) > key
             and e.kind in ("deprecated", "retired", "removed", "kind")]
    parts: list[str] = []
    for e in now:
        if e.kind == "added":
            parts.append(f"present since {e.version}, the oldest release servelint knows"
                         if "oldest" in e.detail else f"added in {e.version}")
        elif e.kind == "readded":
            parts.append(f"back in {e.version} ({e.detail})")
        elif e.kind == "removed":
            parts.append(f"removed in {e.version}")
        elif e.kind == "deprecated":
            use = e.detail.partition(", ")[2]
            parts.append(f"{e.detail.partition(', ')[0]} in {e.version}" + (f" ({use})" if use else ""))
        elif e.kind == "retired":
            parts.append(f"retired in {e.version}" if e.detail.startswith("retired")
                         else f"{e.detail} in {e.version}")
        elif e.kind in ("kind", "type"):
            parts.append(f"{e.detail} in {e.version}")
    defaults = [e for e in now if e.kind == "default"]
    for e in defaults[-max_defaults:]:
        parts.append(f"default changed in {e.version} ({e.detail.removeprefix('default ')})")
    if len(defaults) > max_defaults:
        parts.append(f"{len(defaults) - max_defaults} earlier default changes")
    choices = [e for e in now if e.kind == "choices"]
    if choices:
        last = choices[-1]
        dropped = [f"{w[1:]} ({e.version})" for e in choices for w in e.detail.split()
                   if w.startswith("-")]
        parts.append(f"choices changed in {len(choices)} release(s), last in {last.version} "
                     f"({last.detail.removeprefix('choices ')})")
        if dropped:
            parts.append("values dropped: " + ", ".join(dropped[-6:]))
    out = []
    if parts:
        out.append("History: " + "; ".join(parts))
    if later:
        out.append(f"After {version}: " + "; ".join(
            f"{'removed' if e.kind == 'removed' else e.detail.split(':')[0]} in {e.version}"
            for e in later))
    return out


def rule_summary(rule) -> str:
    """A rule in one line for a list: its message with `‹--flag›` where a launch's value goes."""
    template = rule.template
    if not template:
        return rule.message
    return re.sub(r"\{(--[A-Za-z0-9-]+)\}", lambda m: f"‹{m.group(1)}›", template)


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


def finding_markdown(code: str, message: str, rules: RuleSet | None = None,
                     sglang: str | None = None) -> str:
    """The documentation of the rule behind a finding. The finding's own message is not
    repeated: the editor shows it right above (VS Code's hover has the diagnostic first).
    `sglang`: SGLang's own message for this launch, shown for searching SGLang's issues."""
    check = load_checks().get(code)
    if check is None:
        rule = rules.by_code(code) if rules is not None else None
        if rule is None:
            return f"**{code}** {message}"
        text = rule_hover(rule)
        if sglang:
            head, _, rest = text.partition("\n\n")
            text = f"{head}\n\n**SGLang's message:** `{sglang.replace('`', chr(39))}`\n\n{rest}"
        return text
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
            parts.append(finding_markdown(f.code, f.message, rules, f.sglang))
    release = None
    launches = result.launches
    for n in range(len(result.parsed)):
        # Only the launch under the cursor is read (reading each kept every launch's
        # arguments in the result: 45 MB for 11,110 launches).
        item = launches.raw(n) if isinstance(launches, LaunchList) else launches[n]
        if isinstance(item, Moved):
            if not item.base.span.start + item.d <= offset <= item.base.span.end + item.d:
                continue
        elif not item.span.contains(offset):
            continue
        parsed = result.parsed[n]
        if not parsed.launch.span.contains(offset):
            continue
        if n < len(result.releases):
            release = result.releases[n]
        for use in parsed.uses:
            if use.name_span.start <= offset <= use.name_span.end and use.written:
                text = option_markdown(use.option, parsed.catalog.version)
                mentioning = [r for r in (rules.rules if rules else []) if use.option in r.options]
                if mentioning:
                    text += "\n\n**Rules about this option**\n\n" + "\n".join(
                        (f"- [{r.code}]({url}): {rule_summary(r)}" if (url := rule_url(r)) else
                         f"- {r.code}: {rule_summary(r)}") for r in mentioning[:12])
                    if len(mentioning) > 12:
                        text += f"\n- ... and {len(mentioning) - 12} more"
                parts.append(text)
                break
    if not parts:
        return None
    text = "\n\n---\n\n".join(parts)
    if release is not None:
        text += f"\n\n---\n\nChecked as {release_line(release)}"
    return text


def release_line(release) -> str:
    """"SGLang 0.4.9.post2, from image lmsysorg/sglang:v0.4.9.post2-cu126 (line 3)"."""
    line = f"SGLang {release.version}: {release.detail}"
    if release.notice:
        line += f". {release.notice}"
    return line
