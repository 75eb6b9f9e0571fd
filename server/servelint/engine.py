"""The pipeline: detect the format, extract launches, read their arguments, run the
checks, apply settings. No LSP types here: the CLI and the server both call `lint`."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from servelint.args import ParsedLaunch, Reader
from servelint.catalog import Catalog, load_catalog
from servelint.checks import load_checks
from servelint.checks.bad_config_file import CHECK as BAD_CONFIG
from servelint.checks.broken_rule_pack import CHECK as BROKEN_PACK
from servelint.checks.config_equals import CHECK as CONFIG_EQUALS
from servelint.model import Edit, Finding, Fix, Launch, LineIndex, Related, Span, Token
from servelint.rules import load_pack_text, rule_set
from servelint.rules.apply import apply_rules
from servelint.settings import Settings
from servelint.suppress import Suppressions

log = logging.getLogger(__name__)

def detect_format(path: str | None, language_id: str | None, text: str,
                  rule_packs: list[str] = ()) -> str | None:
    from servelint.extract import formats
    from servelint.rules import is_pack_path
    if is_pack_path(path, rule_packs):
        return "rulepack"
    for fmt in formats():
        if fmt.detect(path, language_id, text):
            return fmt.name
    return None


@dataclass
class Context:
    catalog: Catalog
    settings: Settings

    def ignore_unknown(self, written: str, launch: Launch) -> bool:
        # sglang_router.launch_server adds its own `--router-*` options to SGLang's.
        return launch.kind == "router" and written.startswith("--router-")


@dataclass
class LintResult:
    path: str | None
    text: str
    format: str | None
    findings: list[Finding] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    parsed: list[ParsedLaunch] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    rules: object = None  # the RuleSet used, for hover
    _index: LineIndex | None = None

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index


def lint(text: str, path: str | None = None, language_id: str | None = None,
         settings: Settings | None = None, fmt: str | None = None, *,
         suppression_actions: bool = False) -> LintResult:
    """Lint a document. `suppression_actions`: also give each finding the unsafe fixes
    "Disable CODE for this launch/file" (the editor's code actions; fix-all never applies
    unsafe fixes)."""
    settings = settings or Settings()
    fmt = fmt or detect_format(path, language_id, text, settings.rule_packs)
    result = LintResult(path, text, fmt)
    if fmt is None or not settings.enable:
        return result
    if fmt == "rulepack":
        return lint_rule_pack(text, path, settings, result)
    if len(text) > settings.max_file_bytes:
        result.notices.append(
            f"not linted: the file has {len(text):,} characters, more than the "
            f"{settings.max_file_bytes:,} servelint reads (setting maxFileBytes)")
        return result
    from servelint.extract import by_name
    extractor = by_name(fmt)
    if extractor is not None and extractor.marker and extractor.marker not in text:
        return result  # nothing to launch: cost one substring search
    try:
        catalog = load_catalog(settings.sglang_version)
    except KeyError as exc:
        result.notices.append(f"{exc.args[0]}; using the default catalog")
        catalog = load_catalog()
    index = result.index
    findings: list[Finding] = []
    if extractor is not None:
        try:
            extracted = extractor.extract(text, index, path, settings)
        except Exception:  # a broken extractor must not take the server down
            log.exception("extracting %s launches from %s failed", fmt, path or "<text>")
            result.notices.append(f"internal error reading this file as {fmt}; see the log")
            return result
        result.launches = extracted.launches
        findings.extend(extracted.findings)
    ctx = Context(catalog, settings)
    checks = [c for c in load_checks().values() if c.run is not None]
    reader = Reader(catalog)
    rules = None
    if result.launches:
        rules = rule_set(catalog.version, settings.rule_packs, path, settings.project_rules)
        result.rules = rules
        result.notices.extend(str(p) for p in rules.problems)
    for n, launch in enumerate(result.launches):
        merged, config_findings, config_file = merge_config(launch, path, catalog)
        findings.extend(config_findings)
        start = len(findings)
        parsed = reader.read(merged)
        parsed.launch = launch if merged is launch else merged
        result.parsed.append(parsed)
        for check in checks:
            try:
                for f in check.run(parsed, ctx):
                    f.launch_index = n
                    findings.append(f)
            except Exception:  # a failing check must not hide the others' findings
                log.exception("check %s failed on %s", check.code, path or "<text>")
                result.notices.append(f"internal error in check {check.code}; see the log")
        try:
            for f in apply_rules(parsed, rules, settings.gpu):
                f.launch_index = n
                findings.append(f)
        except Exception:
            log.exception("rules failed on %s", path or "<text>")
            result.notices.append("internal error while applying rules; see the log")
        if config_file is not None:
            findings[start:] = settle_foreign(findings[start:], config_file)
    # Suppression comments, before the settings: SL094/SL095 are filtered like any code.
    sup = Suppressions(text, index, fmt)
    if sup.present and getattr(settings, "respect_suppressions", True):
        findings = sup.apply(findings, result.launches, settings.wants,
                             _known_codes(result, settings, catalog))
    out = []
    seen: set[tuple] = set()
    for f in findings:
        if not settings.wants(f.code):
            continue
        key = (f.code, f.span.start, f.span.end, f.message)
        if key in seen:
            continue  # the same words reached twice (a Docker stage inheriting an ENTRYPOINT)
        seen.add(key)
        if f.code in settings.severity:
            f.severity = settings.severity[f.code]
        out.append(f)
    out.sort(key=lambda f: (f.span.start, f.code))
    if suppression_actions and out:
        sup.add_actions(out, result.launches)
    result.findings = out
    return result


def _known_codes(result: LintResult, settings: Settings, catalog: Catalog):
    """Whether a code is one servelint can report here: a check, or a rule of the packs in
    effect (loaded only when a suppression names a code that is not a check)."""
    checks = load_checks()
    codes: set[str] | None = None

    def known(code: str) -> bool:
        nonlocal codes
        if code in checks:
            return True
        if codes is None:
            rules = result.rules or rule_set(catalog.version, settings.rule_packs, result.path,
                                             settings.project_rules)
            codes = {r.code for r in rules.rules}
        return code in codes
    return known


# --- --config files named by a launch ----------------------------------------------------

FOREIGN = 1 << 40  # offsets of words from another file are shifted by this much


@dataclass
class ConfigFile:
    path: str
    index: LineIndex


class MergedHost:
    """The launch's own host, refusing to edit words that live in the config file."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def replace(self, token, value):
        return None if token.origin else self.inner.replace(token, value)

    def replace_words(self, first, last, words):
        return None if first.origin or last.origin else self.inner.replace_words(first, last, words)

    def insert_after(self, token, words):
        return None if token.origin else self.inner.insert_after(token, words)

    def remove(self, first, last):
        if first.origin or last.origin:
            return Edit(Span(FOREIGN, FOREIGN), "")  # dropped by settle_foreign
        return self.inner.remove(first, last)


