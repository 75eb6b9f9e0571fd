"""A launch as SGLang's resolution sees it, before any rule reads it.

SGLang normalises some values before its checks (the speculative algorithm is upper-cased,
NEXTN becomes EAGLE) and turns deprecated spellings into the setting they stand for
(`--enable-dp-attention --dp-size N` becomes `--attn-dp-size N`). servelint learns these
from one data file, normalize.yaml, and applies them here, once per launch, so that every
rule compares canonical values and no rule lists the spellings of a value.

`view(launch)` gives the resolved launch: `value(opt)` is the effective value (known,
value) after normalisation and the resolution steps; `set_by_step(dest)` says a step gave
the option a value from what the launch writes (a rule's `present` counts it as written);
`write_back(dest)` says how a fix to such an option is written in the launch's spelling.
"""

from __future__ import annotations

import os
import zlib
from functools import lru_cache
from typing import Any

from servelint.catalog import Catalog, Option
from servelint.rules.context import Record


class ValueRule(Record):
    case: str | None  # "upper", "lower" or None
    strip: bool
    aliases: tuple[tuple[str, str], ...]
    cut: str | None = None  # keep the text before this separator ("cuda:0" -> "cuda")

    def apply(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.apply(v) for v in value]
        if not isinstance(value, str):
            return value
        if self.cut:
            value = value.split(self.cut)[0]
        if self.strip:
            value = value.strip()
        if self.case == "upper":
            value = value.upper()
        elif self.case == "lower":
            value = value.lower()
        for written, canonical in self.aliases:
            if value == written:
                return canonical
        return value


class WriteBack(Record):
    default: tuple[tuple[str, Option], ...]  # (op, option) edits that return it to the default
    value: Option | None  # the option that carries another value


class Step(Record):
    name: str
    when: Any  # a parsed condition
    set: tuple[tuple[Option, Any], ...]  # (option, Option to copy or a literal)
    write_back: tuple[tuple[str, WriteBack], ...]


class Normalizer(Record):
    values: dict[str, ValueRule]
    steps: tuple[Step, ...]

    def step_triggers(self) -> list[tuple[set[str], set[str]]]:
        """(dests a step reads, dests it sets): a launch writing one of the former may
        have the latter, which indexes rules by (apply.py). Made once per normalizer."""
        got = self.__dict__.get("_triggers")
        if got is None:
            from servelint.rules.condition import options_of
            got = [({o.dest for o in options_of(s.when)}, {o.dest for o, _ in s.set}) for s in self.steps]
            object.__setattr__(self, "_triggers", got)
        return got


def _text() -> str:
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "normalize.yaml"),
                  encoding="utf-8") as fh:
            return fh.read()
    except OSError:  # not a plain folder (a zip): ask the package's resources
        from importlib import resources
        return resources.files("servelint.rules").joinpath("normalize.yaml").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _data() -> dict:
    """normalize.yaml as data; kept as JSON in the cache folder under its text's checksum,
    so that a run does not import PyYAML to read it (issue 16)."""
    text = _text()

    def load() -> dict:
        import yaml
        return yaml.safe_load(text) or {}

    from servelint.rules import json_cached
    key = f"{len(text)}:{zlib.crc32(text.encode('utf-8')):08x}"
    got = json_cached("normalize.json", key, load)
    return got if isinstance(got, dict) else load()


@lru_cache(maxsize=16)
def normalizer(catalog: Catalog) -> Normalizer:
    """The normalisation of this release's catalog (entries naming an option the release
    does not have are left out: an older release never had that spelling to normalise)."""
    from servelint.rules.condition import ConditionError, parse_condition

    data = _data()
    values: dict[str, ValueRule] = {}
    for name, spec in (data.get("values") or {}).items():
        opt = catalog.lookup(name)
        if opt is None:
            continue
        values[opt.dest] = ValueRule(spec.get("case"), bool(spec.get("strip")),
                                     tuple((str(k), str(v)) for k, v in (spec.get("aliases") or {}).items()),
                                     spec.get("cut"))
    steps = []
    for raw in data.get("steps") or []:
        try:
            when = parse_condition(raw["when"], catalog, f"normalize.yaml step {raw.get('name')}")
        except ConditionError:
            continue  # a step about options this release does not have
        sets = []
        for name, src in raw["set"].items():
            opt = catalog.lookup(name)
            if opt is None:
                break
            if isinstance(src, str) and src.startswith("--"):
                src_opt = catalog.lookup(src)
                if src_opt is None:
                    break
                src = src_opt
            sets.append((opt, src))
        else:
            backs = []
            for name, wb in (raw.get("writeBack") or {}).items():
                opt = catalog.lookup(name)
                edits = tuple((op, catalog.lookup(n)) for e in wb.get("default", [])
                              for op, n in e.items())
                carrier = catalog.lookup(wb["value"]) if wb.get("value") else None
                if opt is not None and all(o is not None for _, o in edits):
                    backs.append((opt.dest, WriteBack(edits, carrier)))
            steps.append(Step(raw.get("name", ""), when, tuple(sets), tuple(backs)))
    return Normalizer(values, tuple(steps))


