"""Rule documentation for `servelint rule`, hover and the generated docs pages: the
catalog checks (checks/) and the rule records (rules/packs/), in the same sections."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING

from servelint.checks import load_checks
from servelint.lazy import file_uri

if TYPE_CHECKING:
    from pathlib import Path

    from servelint.rules import Rule, RuleSet

# The rule pages ship inside the package (package data, and the extension's bundled
# libs): tools/gen_docs.py writes them here, and a diagnostic links the installed copy,
# which exists wherever servelint runs, offline too, and matches the installed version.
# A str here; `PAGES`, the same folder as a pathlib.Path, is made when asked for (tools,
# tests), so that a cold check does not import pathlib for it.
_PAGES = os.path.join(os.path.dirname(os.path.realpath(__file__)), "rules", "pages")


def __getattr__(name: str):
    if name == "PAGES":
        from pathlib import Path
        return Path(_PAGES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def page_path(code: str) -> Path:
    from pathlib import Path
    return Path(_PAGES, f"{code}.md")


def is_rule_page(path: str | None) -> bool:
    """A page of servelint's own rule documentation (its examples are wrong on purpose:
    the editor opens it from a diagnostic's link and must not squiggle it)."""
    return path is not None and os.path.dirname(os.path.realpath(path)) == _PAGES


@lru_cache(maxsize=None)
def _page_uri(code: str) -> str | None:
    page = os.path.join(_PAGES, f"{code}.md")
    return file_uri(page) if os.path.isfile(page) else None


def doc_url(code: str, rules: RuleSet | None = None) -> str | None:
    """Where a code is documented, or None when nowhere: a rule from a user's pack links
    its record's own `docsUrl` (else its `githubUrl`); a check or a bundled rule links
    its page installed with servelint, as a `file:` URI."""
    rule = rules.by_code(code) if rules is not None else None
    return rule_url(rule) if rule is not None else _page_uri(code)


def rule_url(rule: Rule) -> str | None:
    """Where a rule record is documented (see doc_url)."""
    if rule.bundled:
        return _page_uri(rule.code)
    for key in ("docsUrl", "githubUrl"):
        url = rule.record.get(key)
        if isinstance(url, str) and url.strip():
            return url.strip()
    return None


def _bundled_rules(version: str | None):
    from servelint.catalog import resolve_version
    from servelint.rules import bundled_packs
    out = []
    for pack in bundled_packs(resolve_version(version or "newest").version):
        out.extend(pack.rules)
    return out


def _args_of(example: str) -> str:
    return "python -m sglang.launch_server --model-path m " + example


