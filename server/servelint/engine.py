"""The pipeline: detect the format, extract launches, read their arguments, run the
checks, apply settings. No LSP types here: the CLI and the server both call `lint`.
Merging `--config` files is config_merge.py, choosing and applying edits is edits.py, a
rule pack being edited is rules/packlint.py."""

from __future__ import annotations

import bisect
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from servelint.args import ParsedLaunch, Reader
from servelint.catalog import Catalog, load_catalog, newest_version, resolve_version
from servelint.checks import load_checks
from servelint.config_merge import merge_config, settle_foreign
from servelint.edits import apply_edits, fix_all_edits
from servelint.lazy import LazyLogger
from servelint.lintcache import (_EXTRACT_MEMO, Entry, LaunchList, LintCache, Prev, file_stat, fingerprint, launch_key,
                                 Moved, moved, raw_fingerprint, raw_start, relative, text_diff, window)
from servelint.model import LINE_READS, Finding, Fix, Launch, LineIndex, Span
from servelint.rules import RuleSet, rule_set
from servelint.modelinfo import config_path_of, read_config
from servelint.rules.apply import apply_rules
from servelint.rules.packlint import lint_rule_pack
from servelint.settings import Settings
from servelint.suppress import Suppressions

log = LazyLogger(__name__)  # logging imported at the first message
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def detect_format(path: str | None, language_id: str | None, text: str,
                  rule_packs: Sequence[str] = ()) -> str | None:
    from servelint.extract import formats, python_by_name, shell_by_name
    from servelint.rules import is_pack_path
    if is_pack_path(path, rule_packs):
        return "rulepack"
    if shell_by_name(path, language_id):
        return "shell"
    if python_by_name(path, language_id):
        return "python"
    for fmt in formats():
        if fmt.detect(path, language_id, text):
            return fmt.name
    if not path and language_id in (None, "", "plaintext"):
        # No name and no language (standard input): the formats that are only known by a
        # name are read from the content.
        found = _sniff_json(text)
        if found is None and _looks_like_yaml_documents(text):
            found = detect_format(None, "yaml", text, rule_packs)
        if found is None:
            found = _sniff_code(text)
        return found
    return None


_IMPORT = re.compile(r"^(?:import|from)[ \t]+[\w.]+", re.M)
_SHELL_LAUNCH = re.compile(
    r"^[ \t]*(?:[A-Za-z_]\w*=\S*[ \t]+)*(?:(?:exec|nohup|env|time)[ \t]+)*"
    r"(?:python[\d.]*[ \t].*\bsglang|sglang[ \t]+serve\b)", re.M)


def _sniff_code(text: str) -> str | None:
    """Python without a shebang (it parses and imports something), else a shell command
    without one (a line that starts a launch: `python3 -m sglang.launch_server ...`,
    `sglang serve ...`, after `VAR=x` assignments and `exec`/`nohup`)."""
    if "sglang" not in text:
        return None
    if _IMPORT.search(text):
        import ast
        import warnings
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(text)
            return "python"
        except (SyntaxError, ValueError):
            pass
    return "shell" if _SHELL_LAUNCH.search(text) else None


_YAML_START = re.compile(r"(?:---|%YAML|[A-Za-z_][\w.-]*[ \t]*:(?:[ \t]|$)|-[ \t])")


def _looks_like_yaml_documents(text: str) -> bool:
    """YAML documents without a name (`helm template . | servelint check -`): the first
    line that is not blank or a comment starts a document, a `key:` or a list item, and the
    whole text loads (safely) as documents that are mappings or lists."""
    first = next((line for line in text.lstrip("\ufeff").splitlines()
                  if line.strip() and not line.lstrip().startswith("#")), "")
    if not _YAML_START.match(first):
        return False
    import yaml
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return False
    return any(isinstance(d, (dict, list)) for d in docs) and all(
        d is None or isinstance(d, (dict, list)) for d in docs)


_CONFIGURATIONS = re.compile(r'"configurations"\s*:\s*\[')


def _sniff_json(text: str) -> str | None:
    """A text with neither a name nor a language (standard input): a JSON object that is
    a Jupyter notebook or a VS Code launch configuration is read as one. The other
    formats sniff their own content (a shebang, YAML documents, a Dockerfile)."""
    head = text.lstrip("\ufeff \t\r\n")
    if not head.startswith("{"):
        return None
    import json
    try:
        value = json.loads(head)
    except ValueError:  # JSONC (comments, trailing commas): a launch.json still
        return "launch-json" if _CONFIGURATIONS.search(head) else None
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("cells"), list) and "nbformat" in value:
        return "notebook"
    if isinstance(value.get("configurations"), list):
        return "launch-json"
    return None


