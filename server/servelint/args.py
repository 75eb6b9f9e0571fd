"""Read a launch's tokens the way SGLang's argparse parser (Python 3.11) reads argv.

The reader records what each token is (an option use with its values, or a stray
word) and the argparse-level problems it meets. It reports nothing itself: the
modules in `checks/` turn its records into findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from servelint.catalog import Catalog, Option
from servelint.model import Launch, Span, Token

_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")


@dataclass
class Value:
    text: str | None  # None: the file does not fix it
    span: Span
    token: Token


@dataclass
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
    matches: list[str] = field(default_factory=list)

    @property
    def abbreviated(self) -> bool:
        return bool(self.written) and self.written != self.matched

    @property
    def span(self) -> Span:
        """From the option to its last value."""
        end = self.values[-1].span.end if self.values else self.name_span.end
        return Span(self.token.span.start, max(end, self.token.span.end))


@dataclass
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
    """The span of the option name inside `--name=value` when the token is unquoted."""
    if tok.raw.startswith(written):
        return Span(tok.span.start, tok.span.start + len(written))
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

    def read(self, launch: Launch) -> ParsedLaunch:
        tokens = launch.tokens
        uses: list[Use] = []
        problems: list[Problem] = []
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
                        problems.append(Problem("stray", j, tokens[j], written=word,
                                                detail="after --"))
                    else:
                        uncertain = True
                break
            if kind == "A":
                if i == 0 and launch.kind == "serve" and tok.text is not None:
                    # `sglang serve <model>` takes the model path as its first word.
                    opt = self.catalog.by_dest.get("model_path")
                    if opt is not None:
                        uses.append(Use(option=opt, token=tok, index=0, last_index=0,
                                        written="", matched=opt.name, name_span=tok.span,
                                        values=[Value(tok.text, tok.span, tok)]))
                        i += 1
                        continue
                if not loose:
                    problems.append(Problem("stray", i, tok, written=tok.text or ""))
                i += 1
                continue
            loose = False
            if tok.text in ("-h", "--help"):
                help_seen = True
                i += 1
                continue
            if tok.text is None:
                # `--name=$VALUE` or `--na$ME`: the name is known only up to the prefix.
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
                problems.append(Problem("ambiguous", i, tok, written=written,
                                        span=_name_span(tok, written), candidates=candidates))
                i += 1
                loose = True
                continue
            if opt is None:
                prob = Problem("unknown", i, tok, written=written, span=_name_span(tok, written),
                               last_index=i)
                problems.append(prob)
                i += 1
                # argparse leaves the words after an unknown option unrecognized with it.
                while i < n and self.kind_of(tokens[i]) in ("A", "?"):
                    prob.last_index = i
                    i += 1
                continue
            use = Use(option=opt, token=tok, index=i, last_index=i, written=written,
                      matched=matched, name_span=_name_span(tok, written))
            uses.append(use)
            i += 1
            has_explicit = explicit is not None or tok.text is None
            if has_explicit:
                value_text = explicit if tok.text is not None else None
                if opt.kind in ("flag", "bool_optional") or opt.nargs == 0:
                    problems.append(Problem("explicit_on_flag", use.index, tok, written=written,
                                            span=_value_span(tok, written), option=opt,
                                            detail=value_text or ""))
                elif isinstance(opt.nargs, int) and opt.nargs > 1:
                    problems.append(Problem("missing_value", use.index, tok, written=written,
                                            span=use.name_span, option=opt,
                                            detail=f"expected {opt.nargs} arguments"))
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
                    use.last_index = i
                    taken += 1
                    i += 1
                    if nxt.splat and ("@" in nxt.raw or "*" in nxt.raw):
                        uncertain = True  # an array may hold more words than the value
                    continue
                break
            if taken < want_min:
                expected = ("expected one argument" if want_min == 1 and want_max == 1
                            else "expected at least one argument" if want_max > 1 and want_min == 1
                            else f"expected {want_min} arguments")
                problems.append(Problem("missing_value", use.index, tok, written=written,
                                        span=use.name_span, option=opt, detail=expected))
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
