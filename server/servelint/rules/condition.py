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
    {value: EXPR, gt: EXPR}   a computed value compared (any op above, and contains,
                              subsetOf, matches, startsWith)

EXPR is an option name (`--tp-size`, or `{option: --tp-size}`), a literal, or one of

    {mul: [E, E, ...]}  {add: [E, ...]}  {sub: [E, E]}  {floordiv: [E, E]}   arithmetic
    {len: E}            items of a list (or characters of a string, keys of a mapping)
    {item: [E, i]}      the i-th item of a list (negative counts from the end)
    {json: E}           the option's text read as JSON (an invalid text reads as "<invalid>")
    {get: [E, key]}     a key of a JSON object ("<missing>" when absent)
    {type: E}           object, array, string, number, boolean, null, invalid or missing
    {keys: E}           a JSON object's keys;  {types: E}: the types of a list's items
    {min: E} {max: E}   the least/greatest item of a list of numbers
    {duplicates: E}     how many items of a list repeat an earlier one
    {number: E}         a text read as a number ("<invalid>" when it is not one)
    {lower: E}          a text in lower case
    {written: --flag}   the option's value before SGLang's resolution steps change it
                        (normalize.yaml `steps`; value normalisation still applies), for
                        the checks SGLang runs before a step resets the option

The effective value of an option is the last value written for it (as SGLang's type
conversion reads it), or, when it is not written, the default in the flag catalog.
Evaluation is three-valued: True, False, or None for "the file does not say" (a value
such as `$TP`, an option that may hide in `"$@"`, a default SGLang only decides at
start-up). A rule fires only on True.
"""

from __future__ import annotations

import json
import re
from typing import Any

from servelint.args import Use
from servelint.catalog import Catalog, Option
from servelint.rules.context import RuleContext, Written, Record
from servelint.rules.resolve import view
from servelint.schema import GPUS  # the GPU generations, one list with the settings'
from servelint.valuetypes import convert

UNKNOWN = None
COMPARE_OPS = ("eq", "ne", "in", "notIn", "gt", "ge", "lt", "le", "truthy", "divisibleBy",
               "contains", "subsetOf", "matches", "startsWith")
FUNCTIONS = {"mul": (2, None), "add": (2, None), "sub": (2, 2), "floordiv": (2, 2),
             "len": (1, 1), "item": (2, 2), "json": (1, 1), "get": (2, 2), "type": (1, 1),
             "keys": (1, 1), "types": (1, 1), "min": (1, 1), "max": (1, 1),
             "duplicates": (1, 1), "number": (1, 1), "lower": (1, 1), "written": (1, 1)}


class Invalid(str):
    """A value that is not what the expression wanted (bad JSON, a missing key); it
    compares equal only to its own text, so `type` can name it."""


INVALID = Invalid("<invalid>")
MISSING = Invalid("<missing>")


class ConditionError(ValueError):
    """A condition that does not parse; the message says where and why."""


class All(Record):
    items: tuple


class Any_(Record):
    items: tuple


class Not(Record):
    item: Any


class Present(Record):
    option: Option
    name: str


class Compare(Record):
    option: Option
    name: str
    op: str
    value: Any  # a literal, or an Option to compare with


class Gpu(Record):
    gens: tuple


class Env(Record):
    """An environment variable of the launch: `op` is set (value True/False), eq, ne, in, notIn."""
    name: str
    op: str
    value: Any
    default: bool = False  # for `truthy`: what SGLang reads when the variable is not set


class Model(Record):
    """The served model: `field` is architecture or type (config.json model_type)."""
    field: str
    values: tuple


DEPENDENCIES = (Gpu, Env, Model)  # atoms decided by something other than the launch's options
ENV_OPS = ("set", "truthy", "eq", "ne", "in", "notIn")
ENV_TRUE = ("true", "1", "yes", "y")  # how SGLang reads a boolean variable (environ.py EnvBool)
ENV_FALSE = ("false", "0", "no", "n")


class Ref(Record):
    """An option's effective value inside an expression."""
    option: Option


