"""Settings shared by the command line and the language server.

`Settings` is what one lint of one file uses. The editor's settings (`from_dict`) and the
command-line flags make a base; `servelint.config.settings_for` combines that base with
the project's configuration file for a given file (docs/configuration.md).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from servelint.model import Severity

MAX_FILE_BYTES = 5 * 1024 * 1024

PREFERENCES = ("editorFirst", "filesystemFirst", "editorOnly")

# Settings attribute -> the editor's key (`servelint.<key>`).
EDITOR_KEYS = {
    "enable": "enable",
    "sglang_version": "sglangVersion",
    "select": "select",
    "ignore": "ignore",
    "severity": "severity",
    "max_file_bytes": "maxFileBytes",
    "rule_packs": "rulePacks",
    "gpu": "gpu",
    "respect_suppressions": "ignoreSuppressions",
    "configuration_preference": "configurationPreference",
}


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


def _codes(values) -> list[str]:
    return [x.strip().upper() for x in values if x.strip()]


@dataclass
class Settings:
    enable: bool = True
    sglang_version: str = "0.5.23"
    select: list[str] = field(default_factory=list)  # empty: every code
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, Severity] = field(default_factory=SeverityMap)  # code or prefix -> level
    max_file_bytes: int = MAX_FILE_BYTES
    rule_packs: list[str] = field(default_factory=list)
    project_rules: bool = True  # read .servelint/rules (off in untrusted workspaces)
    gpu: str | None = None  # target GPU generation (sm90, sm100, ...); None: not said
    # False: report findings even where a `# servelint: disable=...` comment silences them.
    respect_suppressions: bool = True
    # How editor settings and a project configuration file combine (docs/configuration.md).
    configuration_preference: str = "editorFirst"
    # Codes and prefixes the project file's per-file-ignores turn off for this one file.
    file_ignores: list[str] = field(default_factory=list)
    # Attributes the user set explicitly (editor keys with a non-default value, command-line
    # flags): under editorFirst these beat the project configuration file.
    explicit: frozenset[str] = field(default_factory=frozenset, compare=False, repr=False)
    # The project configuration file these settings took values from, if any.
    config_file: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.severity, SeverityMap):
            self.severity = SeverityMap(self.severity)

    def wants(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        if any(code.startswith(s) for s in self.file_ignores):
            return False
        return not any(code.startswith(s) for s in self.ignore)

    def severity_for(self, code: str, default: Severity | None = None) -> Severity | None:
        """The override for a code: its own entry or its longest matching prefix."""
        return self.severity.get(code, default)

    def copy(self) -> "Settings":
        return copy.deepcopy(self)

    @classmethod
    def from_dict(cls, raw: Any, errors: list[str] | None = None) -> "Settings":
        """Settings from an editor's JSON, keeping defaults for anything missing or
        malformed; problems (each naming its key) are appended to `errors`.

        Accepts the section itself (`{"select": [...]}`), `{"servelint": {...}}` and
        `{"settings": {...}}` (either shape inside). A key whose value is null is unset.
        `explicit` records the keys whose value differs from the built-in default."""
        errors = errors if errors is not None else []
        s = cls()
        raw = editor_section(raw)
        if raw is None:
            return s

        def bad(key: str, problem: str) -> None:
            errors.append(f"servelint.{key} {problem}")

        def given(key: str):
            return raw.get(key)

        val = given("enable")
        if val is not None:
            if isinstance(val, bool):
                s.enable = val
            else:
                bad("enable", "must be true or false")
        val = given("sglangVersion")
        if val is not None:
            if isinstance(val, str) and val.strip():
                s.sglang_version = val.strip()
            else:
                bad("sglangVersion", "must be a version string such as \"0.5.23\"")
        for key in ("select", "ignore"):
            val = given(key)
            if val is None:
                continue
            if isinstance(val, list) and all(isinstance(x, str) for x in val):
                setattr(s, key, _codes(val))
            else:
                bad(key, "must be a list of rule codes or code prefixes")
        val = given("severity")
        if val is not None:
            if isinstance(val, dict):
                for code, level in val.items():
                    try:
                        s.severity[str(code).strip().upper()] = Severity.parse(str(level))
                    except KeyError:
                        bad(f"severity.{code}", f"is {level!r}, not one of error, warning, "
                                                f"information, hint")
            else:
                bad("severity", "must be an object of rule code -> severity")
        val = given("gpu")
        if val not in (None, "", "auto", "unknown"):
            from servelint.rules.condition import GPUS
            if val in GPUS:
                s.gpu = val
            else:
                bad("gpu", f"is {val!r}, not one of {', '.join(GPUS)}")
        val = given("rulePacks")
        if val is not None:
            if isinstance(val, list) and all(isinstance(x, str) for x in val):
                s.rule_packs = [x for x in val if x.strip()]
            else:
                bad("rulePacks", "must be a list of file or folder paths")
        val = given("maxFileBytes")
        if val is not None:
            if isinstance(val, int) and not isinstance(val, bool) and val > 0:
                s.max_file_bytes = val
            else:
                bad("maxFileBytes", "must be a positive whole number of bytes")
        val = given("ignoreSuppressions")
        if val is not None:
            if isinstance(val, bool):
                s.respect_suppressions = not val
            else:
                bad("ignoreSuppressions", "must be true or false")
        val = given("configurationPreference")
        if val is not None:
            if val in PREFERENCES:
                s.configuration_preference = val
            else:
                bad("configurationPreference", f"is {val!r}, not one of {', '.join(PREFERENCES)}")
        defaults = cls()
        s.explicit = frozenset(attr for attr in EDITOR_KEYS
                               if getattr(s, attr) != getattr(defaults, attr))
        return s


def editor_section(raw: Any) -> dict | None:
    """The `servelint` section of what an editor sent, whatever its wrapping."""
    if not isinstance(raw, dict):
        return None
    if isinstance(raw.get("settings"), dict):
        raw = raw["settings"]
    if isinstance(raw.get("servelint"), dict):
        raw = raw["servelint"]
    return raw


def workspace_trusted(init_options: Any) -> bool:
    """False when `initializationOptions` says `workspaceTrusted: false` (at the top, or
    inside `settings` or `servelint`): limited mode, no project files are read."""
    if not isinstance(init_options, dict):
        return True
    levels = [init_options]
    for outer in (init_options, init_options.get("settings")):
        if isinstance(outer, dict):
            levels += [outer.get("settings"), outer.get("servelint")]
    return not any(isinstance(x, dict) and x.get("workspaceTrusted") is False for x in levels)
