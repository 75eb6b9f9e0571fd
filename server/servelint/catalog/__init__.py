"""Flag catalogs: what SGLang's own argparse parser accepts, per SGLang version.

The JSON files under `data/` are generated from SGLang's parser by
`tools/gen_catalog.py` and are never edited by hand.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

DEFAULT_VERSION = "0.5.23"


@dataclass(frozen=True, slots=True)
class Option:
    names: tuple[str, ...]
    dest: str
    kind: str  # flag | value | optional | list | bool_optional
    nargs: Any
    action: str
    type: str | None
    choices: tuple[Any, ...] | None
    default: Any
    help: str | None
    hidden: bool
    metavar: Any
    required: bool
    deprecated: bool
    removed: bool
    message: str | None
    replacement: str | None

    @property
    def name(self) -> str:
        """The spelling SGLang documents: the first long name that is not a --no- form."""
        for n in self.names:
            if n.startswith("--") and not (self.kind == "bool_optional" and n.startswith("--no-")):
                return n
        return self.names[0]

    @property
    def takes_value(self) -> bool:
        return self.kind in ("value", "optional", "list")

    @property
    def repeatable(self) -> bool:
        return self.action in ("append", "append_const", "count", "extend")

    @property
    def is_boolean(self) -> bool:
        return self.kind in ("flag", "bool_optional")


class Catalog:
    def __init__(self, data: dict[str, Any]):
        self.engine = data.get("engine", "sglang")
        self.version = data["version"]
        self.generated = data.get("generated", "")
        self.options: list[Option] = []
        self.by_name: dict[str, Option] = {}
        self.by_dest: dict[str, Option] = {}
        for raw in data["options"]:
            choices = raw.get("choices")
            opt = Option(
                names=tuple(raw["names"]),
                dest=raw["dest"],
                kind=raw["kind"],
                nargs=raw.get("nargs"),
                action=raw.get("action") or "store",
                type=raw.get("type"),
                choices=tuple(choices) if choices is not None else None,
                default=raw.get("default"),
                help=raw.get("help"),
                hidden=bool(raw.get("hidden")),
                metavar=raw.get("metavar"),
                required=bool(raw.get("required")),
                deprecated=bool(raw.get("deprecated")),
                removed=bool(raw.get("removed")),
                message=raw.get("message"),
                replacement=raw.get("replacement"),
            )
            self.options.append(opt)
            for n in opt.names:
                self.by_name[n] = opt
            # The first registration of a dest is the one SGLang documents.
            self.by_dest.setdefault(opt.dest, opt)
        self.sorted_names = sorted(self.by_name)

    def lookup(self, name: str) -> Option | None:
        return self.by_name.get(name)

    def prefix_matches(self, prefix: str) -> list[str]:
        """Every option string that starts with `prefix`, as argparse's abbreviation
        matching sees them (Python 3.11: each string counts, aliases included)."""
        names = self.sorted_names
        i = bisect.bisect_left(names, prefix)
        out = []
        while i < len(names) and names[i].startswith(prefix):
            out.append(names[i])
            i += 1
        return out

    def long_names(self) -> list[str]:
        return [n for n in self.sorted_names if n.startswith("--")]


@lru_cache(maxsize=4)
def load_catalog(version: str = DEFAULT_VERSION) -> Catalog:
    name = f"sglang-{version}.json"
    ref = resources.files("servelint.catalog") / "data" / name
    try:
        text = ref.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise KeyError(f"no flag catalog for SGLang {version}") from exc
    return Catalog(json.loads(text))


def available_versions() -> list[str]:
    base = resources.files("servelint.catalog").joinpath("data")
    out = []
    for entry in base.iterdir():
        n = entry.name
        if n.startswith("sglang-") and n.endswith(".json"):
            out.append(n[len("sglang-"):-len(".json")])
    return sorted(out)