@dataclass
class Context:
    catalog: Catalog
    settings: Settings

    def ignore_unknown(self, written: str, launch: Launch) -> bool:
        # sglang_router.launch_server adds its own `--router-*` options to SGLang's.
        return launch.kind == "router" and written.startswith("--router-")


@dataclass(frozen=True, slots=True)
class LaunchRelease:
    """The SGLang release one launch is judged by, and why.

    `version` is the catalog the launch was checked with; `declared` what the setting or
    the files said (None: nothing, the newest release is assumed); `source` one of
    setting | image | pin | project | floor | newest; `detail` says where, for people;
    `notice` is set when the declared release has no catalog (the nearest older one
    stands in)."""

    version: str
    declared: str | None
    source: str
    detail: str
    notice: str | None = None
    span: Span | None = None
    path: str | None = None

    def describe(self) -> str:
        """"SGLang 0.4.9.post2 (image lmsysorg/sglang:v0.4.9.post2-cu126, line 3)"."""
        return f"SGLang {self.version} ({self.detail})"

    def as_dict(self) -> dict:
        out = {"version": self.version, "source": self.source, "detail": self.detail}
        if self.declared is not None and self.declared != self.version:
            out["declared"] = self.declared
        return out


def launch_release(text: str, fmt: str, launch: Launch, path: str | None,
                   settings: Settings, memo: dict | None = None) -> LaunchRelease:
    """Which release judges `launch`: the explicit setting, else what the files say
    (release.detect_release: image, pin, project, floor), else the newest. A release
    without a catalog is judged by the nearest older one, with a notice."""
    if settings.sglang_version != "auto":
        declared: str | None = settings.sglang_version
        source = "setting"
        detail = settings.sglang_version_from or "the sglang-version setting"
        span = where = None
    else:
        from servelint.release import detect_release
        hint = detect_release(text, fmt, launch, path, settings.project_root, memo=memo)
        declared, source, detail, span, where = (hint.version, hint.source, hint.detail,
                                                 hint.span, hint.path)
    key = ("resolve", declared)
    resolved = memo.get(key) if memo is not None else None
    if resolved is None:
        resolved = resolve_version(declared or "newest")
        if memo is not None:
            memo[key] = resolved
    if source == "newest":
        detail = "no release named in the settings or the files: the newest known"
    return LaunchRelease(resolved.version, declared, source, detail, resolved.notice, span, where)


def serve_backend(launch: Launch) -> str | None:
    """The `--model-type` of a `sglang serve` launch (the serve backend SGLang dispatches
    to), "auto" when it says none, None for other launches or an unknown value."""
    if launch.kind != "serve":
        return None
    words = launch.tokens
    for i, tok in enumerate(words):
        if tok.text == "--model-type":
            return words[i + 1].text if i + 1 < len(words) else None
        if tok.text is not None and tok.text.startswith("--model-type="):
            return tok.text.split("=", 1)[1]
    return "auto"


@dataclass
class LintResult:
    path: str | None
    text: str
    format: str | None
    findings: list[Finding] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    parsed: list[ParsedLaunch] = field(default_factory=list)
    releases: list[LaunchRelease] = field(default_factory=list)  # one per launch
    upgrades: list[Finding] = field(default_factory=list)  # what --target-version adds
    target: str | None = None  # the release of the upgrade check, when there is one
    notices: list[str] = field(default_factory=list)
    rules: RuleSet | None = None  # the rules in effect (None when nothing launches), for hover
    _index: LineIndex | None = None
    _suppressions: Suppressions | None = None  # made by suppression_fixes when first asked

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index


def suppression_fixes(result: LintResult, finding: Finding) -> list[Fix]:
    """The unsafe fixes "Disable CODE for this launch" and "... for this file" of one
    finding of `result`, made when asked (the editor's code actions): the same as
    `lint(..., suppression_actions=True)` gives the finding, without giving them to every
    finding of every lint."""
    sup = result._suppressions
    if sup is None:
        sup = result._suppressions = Suppressions(result.text, result.index, result.format)
    copy = Finding(finding.code, finding.severity, finding.message, finding.span,
                   finding.related, [], finding.deprecated, finding.unnecessary,
                   finding.launch_index, finding.sglang)
    sup.add_actions([copy], result.launches)
    return copy.fixes


BUDGET_NOTICE = "linting stopped after its time budget"


class Cancelled(Exception):
    """`should_stop` said to stop: a newer text will be linted instead."""


# How many cache entries of launches gone from the text (an edit's old versions) a
# document keeps beyond its launches' own (engine.lint, the end).
STALE_ENTRIES = 256
_AT = object()  # in a _ParsedList: read the launch at this place when asked (maker)


