"""Rules against a parsed launch: findings on the exact flags, with fixes as edits."""

from __future__ import annotations

import re
from typing import Sequence

from servelint.args import ParsedLaunch, Use
from servelint.model import Edit, Finding, Fix, Related, Severity
from servelint.rules import FixEdit, Rule, RuleFix, RuleSet
from servelint.rules.condition import (assumptions, describe, effective_value, usual,
                                       evaluate, present_options, unknown_source)
from servelint.rules.resolve import expand_written, view
from servelint.rules.context import RuleContext


def _words(e: FixEdit) -> list[str]:
    if e.value is None:
        return [e.name]
    if e.option.kind in ("flag", "bool_optional"):
        if e.option.kind == "bool_optional" and e.value is False:
            return ["--no-" + e.option.name[2:]]
        return [e.name]
    if isinstance(e.value, list):
        return [e.name] + [_text(v) for v in e.value]
    return [e.name, _text(e.value)]


def _text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _last_token(parsed: ParsedLaunch):
    launch = parsed.launch
    return launch.tokens[-1] if launch.tokens else launch.entry


def fix_edits(parsed: ParsedLaunch, fx: RuleFix, anchor: Use | None = None) -> list[Edit] | None:
    """The document edits of a rule fix, or None when they cannot be made cleanly. An
    added option goes right after `anchor` (the flag the finding is on), else at the end."""
    launch = parsed.launch
    host = launch.host
    edits: list[Edit] = []
    after = launch.tokens[anchor.last_index] if anchor is not None else _last_token(parsed)
    for e in _written_back(parsed, fx.edits):
        uses = parsed.uses_of(e.option.dest)
        if e.op == "remove":
            if not uses:
                continue
            for u in uses:
                edit = host.remove(u.token, launch.tokens[u.last_index])
                if edit is None:
                    return None  # the host cannot remove it cleanly: no fix rather than a bad one
                edits.append(edit)
        elif e.op == "add" or (e.op == "set" and not uses):
            if uses and e.op == "add":
                continue
            edit = host.insert_after(after, _words(e))
            if edit is None:
                return None
            edits.append(edit)
        else:  # set an option that is written: rewrite its last occurrence
            u = uses[-1]
            edit = host.replace_words(u.token, launch.tokens[u.last_index], _words(e))
            if edit is None:
                return None
            edits.append(edit)
    if not edits:
        return None
    spans = sorted((x.span for x in edits), key=lambda s: (s.start, s.end))
    for a, b in zip(spans, spans[1:]):
        if b.start < a.end or (a.start == b.start and a.end == b.end):
            return None
    return edits


def _written_back(parsed: ParsedLaunch, edits) -> list[FixEdit]:
    """The edits in the spelling the launch uses: an edit of an option that a resolution
    step derived from other options (`--attn-dp-size` from `--enable-dp-attention
    --dp-size N`) is made to those options (normalize.yaml `writeBack`)."""
    resolved = view(parsed)
    out: list[FixEdit] = []
    for e in edits:
        back = None if parsed.uses_of(e.option.dest) else resolved.write_back(e.option.dest)
        if back is None:
            out.append(e)
        elif e.op == "remove" or (e.op == "set" and e.value == e.option.default):
            out.extend(FixEdit(op, opt, opt.name) for op, opt in back.default)
        elif e.op == "set" and back.value is not None:
            out.append(FixEdit("set", back.value, back.value.name, e.value))
        else:
            out.append(e)
    return out


def _target(parsed: ParsedLaunch, rule: Rule) -> Use | None:
    """The flag a finding sits on: the one the preferred fix changes, when written."""
    for fx in rule.fixes:
        if fx.preferred:
            for e in fx.edits:
                use = parsed.last_use(e.option.dest)
                if use is not None and use.written:
                    return use
    for opt in present_options(rule.condition) + rule.options:
        use = parsed.last_use(opt.dest)
        if use is not None and use.written:
            return use
    resolved = view(parsed)  # an option a resolution step derived: where it came from
    for opt in present_options(rule.condition) + rule.options:
        for dest in resolved.origins(opt.dest):
            use = parsed.last_use(dest)
            if use is not None and use.written:
                return use
    return None


def render(template: str, ctx: RuleContext) -> str:
    """A message template with `{--flag}` replaced by the launch's value of the option (as
    SGLang's checks see it: normalised and resolved)."""
    catalog = ctx.catalog

    def value(m: re.Match[str]) -> str:
        opt = catalog.lookup(m.group(1)) if catalog is not None else None
        known, v = effective_value(ctx.launch, opt) if opt is not None else (False, None)
        if not known:
            return "<unknown>"
        if isinstance(v, list):
            return " ".join(_text(x) for x in v)
        return _text(v) if v is not None else "none"

    text = re.sub(r"\{(--[A-Za-z0-9-]+)\}", value, template)
    return text + _as_written(template, ctx)


