"""SL014 lookalike-character: an invisible or look-alike character in a launch's word."""

from __future__ import annotations

from servelint.args import DASHES, INVISIBLE, LOOKALIKE, QUOTES, SPACES, fix_word
from servelint.checks import Check, register
from servelint.model import Edit, Finding, Fix, Severity, Span, Token
from servelint.valuetypes import CHECKS, convert

_DOUBLE = {"\u201c", "\u201d", "\u201e"}


def _char(c: str) -> str:
    name = LOOKALIKE[c]
    article = "an" if name[0] in "aeiouAEIOU" else "a"
    return f"{article} {name} (U+{ord(c):04X})"


def _chars(text: str) -> str:
    seen: list[str] = []
    for c in text:
        if c in LOOKALIKE and c not in seen:
            seen.append(c)
    named = [_char(c) for c in seen]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def shown(text: str) -> str:
    """A word with its invisible characters and odd spaces made visible."""
    return "".join(f"<U+{ord(c):04X}>" if c in SPACES or c in INVISIBLE else c for c in text)


def _role(parsed, p, span: Span):
    """('value', use, value) when the word is an option's value as SGLang reads it,
    ('option', use, None) when it holds the option's name, else (None, None, None)."""
    for use in parsed.uses:
        if span.start <= use.token.span.start and use.token.span.end <= span.end:
            name_written = p.written.split("=", 1)[0]
            if "=" in p.written and name_written == p.detail.split("=", 1)[0]:
                return "value", use, None  # only the value after `=` changed
            return "option", use, None
        for v in use.values:
            if span.start <= v.span.start and v.span.end <= span.end:
                return "value", use, v
    return None, None, None


def _outcome(opt, text: str) -> str | None:
    """What SGLang says of `text` as the value of `opt`: its error, or None (accepted)."""
    check = CHECKS.get(opt.type or "")
    if check is not None:
        bad = check(text)
        if bad is not None:
            return bad
    if opt.choices:
        try:
            value = convert(opt.type, text)
        except ValueError:
            return None
        if value not in opt.choices:
            return f"invalid choice: {text!r}"
    return None


def run(parsed, ctx):
    launch = parsed.launch
    for p in parsed.problems:
        if p.kind != "lookalike":
            continue
        words = launch.tokens[p.index:p.last_index + 1]
        span = Span(words[0].span.start, words[-1].span.end)
        known = all(w.text is not None for w in words)
        written = p.written if known else " ".join(w.raw for w in words)
        role, use, value = _role(parsed, p, span)
        spaces = any(c in SPACES for c in written)
        joined = spaces and len(p.detail.split(" ")) > 1 and role != "value"
        dashes = written.lstrip("-")[:1] in DASHES
        quotes = any(c in QUOTES for c in written) and not dashes
        severity = Severity.ERROR
        if role == "value" and use is not None and len(words) > 1 and use.option.nargs not in ("+", "*"):
            # `“my model”`: the shell made two words, and the second is left over
            consequence = (f"the shell splits it at the blank, {use.option.name} takes "
                           f"{shown(words[0].text or words[0].raw)!r} and SGLang stops with "
                           f"'unrecognized arguments: {' '.join(shown(w.text or w.raw) for w in words[1:])}'")
        elif role == "value" and use is not None and not joined:
            opt = use.option
            original = written.split("=", 1)[1] if value is None and "=" in written else written
            if known:
                said = _outcome(opt, original)
            else:  # the value is not fixed here: the characters are in it all the same
                said = "refused" if opt.choices or CHECKS.get(opt.type or "") else None
            if said is None:
                severity = Severity.WARNING
                consequence = (f"SGLang accepts it, and {opt.name} gets a value with the "
                               f"character{'s' if len(_distinct(written)) > 1 else ''} in it")
            elif said == "refused":
                consequence = f"SGLang refuses it as the value of {opt.name}"
            else:
                consequence = f"SGLang stops with 'argument {opt.name}: {said}'"
        else:
            left = [written]
            if role == "option" and use is not None and dashes:  # its values are left over too
                left += [w.text or w.raw for w in launch.tokens[p.last_index + 1:use.last_index + 1]]
            consequence = f"SGLang stops with 'unrecognized arguments: {shown(' '.join(left))}'"
        what = _chars(written)
        if joined:
            parts = p.detail.split(" ")
            head = (f"{what} joins {' and '.join(parts)} into one word ({shown(written)!r}): the "
                    f"shell splits words only at plain blanks")
            remedy = "use a plain space"
        elif dashes:
            name = p.detail.split("=", 1)[0]
            head = (f"{shown(written)!r} starts with {what}, not '{'--' if name.startswith('--') else '-'}'"
                    f": argparse reads it as a "
                    f"positional word, not as the option {name}")
            remedy = f"write {name}"
        elif quotes:
            head = (f"{shown(written)!r} is quoted with smart quotes, {what}, which the shell "
                    f"keeps (it removes only ASCII quotes)")
            remedy = "use ASCII quotes"
        else:
            head = f"{shown(written)!r} contains {what}, which SGLang gets as part of the word"
            remedy = "use a plain space" if spaces else "remove it"
        fixes = _fixes(launch, p, words, role, known)
        yield Finding(CHECK.code, severity, f"{head}; {consequence}; {remedy}", span, fixes=fixes)