class _ParsedList(list):
    maker: Callable[[int], ParsedLaunch] | None = None

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        v = super().__getitem__(i)
        if v is _AT:
            if i < 0:
                i += len(self)
            assert self.maker is not None
            v = self.maker(i)
            super().__setitem__(i, v)
        return v

    def __iter__(self):
        for k in range(len(self)):
            yield self[k]


def lint(text: str, path: str | None = None, language_id: str | None = None,
         settings: Settings | None = None, fmt: str | None = None, *,
         suppression_actions: bool = False, cache: LintCache | None = None,
         should_stop: Callable[[], bool] | None = None,
         deadline: float | None = None) -> LintResult:
    """Lint a document. `suppression_actions`: also give each finding the unsafe fixes
    "Disable CODE for this launch/file" (the editor's code actions; fix-all never applies
    unsafe fixes). `cache`: the document's LintCache (its launches that did not change
    are not checked again). `should_stop`: asked between launches; when it says True the
    lint raises Cancelled. `deadline` (a `time.monotonic()` value): past it, the launches
    not yet checked are left unchecked and a notice says from which line."""
    settings = settings or Settings()
    fmt = fmt or detect_format(path, language_id, text, settings.rule_packs)
    if not text.isascii() and _LONE_SURROGATE.search(text) is not None:  # isascii: 60x faster
        # No encoding can write a lone surrogate (an editor may send one as "\\udcff"):
        # the text is read with U+FFFD in its place, one code point for one, so every
        # offset and every fix stays where it was.
        text = _LONE_SURROGATE.sub("\ufffd", text)
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
    findings: list[Finding] = []
    used: dict[tuple, Entry] | None = None
    prev: Prev | None = None
    diff: tuple[int, int] | None = None
    if cache is not None:
        used = cache.begin((repr(settings), path, fmt))
        prev = cache.extras.get("engine")
        if prev is not None and prev.fmt == fmt:
            # What the edit left alone: the extractors and the launch loop below take
            # what lies there from the last lint instead of reading it again.
            diff = text_diff(prev.text, text)
            result._index = LineIndex.edited(prev.index, text, *diff)
            cache.extras["diff"] = (prev.text, diff)
        else:
            prev = None
            cache.extras.pop("diff", None)
    index = result.index
    if extractor is not None:
        token = _EXTRACT_MEMO.set(cache.extras if cache is not None else None)
        try:
            extracted = extractor.extract(text, index, path, settings)
        except Exception:  # a broken extractor must not take the server down
            log.exception("extracting %s launches from %s failed", fmt, path or "<text>")
            result.notices.append(f"internal error reading this file as {fmt}; see the log")
            return result
        finally:
            _EXTRACT_MEMO.reset(token)
        result.launches = extracted.launches
        findings.extend(extracted.findings)
        # What the extractor did not read, and why (a nesting past its limit).
        result.notices.extend(n for n in getattr(extracted, "notices", ())
                              if n not in result.notices)
    checks = [(c, c.run) for c in load_checks().values() if c.run is not None]
    result.parsed = _ParsedList()
    # What each release needs, made once per lint: a file's launches usually share one.
    per_release: dict[str, tuple[Catalog, Reader, Context, RuleSet]] = {}
    memo: dict = {}  # what the launches of this document share (release detection)
    # A launch's release as its cache key says it, and each model config file's
    # (path, stat): one tuple for every launch that says the same, kept with the
    # document's cache so that a launch read again after an edit shares the tuples of the
    # launches read before it (a copy each was ~300 bytes per edited launch: an
    # 11,110-launch script grew 2.7 MiB over 10,000 edits, bench/memory.py).
    shared = _shared_tuples(cache)
    stats: dict[str, tuple | None] = {}  # model config files looked at in this lint
    model_files: dict[str, tuple] = {}  # model config path -> (that path, its stat)

    def stat(p: str) -> tuple | None:
        if p not in stats:
            stats[p] = file_stat(p)
        return stats[p]
    launches = result.launches
    raw = launches.raw if isinstance(launches, LaunchList) else launches.__getitem__
    count = len(launches)
    # The launches the edit did not reach, by the last lint's number: the first ones
    # (same place) and the last ones (moved by the edit's length).
    keep = Prev(text, fmt, index, [], [], [], [], [], [], [], [], [], [], [], None, {}, {}, []) \
        if cache is not None and not suppression_actions else None
    # The launches the edit did not reach: the first `head` as they were, the last
    # `tail` moved by the edit's length (the last lint's, taken in two slices).
    head = tail = 0
    if prev is not None and diff is not None and count:
        _seed_release_doc(prev.text, text, diff, index)
    if keep is not None:
        keep.context = _release_context(text, fmt, settings, path, memo, prev, diff)
        if prev is not None and diff is not None and keep.context is not None \
                and keep.context == prev.context:
            head, tail = _align(prev, diff, launches, count, text, index)

    def made_for(version: str) -> tuple[Catalog, Reader, Context, RuleSet]:
        made = per_release.get(version)
        if made is None:
            catalog = load_catalog(version)
            rules = rule_set(catalog.version, settings.rule_packs, path, settings.project_rules)
            result.notices.extend(str(p) for p in rules.problems
                                  if str(p) not in result.notices)
            made = per_release[version] = (catalog, Reader(catalog), Context(catalog, settings),
                                           rules)
        return made

    if (head or tail) and prev is not None:
        # The last lint's launches were judged by what is still in effect: the model
        # config files they read are unchanged, their releases' rules the same objects.
        if any(stat(p) != st for p, st in prev.model_files.items()) or any(
                made_for(version)[3] is not rules for version, rules in prev.rule_sets.items()):
            head = tail = 0
    if keep is not None and prev is not None and (head or tail):
        keep.model_files.update(prev.model_files)
        keep.rule_sets.update(prev.rule_sets)
    if isinstance(result.parsed, _ParsedList):
        releases = result.releases  # not `result`: the list would hold its own result
        result.parsed.maker = lambda i: _reading_at(launches, i, path, releases[i].version)()
    for n in range(count):
        if n < head:
            if n == 0:
                assert prev is not None and keep is not None
                _take(prev, keep, result, findings, launches, 0, head, 0, 0)
                if cache is not None:
                    cache.reused += head
            continue
        if tail and n == count - tail:
            assert prev is not None and keep is not None
            _take(prev, keep, result, findings, launches, len(prev.raw) - tail, len(prev.raw),
                  n, len(text) - len(prev.text))
            if cache is not None:
                cache.reused += tail
            break
        if should_stop is not None and should_stop():
            if cache is not None and used is not None:
                cache.entries.update(used)
            raise Cancelled()
        if deadline is not None and time.monotonic() > deadline:
            line = index.line_of(raw_start(raw(n))) + 1
            result.notices.append(
                f"{BUDGET_NOTICE}: {count - n} of {count} launches, "
                f"from line {line} on, were not checked (servelint goes on from there "
                f"when the file is edited or saved)")
            if cache is not None and used is not None:
                cache.entries.update(used)
                used = cache.entries
            keep = None  # a lint cut short is not one the next can take launches from
            if cache is not None:
                cache.extras.pop("engine", None)
            break
        launch = launches[n]
        notices_at = len(result.notices)
        found_at = len(findings)
        window_at: tuple[int, int, int] | None = None
        reusable = False
        model_file: tuple | None = None
        backend = serve_backend(launch)
        if backend not in (None, "auto", "llm"):
            # `sglang serve --model-type diffusion` hands its options to another parser,
            # which servelint has no catalog of: judging them by the LLM server's would
            # call every diffusion option unknown.
            said = (f"a `sglang serve --model-type {backend}` launch is not checked: servelint "
                    f"knows the options of the LLM server only")
            if said not in result.notices:
                result.notices.append(said)
            result.releases.append(LaunchRelease(newest_version(), None, "newest",
                                                 "not checked (another serve backend)"))
            result.parsed.append(Reader(load_catalog()).read(launch))
            if keep is not None:
                _remember(keep, raw(n), result, [], notices_at, None, False, None, None)
            continue
        try:
            uniform = cache.extras.get("release") if cache is not None else None
            if keep is not None and keep.context is not None and launch.image is None \
                    and uniform is not None and uniform[0] == keep.context:
                # Nothing in the text places a release, and the launch names no image:
                # its release is every such launch's (no reading of the text again).
                release = uniform[1]
            else:
                release = launch_release(text, fmt, launch, path, settings, memo)
                if keep is not None and keep.context is not None and launch.image is None \
                        and cache is not None:
                    cache.extras["release"] = (keep.context, release)
        except Exception:
            log.exception("detecting the release of a launch in %s failed", path or "<text>")
            release = LaunchRelease(newest_version(), None, "newest",
                                    "the release could not be read: the newest known")
        result.releases.append(release)
        if release.notice and release.notice not in result.notices:
            result.notices.append(release.notice)
        catalog, reader, ctx, rules = made_for(release.version)
        if result.rules is None:
            result.rules = rules  # the first launch's, for hover and suppressions
        key = None
        if used is not None and cache is not None and not getattr(launch.host, "sources", None):
            line0, ws, we = window(index, launch)
            rel = release.span
            rkey = (release.version, release.declared, release.source, release.detail,
                    release.notice, None if rel is None else (rel.start - ws, rel.end - ws),
                    release.path)
            # One tuple for the launches that say the same (each key holds it).
            key = launch_key(text, ws, we, launch, shared.setdefault(rkey, rkey), id(rules))
            entry = cache.entries.get(key) if key is not None else None
            if entry is not None and key is not None and entry.rules is rules \
                    and (entry.line is None or entry.line == line0) \
                    and (entry.model_file is None
                         or stat(entry.model_file[0]) == entry.model_file[1]):
                findings.extend(moved(f, ws, n) for f in entry.findings)
                for said in entry.notices:
                    if said not in result.notices:
                        result.notices.append(said)
                result.parsed.append(_AT)  # read when asked (result.parsed.maker)
                used[key] = entry
                cache.reused += 1
                if keep is not None:
                    _remember(keep, raw(n), result, findings[found_at:], notices_at,
                              (ws, we, 0 if entry.line is None else 1), True,
                              entry.model_file, rules, key)
                    launch.thin()
                continue
        if cache is not None:
            cache.ran += 1
        notices_before = len(result.notices)
        reads_before = LINE_READS[0]
        first = len(findings)
        merged, config_findings, config_file = merge_config(launch, path, catalog)
        findings.extend(config_findings)
        start = len(findings)
        parsed = reader.read(merged)
        parsed.launch = launch if merged is launch else merged
        result.parsed.append(parsed)
        model_path = config_path_of(parsed, path)
        model_file = None
        if model_path is not None:  # one (path, stat) per model and lint, shared
            model_file = model_files.get(model_path)
            if model_file is None:
                model_file = (model_path, stat(model_path))
                model_file = model_files[model_path] = shared.setdefault(model_file, model_file)
            model_path = model_file[0]
        model = read_config(model_path) if model_path is not None else None
        for check, run in checks:
            try:
                for f in run(parsed, ctx):
                    f.launch_index = n
                    findings.append(f)
            except Exception:  # a failing check must not hide the others' findings
                log.exception("check %s failed on %s", check.code, path or "<text>")
                result.notices.append(f"internal error in check {check.code}; see the log")
        try:
            for f in apply_rules(parsed, rules, settings.gpu, model):
                f.launch_index = n
                findings.append(f)
        except Exception:
            log.exception("rules failed on %s", path or "<text>")
            result.notices.append("internal error while applying rules; see the log")
        # The rules' resolved view of the launch (rules/resolve.py view) refers back to it:
        # dropped once the rules are done, so a result kept in an editor is freed by
        # reference counting alone (the server sets large results aside from the cycle
        # collector, lsp/server.py settle_after_lint). Hover makes it again when asked.
        if hasattr(parsed, "__dict__"):
            vars(parsed).pop("_servelint_resolved", None)
        # Nor is the reading itself kept (its uses, values and problems took ~4 KB a
        # launch, 45 MB for 11,110 launches): read again when asked (result.parsed.maker).
        result.parsed[-1] = _AT
        if config_file is not None:
            findings[start:] = settle_foreign(findings[start:], config_file)
        if getattr(launch.host, "sources", None):
            # Words a Helm template took from values.yaml: point at where they are set.
            from servelint.extract.helm_values import relate_values
            relate_values(findings[start:], launch.host)
        if key is not None and used is not None and config_file is None:
            kept = relative(findings[first:], ws, we)
            if kept is not None:
                used[key] = Entry(kept, tuple(result.notices[notices_before:]), rules, model_file,
                                  line0 if LINE_READS[0] != reads_before else None)
                window_at = (ws, we, 1 if LINE_READS[0] != reads_before else 0)
                reusable = True
        if keep is not None:
            _remember(keep, raw(n), result, findings[found_at:], notices_at, window_at,
                      reusable, model_file, rules, key if reusable else None)
            # Kept without its words, which its host reads again when asked (model.Launch
            # .thin): 3.6 KB a launch of a large script.
            launch.thin()
    if cache is not None and used is not None:
        if keep is not None and (head or tail):
            # The launches taken from the last lint keep their entries too (an edit that
            # later defeats the taking, a pin added, still finds them): the new entries
            # join the old, and the old ones no launch has any more (an undo finds them)
            # are dropped once STALE_ENTRIES pile up. The bound was twice the launches:
            # ~1 KB an edit of an 11,110-launch script, +9.8 MiB over 10,000 edits.
            entries = cache.entries
            entries.update(used)
            if len(entries) > count + STALE_ENTRIES:
                entries = {k: entries[k] for k in keep.keys if k is not None and k in entries}
            used = entries
        cache.finish(used)
        cache.extras.pop("diff", None)  # it holds the last text
        if keep is not None:
            cache.extras["engine"] = keep
    # Suppression comments, before the settings: SL094/SL095 are filtered like any code.
    sup = Suppressions(text, index, fmt)
    if sup.present and getattr(settings, "respect_suppressions", True):
        fixes_before = {id(f): f.fixes for f in findings}
        findings = sup.apply(findings, result.launches, settings.wants,
                             _known_codes(result, settings))
        # A finding whose fixes the suppressions made unsafe may be one the next lint takes
        # as it is (engine._take) and whose JSON is kept (serialize.diagnostics_parts): it
        # gets its own copy, and the kept one its fixes back.
        for i, f in enumerate(findings):
            was = fixes_before.get(id(f))
            if was is not None and f.fixes is not was:
                mine = moved(f, 0)
                mine.serial = None
                mine.fixes = f.fixes
                f.fixes = was
                findings[i] = mine
    out = []
    seen: set[tuple] = set()
    # Per code, once: whether it is wanted, and its severity override (a large file has
    # thousands of findings of a handful of codes).
    wanted: dict[str, tuple] = {}
    for f in findings:
        want = wanted.get(f.code)
        if want is None:
            want = wanted[f.code] = (settings.wants(f.code), f.code in settings.severity)
        if not want[0]:
            continue
        key = (f.code, f.span.start, f.span.end, f.message)
        if key in seen:
            continue  # the same words reached twice (a Docker stage inheriting an ENTRYPOINT)
        seen.add(key)
        if want[1]:
            f.severity = settings.severity[f.code]
        out.append(f)
    if settings.target_version and result.releases:
        from servelint.upgrade import target_of, upgrade_findings
        result.target = target_of(settings)
        result.findings = list(out)
        result.upgrades = upgrade_findings(result, settings, language_id)
        out.extend(result.upgrades)
    out.sort(key=lambda f: (f.span.start, f.code))
    if suppression_actions and out:
        sup.add_actions(out, result.launches)
    result.findings = out
    return result


