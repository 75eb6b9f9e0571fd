"""SL009 removed-option: an option string an earlier SGLang release accepted and the
launch's release does not (gone, kept only to stop with a message, or now only the start
of other options), with the release that last had it and what replaced it."""

from __future__ import annotations

from servelint.args import ParsedLaunch, Reader
from servelint.checks import Check, register
from servelint.fixes import fix, remove_tokens, remove_use, rename_option, replace_option_words
from servelint.lazy import Record
from servelint.model import Finding, Fix, Severity, Span, Token
from servelint.successors import Plan, Retired, plan, retired


class Spot(Record):
    """Where a retired option string is written: its word, the words it owns (its values
    as the releases that had it read them) and how the launch's release reads it."""

    info: Retired
    token: Token
    written: str
    name_span: Span
    first: int
    last: int
    values: list[str | None]
    explicit: bool  # the value was written with `=`
    reading: str  # what the launch's release says, with a parenthesis left open
    severity: Severity = Severity.ERROR


def owned(parsed: ParsedLaunch, index: int, kind: str) -> tuple[int, list[str | None], bool]:
    """The last word index and the values of a retired option of `kind` written at
    `index`, read as the releases that had it read them."""
    tokens = parsed.launch.tokens
    tok = tokens[index]
    text = tok.text if tok.text is not None else tok.prefix
    if text.startswith("--") and "=" in text:
        name, _, value = text.partition("=")
        return index, [value if tok.text is not None else None], True
    if kind in ("flag", "bool_optional"):
        return index, [], False
    reader = Reader(parsed.catalog)
    last = index
    values: list[str | None] = []
    while last + 1 < len(tokens) and reader.kind_of(tokens[last + 1]) in ("A", "?"):
        last += 1
        values.append(tokens[last].text)
        if kind in ("value", "optional"):
            break
    return last, values, False


def spots(parsed: ParsedLaunch) -> list[Spot]:
    """Every retired option string of the launch, however the launch's release reads it."""
    catalog = parsed.catalog
    version = catalog.version
    out: list[Spot] = []
    for p in parsed.problems:
        if p.kind not in ("unknown", "ambiguous") or not p.written.startswith("--"):
            continue
        info = retired(p.written, catalog)
        if info is None:
            continue
        last, values, explicit = owned(parsed, p.index, info.kind)
        if p.kind == "unknown":
            reading = (f"unrecognized arguments: {p.written} (SGLang {version} has no such "
                       f"option")
        else:
            reading = (f"ambiguous option: {p.written} could match {_listed(p.candidates)} "
                       f"(in SGLang {version} it is only the start of newer options")
        out.append(Spot(info, p.token, p.written, p.span or p.token.span, p.index, last,
                        values, explicit, reading))
    for use in parsed.uses:
        if use.option.removed and use.written:
            info = retired(use.written, catalog) or retired(use.matched, catalog)
            if info is None:
                continue
            last, values, explicit = owned(parsed, use.index, info.kind)
            last = max(last, use.last_index)
            said = (use.option.message or "").strip().rstrip(".")
            reading = (f"{said} (SGLang {version} keeps {use.written} only to stop with this"
                       if said else f"{use.written} has been removed (SGLang {version} keeps it "
                       f"only to stop the launch")
            out.append(Spot(info, use.token, use.written, use.name_span, use.index, last,
                            values, explicit, reading))
        elif use.abbreviated:
            info = retired(use.written, catalog)
            if info is None:
                continue
            the_plan = plan(info, catalog, [], lambda name: None)
            if the_plan.rename is not None and the_plan.rename in use.option.names:
                continue  # argparse expands it to its own successor: SL004 says so
            last, values, explicit = owned(parsed, use.index, info.kind)
            reading = (f"{use.written} is read as {use.matched}, a different option (SGLang "
                       f"{version} takes it as an abbreviation")
            out.append(Spot(info, use.token, use.written, use.name_span, use.index,
                            max(last, use.last_index) if info.kind not in ("flag", "bool_optional")
                            else last, values, explicit, reading, Severity.WARNING))
    return out


def _listed(names: list[str]) -> str:
    if len(names) <= 3:
        return " and ".join(names) if len(names) == 2 else ", ".join(names)
    return ", ".join(names[:3]) + f" and {len(names) - 3} more"


def value_of(parsed: ParsedLaunch):
    """The literal value the launch gives another option (and False), else its default
    (and True) when nothing the file does not fix could set it; None when unknown."""
    def get(name: str) -> tuple[str, bool] | None:
        opt = parsed.catalog.lookup(name)
        if opt is None:
            return None
        use = parsed.last_use(opt.dest)
        if use is not None:
            if use.values and use.values[-1].text is not None:
                return use.values[-1].text, False
            return None
        if parsed.uncertain or opt.default is None or isinstance(opt.default, (dict, list)):
            return None
        return str(opt.default), True
    return get


