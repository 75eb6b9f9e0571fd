"""Settings shared by the command line and the language server.

`Settings` is what one lint of one file uses. The editor's settings (`from_dict`) and the
command-line flags make a base; `servelint.config.settings_for` combines that base with
the project's configuration file for a given file (docs/configuration.md). What each
setting is called and accepts is one table, `servelint/schema.py`.
"""

from __future__ import annotations

import copy
from typing import Any

from servelint.lazy import Record, field
from servelint.model import Severity
from servelint.schema import BY_EDITOR, MAX_FILE_BYTES, Invalid, SeverityMap

_FLAT = (str, int, float, type(None), frozenset)  # values a copy may share (bool, enums are ints)

# Settings attribute -> the editor's key (`servelint.<key>`): from the one table.
EDITOR_KEYS = {f.attr: key for key, f in BY_EDITOR.items()}


class Settings(Record):
    enable: bool = True
    # The SGLang release the launches run on: "auto" detects it per launch (release.py);
    # anything else is an explicit choice that beats what the files say.
    sglang_version: str = "auto"
    select: list[str] = field(default_factory=list)  # empty: every code
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, Severity] = field(default_factory=SeverityMap)  # code or prefix -> level
    max_file_bytes: int = MAX_FILE_BYTES
    rule_packs: list[str] = field(default_factory=list)
    project_rules: bool = True  # read .servelint/rules (off in untrusted workspaces)
    # A release to upgrade to: each launch is also checked as that release and what
    # breaks is reported (upgrade.py). None: no upgrade check.
    target_version: str | None = None
    gpu: str | None = None  # target GPU generation (sm90, sm100, ...); None: not said
    # False: report findings even where a `# servelint: disable=...` comment silences them.
    respect_suppressions: bool = True
    # How editor settings and a project configuration file combine (docs/configuration.md).
    configuration_preference: str = "editorFirst"
    # Which of the language server's messages become notifications (editor setting).
    show_notifications: str = "onWarning"
    # Codes and prefixes the project file's per-file-ignores turn off for this one file.
    file_ignores: list[str] = field(default_factory=list)
    # Attributes the user set explicitly (editor keys with a non-default value, command-line
    # flags): under editorFirst these beat the project configuration file.
    explicit: frozenset[str] = field(default_factory=frozenset, compare=False, repr=False)
    # The project configuration file these settings took values from, if any.
    config_file: str | None = field(default=None, compare=False)
    # Who set sglang_version, for people ("--sglang-version", "sglang-version in
    # /p/.servelint.toml"); None while it is "auto".
    sglang_version_from: str | None = field(default=None, compare=False)
    # Where the search for the project's requirements stops (the editor's workspace folder);
    # None: at the first folder holding .git, else the filesystem root.
    project_root: str | None = field(default=None, compare=False)

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
        """A copy that shares nothing mutable with this one (as a deep copy), made
        without `copy.deepcopy` where the values are flat (it is made once per file)."""
        new = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, _FLAT):
                continue
            if type(value) is list and all(isinstance(x, _FLAT) for x in value):
                setattr(new, name, list(value))
            elif type(value) in (dict, SeverityMap) and all(
                    isinstance(x, _FLAT) for x in dict.values(value)):
                made = type(value)()
                dict.update(made, dict.items(value))
                setattr(new, name, made)
            else:
                setattr(new, name, copy.deepcopy(value))
        return new

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
        for key, value in raw.items():
            field = BY_EDITOR.get(key)
            if field is None or value is None:
                continue  # unknown keys are the client's own; null is unset
            try:
                setattr(s, field.attr, field.parse(value))
            except Invalid as exc:
                errors.append(f"servelint.{key} {exc}")
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
    levels: list[Any] = [init_options]
    for outer in (init_options, init_options.get("settings")):
        if isinstance(outer, dict):
            levels += [outer.get("settings"), outer.get("servelint")]
    return not any(isinstance(x, dict) and x.get("workspaceTrusted") is False for x in levels)
