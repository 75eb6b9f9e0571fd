"""Completion of SGLang launch options and their values. No LSP types here:
`complete` returns plain `Candidate`s; `lsp/completion.py` turns them into LSP items.

Where it completes (docs/completion.md has the per-format table):

- option names after a launch entrypoint and between its options, in every format whose
  launch is a command line (shell, Dockerfile shell form, Markdown code blocks, YAML
  `command:` strings, `bash -c '...'`), and inside a list item that is a string being
  written (k8s `args: ["--tp"]`, `- --tp`, launch.json `"args": ["--tp"]`, exec-form
  CMD, Python argv lists);
- values of an option with choices, after `--opt ` or `--opt=`;
- in SGLang's own `--config` YAML: keys (option names without dashes) at the start of a
  top-level line, and `true`/`false` for switches or the choices after `key: `.

Options already written in the launch are not offered again unless argparse appends
their values (`append`/`extend`/`count` actions); every spelling of a written option
(aliases, `--no-x`) is left out with it.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from functools import lru_cache

from servelint.args import Reader
from servelint.catalog import Catalog, Option, load_catalog
from servelint.model import Launch, LineIndex, Span, Token
from servelint.settings import Settings

log = logging.getLogger(__name__)

OPTION = "option"
VALUE = "value"


@dataclass(slots=True)
class Candidate:
    """One completion: `insert_text` replaces the text of `replace` (document offsets)."""

    label: str
    insert_text: str
    replace: Span
    kind: str  # "option" | "value"
    detail: str = ""
    documentation: str = ""
    deprecated: bool = False
    sort_key: str = ""


# After a launch's last word, the cursor is still in the launch when only blanks and
# backslash-newline continuations lie between them (the same logical shell line).
_CONTINUATION = re.compile(r"(?:[ \t]|\\\r?\n)*")
_OPTION_WORD = re.compile(r"-[A-Za-z0-9_.-]*")
_CONFIG_KEY_PART = re.compile(r"[A-Za-z0-9_-]*")
_CONFIG_VALUE_LINE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)[ \t]*:[ \t]+([^\s'\"#]*)")
_CONFIG_KEY_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|$)", re.M)


# --- per-catalog tables, built once --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    label: str
    dest: str
    repeatable: bool
    detail: str
    documentation: str
    deprecated: bool
    sort_key: str


def _json(value) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def _choices_text(choices, limit: int = 6) -> str:
    shown = [str(c) for c in choices[:limit]]
    more = ",…" if len(choices) > limit else ""
    return "{" + ",".join(shown) + more + "}"


def _value_shape(opt: Option) -> str:
    if opt.metavar:
        meta = opt.metavar if isinstance(opt.metavar, str) else " ".join(map(str, opt.metavar))
    elif opt.choices:
        meta = _choices_text(opt.choices)
    elif opt.type:
        meta = opt.type.upper() if opt.type in ("int", "float", "str") else opt.type
    else:
        meta = "VALUE"
    if opt.kind == "optional":
        return f"[{meta}]"
    if opt.kind == "list":
        return f"{meta} [{meta} ...]" if opt.nargs == "+" else f"[{meta} ...]"
    return meta


def option_detail(opt: Option, negative: bool = False) -> str:
    """A one-line summary: what the option takes."""
    if opt.kind == "flag":
        text = "switch"
    elif opt.kind == "bool_optional":
        text = f"switch: turns {opt.name} off" if negative else f"switch (--no-{opt.name[2:]} turns it off)"
    else:
        text = _value_shape(opt)
    if opt.deprecated:
        text = "deprecated" + (f", use {opt.replacement}" if opt.replacement else "") + " · " + text
    return text


def option_documentation(opt: Option, version: str) -> str:
    """Markdown: the help text, then default, choices and deprecation."""
    parts = []
    if opt.deprecated:
        parts.append("**Deprecated**" + (f": use `{opt.replacement}`" if opt.replacement else ""))
    if opt.help:
        parts.append(opt.help)
    facts = []
    if len(opt.names) > 1:
        facts.append("Spellings: " + ", ".join(f"`{n}`" for n in opt.names))
    if opt.kind not in ("flag", "bool_optional") or opt.default not in (None, False):
        facts.append(f"Default: `{_json(opt.default)}`")
    if opt.choices:
        facts.append("Choices: " + ", ".join(f"`{c}`" for c in opt.choices))
    facts.append(f"SGLang {version}")
    parts.append("  \n".join(facts))
    return "\n\n".join(parts)


def _offered(opt: Option) -> bool:
    return not opt.hidden and not opt.removed


@lru_cache(maxsize=8)
def _option_entries(catalog: Catalog) -> tuple[_Entry, ...]:
    """Every option SGLang documents, as completion entries (bool_optional options twice:
    `--x` and `--no-x`). Deprecated ones sort after all others."""
    out = []
    for opt in catalog.options:
        if not _offered(opt) or not opt.name.startswith("-"):
            continue
        doc = option_documentation(opt, catalog.version)
        rank = "2" if opt.deprecated else "0"
        out.append(_Entry(opt.name, opt.dest, opt.repeatable, option_detail(opt), doc,
                          opt.deprecated, rank + opt.name))
        if opt.kind == "bool_optional":
            neg = next((n for n in opt.names if n.startswith("--no-")), "--no-" + opt.name[2:])
            out.append(_Entry(neg, opt.dest, opt.repeatable, option_detail(opt, negative=True),
                              doc, opt.deprecated, rank + neg))
    return tuple(out)


@lru_cache(maxsize=8)
def _documented_names(catalog: Catalog) -> frozenset[str]:
    return frozenset(e.label for e in _option_entries(catalog))


@lru_cache(maxsize=8)
def _config_entries(catalog: Catalog) -> tuple[tuple[_Entry, Option], ...]:
    """Keys of an SGLang config file: documented names without dashes, minus those SGLang
    refuses in a config file (custom list actions, BooleanOptionalAction)."""
    from servelint.extract.sglang_config import _key_sets
    _, refused = _key_sets(catalog)
    out = []
    for opt in catalog.options:
        if not _offered(opt) or not opt.name.startswith("--") or "--config" in opt.names:
            continue
        key = opt.name[2:]
        if key.replace("-", "_") in refused or opt.dest in refused:
            continue
        detail = "true | false" if opt.is_boolean else _value_shape(opt)
        if opt.deprecated:
            detail = "deprecated" + (f", use {opt.replacement}" if opt.replacement else "") + " · " + detail
        rank = "2" if opt.deprecated else "0"
        out.append((_Entry(key, opt.dest, False, detail, option_documentation(opt, catalog.version),
                           opt.deprecated, rank + key), opt))
    return tuple(out)


# --- entry point -----------------------------------------------------------------------------


def complete(text: str, offset: int, path: str | None = None, language_id: str | None = None,
             settings: Settings | None = None, result=None, *,
             catalog: Catalog | None = None) -> list[Candidate] | None:
    """The completions at `offset` (an index into `text`), or None when the cursor is in
    no place servelint completes. `result` is the document's latest `LintResult`; when
    its text is not `text` (the user typed since), the launches are extracted again
    (extraction only: no checks, no rules). `catalog` overrides the settings' catalog."""
    settings = settings or Settings()
    if not 0 <= offset <= len(text) or not settings.enable:
        return None
    current = result is not None and result.text == text
    if current:
        fmt, launches = result.format, result.launches
    else:
        fmt, launches = _extract(text, path, language_id, settings)
    if fmt == "sglang-config":
        return _complete_config(text, offset, catalog or _setting_catalog(settings))
    launch = launch_at(text, offset, launches)
    if launch is None:
        return None
    if catalog is None:
        # The options of the release this launch runs on (engine.launch_release).
        from servelint.engine import launch_release
        releases = result.releases if current else []
        at = next((i for i, x in enumerate(launches) if x is launch), None)
        if at is not None and at < len(releases):
            version = releases[at].version
        else:
            version = launch_release(text, fmt or "", launch, path, settings).version
        catalog = load_catalog(version)
    return _complete_in_launch(text, offset, launch, catalog)


