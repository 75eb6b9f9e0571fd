"""The one table of servelint's settings: each field's Settings attribute, its name in an
editor (`servelint.<key>`), in a project file (`.servelint.toml`, `[tool.servelint]`) and
on the command line, how a value is checked, and what it means.

The three readers are thin adapters over it: `Settings.from_dict` (editor JSON),
`config.parse_table` (TOML) and `cli.cli_settings` (flags); every problem is worded by
the field's parser, once. `tests/test_schema.py` checks docs/configuration.md and the
extension's package.json against this table.
"""

from __future__ import annotations

import re

from typing import Any, Callable

from servelint.lazy import LazyPattern, Record
from servelint.model import Severity

GPUS = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")
PREFERENCES = ("editorFirst", "filesystemFirst", "editorOnly")
NOTIFICATIONS = ("off", "onError", "onWarning", "always")
MAX_FILE_BYTES = 5 * 1024 * 1024


class SeverityMap(dict):
    """Severity overrides, keyed by a rule code or a code prefix (`SL0`).

    `code in m` and `m[code]` look a code up by its longest matching key, so a reader
    that asks the usual dict questions with a full code (engine.py does) gets prefix
    matching; iterating, `items()` and equality see the keys as written."""

    def match(self, code: str) -> str | None:
        best = None
        for key in dict.keys(self):
            if code.startswith(key) and (best is None or len(key) > len(best)):
                best = key
        return best

    def __contains__(self, code: object) -> bool:
        return isinstance(code, str) and self.match(code) is not None

    def __getitem__(self, code: str) -> Severity:
        key = self.match(code) if isinstance(code, str) else None
        if key is None:
            raise KeyError(code)
        return dict.__getitem__(self, key)

    def get(self, code, default=None):
        return self[code] if code in self else default

    def __copy__(self) -> "SeverityMap":
        return SeverityMap(dict.items(self))

    def __deepcopy__(self, memo) -> "SeverityMap":
        return SeverityMap(dict.items(self))


class Invalid(ValueError):
    """A value a field does not accept; the text says what it must be."""


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid("must be true or false")
    return value


def negated(value: Any) -> bool:
    """A switch whose meaning is the attribute's opposite (ignoreSuppressions)."""
    return not boolean(value)