# At most this many tuples in a document's table of shared tuples (_shared_tuples): more
# means they change from lint to lint (a release pin typed in, a model file rewritten).
SHARED_TUPLES = 1024


def _shared_tuples(cache: LintCache | None) -> dict[tuple, tuple]:
    """The document's table of tuples its launches share across lints (a fresh one per
    lint without a cache, or when the table outgrew SHARED_TUPLES)."""
    if cache is None:
        return {}
    table = cache.extras.get("shared")
    if table is None or len(table) > SHARED_TUPLES:
        table = cache.extras["shared"] = {}
    return table


def _release_context(text: str, fmt: str, settings: Settings, path: str | None,
                     memo: dict, prev: Prev | None = None,
                     diff: tuple[int, int] | None = None) -> tuple | None:
    """What decides the release of every launch of the document alike, when nothing in
    it decides one launch's release by where it stands (no pin or version range named in
    the text, no image named outside a launch's own): the setting, or the project's files.
    A launch's own image (a Dockerfile stage's, a compose service's) is part of the
    launch as read (its fingerprint), and without a pin in the text nothing else changes
    what it gives. None otherwise (each launch's release is then detected again after an
    edit).

    The text is read for pins again (release._scan) unless the edit's lines, before and
    after, hold nothing such a reading looks for: in a shell script, no `sglang`,
    `sgl-dev`, `git`, comment mark, and no backslash when the script clones SGLang (a
    continuation can join a clone to its `--branch`)."""
    if settings.sglang_version != "auto":
        return ("setting", settings.sglang_version, settings.sglang_version_from)
    from servelint.release import _doc, project_release
    clones: bool | None = None
    if prev is not None and diff is not None and fmt in ("shell", "markdown", "launch-json", "dockerfile", "yaml") \
            and prev.context is not None and prev.context[0] == "files":
        p, s = diff
        changed = (_lines_around(text, p, len(text) - s) + "\n"
                   + _lines_around(prev.text, p, len(prev.text) - s)).lower()
        clones = prev.context[2]
        marks = ("sglang", "sgl-dev", "git", "#", "//", "sgl-project") + (("\\",) if clones else ())
        if any(m in changed for m in marks):
            clones = None
    if clones is None:
        scan = _doc(text).scan(fmt)
        if scan.exact or scan.images or scan.ranges:
            return None
        clones = "sgl-project" in text.lower()
    else:
        # The edit's lines hold nothing a reading for pins looks for: it would find none,
        # as in the last text (a launch whose release is read again asks for it).
        from servelint.release import _Scan
        _doc(text).scans.setdefault(fmt, _Scan([], [], []))
    found = None
    if path:
        key = ("project", path, settings.project_root)
        found = memo.get(key)
        if found is None:
            found = memo[key] = project_release(path, settings.project_root)
    return ("files", found, clones)