def _setting_catalog(settings: Settings) -> Catalog:
    """The catalog the settings name; the newest for "auto"."""
    try:
        return load_catalog(settings.sglang_version)
    except KeyError:
        return load_catalog()


def _extract(text: str, path: str | None, language_id: str | None,
             settings: Settings) -> tuple[str | None, list[Launch]]:
    """The document's format and launches, as `engine.lint` finds them, without checks."""
    from servelint.engine import detect_format
    from servelint.extract import by_name
    fmt = detect_format(path, language_id, text, settings.rule_packs)
    if fmt is None or fmt in ("rulepack", "sglang-config") or len(text) > settings.max_file_bytes:
        return fmt, []
    extractor = by_name(fmt)
    if extractor is None or (extractor.marker and extractor.marker not in text):
        return fmt, []
    try:
        return fmt, extractor.extract(text, LineIndex(text), path, settings).launches
    except Exception:  # a broken extractor must not break completion
        log.exception("extracting %s launches for completion failed", fmt)
        return fmt, []


def launch_at(text: str, offset: int, launches: list[Launch]) -> Launch | None:
    """The launch the cursor is in: one whose span holds it, or whose last word ends
    before it on the same logical line. The innermost (latest starting) wins."""
    best = None
    for launch in launches:
        span = launch.span
        if launch.kind == "config" or span.start >= offset or (
                best is not None and span.start <= best.span.start):
            continue
        if offset <= span.end or _CONTINUATION.fullmatch(text, span.end, offset) is not None:
            best = launch
    return best


