"""SL001 unknown-option: an option SGLang's parser does not have."""

from __future__ import annotations

from servelint.catalog import Option, history, version_key
from servelint.checks import Check, register
from servelint.fixes import fix, remove_tokens, rename_option
from servelint.model import Finding, Severity
from servelint.successors import retired
from servelint.suggest import close_options


def _fits(opt: Option, kind: str | None) -> bool:
    """Whether `opt` can be read the way the unknown option was written: `value` (it was
    given a value), `switch` (nothing follows it), None (cannot tell)."""
    if kind == "value":
        return opt.takes_value
    if kind == "switch":
        return opt.is_boolean or opt.nargs in ("?", "*")
    return True


def suggestions(catalog, written: str, n: int = 3, kind: str | None = None) -> list[str]:
    """Known option strings `written` may be a misspelling of: the same feature
    (`suggest.same_feature`) and, when `kind` says how it was written, the same kind."""
    names = [x for x in catalog.long_names()
             if not catalog.lookup(x).hidden and _fits(catalog.lookup(x), kind)]
    return close_options(written, names, n=n)


def written_kind(parsed, p) -> str | None:
    """How an unknown option was written: `value` (`--x=v`, or a plain word follows it),
    `switch` (an option or the end follows it), None when a word the file does not fix
    follows it."""
    tok = p.token
    text = tok.text if tok.text is not None else tok.prefix
    if "=" in text:
        return "value"
    words = parsed.launch.tokens[p.index + 1:p.last_index + 1]
    if any(w.text is not None for w in words):
        return "value"
    return None if words else "switch"


def added_later(name: str, version: str) -> str | None:
    """The release that added `name`, when it is newer than `version`."""
    first = history().first_seen(name)
    if first is not None and version_key(first) > version_key(version):
        return first
    return None


def run(parsed, ctx):
    launch = parsed.launch
    catalog = parsed.catalog
    for p in parsed.problems:
        if p.kind != "unknown" or "_" in p.written.lstrip("-"):
            continue
        if ctx.ignore_unknown(p.written, launch):
            continue
        if p.written.startswith("--") and retired(p.written, catalog) is not None:
            continue  # an option of an earlier release: SL009 names its successor
        later = added_later(p.written, catalog.version) if p.written.startswith("--") else None
        guesses = [] if later else suggestions(catalog, p.written, kind=written_kind(parsed, p))
        if later:
            hint = f"; SGLang {later} added it"
        else:
            hint = f"; did you mean {guesses[0]}?" if guesses else ""
        fixes = []
        for k, g in enumerate(guesses):
            fixes += fix(f"Replace {p.written} with {g}",
                         rename_option(launch, p.token, p.written, p.span, g),
                         preferred=(k == 0 and len(guesses) == 1), safe=False)
        # Values after an unknown option are unrecognized with it.
        fixes += fix(f"Remove {p.written}", remove_tokens(launch, p.index, p.last_index), safe=False)
        yield Finding(
            code=CHECK.code, severity=CHECK.severity,
            message=(f"unrecognized arguments: {p.written} (SGLang {catalog.version} has no "
                     f"such option{hint})"),
            span=p.span or p.token.span, fixes=fixes)


CHECK = register(Check(
    code="SL001", name="unknown-option", severity=Severity.ERROR,
    title="Option not known to SGLang",
    what="Reports an option that SGLang's launch parser does not define, with the known "
         "spellings it may be a typo of: the same feature (the words that differ are a typo "
         "or a shortened word apart, not a different word) and the same kind (an option "
         "given a value is never offered a switch, nor the reverse). An option of a newer "
         "release says which release added it. An option that an earlier release had is "
         "SL009's (removed-option), which names its successor.",
    why="SGLang stops with `error: unrecognized arguments` before it starts, after the "
        "imports have already taken their time.",
    example="python -m sglang.launch_server --model-path m --tensor-paralel-size 2",
    instead="python -m sglang.launch_server --model-path m --tensor-parallel-size 2",
    fix_safety="The replacement with a close spelling changes which option is set, so it is "
               "offered as a quick fix but never applied by fix-all.",
    run=run,
))