class Fn(Record):
    name: str
    args: tuple  # Ref, Fn or literals


class ValueTest(Record):
    expr: Any  # Ref or Fn
    op: str
    target: Any  # a literal, Ref or Fn


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
    if "env" in keys:
        name = raw["env"]
        ops = keys - {"env", "default"}
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ConditionError(f"{where}.env: expected an environment variable name, got {name!r}")
        if len(ops) != 1 or not ops <= set(ENV_OPS):
            raise ConditionError(f"{where}: an env test takes exactly one of {', '.join(ENV_OPS)}")
        op = next(iter(ops))
        value = raw[op]
        default = raw.get("default", False)
        if "default" in raw and (op != "truthy" or not isinstance(default, bool)):
            raise ConditionError(f"{where}.default: only a truthy test takes a default, true or false")
        if op in ("set", "truthy") and not isinstance(value, bool):
            raise ConditionError(f"{where}.{op}: expected true or false")
        if op == "truthy":
            return Env(name, op, value, default)
        if op in ("in", "notIn"):
            if not isinstance(value, list) or not value:
                raise ConditionError(f"{where}.{op}: expected a list of values")
            value = tuple(str(v) for v in value)
        elif op in ("eq", "ne"):
            value = str(value)
        return Env(name, op, value)
    if keys == {"model"}:
        spec = raw["model"]
        if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in ("architecture", "type"):
            raise ConditionError(f"{where}.model: expected {{architecture: [...]}} or {{type: [...]}}")
        field_, values = next(iter(spec.items()))
        values = [values] if isinstance(values, str) else values
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            raise ConditionError(f"{where}.model.{field_}: expected a list of names")
        return Model(field_, tuple(values))
    if keys in ({"present"}, {"absent"}):
        key = next(iter(keys))
        opt = _option(raw[key], catalog, f"{where}.{key}")
        node = Present(opt, raw[key])
        return node if key == "present" else Not(node)
    if "value" in keys:
        ops = keys - {"value"}
        if len(ops) != 1 or not ops <= set(COMPARE_OPS):
            raise ConditionError(
                f"{where}: a value test takes exactly one of {', '.join(COMPARE_OPS)}; got "
                f"{', '.join(sorted(map(str, ops))) or 'none'}")
        op = next(iter(ops))
        expr = parse_expr(raw["value"], catalog, f"{where}.value")
        if not isinstance(expr, (Ref, Fn)):
            raise ConditionError(f"{where}.value: expected an option or an expression, got {raw['value']!r}")
        target = raw[op]
        if isinstance(target, (dict, str)) and not (isinstance(target, str) and not target.startswith("--")):
            target = parse_expr(target, catalog, f"{where}.{op}")
        _check_literal(op, target, where)
        return ValueTest(expr, op, target)
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
            if set(value) == {"option"} and op not in ("in", "notIn", "truthy"):
                value = _option(value["option"], catalog, f"{where}.{op}.option")
                return Compare(opt, raw["option"], op, value)
            value = parse_expr(value, catalog, f"{where}.{op}")
            _check_literal(op, value, where)
            return ValueTest(Ref(opt), op, value)
        _check_literal(op, value, where)
        return Compare(opt, raw["option"], op, value)
    raise ConditionError(
        f"{where}: unknown condition keys {', '.join(sorted(map(str, keys)))}; expected all, any, "
        f"not, present, absent, or option with one of {', '.join(COMPARE_OPS)}")


