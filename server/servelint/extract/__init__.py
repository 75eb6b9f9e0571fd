"""Extractors: one module per host format, each turning a document into `Launch`es
whose tokens carry exact spans into the original text.

Every module in this package that defines `FORMAT = Format(...)` is a format: the
engine asks each one, in `priority` order, whether it reads a document (`detect`), and
the first that does extracts the launches (`extract`). See `common.py` for the shared
pieces (the result type, launches from argv lists, shell scripts inside strings).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable

from servelint.lazy import LazyLogger

_FORMATS: list["Format"] | None = None


@dataclass
class Format:
    name: str
    priority: int  # lower is asked first
    # detect(path, language_id, text) -> bool. Cheap: the text may be large.
    detect: Callable
    # extract(text, index, path, settings) -> common.ExtractResult
    extract: Callable
    # A document without this text launches nothing and is not extracted at all (the
    # engine's fast path). None for formats that hold options without a launch command
    # (SGLang's own --config files).
    marker: str | None = "sglang"


def formats() -> list[Format]:
    global _FORMATS
    if _FORMATS is None:
        found = []
        for mod in pkgutil.iter_modules(__path__):
            try:
                module = importlib.import_module(f"{__name__}.{mod.name}")
            except Exception:  # one broken format must not take the others down
                LazyLogger(__name__).exception("format module %s failed to load", mod.name)
                continue
            fmt = getattr(module, "FORMAT", None)
            if isinstance(fmt, Format):
                found.append(fmt)
        _FORMATS = sorted(found, key=lambda f: (f.priority, f.name))
    return _FORMATS


# Which module holds each format, so that linting a file of a known format imports that
# module only (tests/test_cold_start.py checks this table against the modules' FORMATs).
MODULE_OF = {"shell": "shell", "yaml": "yaml_launch", "sglang-config": "sglang_config",
             "dockerfile": "dockerfile", "launch-json": "launch_json", "markdown": "markdown",
             "notebook": "notebook", "notebook-cell": "notebook_cell", "python": "python_launch"}
_BY_NAME: dict[str, Format] = {}


def by_name(name: str) -> Format | None:
    got = _BY_NAME.get(name)
    if got is not None:
        return got
    module = MODULE_OF.get(name)
    if module is not None and _FORMATS is None:
        try:
            fmt = getattr(importlib.import_module(f"{__name__}.{module}"), "FORMAT", None)
        except Exception:
            LazyLogger(__name__).exception("format module %s failed to load", module)
            fmt = None
        if isinstance(fmt, Format) and fmt.name == name:
            _BY_NAME[name] = fmt
            return fmt
    found = next((f for f in formats() if f.name == name), None)
    if found is not None:
        _BY_NAME[name] = found
    return found


def shell_by_name(path: str | None, language_id: str | None) -> bool:
    """Whether the file is certainly a shell script by its name alone, whatever the other
    formats would say: a shell suffix, no Dockerfile-like or notebook name, and no other
    language from the editor. Lets `servelint check run.sh` skip importing every other
    format's module (the other formats' own detection never claims such a file:
    tests/test_cold_start.py compares the two ways on many names)."""
    if not path or language_id not in (None, "", "plaintext", "shellscript", "sh", "bash",
                                       "zsh", "shell"):
        return False
    base = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if base.startswith(("dockerfile", "containerfile")) or ".ipynb" in base:
        return False
    dot = base.rfind(".")
    return dot > 0 and base[dot:] in (".sh", ".bash", ".zsh", ".ksh")  # .bats: a Dockerfile may be sniffed


def python_by_name(path: str | None, language_id: str | None) -> bool:
    """Whether the file is certainly a Python module by its name alone (`.py`, `.pyw`, not
    named like a Dockerfile, no other language from the editor): the formats asked before
    Python (notebook cells, Dockerfiles, launch.json, Markdown, notebooks) never claim such
    a name, so `servelint check x.py` need not import every format's module (a fifth of
    a cold check of a 200-line module). tests/test_cold_start.py compares the two ways."""
    if not path or language_id not in (None, "", "plaintext", "python"):
        return False
    base = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if base.startswith(("dockerfile", "containerfile")):
        return False
    base = base.lstrip(".")  # as os.path.splitext: a leading dot starts no suffix
    dot = base.rfind(".")
    return dot > 0 and base[dot:] in (".py", ".pyw")
