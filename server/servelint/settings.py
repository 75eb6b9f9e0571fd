"""Settings shared by the command line and the language server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from servelint.model import Severity

MAX_FILE_BYTES = 5 * 1024 * 1024


@dataclass
class Settings:
    enable: bool = True
    sglang_version: str = "0.5.23"
    select: list[str] = field(default_factory=list)  # empty: every code
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, Severity] = field(default_factory=dict)
    max_file_bytes: int = MAX_FILE_BYTES
    rule_packs: list[str] = field(default_factory=list)
    project_rules: bool = True  # read .servelint/rules (off in untrusted workspaces)
    gpu: str | None = None  # target GPU generation (sm90, sm100, ...); None: not said

    def wants(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(s) for s in self.ignore)

    @classmethod
    def from_dict(cls, raw: Any, errors: list[str] | None = None) -> "Settings":
        """Settings from an editor's JSON (`servelint.*`), keeping defaults for anything
        missing or malformed; problems are appended to `errors`."""
        errors = errors if errors is not None else []
        s = cls()
        if not isinstance(raw, dict):
            return s
        if isinstance(raw.get("servelint"), dict):
            raw = raw["servelint"]
        if "enable" in raw:
            s.enable = bool(raw["enable"])
        version = raw.get("sglangVersion")
        if isinstance(version, str) and version:
            s.sglang_version = version
        for key in ("select", "ignore"):
            val = raw.get(key)
            if val is None:
                continue
            if isinstance(val, list) and all(isinstance(x, str) for x in val):
                setattr(s, key, [x.strip().upper() for x in val if x.strip()])
            else:
                errors.append(f"servelint.{key} must be a list of rule codes")
        sev = raw.get("severity")
        if isinstance(sev, dict):
            for code, level in sev.items():
                try:
                    s.severity[str(code).upper()] = Severity.parse(str(level))
                except KeyError:
                    errors.append(f"servelint.severity.{code}: unknown severity {level!r}")
        gpu = raw.get("gpu")
        if gpu not in (None, "", "auto", "unknown"):
            from servelint.rules.condition import GPUS
            if gpu in GPUS:
                s.gpu = gpu
            else:
                errors.append(f"servelint.gpu: {gpu!r} is not one of {', '.join(GPUS)}")
        packs = raw.get("rulePacks")
        if packs is not None:
            if isinstance(packs, list) and all(isinstance(x, str) for x in packs):
                s.rule_packs = [x for x in packs if x.strip()]
            else:
                errors.append("servelint.rulePacks must be a list of file or folder paths")
        mfb = raw.get("maxFileBytes")
        if isinstance(mfb, int) and mfb > 0:
            s.max_file_bytes = mfb
        return s