# --- inside a launch -------------------------------------------------------------------------


def _inner(tok: Token, text: str) -> Span:
    """The token's span without the quotes around a whole quoted word."""
    s, e = tok.span.start, tok.span.end
    raw = text[s:e]
    if len(raw) >= 2 and raw[0] in "\"'" and raw[-1] == raw[0]:
        return Span(s + 1, e - 1)
    return Span(s, e)


def _unquoted(text: str, span: Span, offset: int) -> Span | None:
    """A value region, without its quotes when it is a quoted word; None when the cursor
    is outside those quotes."""
    raw = text[span.start:span.end]
    if raw[:1] in ("'", '"'):
        end = span.end - 1 if len(raw) >= 2 and raw[-1] == raw[0] else span.end
        span = Span(span.start + 1, end)
    return span if span.start <= offset <= span.end else None


def _complete_in_launch(text: str, offset: int, launch: Launch,
                        catalog: Catalog) -> list[Candidate] | None:
    entry_end = launch.entry.span.end
    if offset <= entry_end:
        return None  # on or before the entrypoint
    lo, hi = launch.span.start, max(launch.span.end, offset)
    # The words in the document, in order (an extractor may add words of its own that
    # are not written in this launch's text, e.g. the --port launch_server_cmd adds).
    words = sorted((t for t in launch.tokens
                    if lo <= t.span.start and t.span.end <= hi and t.span.start >= entry_end),
                   key=lambda t: t.span.start)
    reader = Reader(catalog)
    current = None
    for i, tok in enumerate(words):
        if tok.span.start < offset <= tok.span.end or tok.span.start == offset == tok.span.end:
            current = i
            break
    if current is None:
        at = sum(1 for t in words if t.span.end <= offset)
        prev_end = words[at - 1].span.end if at else entry_end
        if offset == prev_end or _CONTINUATION.fullmatch(text, prev_end, offset) is None:
            return None
        replace = Span(offset, offset)
        glue = offset < len(text) and not text[offset].isspace()
        present = _present(reader, launch, None)
        context = _value_context(reader, launch, words[:at])
        if context is not None:
            opt, given, required = context
            values = _value_candidates(opt, given, replace)
            if required:
                return values or None
            return values + _option_candidates(catalog, present, replace, "", glue)
        return _option_candidates(catalog, present, replace, "", glue)
    tok = words[current]
    if tok.text is None:
        return None  # a word the file does not fix ($X, $(cmd))
    inner = _inner(tok, text)
    if not inner.start <= offset <= inner.end:
        return None  # outside the quotes of a quoted item
    word = text[inner.start:inner.end]
    if word.startswith("-"):
        eq = word.find("=")
        if eq >= 0 and offset > inner.start + eq:
            name = word[:eq]
            if not _OPTION_WORD.fullmatch(name):
                return None
            kind, named, _, _, _ = reader.classify(name)
            if kind != "O" or named is None or not named.takes_value:
                return None
            region = _unquoted(text, Span(inner.start + eq + 1, inner.end), offset)
            if region is None:
                return None
            return _value_candidates(named, [], region) or None
        name_end = inner.start + eq if eq >= 0 else inner.end
        if not _OPTION_WORD.fullmatch(text[inner.start:name_end]):
            return None
        present = _present(reader, launch, tok)
        partial = text[inner.start:offset]
        return _option_candidates(catalog, present, Span(inner.start, name_end), partial, False)
    if word != tok.text:
        return None  # escapes or quoting inside the word: nothing to replace it with safely
    context = _value_context(reader, launch, words[:current])
    if context is not None:
        opt, given, _ = context
        return _value_candidates(opt, given, inner) or None
    if word == "":
        present = _present(reader, launch, tok)  # an empty list item: a new argument
        return _option_candidates(catalog, present, inner, "", False)
    return None


def _sub_launch(launch: Launch, tokens: list[Token]) -> Launch:
    return Launch(launch.kind, launch.entry, tokens, launch.host, launch.span, launch.env,
                  launch.anchor, launch.image, launch.env_complete)


def _present(reader: Reader, launch: Launch, skip: Token | None) -> set[str]:
    """The dests of the options written in the launch, apart from the word being typed."""
    tokens = [t for t in launch.tokens if t is not skip]
    parsed = reader.read(_sub_launch(launch, tokens))
    return {u.option.dest for u in parsed.uses}


def _arity(opt: Option) -> tuple[int, int]:
    nargs = opt.nargs
    if nargs is None:
        return 1, 1
    if nargs == "?":
        return 0, 1
    if nargs == "*":
        return 0, 1 << 30
    if nargs == "+":
        return 1, 1 << 30
    if isinstance(nargs, int):
        return nargs, nargs
    return 1, 1


