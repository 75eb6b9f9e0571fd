"""Extractors: one module per host format, each turning a document into `Launch`es
whose tokens carry exact spans into the original text.

Every module in this package that defines `FORMAT = Format(...)` is a format: the
engine asks each one, in `priority` order, whether it reads a document (`detect`), and
the first that does extracts the launches (`extract`). See `common.py` for the shared
pieces (the result type, launches from argv lists, shell scripts inside strings).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from dataclasses import dataclass
from typing import Callable

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
                logging.getLogger(__name__).exception("format module %s failed to load", mod.name)
                continue
            fmt = getattr(module, "FORMAT", None)
            if isinstance(fmt, Format):
                found.append(fmt)
        _FORMATS = sorted(found, key=lambda f: (f.priority, f.name))
    return _FORMATS


def by_name(name: str) -> Format | None:
    return next((f for f in formats() if f.name == name), None)