def _as_written(template: str, ctx: RuleContext) -> str:
    """When the message quotes an option that the launch did not write but a resolution
    step derived (`--attn-dp-size 3` from `--dp-size 3 --enable-dp-attention`), a note that
    says what the launch wrote, so the message names the user's own words too."""
    catalog = ctx.catalog
    if catalog is None or "{" not in template:
        return ""
    parsed = ctx.launch
    resolved = view(parsed)
    notes: list[str] = []
    for name in dict.fromkeys(re.findall(r"\{(--[A-Za-z0-9-]+)\}", template)):
        opt = catalog.lookup(name)
        if opt is None or parsed.uses_of(opt.dest) or not resolved.set_by_step(opt.dest):
            continue
        words = []
        for dest in resolved.origins(opt.dest):
            use = parsed.last_use(dest)
            if use is not None and use.written:
                words.append(" ".join([use.written] + [v.text or "<unknown>" for v in use.values]))
        if not words:
            continue
        known, v = effective_value(parsed, opt)
        shown = (" ".join(_text(x) for x in v) if isinstance(v, list) else _text(v)) if known and v is not None else ""
        notes.append(f"{opt.name}{' ' + shown if shown else ''} from this launch's {' '.join(words)}")
    return f" (SGLang derives {', and '.join(notes)}.)" if notes else ""


def _message(rule: Rule, ctx: RuleContext) -> str:
    """servelint's message for this launch (the record's messageTemplate), else SGLang's."""
    return render(rule.template, ctx) if rule.template else rule.message


def sglang_message(rule: Rule, ctx: RuleContext) -> str:
    """SGLang's own message, with the launch's values where SGLang prints them."""
    template = rule.record.get("sglangTemplate")
    return render(template, ctx) if template else rule.message


def _depends(rule: Rule, ctx: RuleContext) -> str | None:
    """When the rule holds unless the GPU, the environment or the model is as SGLang's
    acceptance needs, and the file does not say: the sentence that names the condition.

    Only refusals that hold in the usual case are reported this way: "refused unless
    SGLANG_GRPC_PORT is set", "unless the model is one of A, B", "unless the GPU is
    sm100". A refusal that needs something unusual to be true (an opt-in variable set, a
    particular model family, one GPU generation) stays silent until the file or the
    settings say so; a warning on every launch that might meet it would be noise."""
    if not rule.dependencies:
        return None
    needed = assumptions(rule.condition, ctx, usual_only=True, atoms=rule.dependencies)
    if not needed:
        return None
    clauses = []
    for atom, value in needed:
        if not usual(atom, value):
            return None
        clauses.append(describe(atom, not value))
    hints = []
    for atom, _ in needed:
        hint = unknown_source(atom)
        if hint not in hints:
            hints.append(hint)
    return f"SGLang refuses this unless {' or '.join(clauses)}; {'; '.join(hints)}."


def apply_rules(parsed: ParsedLaunch, rules: RuleSet | Sequence[Rule],
                gpu: str | None = None, model: dict[str, str] | None = None) -> list[Finding]:
    """Findings of the rules that hold, `gpu` being the target GPU generation (the `gpu`
    setting) and `model` the served model when known (modelinfo.py). `rules` is a RuleSet
    (indexed: only rules that can hold for what the launch writes are evaluated) or a plain
    list."""
    out = []
    ctx = RuleContext.of(parsed, gpu, model)
    if isinstance(rules, RuleSet):
        rules = rules.rules if parsed.uncertain else rules.candidates(
            expand_written(parsed.written(), parsed.catalog), gpu)
    for rule in rules:
        held = evaluate(rule.condition, ctx)
        depends = None
        if held is None:
            depends = _depends(rule, ctx)
            if depends is None:
                continue
        elif held is False:
            continue
        target = _target(parsed, rule)
        span = target.name_span if target else parsed.launch.entry.span
        related = []
        for opt in rule.options:
            for use in parsed.uses_of(opt.dest):
                if target is not None and use is target:
                    continue
                shown = " ".join([use.written] + [v.text or "<unknown>" for v in use.values])
                related.append(Related(use.name_span, f"{shown}: part of this conflict ({rule.code})",
                                       mark=True))
        fixes = []
        for fx in rule.fixes:
            edits = fix_edits(parsed, fx, target)
            if edits:
                fixes.append(Fix(fx.title, edits, preferred=fx.preferred, safe=fx.safe))
        message = _message(rule, ctx)
        severity = rule.severity
        if depends:
            message = f"{message} {depends}"
            severity = Severity(max(int(severity), int(Severity.WARNING)))
        out.append(Finding(rule.code, severity, message, span, related=related, fixes=fixes,
                           sglang=sglang_message(rule, ctx)))
    return out