def _value_context(reader: Reader, launch: Launch,
                   before: list[Token]) -> tuple[Option, list[str], bool] | None:
    """When the words before the cursor end with an option that can take another value:
    (the option, the values it has, whether one more is required)."""
    if not before:
        return None
    parsed = reader.read(_sub_launch(launch, before))
    if not parsed.uses:
        return None
    use = parsed.uses[-1]
    if use.last_index != len(before) - 1 or use.explicit or not use.written:
        return None
    if not use.option.takes_value:
        return None
    least, most = _arity(use.option)
    count = len(use.values)
    if count >= most:
        return None
    return use.option, [v.text for v in use.values if v.text is not None], count < least


def _value_candidates(opt: Option, given: list[str], replace: Span,
                      quote=None) -> list[Candidate]:
    if not opt.choices:
        return []
    choices = list(opt.choices)
    if opt.default in choices:
        choices.remove(opt.default)
        choices.insert(0, opt.default)
    out = []
    for n, choice in enumerate(choices):
        label = str(choice)
        if label in given:
            continue  # a list option: each choice once
        is_default = choice == opt.default
        out.append(Candidate(
            label=label, insert_text=quote(label) if quote else label, replace=replace, kind=VALUE,
            detail=f"{opt.name} (default)" if is_default else opt.name,
            sort_key=f"{n:04d}"))
    return out


def _option_candidates(catalog: Catalog, present: set[str], replace: Span, partial: str,
                       glue: bool) -> list[Candidate]:
    tail = " " if glue else ""
    out = [Candidate(e.label, e.label + tail, replace, OPTION, e.detail, e.documentation,
                     e.deprecated, e.sort_key)
           for e in _option_entries(catalog) if e.repeatable or e.dest not in present]
    if len(partial) >= 3 and partial.startswith("--"):
        # An alias the user is spelling (--tensor-parallel-size for --tp-size).
        documented = _documented_names(catalog)
        for name in catalog.prefix_matches(partial):
            opt = catalog.lookup(name)
            if (name in documented or not name.startswith("--") or opt is None
                    or not _offered(opt) or (opt.dest in present and not opt.repeatable)):
                continue
            out.append(Candidate(
                name, name + tail, replace, OPTION, f"alias of {opt.name} · {option_detail(opt)}",
                option_documentation(opt, catalog.version), opt.deprecated,
                ("2" if opt.deprecated else "1") + name))
    return out


# --- SGLang config files ---------------------------------------------------------------------


@lru_cache(maxsize=256)
def _yaml_plain(value: str) -> str:
    """`value` as a YAML scalar that reads back as this string."""
    import yaml
    try:
        loaded = yaml.safe_load(value)
    except yaml.YAMLError:
        loaded = None
    return value if loaded == value else json.dumps(value)


def _config_key_for(catalog: Catalog, key: str) -> Option | None:
    return catalog.lookup("--" + key)


def _key_part(text: str, offset: int) -> str:
    """The part of a config key at `offset` (possibly empty)."""
    m = _CONFIG_KEY_PART.match(text, offset)
    assert m is not None  # the pattern matches the empty string
    return m.group(0)


def _complete_config(text: str, offset: int, catalog: Catalog) -> list[Candidate] | None:
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end < 0 else line_end
    before = text[line_start:offset]
    if _CONFIG_KEY_PART.fullmatch(before):
        # A top-level key being written (indented lines belong to a value).
        key_end = offset + len(_key_part(text, offset))
        has_colon = text[key_end:line_end].lstrip(" \t").startswith(":")
        present = set()
        for km in _CONFIG_KEY_LINE.finditer(text):
            if km.start() == line_start:
                continue
            opt = _config_key_for(catalog, km.group(1))
            if opt is not None:
                present.add(opt.dest)
        replace = Span(line_start, key_end)
        tail = "" if has_colon else ": "
        return [Candidate(e.label, e.label + tail, replace, OPTION, e.detail, e.documentation,
                          e.deprecated, e.sort_key)
                for e, _ in _config_entries(catalog) if e.dest not in present]
    m = _CONFIG_VALUE_LINE.fullmatch(before)
    if m is None:
        return None
    opt = _config_key_for(catalog, m.group(1))
    if opt is None:
        return None
    value_start = offset - len(m.group(2))
    value_end = offset
    while value_end < line_end and not text[value_end].isspace() and text[value_end] != "#":
        value_end += 1
    replace = Span(value_start, value_end)
    if opt.is_boolean:
        default = bool(opt.default)
        return [Candidate(word, word, replace, VALUE,
                          f"{opt.name} (default)" if (word == "true") == default else opt.name,
                          sort_key=f"{n:04d}")
                for n, word in enumerate(sorted(("true", "false"), key=lambda w: (w == "true") != default))]
    return _value_candidates(opt, [], replace, quote=_yaml_plain) or None
