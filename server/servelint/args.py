"""Read a launch's tokens the way SGLang's argparse parser (Python 3.11) reads argv.

The reader records what each token is (an option use with its values, or a stray
word) and the argparse-level problems it meets. It reports nothing itself: the
modules in `checks/` turn its records into findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from servelint.catalog import Catalog, Option
from servelint.model import Launch, Span, Token

_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")

# The records below have slots (no __dict__): the first lint of an 11,110-launch script
# reads 200,000 uses and 270,000 values (tests/test_memory_kept.py).


@dataclass(slots=True)
class Value:
    text: str | None  # None: the file does not fix it
    span: Span
    token: Token


@dataclass(slots=True)
class Use:
    """One option as written, with the values it took."""

    option: Option
    token: Token
    index: int
    last_index: int
    written: str  # the option string as written, without `=value`
    matched: str  # the option string argparse resolved it to
    name_span: Span
    values: list[Value] = field(default_factory=list)
    explicit: bool = False  # value given with `=`

    @property
    def abbreviated(self) -> bool:
        return bool(self.written) and self.written != self.matched

    @property
    def span(self) -> Span:
        """From the option to its last value."""
        end = self.values[-1].span.end if self.values else self.name_span.end
        return Span(self.token.span.start, max(end, self.token.span.end))


@dataclass(slots=True)
class Problem:
    kind: str  # unknown | ambiguous | missing_value | explicit_on_flag | stray
    index: int
    token: Token
    written: str = ""
    span: Span | None = None
    candidates: list[str] = field(default_factory=list)
    option: Option | None = None
    detail: str = ""
    last_index: int = -1  # the last word that belongs to this problem (values of an unknown option)


@dataclass
class ParsedLaunch:
    launch: Launch
    catalog: Catalog
    uses: list[Use]
    problems: list[Problem]
    uncertain: bool  # a word the file does not fix may hold any option
    help: bool = False  # `--help`: argparse prints help and exits, nothing else matters

    def _by_dest(self) -> dict[str, list[Use]]:
        index = self.__dict__.get("_dest_index")
        if index is None or index[0] != len(self.uses):
            table: dict[str, list[Use]] = {}
            for u in self.uses:
                table.setdefault(u.option.dest, []).append(u)
            index = (len(self.uses), table)
            self.__dict__["_dest_index"] = index
        return index[1]

    def uses_of(self, dest: str) -> list[Use]:
        return list(self._by_dest().get(dest, ()))

    def last_use(self, dest: str) -> Use | None:
        uses = self._by_dest().get(dest)
        return uses[-1] if uses else None

    def written(self) -> set[str]:
        return set(self._by_dest())


def _name_span(tok: Token, written: str) -> Span:
    """The span of the option name inside `--name=value` when the token is unquoted (the
    token's own span, shared, when the name is the whole token)."""
    raw = tok.raw
    if raw.startswith(written):
        span = tok.span
        if len(raw) == len(written) and span.end - span.start == len(raw):
            return span
        return Span(span.start, span.start + len(written))
    return tok.span


def _value_span(tok: Token, written: str) -> Span:
    if tok.raw.startswith(written + "="):
        return Span(tok.span.start + len(written) + 1, tok.span.end)
    return tok.span


class Reader:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def classify(self, text: str) -> tuple[str, Option | None, str, str | None, list[str]]:
        """argparse's `_parse_optional`: ('A', ...) for a positional word, ('O', option,
        matched, explicit, candidates) for an option; option None when unknown,
        ('ambiguous', ...) with candidates."""
        cat = self.catalog
        if not text or text[0] != "-":
            return "A", None, "", None, []
        opt = cat.lookup(text)
        if opt is not None:
            return "O", opt, text, None, []
        if len(text) == 1:
            return "A", None, "", None, []
        if "=" in text:
            name, explicit = text.split("=", 1)
            opt = cat.lookup(name)
            if opt is not None:
                return "O", opt, name, explicit, []
        if text.startswith("--"):
            prefix, _, explicit = text.partition("=")
            explicit_or_none = explicit if "=" in text else None
            matches = cat.prefix_matches(prefix)
        else:
            explicit_or_none = None
            short, rest = text[:2], text[2:]
            matches = []
            for n in cat.sorted_names:
                if n == short:
                    matches.append(n)
                elif n.startswith(text):
                    matches.append(n)
            if len(matches) == 1 and matches[0] == short:
                explicit_or_none = rest
        if len(matches) > 1:
            return "ambiguous", None, "", None, matches
        if len(matches) == 1:
            return "O", cat.lookup(matches[0]), matches[0], explicit_or_none, []
        if _NEGATIVE.match(text):
            return "A", None, "", None, []
        if " " in text:
            return "A", None, "", None, []
        return "O", None, "", None, []

    def kind_of(self, tok: Token) -> str:
        """'A' (a value), 'O' (an option), '--', or '?' for a word the file does not fix."""
        if tok.text is not None:
            if tok.text == "--":
                return "--"
            k = self.classify(tok.text)[0]
            return "A" if k == "A" else "O"
        if len(tok.prefix) >= 2 and tok.prefix[0] == "-" and not _NEGATIVE.match(tok.prefix):
            return "O"
        return "?"

    def _takes_one(self, word: str) -> bool:
        k, opt, _, explicit, _ = self.classify(word)
        return k == "O" and opt is not None and explicit is None and opt.takes_value \
            and opt.nargs in (None, "?")

    def effective(self, tokens: list[Token], problems: list[Problem], ascii_source: bool = False
                  ) -> tuple[list[Token], Sequence[int], Sequence[int]]:
        """The words as the author meant them where a word holds an invisible or look-alike
        character (see `lookalike_words`), each with the first and last index of the
        launch's tokens it stands for; a `lookalike` problem for each such word.
        `ascii_source`: the words come from an ASCII shell document, so none can hold one."""
        n = len(tokens)
        if ascii_source or all(t.text.isascii() if t.text is not None else t.prefix.isascii()
                               for t in tokens):
            return tokens, range(n), range(n)
        eff: list[Token] = []
        lo: list[int] = []
        hi: list[int] = []
        i = 0
        while i < n:
            t = tokens[i]
            text = t.text
            if text is None:
                fixed_prefix = fix_word(t.prefix) if not t.prefix.isascii() else t.prefix
                if fixed_prefix != t.prefix:
                    problems.append(Problem("lookalike", i, t, written=t.prefix, detail=fixed_prefix,
                                            last_index=i))
                    t = Token(t.span, None, fixed_prefix, t.splat, t.raw, t.origin, t.placeholder)
                eff.append(t)
                lo.append(i)
                hi.append(i)
                i += 1
                continue
            if text.isascii() or not has_lookalike(text):
                eff.append(t)
                lo.append(i)
                hi.append(i)
                i += 1
                continue
            j = _quoted_run(tokens, i)
            if j > i:  # `“my model”`: the shell split a value its smart quotes were to hold
                words = [tokens[k].text or "" for k in range(i, j + 1)]
                value = " ".join(strip_quotes(w) for w in words)
                problems.append(Problem("lookalike", i, t, written=" ".join(words), detail=value,
                                        last_index=j))
                eff.append(Token(Span(t.span.start, tokens[j].span.end), value, "", False, "",
                                 t.origin))
                lo.append(i)
                hi.append(j)
                i = j + 1
                continue
            pieces = lookalike_words(text)
            fixed = " ".join(w for w, _, _ in pieces)
            if fixed == text:
                eff.append(t)
                lo.append(i)
                hi.append(i)
                i += 1
                continue
            problems.append(Problem("lookalike", i, t, written=text, detail=fixed, last_index=i))
            exact = t.raw == text and t.span.end - t.span.start == len(text)
            if len(pieces) == 1:
                made = [Token(t.span, pieces[0][0], "", False, t.raw, t.origin)]
            elif len(pieces) == 2 and exact and self._takes_one(pieces[0][0]) \
                    and not pieces[1][0].startswith("-"):
                # `--tool-call-parser<NBSP>qwen3`: the option and its value, each at its place
                made = [Token(Span(t.span.start + s, t.span.start + e), w, "", False, text[s:e],
                              t.origin) for w, s, e in pieces]
            elif pieces:
                made = [Token(t.span, None, "", True, t.raw, t.origin)]  # several words: unknown
            else:
                made = []  # nothing but invisible characters and spaces
            for tok in made:
                eff.append(tok)
                lo.append(i)
                hi.append(i)
            i += 1
        return eff, lo, hi

    def read(self, launch: Launch) -> ParsedLaunch:
        uses: list[Use] = []
        problems: list[Problem] = []
        host = launch.host
        # In a shell document every word's value is made of the document's characters.
        ascii_source = host.name == "shell" and host.index.ascii
        tokens, lo, hi = self.effective(launch.tokens, problems, ascii_source)
        uncertain = False
        i = 0
        n = len(tokens)
        # After a word the file does not fix, the next plain word may be its value.
        loose = False
        help_seen = False
        while i < n:
            tok = tokens[i]
            if launch.kind == "serve" and tok.text is not None and (
                    tok.text == "--model-type" or tok.text.startswith("--model-type=")):
                # `sglang serve` takes the backend selector out before SGLang's parser runs.
                i += 1 if "=" in tok.text else 2
                continue
            kind = self.kind_of(tok)
            if kind == "?":
                uncertain = True
                loose = True
                i += 1
                continue
            if kind == "--":
                for j in range(i + 1, n):
                    word = tokens[j].text
                    if word is not None:
                        problems.append(Problem("stray", lo[j], tokens[j], written=word,
                                                detail="after --", last_index=hi[j]))
                    else:
                        uncertain = True
                break
            if kind == "A":
                if i == 0 and launch.kind == "serve" and tok.text is not None:
                    # `sglang serve <model>` takes the model path as its first word.
                    opt = self.catalog.by_dest.get("model_path")
                    if opt is not None:
                        uses.append(Use(option=opt, token=tok, index=lo[0], last_index=hi[0],
                                        written="", matched=opt.name, name_span=tok.span,
                                        values=[Value(tok.text, tok.span, tok)]))
                        i += 1
                        continue
                if not loose:
                    problems.append(Problem("stray", lo[i], tok, written=tok.text or "",
                                            last_index=hi[i]))
                i += 1
                continue
            loose = False
            if tok.text in ("-h", "--help"):
                help_seen = True
                i += 1
                continue
            if tok.text is None:
                # `--name=$VALUE` or `--na$ME`: the name is known only up to the prefix.
                if tok.placeholder:
                    uncertain = True  # `--model-path=<path>`: a placeholder, any arguments
                prefix = tok.prefix
                if "=" not in prefix:
                    uncertain = True
                    loose = True
                    i += 1
                    continue
                text = prefix
            else:
                text = tok.text
            k, opt, matched, explicit, candidates = self.classify(text)
            # An option string never contains '=', so for `--` words the name ends there.
            written = text.split("=", 1)[0] if text.startswith("--") else text
            if explicit is not None and not text.startswith("--"):
                written = text[:2]
            if k == "ambiguous":
                problems.append(Problem("ambiguous", lo[i], tok, written=written,
                                        span=_name_span(tok, written), candidates=candidates,
                                        last_index=hi[i]))
                i += 1
                loose = True
                continue
            if opt is None:
                prob = Problem("unknown", lo[i], tok, written=written, span=_name_span(tok, written),
                               last_index=hi[i])
                problems.append(prob)
                i += 1
                # argparse leaves the words after an unknown option unrecognized with it.
                while i < n and self.kind_of(tokens[i]) in ("A", "?"):
                    prob.last_index = hi[i]
                    uncertain = uncertain or tokens[i].placeholder
                    i += 1
                continue
            use = Use(option=opt, token=tok, index=lo[i], last_index=hi[i], written=written,
                      matched=matched, name_span=_name_span(tok, written))
            uses.append(use)
            i += 1
            has_explicit = explicit is not None or tok.text is None
            if has_explicit:
                value_text = explicit if tok.text is not None else None
                if opt.kind in ("flag", "bool_optional") or opt.nargs == 0:
                    problems.append(Problem("explicit_on_flag", use.index, tok, written=written,
                                            span=_value_span(tok, written), option=opt,
                                            detail=value_text or "", last_index=use.last_index))
                elif isinstance(opt.nargs, int) and opt.nargs > 1:
                    problems.append(Problem("missing_value", use.index, tok, written=written,
                                            span=use.name_span, option=opt,
                                            detail=f"expected {opt.nargs} arguments",
                                            last_index=use.last_index))
                else:
                    use.explicit = True
                    use.values.append(Value(value_text, _value_span(tok, written), tok))
                continue
            if opt.kind in ("flag", "bool_optional") or opt.nargs == 0:
                continue
            want_min, want_max = _arity(opt)
            taken = 0
            while i < n and taken < want_max:
                nxt = tokens[i]
                nk = self.kind_of(nxt)
                if nk == "A" or nk == "?":
                    use.values.append(Value(nxt.text, nxt.span, nxt))
                    use.last_index = hi[i]
                    taken += 1
                    i += 1
                    if nk == "?" and (nxt.placeholder
                                      or (nxt.splat and ("@" in nxt.raw or "*" in nxt.raw))):
                        # an array may hold more words than the value, and a documentation
                        # placeholder stands for any arguments
                        uncertain = True
                    continue
                break
            if taken < want_min:
                expected = ("expected one argument" if want_min == 1 and want_max == 1
                            else "expected at least one argument" if want_max > 1 and want_min == 1
                            else f"expected {want_min} arguments")
                problems.append(Problem("missing_value", use.index, tok, written=written,
                                        span=use.name_span, option=opt, detail=expected,
                                        last_index=use.last_index))
        return ParsedLaunch(launch, self.catalog, uses, problems, uncertain, help_seen)


def _arity(opt: Option) -> tuple[int, int]:
    nargs = opt.nargs
    big = 1 << 30
    if nargs is None:
        return 1, 1
    if nargs == "?":
        return 0, 1
    if nargs == "*":
        return 0, big
    if nargs == "+":
        return 1, big
    if isinstance(nargs, int):
        return nargs, nargs
    return 1, 1


# --- invisible and look-alike characters ---------------------------------------------------
#
# Text copied from a word processor, a chat or a web page brings characters that look like
# the ones a command line needs and are not: the shell splits words only at ASCII blanks,
# argparse reads an option only after an ASCII `-`, and only ASCII quotes quote. SGLang then
# gets one word where two were meant, a positional word for an option, or quotes inside a
# value. The Reader reads such a word as it was meant (and records a `lookalike` problem),
# so the rest of the launch is checked as the author wrote it.

SPACES = {
    "\u00a0": "no-break space", "\u1680": "Ogham space mark", "\u2000": "en quad",
    "\u2001": "em quad", "\u2002": "en space", "\u2003": "em space",
    "\u2004": "three-per-em space", "\u2005": "four-per-em space", "\u2006": "six-per-em space",
    "\u2007": "figure space", "\u2008": "punctuation space", "\u2009": "thin space",
    "\u200a": "hair space", "\u202f": "narrow no-break space",
    "\u205f": "medium mathematical space", "\u3000": "ideographic space",
}
INVISIBLE = {
    "\u200b": "zero-width space", "\u200c": "zero-width non-joiner", "\u200d": "zero-width joiner",
    "\u2060": "word joiner", "\ufeff": "zero-width no-break space (byte order mark)",
    "\u00ad": "soft hyphen",
}
DASHES = {
    "\u2010": "hyphen", "\u2011": "non-breaking hyphen", "\u2012": "figure dash",
    "\u2013": "en dash", "\u2014": "em dash", "\u2015": "horizontal bar", "\u2212": "minus sign",
    "\ufe58": "small em dash", "\ufe63": "small hyphen-minus", "\uff0d": "fullwidth hyphen-minus",
}
QUOTES = {
    "\u201c": "left double quotation mark", "\u201d": "right double quotation mark",
    "\u201e": "double low-9 quotation mark", "\u2018": "left single quotation mark",
    "\u2019": "right single quotation mark", "\u201a": "single low-9 quotation mark",
}
LOOKALIKE = {**SPACES, **INVISIBLE, **DASHES, **QUOTES}
_QUOTE_CHARS = tuple(QUOTES)


def has_lookalike(text: str) -> bool:
    return not text.isascii() and any(c in LOOKALIKE for c in text)


def strip_quotes(value: str) -> str:
    """`value` without the smart quotes around it."""
    if value[:1] in QUOTES:
        value = value[1:]
    if value[-1:] in QUOTES:
        value = value[:-1]
    return value


def fix_word(word: str) -> str:
    """One word as it was meant: zero-width characters dropped, a leading run of dashes
    (en dash, em dash, minus sign... with or without `-`) written `--` (`-` before one letter
    or a number), dash look-alikes inside an option's name written `-`, and smart quotes
    around a value (or around the value after `=`) dropped."""
    w = "".join(c for c in word if c not in INVISIBLE)
    k = 0
    while k < len(w) and (w[k] == "-" or w[k] in DASHES):
        k += 1
    if k and any(c in DASHES for c in w[:k]):
        rest = w[k:]
        name = rest.split("=", 1)[0]
        single = len(name) == 1 or rest[:1].isdigit() or rest[:1] == "."
        w = ("-" if single else "--") + rest
    if w.startswith("-") and len(w) > 1:
        name, eq, value = w.partition("=")
        name = "".join("-" if c in DASHES else c for c in name)
        return name + eq + (strip_quotes(value) if eq else "")
    return strip_quotes(w)


def lookalike_words(text: str) -> list[tuple[str, int, int]]:
    """The words `text` was meant to be (split at Unicode spaces, each fixed by `fix_word`),
    each with its [start, end) in `text`; empty words dropped."""
    out: list[tuple[str, int, int]] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in SPACES:
            i += 1
        if i >= n:
            break
        s = i
        while i < n and text[i] not in SPACES:
            i += 1
        word = fix_word(text[s:i])
        if word:
            out.append((word, s, i))
    return out


def _quoted_run(tokens: list[Token], i: int) -> int:
    """The last index of a value that opens with a smart quote in `tokens[i]` and closes in
    a later word (the shell split it at blanks), or `i`."""
    text = tokens[i].text or ""
    if text[:1] not in QUOTES or (len(text) > 1 and text[-1] in QUOTES):
        return i
    for j in range(i + 1, min(len(tokens), i + 16)):
        word = tokens[j].text
        if word is None or word.startswith("-"):
            return i
        if word.endswith(_QUOTE_CHARS):
            return j
    return i
