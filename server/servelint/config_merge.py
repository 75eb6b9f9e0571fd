"""A launch that names SGLang `--config` files: the file's words merged in front of the
command line's, as SGLang's `prepare_server_args` does, and the findings about merged
words told back in the document (with a related location in the config file)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from servelint.catalog import Catalog
from servelint.checks.bad_config_file import CHECK as BAD_CONFIG
from servelint.checks.config_equals import CHECK as CONFIG_EQUALS
from servelint.model import Edit, Finding, Fix, Host, Launch, LineIndex, Related, Span, Token

FOREIGN = 1 << 40  # offsets of words from another file are shifted by this much


@dataclass
class ConfigFile:
    path: str
    index: LineIndex
    span: Span | None = None  # the `--config` value in the launch's own document


class MergedHost:
    """The launch's own host, refusing to edit words that live in the config file."""

    def __init__(self, inner: Host):
        self.inner = inner
        self.text = inner.text
        self.index = inner.index
        self.name = inner.name
        self.quote_context = inner.quote_context

    def quote(self, value: str) -> str | None:
        return self.inner.quote(value)

    def replace(self, token: Token, value: str) -> Edit | None:
        return None if token.origin else self.inner.replace(token, value)

    def replace_words(self, first: Token, last: Token, words: list[str]) -> Edit | None:
        return None if first.origin or last.origin else self.inner.replace_words(first, last, words)

    def insert_after(self, token: Token, words: list[str]) -> Edit | None:
        return None if token.origin else self.inner.insert_after(token, words)

    def remove(self, first: Token, last: Token) -> Edit | None:
        if first.origin or last.origin:
            return Edit(Span(FOREIGN, FOREIGN), "")  # dropped by settle_foreign
        return self.inner.remove(first, last)


def merge_config(launch: Launch, doc_path: str | None,
                 catalog: Catalog) -> tuple[Launch, list[Finding], ConfigFile | None]:
    """The launch as SGLang reads it when it names a config file: the file's words first,
    then the command line's (which therefore wins), as prepare_server_args does."""
    if launch.kind == "config":
        return launch, [], None
    toks = launch.tokens
    findings: list[Finding] = []
    for t in toks:
        if t.text and t.text.startswith("--config="):
            named = t.text.split("=", 1)[1]
            edit = launch.host.replace_words(t, t, ["--config", named])
            findings.append(CONFIG_EQUALS.finding(
                f"SGLang reads a config file only when it is written as two words, --config "
                f"{named}: with '{t.text}' the file is accepted and silently ignored",
                t.span, fixes=[Fix(f"Write --config {named}", [edit], preferred=True)] if edit else []))
    at = [i for i, t in enumerate(toks) if t.text == "--config"]
    if not at:
        return launch, findings, None
    # Here, not at the top: most launches name no config file, and a cold check of a
    # shell script need not import the SGLang config reader.
    from servelint.extract.sglang_config import read_config_file
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

    def merged_with(words: list[Token]) -> Launch:
        return Launch(launch.kind, launch.entry, words, MergedHost(launch.host), launch.span,
                      launch.env, launch.anchor, launch.image, launch.env_complete)

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
    loaded = read_config_file(full, catalog)
    if isinstance(loaded, str):  # the reason it cannot be read
        findings.append(BAD_CONFIG.finding(loaded, value.span))
        return merged_with([unknown] + rest), findings, None
    text, words, cfg_findings = loaded
    for f in cfg_findings:
        findings.append(Finding(f.code, f.severity, f"{cfg}: {f.message}", value.span))
    shifted = [Token(Span(w.span.start + FOREIGN, w.span.end + FOREIGN), w.text, w.prefix, w.splat,
                     w.raw, w.origin) for w in words]
    return merged_with(shifted + rest), findings, ConfigFile(full, LineIndex(text), value.span)


def settle_foreign(findings: list[Finding], cfg: ConfigFile) -> list[Finding]:
    """Findings of a launch merged with a config file, told in this document: one that
    involves a flag of this launch sits on that flag and points into the config file; a
    problem made only of the config file's words sits on the `--config` value, named by
    the file and pointing at the words (the file's own lint reports it there too, but only
    the launch sees the command line it is merged with, and a CI run may lint only the
    script)."""
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
            moved = Related(f.span, "set here in the config file")
            if local is None:
                if cfg.span is None:
                    continue
                f.message = f"{os.path.basename(cfg.path)}: {f.message}"
                f.related = [outside(moved)] + f.related
                f.span = cfg.span
            else:
                f.related = [outside(moved)] + [r for r in f.related if r is not local]
                f.span = local.span
        f.related = [outside(r) if foreign(r.span) and r.path is None else r for r in f.related]
        f.fixes = [x for x in f.fixes if all(not foreign(e.span) for e in x.edits)]
        out.append(f)
    return out
