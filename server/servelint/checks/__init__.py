"""Catalog checks: what SGLang's argument parser itself rejects or misreads.

Each check lives in its own module with its documentation and registers itself
with a stable code. Codes are never reused.
"""

from __future__ import annotations

import importlib
from typing import Callable, Iterable

from servelint.lazy import Record, field
from servelint.model import Finding, Severity

REGISTRY: dict[str, "Check"] = {}


class Check(Record):
    code: str
    name: str
    severity: Severity
    title: str
    what: str
    why: str
    example: str
    instead: str
    fix_safety: str
    since: str = "0.1.0"
    run: Callable[..., Iterable[Finding]] | None = None
    scope: str = "launch"  # launch: runs per parsed launch; host: reported by an extractor;
    # suppression: reported by the suppression pass (suppress.py)
    tags: list[str] = field(default_factory=list)
    lang: str = "bash"

    def finding(self, message: str, span, **kw) -> Finding:
        """A finding of this check: its code and default severity (the settings may
        override the severity later); `kw` as `Finding` takes them (fixes, related...)."""
        return Finding(self.code, self.severity, message, span, **kw)

    def doc_markdown(self) -> str:
        return "\n".join([
            f"# {self.code} {self.name}",
            "",
            f"{self.title}. Default severity: {self.severity.label}.",
            "",
            "## What it does",
            "",
            self.what.strip(),
            "",
            "## Why it matters",
            "",
            self.why.strip(),
            "",
            "## Example",
            "",
            f"```{self.lang}",
            self.example.strip("\n"),
            "```",
            "",
            "## Use instead",
            "",
            f"```{self.lang}",
            self.instead.strip("\n"),
            "```",
            "",
            "## Fix safety",
            "",
            self.fix_safety.strip(),
            "",
            "## Since",
            "",
            f"servelint {self.since}.",
            "",
        ])


def register(check: Check) -> Check:
    if check.code in REGISTRY:
        raise ValueError(f"duplicate check code {check.code}")
    REGISTRY[check.code] = check
    return check


_MODULES = [
    "unknown_option", "underscore_option", "ambiguous_option", "abbreviated_option",
    "missing_value", "invalid_type", "invalid_choice", "deprecated_option", "removed_option",
    "duplicate_option", "missing_model_path", "value_on_flag", "stray_argument",
    "broken_continuation", "broken_rule_pack", "bad_config_file",
    "config_equals", "config_unsupported", "unused_suppression", "bad_suppression",
    "lookalike_character",
]


_LOADED: list[bool] = []  # once every module is imported (lint calls this once per file)


def load_checks() -> dict[str, Check]:
    if not _LOADED:
        for name in _MODULES:
            importlib.import_module(f"servelint.checks.{name}")
        _LOADED.append(True)
    return REGISTRY