def _seed_release_doc(old: str, text: str, diff: tuple[int, int], index: LineIndex) -> None:
    """Give the release reader's memory of `text` (release._Doc) what this lint already
    knows, instead of it reading the whole text again for the launch an edit changed: the
    line index, and a Dockerfile's stage starts (FROM lines) moved from the last text's,
    with only the edited lines searched again. 3.2 ms and 6 ms of a 20,000-line
    Dockerfile's edit."""
    from servelint.release import _FROM, _DOCS, _doc
    before = next((x for x in _DOCS.values() if x.text is old), None)  # before _doc drops it
    doc = _doc(text)
    if doc._index is None:
        doc._index = index
    if before is not None:
        # Read for this text's lint only: the next edit starts from this text's memory,
        # and the last text (3.6 MB of a 100,000-line script, and its line index) stayed
        # alive in _DOCS until a third text came.
        for key in [k for k, v in _DOCS.items() if v is before]:
            del _DOCS[key]
    if doc._stages is not None or before is None or before._stages is None:
        return
    p, s = diff
    d = len(text) - len(old)
    a = text.rfind("\n", 0, p) + 1  # the first line the edit touched (the same in both)
    b = text.find("\n", len(text) - s)  # the end of the last one, in the new text
    b = len(text) if b == -1 else b
    starts = before._stages
    head = bisect.bisect_left(starts, a)
    tail = bisect.bisect_right(starts, b - d)
    doc._stages = starts[:head] + [m.start() for m in _FROM.finditer(text, a, b)] + \
        [x + d for x in starts[tail:]]