def merge_config(launch: Launch, doc_path: str | None, catalog: Catalog):
    """The launch as SGLang reads it when it names a config file: the file's words first,
    then the command line's (which therefore wins), as prepare_server_args does."""
    from servelint.extract.sglang_config import read_config_file

    if launch.kind == "config":
        return launch, [], None
    toks = launch.tokens
    findings: list[Finding] = []
    for t in toks:
        if t.text and t.text.startswith("--config="):
            value = t.text.split("=", 1)[1]
            edit = launch.host.replace_words(t, t, ["--config", value])
            findings.append(CONFIG_EQUALS.finding(
                f"SGLang reads a config file only when it is written as two words, --config "
                f"{value}: with '{t.text}' the file is accepted and silently ignored",
                t.span, fixes=[Fix(f"Write --config {value}", [edit], preferred=True)] if edit else []))
    at = [i for i, t in enumerate(toks) if t.text == "--config"]
    if not at:
        return launch, findings, None
    if len(at) > 1:
        findings.append(BAD_CONFIG.finding("Multiple config files specified! Only one allowed.",
                                           toks[at[1]].span))
        return launch, findings, None
    i = at[0]
    if i + 1 >= len(toks):
        findings.append(BAD_CONFIG.finding("No config file specified after --config flag!",
                                           toks[i].span))
        return launch, findings, None
    value = toks[i + 1]
    rest = toks[:i] + toks[i + 2:]
    unknown = Token(value.span, None, splat=True, raw=value.raw)

    def merged_with(words):
        return Launch(launch.kind, launch.entry, words, MergedHost(launch.host), launch.span,
                      launch.env, launch.anchor)

    cfg = value.text
    if cfg is None or doc_path is None:
        return merged_with([unknown] + rest), findings, None
    full = cfg if os.path.isabs(cfg) else os.path.join(os.path.dirname(os.path.abspath(doc_path)), cfg)
    if not cfg.lower().endswith((".yaml", ".yml")):
        findings.append(BAD_CONFIG.finding(
            f"Config file must be YAML format, got: {os.path.splitext(cfg)[1]}", value.span))
        return merged_with([unknown] + rest), findings, None
    if not os.path.isfile(full):
        # SGLang resolves the path from its working directory, which the file does not say.
        return merged_with([unknown] + rest), findings, None
    loaded, problem = read_config_file(full, catalog)
    if loaded is None:
        findings.append(BAD_CONFIG.finding(problem, value.span))
        return merged_with([unknown] + rest), findings, None
    text, words, cfg_findings = loaded
    for f in cfg_findings:
        findings.append(Finding(f.code, f.severity, f"{cfg}: {f.message}", value.span))
    shifted = [Token(Span(w.span.start + FOREIGN, w.span.end + FOREIGN), w.text, w.prefix, w.splat,
                     w.raw, w.origin) for w in words]
    return merged_with(shifted + rest), findings, ConfigFile(full, LineIndex(text))