def _distinct(text: str) -> set[str]:
    return {c for c in text if c in LOOKALIKE}


def _fixes(launch, p, words: list[Token], role, known: bool) -> list[Fix]:
    host = launch.host
    title = "Replace the look-alike characters"
    if known and p.detail == "":
        edit = host.remove(words[0], words[-1])
        return [Fix("Remove the invisible word", [edit], preferred=True)] if edit else []
    value_spaces = role == "value" and any(c in SPACES for c in p.written)
    if host.name == "shell" and not value_spaces:
        edits = _char_edits(host, words)
        if edits:
            return [Fix(title, edits, preferred=True)]
    if not known:
        return []
    if value_spaces:  # keep the value one word, with plain spaces: maybe not what was meant
        edit = host.replace_words(words[0], words[-1], [p.detail])
        return [Fix("Replace the odd spaces in the value with plain spaces", [edit],
                    safe=False)] if edit else []
    new = p.detail.split(" ") if len(words) == 1 and role != "value" else [p.detail]
    edit = host.replace_words(words[0], words[-1], new)
    return [Fix(title, [edit], preferred=True)] if edit else []


def _char_edits(host, words: list[Token]) -> list[Edit]:
    """Edits of the characters themselves, in a shell document where each word is written
    as a plain word (no ASCII quoting or escapes around the characters)."""
    doc = host.text
    edits: list[Edit] = []
    q = host.quote_context
    last = len(words) - 1
    for k, tok in enumerate(words):
        raw = doc[tok.span.start:tok.span.end]
        if raw != tok.raw or any(c in raw for c in "'\"\\"):
            return []
        base = tok.span.start
        lead = 0
        while lead < len(raw) and (raw[lead] == "-" or raw[lead] in DASHES):
            lead += 1
        option = k == 0 and fix_word(raw).startswith("-") and not raw[:1] in QUOTES
        name_end = (raw.find("=") if "=" in raw else len(raw)) if option else 0
        value_start = (name_end + 1 if "=" in raw else len(raw)) if option else 0
        if option and lead and any(c in DASHES for c in raw[:lead]):
            edits.append(Edit(Span(base, base + lead),
                              "--" if fix_word(raw).startswith("--") else "-"))
        for pos in range(lead if option else 0, len(raw)):
            c = raw[pos]
            at = Span(base + pos, base + pos + 1)
            if c in SPACES:
                edits.append(Edit(at, " "))
            elif c in INVISIBLE:
                edits.append(Edit(at, ""))
            elif c in DASHES and pos < name_end:
                edits.append(Edit(at, "-"))
            elif c in QUOTES and ((pos == value_start and k == 0) or (pos == len(raw) - 1 and k == last)):
                plain = '"' if c in _DOUBLE or q == "'" else "'"
                if q == '"' and plain == '"':
                    plain = '\\"'
                edits.append(Edit(at, plain))
    return edits


CHECK = register(Check(
    code="SL014", name="lookalike-character", severity=Severity.ERROR,
    title="Invisible or look-alike character in a word",
    what="Reports a word of a launch that holds a character that looks like what the command "
         "line needs and is not: a no-break space or another Unicode space (U+00A0, U+2000 to "
         "U+200A, U+202F, U+3000, ...) where a blank was meant, a zero-width space or joiner "
         "(U+200B to U+200D, U+2060, U+FEFF), an en dash, em dash, minus sign or other dash "
         "(U+2010 to U+2015, U+2212, ...) where `--` was meant, or smart quotes (U+201C, U+201D, "
         "U+201E, U+2018, U+2019, U+201A) around a value. The message names each character and "
         "says what SGLang makes of the word; the rest of the launch is checked as it was meant "
         "(the option after an en dash, the value after a no-break space). An error when SGLang "
         "refuses the word, a warning when it accepts it with the character inside the value.",
    why="Text copied from a word processor, a chat or a web page brings these characters, and "
        "they are hard to see. The shell splits words only at ASCII blanks, so `--tool-call-parser"
        "<U+00A0>qwen3` is one unrecognized argument; argparse reads an option only after an "
        "ASCII `-`, so `–tp-size 2` (an en dash) is two unrecognized arguments; the shell removes "
        "only ASCII quotes, so `“qwen3”` keeps its quotes and is an invalid choice.",
    example="python -m sglang.launch_server --model-path m \u2013tp-size 2",
    instead="python -m sglang.launch_server --model-path m --tp-size 2",
    fix_safety="Writing a plain space, `--` or ASCII quotes in place of the characters, or "
               "removing an invisible one, keeps every value and is safe. Where a Unicode space "
               "sits inside a value, the fix keeps the value one word with a plain space "
               "(quoted); it is offered as a quick fix only, since two words may have been meant.",
    run=run,
))