def _lines_around(text: str, a: int, b: int) -> str:
    """The whole lines of `text` that hold offsets a..b."""
    start = text.rfind("\n", 0, a) + 1
    end = text.find("\n", b)
    return text[start:len(text) if end == -1 else end]


def _align(prev: Prev, diff: tuple[int, int], launches, count: int, text: str,
           index: LineIndex) -> tuple[int, int]:
    """(head, tail): how many of the first launches of this lint are the last lint's
    first ones where they were, and how many of the last are its last ones moved by the
    edit's length. A launch counts when its window lies in the text both lints share, it
    was read the same way (the same fingerprint at the same place), and nothing outside
    that text decides its release or its messages (an image with a variable, line numbers
    that moved)."""
    p, s = diff
    d = len(text) - len(prev.text)
    shared_end = len(prev.text) - s
    dlines = len(index.starts) - len(prev.index.starts)
    raw = launches.raw if isinstance(launches, LaunchList) else launches.__getitem__
    m = len(prev.raw)
    limit = min(count, m)
    we, ws = prev.we, prev.ws
    head = 0
    while head < limit and 0 <= we[head] <= p and not prev.varies[head]:
        head += 1
    stored = list.__getitem__(launches, slice(0, head))
    if stored != prev.raw[:head]:  # not the very objects: compare one by one
        for i in range(head):
            if not _same(raw(i), prev.raw[i], 0):
                head = i
                break
    tail = 0
    varies, lines, releases = prev.varies, prev.lines, prev.releases
    while tail < count - head and tail < m - head:
        o = m - 1 - tail
        if ws[o] < shared_end or varies[o]:
            break
        if dlines and (lines[o] or releases[o].span is not None):
            break  # its messages or its release name line numbers, which moved
        tail += 1
    if tail:
        stored = list.__getitem__(launches, slice(count - tail, count))
        if d or stored != prev.raw[m - tail:]:  # moved, or not the very objects
            olds = prev.raw
            for j in range(tail):
                item, old = stored[tail - 1 - j], olds[m - 1 - j]
                if not _same(item, old, d):
                    tail = j
                    break
    return head, tail