def message(spot: Spot, the_plan: Plan) -> str:
    """SGLang's own error first (what the launch's release says), then in the parentheses
    it opened: the last release that had the option, and its successor."""
    info = spot.info
    text = f"{spot.reading}; {spot.written} {info.gone_since}: "
    if the_plan.via:
        text += f"its successor {' then '.join(the_plan.via)} was removed too; "
    text += the_plan.says
    if the_plan.why_no_fix:
        text += f"; no automatic fix: {the_plan.why_no_fix}"
    text += ")"
    if info.quote and (info.evidence or {}).get("text", "").strip().rstrip(".") not in text:
        text += f". {info.quote}"
    return text


def fixes_for(parsed: ParsedLaunch, spot: Spot, the_plan: Plan) -> list[Fix]:
    launch = parsed.launch
    out: list[Fix] = []
    if the_plan.fixable:
        if the_plan.rename is not None:
            new = the_plan.rename
            mapped = [the_plan.values.get(v, v) if v is not None else None for v in spot.values]
            if mapped == spot.values:
                edit = rename_option(launch, spot.token, spot.written, spot.name_span, new)
            elif spot.explicit:
                edit = launch.host.replace(spot.token, f"{new}={mapped[0]}")
            else:
                edit = replace_option_words(launch, spot.first, spot.last,
                                            [new] + [str(v) for v in mapped])
            before = " ".join([spot.written] + [str(v) for v in spot.values if v is not None])
            after = " ".join([new] + [str(v) for v in mapped if v is not None])
            title = (f"Replace {spot.written} with {new}" if mapped == spot.values
                     else f"Replace {before} with {after}")
            out += fix(title, edit, preferred=True, safe=the_plan.safe)
        elif the_plan.words:
            words = the_plan.words
            out += fix(f"Replace {spot.written} with {' '.join(words)}",
                       replace_option_words(launch, spot.first, spot.last, words),
                       preferred=True, safe=False)
        elif the_plan.words == []:
            out += fix(f"Remove {spot.written}", remove_tokens(launch, spot.first, spot.last),
                       preferred=True, safe=False)
    if not any(f.title.startswith("Remove ") for f in out):
        out += fix(f"Remove {spot.written}", remove_tokens(launch, spot.first, spot.last),
                   safe=False)
    return out


def run(parsed, ctx):
    for use in parsed.uses:
        # A removed option the release history does not know (a catalog outside the pack):
        # SGLang's message, and removing it.
        if (use.option.removed and use.written and retired(use.written, parsed.catalog) is None
                and retired(use.matched, parsed.catalog) is None):
            msg = use.option.message or f"{use.written} has been removed"
            yield Finding(CHECK.code, CHECK.severity, msg, use.name_span,
                          fixes=fix(f"Remove {use.written}", remove_use(parsed.launch, use),
                                    safe=False), deprecated=True)
    for spot in spots(parsed):
        the_plan = plan(spot.info, parsed.catalog, spot.values, value_of(parsed))
        yield Finding(CHECK.code, spot.severity, message(spot, the_plan), spot.name_span,
                      fixes=fixes_for(parsed, spot, the_plan), deprecated=True)


CHECK = register(Check(
    code="SL009", name="removed-option", severity=Severity.ERROR,
    title="Removed option",
    what="Reports an option that an earlier SGLang release accepted and the launch's release "
         "does not: gone from the parser, kept only to stop the launch with a message, or "
         "now only the start of newer options. The message names the last release that "
         "accepted it and what replaced it, from SGLang's own deprecation and removal texts "
         "and from the same setting reappearing under a new name (docs/upgrades.md).",
    why="SGLang stops at argument parsing (`unrecognized arguments`, `ambiguous option`, or "
        "its removal message). Worse, a removed option that is now the start of exactly one "
        "newer option is silently read as that option: the launch starts with a setting "
        "nobody asked for (that case is a warning, since SGLang accepts it).",
    example="python -m sglang.launch_server --model-path m --tp-size 4 --enable-ep-moe",
    instead="python -m sglang.launch_server --model-path m --tp-size 4 --ep-size 4",
    fix_safety="The fix writes the successor so that the launch keeps its meaning: a rename "
               "to an option of the same kind keeps the value and is safe (fix-all applies "
               "it). A successor that needs a value (`--moe-a2a-backend deepep`), a value taken "
               "from another option (`--ep-size` set to the launch's literal `--tp-size`), a "
               "different kind, or leaving the option out is offered as a quick fix but never "
               "applied by fix-all. Without a successor, removing the option is offered, "
               "unsafe.",
    since="0.1.0",
    run=run,
))