def codes(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise Invalid('must be a list of rule codes or code prefixes, e.g. ["SL0", "SL101"]')
    out = [x.strip().upper() for x in value if x.strip()]
    check_own_codes(out)
    return out


# --- which codes a selector may name -----------------------------------------------------
#
# A selector (an entry of select/ignore/extend-*/per-file-ignores, a severity key) is a
# code or a code prefix; one that matches no code is a mistake (`SL04` for SL004) and an
# error. servelint's own codes (its checks and its bundled rules of every SGLang release)
# are known everywhere, so a selector in their namespace (`SL` and digits) is judged by the
# field's parser itself, wherever the value comes from. Any other selector can only name a
# rule pack's code (`ACME-1`), and which packs are read depends on the linted file (the
# rule-packs setting, --rules, the `.servelint/rules` folder above it): config.py judges
# those where the packs are known (`unknown_selectors`), see docs/configuration.md.

OWN_NAMESPACE = LazyPattern(r"SL[0-9]*")


def builtin_codes() -> frozenset[str]:
    from servelint.docs import builtin_codes as codes_of_servelint
    return codes_of_servelint()


_prefixes: frozenset[str] | None = None


def _builtin_prefixes() -> frozenset[str]:
    global _prefixes
    if _prefixes is None:
        _prefixes = frozenset(code[:i] for code in builtin_codes() for i in range(1, len(code) + 1))
    return _prefixes


def unknown_selectors(selectors, extra_codes=()) -> list[str]:
    """The selectors (upper-case, as the parsers leave them) that match neither one of
    servelint's codes nor one of `extra_codes` (rule packs' codes), in order."""
    if not selectors:
        return []
    known = _builtin_prefixes()
    left = [s for s in dict.fromkeys(selectors) if s not in known]
    if left and extra_codes:
        extra = [c.upper() for c in extra_codes]
        left = [s for s in left if not any(c.startswith(s) for c in extra)]
    return left


def selector_problem(selectors: list[str], extra_codes=(),
                     tail: str = "`servelint rules` lists servelint's codes") -> str:
    """What is wrong with selectors that match no code, with the codes they may stand for
    (`names 'SL04', which matches no rule code or code prefix (did you mean SL004?); ...`),
    and `tail` after a semicolon."""
    from servelint.suggest import VALUES, close_matches
    pool = sorted(builtin_codes() | {c.upper() for c in extra_codes})
    hints = []
    for sel in selectors:
        close = close_matches(sel, pool, n=1, cutoff=VALUES)
        hints.append(f" (did you mean {close[0]}?)" if close else "")
    if len(selectors) == 1:
        said = f"{selectors[0]!r}, which matches no rule code or code prefix{hints[0]}"
    else:
        named = [f"{sel!r}{hint}" for sel, hint in zip(selectors, hints)]
        said = f"{', '.join(named[:-1])} and {named[-1]}, which match no rule code or code prefix"
    return f"names {said}; {tail}"


def check_own_codes(selectors: list[str]) -> None:
    """Invalid when a selector in servelint's own namespace (`SL` and digits) matches none
    of its codes; other selectors are left to `unknown_selectors`, where the rule packs
    are known."""
    bad = [s for s in unknown_selectors(selectors) if OWN_NAMESPACE.fullmatch(s)]
    if bad:
        raise Invalid(selector_problem(bad))


def version(value: Any) -> str:
    """An SGLang release ("0.4.9.post2", "v0.5.3") or "auto" (detect it per launch)."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid('must be "auto" or a release such as "0.5.23"')
    text = value.strip()
    if text.lower() in ("auto", ""):
        return "auto"
    if not re.fullmatch(r"v?\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?|latest|newest", text):
        raise Invalid(f'is {text!r}, not "auto" or a release such as "0.5.23"')
    return text


def target(value: Any) -> str | None:
    """--target-version: a release to check the launches against, or unset ("")."""
    if value in ("", None):
        return None
    text = version(value)
    if text == "auto":
        raise Invalid('is "auto": name the release to upgrade to, such as "0.5.23" or "latest"')
    return text


def per_file_version(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, dict):
        raise Invalid('must be a table of glob -> release, such as {"legacy/**" = "0.4.6"}')
    out = []
    for pattern, given in value.items():
        try:
            v = version(given)
        except Invalid as exc:
            raise Invalid(f"{pattern!r} {exc}") from None
        out.append((pattern, v))
    return out


def gpu(value: Any) -> str | None:
    if value in ("", "auto", "unknown"):
        return None  # the editor's "unknown" choice
    if value not in GPUS:
        raise Invalid(f"is {value!r}, not one of {', '.join(GPUS)}")
    return value


def positive(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise Invalid("must be a positive whole number")
    return value


def severities(value: Any) -> "SeverityMap":
    if not isinstance(value, dict):
        raise Invalid("must be a table of rule code or prefix -> severity")
    out = SeverityMap()
    for code, level in value.items():
        try:
            if not isinstance(level, str):
                raise KeyError(level)
            out[str(code).strip().upper()] = Severity.parse(level)
        except KeyError:
            raise Invalid(f"{code!r} is {level!r}, not one of error, warning, information, "
                          f"hint") from None
    check_own_codes(list(out))
    return out


def paths(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise Invalid("must be a list of file or folder paths")
    return [x for x in value if x.strip()]


def patterns(value: Any) -> list[str]:
    """gitignore-style patterns (files.py reads them as a .gitignore's lines)."""
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise Invalid('must be a list of gitignore-style patterns, e.g. ["build/", "*.gen.sh"]')
    return [x for x in value if x.strip()]


def per_file(value: Any) -> list[tuple[str, list[str]]]:
    if not isinstance(value, dict):
        raise Invalid("must be a table of glob -> list of rule codes")
    out = []
    for pattern, listed in value.items():
        try:
            out.append((pattern, codes(listed)))
        except Invalid as exc:
            raise Invalid(f"{pattern!r} {exc}") from None
    return out


def one_of(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise Invalid(f"is {value!r}, not one of {', '.join(choices)}")
        return value
    return check


class Field(Record, frozen=True):
    attr: str                 # the Settings attribute (or the project file's own list)
    parse: Callable[[Any], Any]
    default: Any
    doc: str
    editor: str | None = None  # servelint.<editor> in an editor's settings
    toml: str | None = None    # the key in .servelint.toml / [tool.servelint]
    cli: str | None = None     # the command-line flag


FIELDS: tuple[Field, ...] = (
    Field("enable", boolean, True, "lint at all; false: no findings", editor="enable",
          toml="enable"),
    Field("select", codes, [], "only these codes or code prefixes (empty: every code)",
          editor="select", toml="select", cli="--select"),
    Field("extend_select", codes, [], "added to the file's select", toml="extend-select"),
    Field("ignore", codes, [], "never these codes or code prefixes", editor="ignore",
          toml="ignore", cli="--ignore"),
    Field("extend_ignore", codes, [], "added to ignore", toml="extend-ignore"),
    Field("severity", severities, {}, "severity per code or code prefix", editor="severity",
          toml="severity"),
    Field("rule_packs", paths, [], "extra rule pack files or folders", editor="rulePacks",
          toml="rule-packs", cli="--rules"),
    Field("sglang_version", version, "auto",
          "the SGLang release the launches run on; auto: detected per launch",
          editor="sglangVersion", toml="sglang-version", cli="--sglang-version"),
    Field("target_version", target, None,
          "also report what breaks when each launch moves to this release",
          editor="targetVersion", toml="target-version", cli="--target-version"),
    Field("gpu", gpu, None, "the GPU generation the launches run on", editor="gpu",
          toml="gpu", cli="--gpu"),
    Field("max_file_bytes", positive, MAX_FILE_BYTES, "larger files are not linted",
          editor="maxFileBytes", toml="max-file-bytes"),
    Field("exclude", patterns, [],
          "files and folders not linted when a folder is walked (gitignore syntax)",
          toml="exclude"),
    Field("per_file_ignores", per_file, {}, "glob -> codes turned off for matching files",
          toml="per-file-ignores"),
    Field("per_file_sglang_version", per_file_version, {},
          "glob -> the SGLang release of matching files", toml="per-file-sglang-version"),
    Field("respect_suppressions", negated, True,
          "report findings even where a suppression comment silences them",
          editor="ignoreSuppressions", cli="--no-suppressions"),
    Field("configuration_preference", one_of(PREFERENCES), "editorFirst",
          "how editor settings and the project file combine", editor="configurationPreference"),
    Field("show_notifications", one_of(NOTIFICATIONS), "onWarning",
          "which server messages become notifications", editor="showNotifications"),
)

BY_EDITOR = {f.editor: f for f in FIELDS if f.editor}
BY_TOML = {f.toml: f for f in FIELDS if f.toml}
BY_ATTR = {f.attr: f for f in FIELDS}
# What the project file holds beside Settings attributes (config.ProjectConfig's own).
PROJECT_ONLY = ("extend_select", "extend_ignore", "per_file_ignores", "per_file_sglang_version",
                "exclude")