def _same(item, old, shift: int) -> bool:
    """`item` is the launch `old` read again, `shift` characters further on."""
    if raw_start(item) != raw_start(old) + shift:
        return False
    a, b = raw_fingerprint(item), raw_fingerprint(old)
    if a is None and type(item) is Launch:
        a = fingerprint(item)  # an extractor that does not make them up front
    return a is b or (a is not None and a == b)


def _varies(item) -> bool:
    """The launch's release depends on variables set elsewhere (its image names one)."""
    image = (item.base if type(item) is Moved else item).image
    return image is not None and "$" in image[0]


def _take(prev: Prev, keep: Prev, result: LintResult, findings: list[Finding], launches,
          o0: int, o1: int, n0: int, d: int) -> None:
    """Take the last lint's launches o0..o1 as this lint's n0.., moved by `d`."""
    releases = prev.releases[o0:o1]
    result.releases.extend(releases)
    if result.rules is None and o1 > o0:
        result.rules = prev.rules[o0]
    notices = prev.notices[o0:o1]
    if any(notices):
        for said in notices:
            for one in said:
                if one not in result.notices:
                    result.notices.append(one)
    if d == 0 and n0 == o0:
        found = prev.found[o0:o1]
        for mine in found:
            if mine:
                findings.extend(mine)  # the same findings: nothing changes them in place
        parsed = prev.parsed[o0:o1]
        ws, we = prev.ws[o0:o1], prev.we[o0:o1]
    else:
        found = []
        for i, mine in enumerate(prev.found[o0:o1]):
            if mine:
                mine = [moved(f, d, n0 + i) for f in mine]
                findings.extend(mine)
            found.append(mine)
        parsed = [_AT] * (o1 - o0)
        ws = [x + d for x in prev.ws[o0:o1]]
        we = [x + d for x in prev.we[o0:o1]]
    list.extend(result.parsed, parsed)
    keep.raw.extend(list.__getitem__(launches, slice(n0, n0 + o1 - o0)))
    keep.releases.extend(releases)
    keep.found.extend(found)
    keep.notices.extend(notices)
    keep.parsed.extend(parsed)
    keep.ws.extend(ws)
    keep.we.extend(we)
    keep.lines.extend(prev.lines[o0:o1])
    keep.models.extend(prev.models[o0:o1])
    keep.rules.extend(prev.rules[o0:o1])
    keep.varies.extend(prev.varies[o0:o1])
    keep.keys.extend(prev.keys[o0:o1])


