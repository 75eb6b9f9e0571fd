"""The condition language of rule records, parsed and evaluated by servelint itself.

A condition is data (JSON or YAML), never code:

    all: [cond, ...]          every one holds
    any: [cond, ...]          at least one holds
    not: cond                 the opposite
    present: --flag           the option is written in the launch (any spelling)
    absent: --flag            it is not
    {option: --flag, eq: v}   its effective value equals v (also: ne, in, notIn,
                              gt, ge, lt, le, truthy, divisibleBy)
    {option: --a, gt: {option: --b}}
                              compared with another option's effective value
    gpu: [sm90, sm100]        the target GPU generation (the `gpu` setting) is one of
                              these; unknown when the user has not said

The effective value of an option is the last value written for it (as SGLang's type
conversion reads it), or, when it is not written, the default in the flag catalog.
Evaluation is three-valued: True, False, or None for "the file does not say" (a value
such as `$TP`, an option that may hide in `"$@"`, a default SGLang only decides at
start-up). A rule fires only on True.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servelint.catalog import Catalog, Option
from servelint.valuetypes import convert

UNKNOWN = None
COMPARE_OPS = ("eq", "ne", "in", "notIn", "gt", "ge", "lt", "le", "truthy", "divisibleBy")
GPUS = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")


class ConditionError(ValueError):
    """A condition that does not parse; the message says where and why."""


@dataclass(frozen=True)
class All:
    items: tuple


@dataclass(frozen=True)
class Any_:
    items: tuple


@dataclass(frozen=True)
class Not:
    item: Any


@dataclass(frozen=True)
class Present:
    option: Option
    name: str


@dataclass(frozen=True)
class Compare:
    option: Option
    name: str
    op: str
    value: Any  # a literal, or an Option to compare with


@dataclass(frozen=True)
class Gpu:
    gens: tuple


def parse_condition(raw: Any, catalog: Catalog, where: str = "condition") -> Any:
    if not isinstance(raw, dict) or not raw:
        raise ConditionError(f"{where}: expected a mapping such as {{present: --flag}}, got {raw!r}")
    keys = set(raw)
    if keys == {"all"} or keys == {"any"}:
        key = next(iter(keys))
        items = raw[key]
        if not isinstance(items, list) or not items:
            raise ConditionError(f"{where}.{key}: expected a non-empty list of conditions")
        parsed = tuple(parse_condition(x, catalog, f"{where}.{key}[{i}]") for i, x in enumerate(items))
        return All(parsed) if key == "all" else Any_(parsed)
    if keys == {"not"}:
        return Not(parse_condition(raw["not"], catalog, f"{where}.not"))
    if keys == {"gpu"}:
        gens = raw["gpu"]
        gens = [gens] if isinstance(gens, str) else gens
        if not isinstance(gens, list) or not gens or any(g not in GPUS for g in gens):
            raise ConditionError(f"{where}.gpu: expected GPU generations among {', '.join(GPUS)}")
        return Gpu(tuple(gens))
    if keys in ({"present"}, {"absent"}):
        key = next(iter(keys))
        opt = _option(raw[key], catalog, f"{where}.{key}")
        node = Present(opt, raw[key])
        return node if key == "present" else Not(node)
    if "option" in keys:
        ops = keys - {"option"}
        if len(ops) != 1 or not ops <= set(COMPARE_OPS):
            raise ConditionError(
                f"{where}: an option test takes exactly one of {', '.join(COMPARE_OPS)}; got "
                f"{', '.join(sorted(ops)) or 'none'}")
        op = next(iter(ops))
        opt = _option(raw["option"], catalog, f"{where}.option")
        value = raw[op]
        if isinstance(value, dict):
            if set(value) != {"option"} or op in ("in", "notIn", "truthy"):
                raise ConditionError(f"{where}.{op}: compare with {{option: --flag}} or a literal")
            value = _option(value["option"], catalog, f"{where}.{op}.option")
            return Compare(opt, raw["option"], op, value)
        if op in ("in", "notIn") and not isinstance(value, list):
            raise ConditionError(f"{where}.{op}: expected a list of values")
        if op in ("gt", "ge", "lt", "le", "divisibleBy") and (
                isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ConditionError(f"{where}.{op}: expected a number, got {value!r}")
        if op == "truthy" and not isinstance(value, bool):
            raise ConditionError(f"{where}.truthy: expected true or false")
        return Compare(opt, raw["option"], op, value)
    raise ConditionError(
        f"{where}: unknown condition keys {', '.join(sorted(map(str, keys)))}; expected all, any, "
        f"not, present, absent, or option with one of {', '.join(COMPARE_OPS)}")


def _option(name: Any, catalog: Catalog, where: str) -> Option:
    if not isinstance(name, str) or not name.startswith("--"):
        raise ConditionError(f"{where}: expected an option name such as --tp-size, got {name!r}")
    opt = catalog.lookup(name)
    if opt is None:
        raise ConditionError(f"{where}: SGLang {catalog.version} has no option {name}")
    return opt


def options_of(cond: Any) -> list[Option]:
    """Every option a condition mentions, in order, once each."""
    out: list[Option] = []

    def walk(c):
        if isinstance(c, (All, Any_)):
            for x in c.items:
                walk(x)
        elif isinstance(c, Not):
            walk(c.item)
        elif isinstance(c, Gpu):
            return
        else:
            if c.option not in out:
                out.append(c.option)
            if isinstance(c, Compare) and isinstance(c.value, Option) and c.value not in out:
                out.append(c.value)

    walk(cond)
    return out


def present_options(cond: Any) -> list[Option]:
    """The options a condition requires to be written (top-level `all` of `present`s)."""
    items = cond.items if isinstance(cond, All) else (cond,)
    return [c.option for c in items if isinstance(c, Present)]


# --- evaluation ------------------------------------------------------------------------


def effective_value(parsed, opt: Option):
    """(known, value): the value SGLang would see for `opt` in this launch."""
    use = parsed.last_use(opt.dest)
    if use is None:
        if parsed.uncertain:
            return False, None
        if opt.default is None and opt.kind not in ("flag", "bool_optional"):
            return False, None  # SGLang decides it at start-up
        return True, opt.default
    written = use.option
    if written.kind == "flag":
        if written.action == "store_false":
            return True, False
        return True, True
    if written.kind == "bool_optional":
        return True, not use.matched.startswith("--no-")
    values = use.values
    if written.kind == "optional" and not values:
        return True, None
    texts = [v.text for v in values]
    if any(t is None for t in texts):
        return False, None
    try:
        conv = [convert(written.type, t) for t in texts]
    except ValueError:
        return False, None  # an invalid value is SL006's business, not a rule's
    if written.kind == "list":
        return True, conv
    return True, conv[0] if conv else None


def evaluate(cond: Any, parsed) -> bool | None:
    if isinstance(cond, All):
        result: bool | None = True
        for c in cond.items:
            v = evaluate(c, parsed)
            if v is False:
                return False
            if v is None:
                result = None
        return result
    if isinstance(cond, Any_):
        result = False
        for c in cond.items:
            v = evaluate(c, parsed)
            if v is True:
                return True
            if v is None:
                result = None
        return result
    if isinstance(cond, Not):
        v = evaluate(cond.item, parsed)
        return None if v is None else not v
    if isinstance(cond, Present):
        if parsed.uses_of(cond.option.dest):
            return True
        return None if parsed.uncertain else False
    if isinstance(cond, Gpu):
        gpu = getattr(parsed, "gpu", None)
        return None if gpu is None else gpu in cond.gens
    known, value = effective_value(parsed, cond.option)
    if not known:
        return None
    target = cond.value
    if isinstance(target, Option):
        known, target = effective_value(parsed, target)
        if not known:
            return None
    return _compare(cond.op, value, target)


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return str(a) == str(b) if a is not None and b is not None else a is b


def _compare(op: str, value, target) -> bool | None:
    if op == "eq":
        return _same(value, target)
    if op == "ne":
        return not _same(value, target)
    if op == "in":
        return any(_same(value, t) for t in target)
    if op == "notIn":
        return not any(_same(value, t) for t in target)
    if op == "truthy":
        return bool(value) == target
    if op == "divisibleBy":
        if (isinstance(value, bool) or isinstance(target, bool) or not isinstance(value, int)
                or not isinstance(target, int) or target == 0):
            return None
        return value % target == 0
    if value is None or isinstance(value, (bool, list)) or not isinstance(value, (int, float)):
        return None
    return {"gt": value > target, "ge": value >= target, "lt": value < target,
            "le": value <= target}[op]


class _Nothing:
    """A launch that writes no option: every value is the catalog default."""

    uncertain = False
    gpu = None

    def uses_of(self, dest):
        return []

    def last_use(self, dest):
        return None


def is_false_when_nothing_written(cond) -> bool:
    """True when `cond` cannot hold for a launch that writes no option (with the GPU not
    said; unknowns never turn into a true result, so only writing options or naming the
    GPU can make it hold)."""
    return evaluate(cond, _Nothing()) is not True


def mentions_gpu(cond) -> bool:
    if isinstance(cond, (All, Any_)):
        return any(mentions_gpu(c) for c in cond.items)
    if isinstance(cond, Not):
        return mentions_gpu(cond.item)
    return isinstance(cond, Gpu)


def trigger_key(cond) -> set[str] | None:
    """A small set of dests at least one of which a launch must write for `cond` to hold,
    or None when there is none (the condition may hold with nothing written)."""
    if not is_false_when_nothing_written(cond):
        return None
    if isinstance(cond, All):
        best = None
        for item in cond.items:
            k = trigger_key(item)
            if k is not None and (best is None or len(k) < len(best)):
                best = k
        return best if best is not None else {o.dest for o in options_of(cond)}
    if isinstance(cond, Any_):
        keys = [trigger_key(item) for item in cond.items]
        if any(k is None for k in keys):
            return {o.dest for o in options_of(cond)}
        return set().union(*keys)
    return {o.dest for o in options_of(cond)}