class Resolved:
    """The launch after normalisation and resolution steps; what `effective_value` reads."""

    def __init__(self, launch, catalog: Catalog | None):
        self.launch = launch
        self.uncertain = launch.uncertain
        self.catalog = catalog
        self.norm = normalizer(catalog) if catalog is not None else Normalizer({}, ())
        self.overrides: dict[str, tuple[bool, Any]] = {}
        self.stepped: dict[str, Step] = {}
        self._seen: dict[tuple[str, str], tuple[bool, Any]] = {}  # values read so far
        self._run_steps()

    # the Written protocol, so conditions can be evaluated on the view itself
    def uses_of(self, dest: str):
        return self.launch.uses_of(dest)

    def last_use(self, dest: str):
        return self.launch.last_use(dest)

    def value(self, opt: Option) -> tuple[bool, Any]:
        got = self.overrides.get(opt.dest)
        if got is not None:
            return got
        return self.before_steps(opt)

    def before_steps(self, opt: Option) -> tuple[bool, Any]:
        """The value after value normalisation, before any resolution step."""
        key = (opt.dest, opt.name)
        got = self._seen.get(key)
        if got is not None:
            return got
        from servelint.rules.condition import raw_effective_value
        known, v = raw_effective_value(self.launch, opt)
        if known:
            rule = self.norm.values.get(opt.dest)
            if rule is not None:
                v = rule.apply(v)
        self._seen[key] = (known, v)
        return known, v

    def set_by_step(self, dest: str) -> bool:
        return dest in self.stepped

    def origins(self, dest: str) -> list[str]:
        """The dests a step read to give `dest` its value: the option it copied first, then
        the options its `when` tests (where a finding about `dest` can sit)."""
        step = self.stepped.get(dest)
        if step is None:
            return []
        from servelint.rules.condition import options_of
        out = [src.dest for opt, src in step.set if opt.dest == dest and isinstance(src, Option)]
        return out + [o.dest for o in options_of(step.when) if o.dest not in out]

    def write_back(self, dest: str) -> WriteBack | None:
        step = self.stepped.get(dest)
        if step is None:
            return None
        return dict(step.write_back).get(dest)

    def _run_steps(self) -> None:
        if not self.norm.steps:
            return
        from servelint.rules.condition import evaluate
        from servelint.rules.context import RuleContext
        ctx = RuleContext(self, self.catalog)
        for step in self.norm.steps:
            held = evaluate(step.when, ctx)
            if held is False:
                continue
            new = {}
            for opt, src in step.set:
                if held is None:
                    new[opt.dest] = (False, None)
                elif isinstance(src, Option):
                    new[opt.dest] = self.value(src)
                else:
                    new[opt.dest] = (True, src)
            self.overrides.update(new)
            if held:
                for opt, _ in step.set:
                    known, v = new[opt.dest]
                    if known and v != opt.default:
                        self.stepped[opt.dest] = step


def view(launch) -> Resolved:
    """The resolved view of a launch, made once per launch object."""
    if isinstance(launch, Resolved):
        return launch
    size = len(getattr(launch, "uses", ()))
    cached = getattr(launch, "__dict__", {}).get("_servelint_resolved")
    if cached is not None and cached[0] == size:
        return cached[1]
    got = Resolved(launch, getattr(launch, "catalog", None))
    if hasattr(launch, "__dict__"):
        launch.__dict__["_servelint_resolved"] = (size, got)
    return got


def expand_written(written: set[str], catalog: Catalog) -> set[str]:
    """The dests a launch writing `written` may have after resolution (for the rule index)."""
    out = set(written)
    for reads, sets in normalizer(catalog).step_triggers():
        if reads & out:
            out |= sets
    return out