def _check_literal(op: str, value: Any, where: str) -> None:
    if isinstance(value, (Ref, Fn)):
        if op in ("in", "notIn", "truthy", "subsetOf", "matches"):
            raise ConditionError(f"{where}.{op}: expected a literal, not an expression")
        return
    if op in ("in", "notIn", "subsetOf") and not isinstance(value, list):
        raise ConditionError(f"{where}.{op}: expected a list of values")
    if op in ("gt", "ge", "lt", "le", "divisibleBy") and (
            isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ConditionError(f"{where}.{op}: expected a number, got {value!r}")
    if op == "truthy" and not isinstance(value, bool):
        raise ConditionError(f"{where}.truthy: expected true or false")
    if op in ("matches", "startsWith") and not isinstance(value, str):
        raise ConditionError(f"{where}.{op}: expected a string")
    if op == "matches":
        try:
            re.compile(value)
        except re.error as exc:
            raise ConditionError(f"{where}.matches: not a regular expression: {exc}") from None


def parse_expr(raw: Any, catalog: Catalog, where: str) -> Any:
    """An EXPR (see the module docstring): Ref, Fn, or a literal."""
    if isinstance(raw, str) and raw.startswith("--"):
        return Ref(_option(raw, catalog, where))
    if isinstance(raw, dict):
        if set(raw) == {"option"}:
            return Ref(_option(raw["option"], catalog, f"{where}.option"))
        if len(raw) != 1 or next(iter(raw)) not in FUNCTIONS:
            raise ConditionError(
                f"{where}: expected an option, a literal or one of {', '.join(FUNCTIONS)}; got "
                f"{', '.join(sorted(map(str, raw)))}")
        name, args = next(iter(raw.items()))
        args = args if isinstance(args, list) else [args]
        low, high = FUNCTIONS[name]
        if len(args) < low or (high is not None and len(args) > high):
            raise ConditionError(f"{where}.{name}: takes {low if low == high else f'{low} or more'} "
                                 f"argument{'s' if low != 1 else ''}, got {len(args)}")
        if name == "written":
            if not (isinstance(args[0], str) and args[0].startswith("--")) and not (
                    isinstance(args[0], dict) and set(args[0]) == {"option"}):
                raise ConditionError(f"{where}.written: expected an option name")
            return Fn(name, (parse_expr(args[0], catalog, f"{where}.written"),))
        if name in ("item", "get"):
            key = args[1]
            if name == "item" and (isinstance(key, bool) or not isinstance(key, int)):
                raise ConditionError(f"{where}.item: the index must be an integer")
            if name == "get" and not isinstance(key, (str, int)):
                raise ConditionError(f"{where}.get: the key must be a string")
            return Fn(name, (parse_expr(args[0], catalog, f"{where}.{name}[0]"), key))
        return Fn(name, tuple(parse_expr(a, catalog, f"{where}.{name}[{i}]") for i, a in enumerate(args)))
    if isinstance(raw, list):
        raise ConditionError(f"{where}: a list is not an expression")
    return raw


def _option(name: Any, catalog: Catalog, where: str) -> Option:
    if not isinstance(name, str) or not name.startswith("--"):
        raise ConditionError(f"{where}: expected an option name such as --tp-size, got {name!r}")
    opt = catalog.lookup(name)
    if opt is None:
        raise ConditionError(f"{where}: SGLang {catalog.version} has no option {name}")
    return opt


def leaves(cond: Any):
    """The tests of a condition (everything but all/any/not), in order."""
    if isinstance(cond, (All, Any_)):
        for x in cond.items:
            yield from leaves(x)
    elif isinstance(cond, Not):
        yield from leaves(cond.item)
    else:
        yield cond


def options_of(cond: Any) -> list[Option]:
    """Every option a condition mentions, in order, once each."""
    out: list[Option] = []
    for c in leaves(cond):
        if isinstance(c, DEPENDENCIES):
            continue
        if isinstance(c, ValueTest):
            found = expr_options(c.expr) + expr_options(c.target)
        else:
            found = [c.option] + ([c.value] if isinstance(c, Compare) and isinstance(c.value, Option) else [])
        out.extend(o for o in found if o not in out)
    return out


def expr_options(expr: Any) -> list[Option]:
    if isinstance(expr, Ref):
        return [expr.option]
    if isinstance(expr, Fn):
        return [o for a in expr.args for o in expr_options(a)]
    return []


def present_options(cond: Any) -> list[Option]:
    """The options a condition requires to be written (top-level `all` of `present`s)."""
    items = cond.items if isinstance(cond, All) else (cond,)
    return [c.option for c in items if isinstance(c, Present)]


# --- evaluation ------------------------------------------------------------------------


def effective_value(launch: Written, opt: Option) -> tuple[bool, Any]:
    """(known, value): the value SGLang's checks see for `opt` in this launch, after its
    normalisation and resolution (resolve.py, normalize.yaml)."""
    return view(launch).value(opt)


def raw_effective_value(launch: Written, opt: Option) -> tuple[bool, Any]:
    """(known, value): the value SGLang's parser hands over for `opt`, before resolution."""
    use = launch.last_use(opt.dest)
    if use is None:
        if launch.uncertain:
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
    texts = [v.text for v in values if v.text is not None]
    if len(texts) < len(values):  # a value the file does not fix
        return False, None
    try:
        conv = [convert(written.type, t) for t in texts]
    except ValueError:
        return False, None  # an invalid value is SL006's business, not a rule's
    if written.choices and any(c not in written.choices for c in conv):
        return False, None  # nor is an invalid choice (SL007's): argparse stops there
    if written.kind == "list":
        return True, conv
    return True, conv[0] if conv else None


def evaluate(cond: Any, ctx: RuleContext) -> bool | None:
    """True or False when the launch settles `cond`, None when it is unknown."""
    launch = ctx.launch
    if isinstance(cond, All):
        result: bool | None = True
        for c in cond.items:
            v = evaluate(c, ctx)
            if v is False:
                return False
            if v is None:
                result = None
        return result
    if isinstance(cond, Any_):
        result = False
        for c in cond.items:
            v = evaluate(c, ctx)
            if v is True:
                return True
            if v is None:
                result = None
        return result
    if isinstance(cond, Not):
        v = evaluate(cond.item, ctx)
        return None if v is None else not v
    if isinstance(cond, Present):
        if launch.uses_of(cond.option.dest):
            return True
        if view(launch).set_by_step(cond.option.dest):
            return True
        return None if launch.uncertain else False
    if isinstance(cond, (Gpu, Env, Model)):
        return _dependency(cond, ctx)
    if isinstance(cond, ValueTest):
        value = compute(cond.expr, launch)
        if value is UNKNOWN:
            return None
        target = compute(cond.target, launch)
        if target is UNKNOWN and cond.target is not None:
            return None
        return _compare(cond.op, value, target)
    known, value = effective_value(launch, cond.option)
    if not known:
        return None
    target = cond.value
    if isinstance(target, Option):
        known, target = effective_value(launch, target)
        if not known:
            return None
    return _compare(cond.op, value, target)


class _Unknown(Exception):
    pass


def compute(expr: Any, launch: Written) -> Any:
    """The value of an expression for this launch, or UNKNOWN (None)."""
    try:
        return _compute(expr, launch)
    except _Unknown:
        return UNKNOWN


def _num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Unknown
    return v


def _json_type(v) -> str:
    if isinstance(v, Invalid):
        return str(v).strip("<>")
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "invalid"


def _compute(expr: Any, launch: Written) -> Any:
    if isinstance(expr, Ref):
        known, value = effective_value(launch, expr.option)
        if not known:
            raise _Unknown
        return value
    if not isinstance(expr, Fn):
        return expr
    name = expr.name
    if name == "written":
        known, value = view(launch).before_steps(expr.args[0].option)
        if not known:
            raise _Unknown
        return value
    if name in ("item", "get"):
        base = _compute(expr.args[0], launch)
        key = expr.args[1]
        if name == "item":
            if not isinstance(base, (list, tuple)):
                raise _Unknown
            return base[key] if -len(base) <= key < len(base) else MISSING
        if isinstance(base, dict):
            return base.get(key, MISSING)
        return MISSING if isinstance(base, (list, str, int, float, bool)) or base is None else INVALID
    args = [_compute(a, launch) for a in expr.args]
    if name in ("mul", "add"):
        total = 1 if name == "mul" else 0
        for a in args:
            total = total * _num(a) if name == "mul" else total + _num(a)
        return total
    if name == "sub":
        return _num(args[0]) - _num(args[1])
    if name == "floordiv":
        if _num(args[1]) == 0:
            raise _Unknown
        return _num(args[0]) // args[1]
    (arg,) = args
    if name == "json":
        if isinstance(arg, (dict, list)):
            return arg  # SGLang's own type already read it
        if not isinstance(arg, str):
            raise _Unknown
        try:
            return json.loads(arg)
        except ValueError:
            return INVALID
    if name == "type":
        return _json_type(arg)
    if name == "number":
        if isinstance(arg, bool):
            return INVALID
        if isinstance(arg, (int, float)):
            return arg
        try:
            return float(str(arg))
        except ValueError:
            return INVALID
    if name == "lower":
        if not isinstance(arg, str):
            raise _Unknown
        return arg.lower()
    if arg is None:
        raise _Unknown
    if name == "len":
        if not isinstance(arg, (list, tuple, str, dict)) or isinstance(arg, Invalid):
            raise _Unknown
        return len(arg)
    if name == "keys":
        if not isinstance(arg, dict):
            raise _Unknown
        return list(arg)
    if not isinstance(arg, (list, tuple)):
        raise _Unknown
    if name == "types":
        return [_json_type(x) for x in arg]
    if name == "duplicates":
        seen: list[Any] = []
        dup = 0
        for x in arg:
            if any(_same(x, y) for y in seen):
                dup += 1
            else:
                seen.append(x)
        return dup
    nums = [_num(x) for x in arg]
    if not nums:
        return MISSING
    return min(nums) if name == "min" else max(nums)


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
    if op == "contains":
        if isinstance(value, dict):
            return any(_same(k, target) for k in value)
        if isinstance(value, (list, tuple)):
            return any(_same(x, target) for x in value)
        if isinstance(value, str) and not isinstance(value, Invalid):
            return isinstance(target, str) and target in value
        return None
    if op == "subsetOf":
        if not isinstance(value, (list, tuple)):
            return None
        return all(any(_same(x, t) for t in target) for x in value)
    if op in ("matches", "startsWith"):
        if not isinstance(value, str) or isinstance(value, Invalid):
            return None
        return (re.search(target, value) is not None if op == "matches"
                else value.startswith(target))
    if op == "divisibleBy":
        if (isinstance(value, bool) or isinstance(target, bool) or not isinstance(value, int)
                or not isinstance(target, int) or target == 0):
            return None
        return value % target == 0
    if isinstance(target, Invalid) or isinstance(target, bool) or not isinstance(target, (int, float)):
        return None
    if value is None or isinstance(value, (bool, list)) or not isinstance(value, (int, float)):
        return None
    return {"gt": value > target, "ge": value >= target, "lt": value < target,
            "le": value <= target}[op]


class _Nothing:
    """A launch that writes no option: every value is the catalog default."""

    uncertain = False

    def uses_of(self, dest: str) -> list[Use]:
        return []

    def last_use(self, dest: str) -> Use | None:
        return None


def is_false_when_nothing_written(cond) -> bool:
    """True when `cond` cannot hold for a launch that writes no option, whatever the GPU,
    the environment and the model turn out to be (other unknowns never turn into a true
    result, so only writing options can make it hold)."""
    from itertools import product

    empty = RuleContext(_Nothing(), None)
    atoms = dependency_atoms(cond)
    if len(atoms) > 8:
        return False  # too many to try: index the rule as one that may always hold
    for values in product((True, False), repeat=len(atoms)):
        trial = RuleContext(empty.launch, None, assume=dict(zip(atoms, values)))
        if evaluate(cond, trial) is True:
            return False
    return True


def mentions_gpu(cond) -> bool:
    return any(isinstance(c, Gpu) for c in leaves(cond))


# --- what a verdict depends on ----------------------------------------------------------


def _dependency(atom: Any, ctx: RuleContext) -> bool | None:
    """A GPU, environment or model atom: settled by what the file (or the settings) show,
    else by the assumption being tried (`ctx.assume`), else unknown."""
    got = _settle(atom, ctx)
    if got is None and ctx.assume:
        return ctx.assume.get(atom)
    return got


def _settle(atom: Any, ctx: RuleContext) -> bool | None:
    if isinstance(atom, Gpu):
        return None if ctx.gpu is None else ctx.gpu in atom.gens
    if isinstance(atom, Model):
        model = ctx.model or {}
        have = model.get(atom.field)
        return None if have is None else have in atom.values
    env = ctx.env or {}
    if atom.name in env:
        value = env[atom.name]
        if atom.op == "set":
            return atom.value is True
        if value is None:
            return None  # set, to a value the file does not fix
        if atom.op == "truthy":
            low = value.lower()
            read = True if low in ENV_TRUE else False if low in ENV_FALSE else None
            return None if read is None else read == atom.value  # SGLang refuses other text
    elif ctx.env_complete:
        value = None  # the file shows the whole environment, and not this variable
        if atom.op == "set":
            return atom.value is False
        if atom.op == "truthy":
            return atom.default == atom.value
    else:
        return None
    if atom.op == "eq":
        return value == atom.value
    if atom.op == "ne":
        return value != atom.value
    if atom.op == "in":
        return value in atom.value
    return value not in atom.value


def dependency_atoms(cond: Any) -> list[Any]:
    """The GPU, environment and model tests of a condition, once each."""
    out: list[Any] = []
    for c in leaves(cond):
        if isinstance(c, DEPENDENCIES) and c not in out:
            out.append(c)
    return out


def assumptions(cond: Any, ctx: RuleContext, usual_only: bool = False,
                atoms: list[Any] | None = None) -> list[tuple[Any, bool]] | None:
    """When `cond` is unknown only because of GPU, environment or model atoms the file does
    not settle: the fewest of those atoms, with values, under which it holds whatever the
    others are, as (atom, value); the usual-case values (`usual`) preferred. None when no
    such values exist or something else is unknown. `usual_only`: None as soon as it is
    clear that no usual-case values make it hold (all a warning needs). `atoms`: the
    condition's dependency atoms when the caller has them (Rule.dependencies)."""
    from itertools import combinations, product

    def replace(ctx: RuleContext, assume: dict) -> RuleContext:
        return ctx.assuming(assume)

    open_atoms = [a for a in (dependency_atoms(cond) if atoms is None else atoms)
                  if _settle(a, ctx) is None]
    if not open_atoms or len(open_atoms) > 6:
        return None
    # Whatever the search finds holds with every open atom at its usual value; when even
    # that does not hold, nothing will (one evaluation instead of the search, the usual way
    # out on a launch whose options already decide the rule)
    if evaluate(cond, replace(ctx, assume={a: _usual_value(a) for a in open_atoms})) is not True:
        if usual_only:
            return None

    def holds_for_all(fixed: dict) -> bool:
        rest = [a for a in open_atoms if a not in fixed]
        for values in product((True, False), repeat=len(rest)):
            trial = replace(ctx, assume={**fixed, **dict(zip(rest, values))})
            if evaluate(cond, trial) is not True:
                return False
        return True

    for size in range(1, len(open_atoms) + 1):
        found = []
        for subset in combinations(open_atoms, size):
            for values in product((True, False), repeat=size):
                fixed = dict(zip(subset, values))
                if holds_for_all(fixed):
                    found.append(list(fixed.items()))
        if found:
            found.sort(key=lambda pairs: -sum(usual(a, v) for a, v in pairs))
            return found[0]
    return None


def _usual_value(atom: Any) -> bool:
    return usual(atom, True)


def usual(atom: Any, value: bool) -> bool:
    """Whether the atom taking `value` is the usual case: a variable not set (or not
    true, or not the one value named), a model not among the few named, a GPU among more
    than half of the generations."""
    if isinstance(atom, Env):
        if atom.op in ("set", "truthy"):
            return atom.value != value  # assumed unset / false
        return value is (atom.op in ("ne", "notIn"))
    if isinstance(atom, Gpu):
        refusing = len(atom.gens) if value else len(GPUS) - len(atom.gens)
        return refusing * 2 > len(GPUS)
    return value is False


def describe(atom: Any, value: bool) -> str:
    """The condition an atom with this value stands for, in words."""
    if isinstance(atom, Gpu):
        gens = atom.gens if value else tuple(g for g in GPUS if g not in atom.gens)
        if not gens:
            return "the GPU is none of the known generations"
        return "the GPU is " + (gens[0] if len(gens) == 1 else ", ".join(gens[:-1]) + " or " + gens[-1])
    if isinstance(atom, Model):
        what = "architecture" if atom.field == "architecture" else "model type"
        names = _some(atom.values)
        one = len(atom.values) == 1
        if value:
            return f"the model's {what} is {names}" if one else f"the model's {what} is one of {names}"
        return f"the model's {what} is not {names}" if one else f"the model's {what} is none of {names}"
    if atom.op == "set":
        return f"{atom.name} is set" if atom.value == value else f"{atom.name} is not set"
    if atom.op == "truthy":
        return f"{atom.name} is true" if atom.value == value else f"{atom.name} is not true"
    shown = {"eq": f"is {atom.value}", "ne": f"is not {atom.value}",
             "in": f"is one of {', '.join(atom.value) if isinstance(atom.value, tuple) else atom.value}",
             "notIn": f"is none of {', '.join(atom.value) if isinstance(atom.value, tuple) else atom.value}"}
    negated = {"eq": "ne", "ne": "eq", "in": "notIn", "notIn": "in"}
    return f"{atom.name} {shown[atom.op if value else negated[atom.op]]}"


SHOWN_NAMES = 5  # a longer list of models is cut, the rest left to the rule's page


def _some(values: tuple) -> str:
    """The names of a model atom for a message: all of a short list; of a long one, the
    first few and how many more the rule's page lists."""
    if len(values) <= SHOWN_NAMES + 1:
        return ", ".join(values)
    rest = len(values) - SHOWN_NAMES
    return ", ".join(values[:SHOWN_NAMES]) + f" (or {rest} more the rule's page lists)"


def unknown_source(atom: Any) -> str:
    """What the user can do so that servelint settles the atom."""
    if isinstance(atom, Gpu):
        return "set the `gpu` setting to check it for your GPU"
    if isinstance(atom, Model):
        return "servelint reads the model's config.json only from a local --model-path folder"
    return f"this file does not say whether {atom.name} is set"


def trigger_key(cond) -> set[str] | None:
    """A small set of dests at least one of which a launch must write for `cond` to hold,
    or None when there is none (the condition may hold with nothing written)."""
    if isinstance(cond, DEPENDENCIES) or not options_of(cond):
        return None  # says nothing about which options a launch writes
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
        keys = [k for k in (trigger_key(item) for item in cond.items) if k is not None]
        if len(keys) < len(cond.items):  # an item that may hold with nothing written
            return {o.dest for o in options_of(cond)}
        return set().union(*keys)
    return {o.dest for o in options_of(cond)}