def record_markdown(rule) -> str:
    """A rule record in the fixed sections: what it does, why it matters, example, use
    instead, fix safety, since; then SGLang's solutions, tips and the source line."""
    rec = rule.record
    import re
    shown = re.sub(r"\{(--[A-Za-z0-9-]+)\}", lambda m: f"‹{m.group(1)}›", rule.template or rule.message)
    lines = [f"# {rule.code} {rule.slug}", "", f"> {shown}", "",
             f"Default severity: {rule.severity.label}. Source: "
             f"{'derived from the exampleFix' if rule.derived else 'explicit condition'} "
             f"in `{rule.source}`.", ""]
    if rule.template:
        if shown != rule.template:
            lines += ["`‹--flag›` stands for the launch's own value of that option.", ""]
        lines += [f"SGLang's own message: `{rule.message}`", ""]
    lines += ["## What it does", "", rec.get("documentation") or rule.message, ""]
    why = [x for x in (rec.get("triggerScenarios"), rec.get("commonSituations")) if x]
    lines += ["## Why it matters", "", "SGLang stops at start-up with its message. "
              + " ".join(why), ""]
    if rule.dependencies:
        from servelint.rules.condition import describe
        conds = "; ".join(describe(a, True) for a in rule.dependencies)
        lines += ["SGLang's verdict also depends on what the launch's flags do not say "
                  f"({conds}). Where the file settles it (the launch's environment as the file "
                  "shows it, the `gpu` setting) this is an error or nothing; otherwise a warning "
                  "that names the condition.", ""]
    fix = rec.get("exampleFix") or ""
    before, after = _before_after(fix)
    trig = (rule.examples.get("trigger") or [])
    ok = (rule.examples.get("ok") or [])
    lines += ["## Example", "", "```bash"]
    lines += [_args_of(t) for t in trig[:2]] if trig else [before or "(no example)"]
    lines += ["```", "", "## Use instead", "", "```bash"]
    lines += [_args_of(t) for t in ok[:2]] if ok else [after or "(no example)"]
    lines += ["```", ""]
    if fix:
        lines += ["The record's exampleFix:", "", "```bash", fix.strip(), "```", ""]
    lines += ["## Fix safety", ""]
    if rule.fixes:
        for fx in rule.fixes:
            kind = "safe, applied by fix-all" if fx.safe else "offered as a quick fix, not applied by fix-all"
            pref = " (preferred)" if fx.preferred else ""
            lines.append(f"- {fx.title}{pref}: {kind}.")
    else:
        lines.append("No automatic fix.")
    lines += ["", "## Solutions", ""]
    lines += [f"- {s}" for s in rec.get("solutions") or []] or ["(none recorded)"]
    tips = rec.get("preventionTips") or []
    if tips:
        lines += ["", "## Prevention", ""] + [f"- {t}" for t in tips]
    lines += ["", "## Since", ""]
    applies = rec.get("appliesTo")
    spec = applies.get("sglang") if isinstance(applies, dict) else applies
    lines.append(f"servelint 0.1.0; SGLang {_ranges(spec) or 'every release'}.")
    verified = rec.get("verifiedBy")
    if isinstance(verified, dict):
        method = str(verified.get("method"))
        how = {"source": "SGLang's own source of each release",
               "validator": "SGLang's own validator"}.get(method, method)
        lines += ["", f"Verified against {how} for {_ranges(verified.get('releases'))}"
                      + (f" (`{verified['tool']}`)" if verified.get("tool") else "")
                      + "; silent on launches of other releases."]
    if rec.get("githubUrl"):
        lines += ["", f"SGLang source: {rec['githubUrl']}"]
    return "\n".join(lines) + "\n"


def _ranges(spec) -> str:
    """An appliesTo range, or a list of them (a gap), for people: ">=0.5.12,<=0.5.23"."""
    if isinstance(spec, (list, tuple)):
        return " or ".join(str(x) for x in spec)
    return str(spec) if spec else ""


def _before_after(fix: str) -> tuple[str, str]:
    from servelint.rules.derive import _sections
    sec = _sections(fix) if fix else {}
    return sec.get("before", ""), sec.get("after", "")


def rule_doc(code: str, version: str | None = None, rules=None) -> str | None:
    check = load_checks().get(code)
    if check is not None:
        return check.doc_markdown()
    for rule in list(rules or []) + _bundled_rules(version):
        if rule.code == code:
            return record_markdown(rule)
    return None


def rule_index(version: str | None = None) -> list[tuple[str, str, str]]:
    rows = [(c.code, c.name, c.title) for c in load_checks().values()]
    rows += [(r.code, r.slug, _short(r.message)) for r in _bundled_rules(version)]
    return sorted(rows)


def _short(message: str, width: int = 90) -> str:
    return message if len(message) <= width else message[:width - 1].rsplit(" ", 1)[0] + " ..."


def all_codes(version: str | None = None) -> list[str]:
    return [c for c, _, _ in rule_index(version)]


@lru_cache(maxsize=1)
def builtin_codes() -> frozenset[str]:
    """Every code servelint itself reports: its checks' and its bundled rules', those of
    every SGLang release (a rule for older releases only is no unknown code), read from
    the compiled packs without building the rules (no catalog is loaded)."""
    import json
    from importlib import resources

    from servelint.rules import COMPILED, compile_bundled, rule_code, unwrap
    try:
        data = json.loads(resources.files("servelint.rules").joinpath(COMPILED)
                          .read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        data = json.loads(compile_bundled())
    codes = set(load_checks())
    for records in data.values():
        codes.update(rule_code(r) for r in unwrap(records) if isinstance(r, dict) and "id" in r)
    return frozenset(codes)
