"""Modules imported on first use: a shell script never pays for PyYAML (about a third of a
cold `servelint check` of one file went to importing it for the YAML formats' modules).

    from servelint.lazy import yaml   # a stand-in; `yaml.safe_load` imports PyYAML then

Type checkers see the real module (modules write `if TYPE_CHECKING: import yaml`).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Forwards attribute reads to the module `name`, imported at the first read."""

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{'' if self._module is None else ' (imported)'}>"


yaml = LazyModule("yaml")