def _remember(keep: Prev, item, result: LintResult, mine: list[Finding], notices_at: int,
              window_at: tuple[int, int, int] | None, reusable: bool, model_file,
              rules, key: tuple | None = None) -> None:
    """Note one launch of this lint for the next (Prev)."""
    keep.keys.append(key)
    keep.raw.append(item)
    keep.releases.append(result.releases[-1])
    keep.found.append((list(mine) if mine else ()) if reusable and window_at is not None else None)
    keep.notices.append(tuple(result.notices[notices_at:]))
    # Not the ParsedLaunch itself: the next lint's result reads the launch again when
    # asked (hover), and the arguments of thousands of launches are not kept twice.
    keep.parsed.append(_AT)
    ws, we, lines = window_at if window_at is not None else (-1, -1, 1)
    keep.ws.append(ws)
    keep.we.append(we)
    keep.lines.append(bool(lines))
    keep.models.append(model_file)
    keep.rules.append(rules)
    keep.varies.append(_varies(item))
    if model_file is not None:
        keep.model_files[model_file[0]] = model_file[1]
    if rules is not None:
        keep.rule_sets[result.releases[-1].version] = rules


def _reading_at(launches, n: int, path: str | None, version: str) -> Callable[[], ParsedLaunch]:
    """A later ParsedLaunch of the n-th launch (copied when first read, LaunchList)."""
    def make() -> ParsedLaunch:
        catalog = load_catalog(version)
        return _reading(launches[n], path, catalog, Reader(catalog))()
    return make


def _reading(launch: Launch, path: str | None, catalog: Catalog,
             reader: Reader) -> Callable[[], ParsedLaunch]:
    def make() -> ParsedLaunch:
        merged = merge_config(launch, path, catalog)[0]
        parsed = reader.read(merged)
        parsed.launch = launch if merged is launch else merged
        return parsed
    return make


def _known_codes(result: LintResult, settings: Settings):
    """Whether a code is one servelint can report here: a check, or a rule of the packs in
    effect (loaded only when a suppression names a code that is not a check)."""
    checks = load_checks()
    codes: set[str] | None = None

    def known(code: str) -> bool:
        nonlocal codes
        if code in checks:
            return True
        if codes is None:
            codes = set()
            for made in ({r.version for r in result.releases} or {newest_version()}):
                rules = rule_set(made, settings.rule_packs, result.path, settings.project_rules)
                codes |= {r.code for r in rules.rules}
        return code in codes
    return known


def fix_all_text(text: str, path: str | None = None, language_id: str | None = None,
                 settings: Settings | None = None, passes: int = 8) -> tuple[str, int]:
    """Apply every safe fix, re-linting between passes so that fixes whose edits touch
    the same lines still all land (as Ruff does). Returns the text and the edit count."""
    total = 0
    cache = LintCache()  # a pass re-checks only the launches the previous one edited
    for _ in range(passes):
        result = lint(text, path, language_id, settings, cache=cache)
        edits = fix_all_edits(result.findings, text, result.format)
        if not edits:
            break
        new = apply_edits(text, edits)
        if new == text:
            break
        text = new
        total += len(edits)
    return text, total