def settle_foreign(findings: list[Finding], cfg: ConfigFile) -> list[Finding]:
    """Findings of a launch merged with a config file, told in this document: a problem
    inside the config file alone is left to that file's own lint; one that involves a flag
    of this launch sits on that flag and points into the config file."""
    def foreign(span):
        return span.start >= FOREIGN

    def outside(r: Related) -> Related:
        sl, sc = cfg.index.position(r.span.start - FOREIGN)
        el, ec = cfg.index.position(r.span.end - FOREIGN)
        return Related(r.span, f"{r.message} (in {os.path.basename(cfg.path)})", path=cfg.path,
                       range=(sl, sc, el, ec))

    out = []
    for f in findings:
        if foreign(f.span):
            local = next((r for r in f.related if not foreign(r.span) and r.path is None), None)
            if local is None:
                continue
            moved = Related(f.span, "set here in the config file")
            f.related = [outside(moved)] + [r for r in f.related if r is not local]
            f.span = local.span
        f.related = [outside(r) if foreign(r.span) and r.path is None else r for r in f.related]
        f.fixes = [x for x in f.fixes if all(not foreign(e.span) for e in x.edits)]
        out.append(f)
    return out


PACK_CODE = BROKEN_PACK.code


def lint_rule_pack(text: str, path: str | None, settings: Settings, result: LintResult) -> LintResult:
    """A rule pack being edited: its problems as findings where they are."""
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


def fix_all_edits(findings: list[Finding]) -> list:
    """Every safe fix of a document, each applied whole or not at all, no two touching
    the same text. Earlier findings win a conflict."""
    chosen = []
    taken: list[Span] = []
    for f in findings:
        fixes = [x for x in f.fixes if x.safe]
        if not fixes:
            continue
        fx = next((x for x in fixes if x.preferred), fixes[0])
        spans = [e.span for e in fx.edits]
        if any(_clash(s, t) for s in spans for t in taken):
            continue
        taken.extend(spans)
        chosen.extend(fx.edits)
    chosen.sort(key=lambda e: e.span.start)
    return chosen


def fix_all_text(text: str, path: str | None = None, language_id: str | None = None,
                 settings: Settings | None = None, passes: int = 8) -> tuple[str, int]:
    """Apply every safe fix, re-linting between passes so that fixes whose edits touch
    the same lines still all land (as Ruff does). Returns the text and the edit count."""
    total = 0
    for _ in range(passes):
        result = lint(text, path, language_id, settings)
        edits = fix_all_edits(result.findings)
        if not edits:
            break
        new = apply_edits(text, edits)
        if new == text:
            break
        text = new
        total += len(edits)
    return text, total


def minimal_edit(old: str, new: str) -> Edit | None:
    """One edit that turns `old` into `new`, covering only the part that differs."""
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return Edit(Span(start, end_old), new[start:end_new])


def _clash(a: Span, b: Span) -> bool:
    if a.overlaps(b):
        return True
    # Two insertions at one place, or an insertion at the edge of a deletion.
    return a.start == b.start or (a.start == a.end and b.start <= a.start <= b.end) or (
        b.start == b.end and a.start <= b.start <= a.end)


def apply_edits(text: str, edits: list) -> str:
    out = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        if e.span.start < pos:
            continue
        out.append(text[pos:e.span.start])
        out.append(e.new_text)
        pos = e.span.end
    out.append(text[pos:])
    return "".join(out)
