"""Rule records: SGLang's flag conflicts and requirements as data.

A rule pack is a JSON or YAML file holding one record or a list of records, in the
record format of the seed dataset (schemaVersion 2: errorMessage, documentation,
triggerScenarios, solutions, exampleFix, githubUrl, ...) plus what a machine needs:
`code`, `condition`, `fixes`, `appliesTo` (with `verifiedBy`), `examples`.
`schemas/rule.schema.json` is the JSON Schema of a record; `validate_record` checks the
same shape with messages a user can act on. A record without a condition gets one derived
from its exampleFix (see `derive.py`).

`appliesTo` names SGLang releases (ranges, in PEP 440 order); a pack is loaded for one
release, and a record that does not apply to it is left out before its condition is
compiled against that release's catalog. The bundled records say the releases they were
verified for (`verifiedBy`, tools/verify_rules.py; docs/rule-packs.md).
"""

from __future__ import annotations

import json
import os
import re
import zlib
from functools import lru_cache
from typing import Any, Callable, Sequence

from servelint.catalog import Catalog, Option, version_key
# The cache folder's helpers, named here too (they were defined here first).
from servelint.catalog.cache import CACHE_ENV, cache_dir, read_cache, write_cache
from servelint.lazy import Record, field
from servelint.model import Severity
from servelint.rules.condition import ConditionError, options_of, parse_condition


def _yaml():
    """PyYAML, imported only when a YAML pack (or a broken pack's positions) is read: a
    shell file's check never needs it (issue 16)."""
    import yaml
    return yaml


def _fast_loader():
    # libyaml's loader is ten times faster; its marks count bytes, so it is used for
    # positions only where bytes are characters (ASCII text) or where a line is enough.
    yaml = _yaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def __getattr__(name: str) -> Any:
    if name == "FAST_LOADER":  # kept for tools that read packs; imports PyYAML when asked
        return _fast_loader()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# field -> the type (or types) its value must have
FieldTypes = dict[str, "type | tuple[type, ...]"]
SEED_FIELDS: FieldTypes = {
    "id": str, "repo": str, "slug": str, "errorCode": (str, type(None)), "errorMessage": str,
    "messagePattern": (str, type(None)), "errorType": (str, type(None)),
    "errorClass": (str, type(None)), "httpStatus": (int, type(None)), "severity": str,
    "filePath": (str, type(None)), "lineNumber": (int, type(None)),
    "sourceCode": (str, type(None)), "sourceCodeStart": (int, type(None)),
    "sourceCodeEnd": (int, type(None)), "githubUrl": (str, type(None)),
    "documentation": str, "triggerScenarios": (str, type(None)),
    "commonSituations": (str, type(None)), "solutions": list, "exampleFix": (str, type(None)),
    "handlingStrategy": (str, type(None)), "validationCode": (str, type(None)),
    "typeGuard": (str, type(None)), "tryCatchPattern": (str, type(None)),
    "preventionTips": list, "tags": list, "backgroundTag": (str, type(None)),
    "analyzedSha": (str, type(None)), "analyzedAt": (str, type(None)), "schemaVersion": int,
}
MACHINE_FIELDS: FieldTypes = {
    "code": str, "condition": dict, "fixes": list, "appliesTo": (dict, str, list),
    "examples": dict, "messageTemplate": str, "sglangTemplate": str, "docsUrl": str,
    "verifiedBy": dict,
}
REQUIRED = ("id", "errorMessage")
CODE_RE = re.compile(r"^[A-Z][A-Z0-9]*(-[A-Za-z0-9]+)?[0-9A-Za-z]*$")
SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING, "information": Severity.INFORMATION,
              "info": Severity.INFORMATION, "hint": Severity.HINT}


class PackProblem(Record):
    path: str
    message: str
    line: int = 0  # zero-based
    column: int = 0
    record: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line + 1}:{self.column + 1}"
        return f"{where}: {self.message}"


class FixEdit(Record, frozen=True):
    op: str  # remove | add | set
    option: Option
    name: str
    value: Any = None


class RuleFix(Record, frozen=True):
    title: str
    edits: tuple[FixEdit, ...]
    preferred: bool = False
    safe: bool = False


class Rule(Record):
    code: str
    id: str
    message: str
    severity: Severity
    condition: Any
    fixes: list[RuleFix]
    record: dict
    source: str
    derived: bool = False
    applies: Any = None
    examples: dict = field(default_factory=dict)
    template: str | None = None  # errorMessage with {--flag} where SGLang prints a value

    @property
    def options(self) -> list[Option]:
        return options_of(self.condition)

    @property
    def dependencies(self) -> list:
        """The GPU, environment and model atoms of the condition (cached)."""
        got = self.__dict__.get("_dependencies")
        if got is None:
            from servelint.rules.condition import dependency_atoms
            got = self.__dict__["_dependencies"] = dependency_atoms(self.condition)
        return got

    @property
    def slug(self) -> str:
        return self.record.get("slug") or self.code.lower()

    def applies_to(self, version: str) -> bool:
        return version_matches(self.applies, version)

    @property
    def bundled(self) -> bool:
        """Shipped with servelint (rules/packs/), not from a user's pack."""
        return self.source.startswith(BUNDLED_SOURCE)


# --- versions -------------------------------------------------------------------------


def _vtuple(v: str) -> tuple:
    """A version's place in PEP 440 order (0.5.0rc2 < 0.5.1 < 0.5.1.post1 < 0.5.2rc0 <
    0.5.2; `v0.5.3` is 0.5.3; a local part such as `+cu124` is ignored). ValueError for
    text that is not a version."""
    return version_key(v)


_RANGE_PART = re.compile(r"^(>=|<=|==|!=|>|<)?\s*(\S+)$")


@lru_cache(maxsize=1024)
def _range(text: str) -> tuple[tuple[str, tuple], ...]:
    """A range string ('>=0.5.14,<=0.5.23', '0.5.3', '!=0.5.0rc1') as (op, version key)
    clauses, all of which must hold. ValueError when it cannot be read."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = _RANGE_PART.match(part)
        if m is None:
            raise ValueError(f"cannot read {part!r}")
        out.append((m.group(1) or "==", _vtuple(m.group(2))))
    if not out:
        raise ValueError("an empty range")
    return tuple(out)


_OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b, ">": lambda a, b: a > b, "<": lambda a, b: a < b}


def _specs(spec: Any) -> list[str] | None:
    """`appliesTo` as its range strings; None: every version."""
    if isinstance(spec, dict):
        spec = spec.get("sglang")
    if spec is None:
        return None
    return [str(s) for s in spec] if isinstance(spec, list) else [str(spec)]


def version_matches(spec: Any, version: str) -> bool:
    """`appliesTo`: {"sglang": RANGES} or RANGES, where RANGES is a range string
    ('>=0.5.14,<=0.5.23': every clause holds; a bare version means ==) or a list of them
    (any one holds: a list of ranges, or of versions); absent: every version. Versions are
    ordered as PEP 440 orders them. A version that cannot be read matches no range."""
    ranges = _specs(spec)
    if ranges is None:
        return True
    try:
        v = _vtuple(version)
    except ValueError:
        return False
    for text in ranges:
        try:
            clauses = _range(text)
        except ValueError:
            continue
        if all(_OPS[op](v, target) for op, target in clauses):
            return True
    return False


def _check_spec(spec: Any) -> str | None:
    if isinstance(spec, dict):
        unknown = set(spec) - {"sglang"}
        if unknown:
            return f"appliesTo: unknown engine {sorted(unknown)}; only 'sglang' is known"
        spec = spec.get("sglang")
    if spec is None:
        return None
    items = spec if isinstance(spec, list) else [spec]
    if not items:
        return "appliesTo: an empty list applies to no version; leave appliesTo out for every version"
    for item in items:
        if not isinstance(item, str):
            return (f"appliesTo: {item!r} is not a version range; write it as a string "
                    f"(e.g. '>=0.5.20,<0.6' or '0.5.3')")
        try:
            _range(item)
        except ValueError:
            return f"appliesTo: cannot read version range {item!r} (use e.g. '>=0.5.20,<0.6')"
    return None


VERIFIED_METHODS = ("source", "validator")


def _check_verified(value: Any) -> list[str]:
    """`verifiedBy`: {method, tool, releases}: how the record's appliesTo was checked."""
    problems = []
    unknown = set(value) - {"method", "tool", "releases"}
    if unknown:
        problems.append(f"verifiedBy: unknown keys {sorted(unknown)} (expected method, tool, releases)")
    if value.get("method") not in VERIFIED_METHODS:
        problems.append(f"verifiedBy.method must be one of {', '.join(VERIFIED_METHODS)}")
    if "tool" in value and not isinstance(value["tool"], str):
        problems.append("verifiedBy.tool must be a string")
    if "releases" not in value:
        problems.append("verifiedBy needs 'releases'")
    else:
        msg = _check_spec(value["releases"])
        if msg:
            problems.append(msg.replace("appliesTo", "verifiedBy.releases", 1))
    return problems


# --- records ----------------------------------------------------------------------------


def unwrap(raw: Any) -> list[Any]:
    """A pack's records: a record, a `{"record": ...}` wrapper, or a list of either."""
    items = raw if isinstance(raw, list) else [raw]
    out = []
    for item in items:
        if isinstance(item, dict) and "record" in item and isinstance(item["record"], dict):
            item = item["record"]
        out.append(item)
    return out


def validate_record(rec: Any) -> list[str]:
    """Problems with a record's shape, each a sentence naming the field."""
    if not isinstance(rec, dict):
        return [f"a record must be a mapping, not {type(rec).__name__}"]
    problems = []
    for key in REQUIRED:
        if key not in rec:
            problems.append(f"missing required field '{key}'")
    for key, value in rec.items():
        want = SEED_FIELDS.get(key) or MACHINE_FIELDS.get(key)
        if want is None:
            if not key.startswith("x-"):
                problems.append(f"unknown field '{key}' (extensions must start with 'x-')")
            continue
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            names = want.__name__ if isinstance(want, type) else " or ".join(
                "null" if t is type(None) else t.__name__ for t in want)
            problems.append(f"field '{key}' must be {names}, not {type(value).__name__}")
    if "condition" not in rec and not rec.get("exampleFix"):
        problems.append("a record needs a 'condition' or an 'exampleFix' to derive one from")
    if isinstance(rec.get("severity"), str) and rec["severity"].lower() not in SEVERITIES:
        problems.append(f"severity {rec['severity']!r} is not one of error, warning, information, hint")
    if isinstance(rec.get("code"), str) and not CODE_RE.match(rec["code"]):
        problems.append(f"code {rec['code']!r} must look like SL101 or ACME-12")
    for key in ("solutions", "preventionTips", "tags"):
        if isinstance(rec.get(key), list) and not all(isinstance(x, str) for x in rec[key]):
            problems.append(f"field '{key}' must be a list of strings")
    if "appliesTo" in rec:
        msg = _check_spec(rec["appliesTo"])
        if msg:
            problems.append(msg)
    if isinstance(rec.get("verifiedBy"), dict):
        problems += _check_verified(rec["verifiedBy"])
    ex = rec.get("examples")
    if isinstance(ex, dict):
        for k, v in ex.items():
            if k not in ("trigger", "ok", "dependent"):
                problems.append(f"examples: unknown key '{k}' (expected trigger, ok, dependent)")
            elif not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                problems.append(f"examples.{k} must be a list of argument strings")
    return problems


_EXAMPLE_GPU = re.compile(r"^\[gpu=(sm\d+)\]\s*")


def split_example(example: str) -> tuple[str | None, str]:
    """An example's target GPU and its arguments: `[gpu=sm100] --kv-cache-dtype nvfp4`
    is judged (by tests and by `make conformance`) as a launch on that GPU generation."""
    m = _EXAMPLE_GPU.match(example)
    if m:
        return m.group(1), example[m.end():]
    return None, example


def rule_code(rec: dict) -> str:
    """A record's code: its own, or one derived from its stable id."""
    code = rec.get("code")
    if isinstance(code, str) and code:
        return code
    return "SGL-" + re.sub(r"[^0-9a-zA-Z]", "", str(rec["id"]))[:6]


def _parse_fixes(raw: list, catalog: Catalog) -> list[RuleFix]:
    fixes = []
    for i, fx in enumerate(raw):
        where = f"fixes[{i}]"
        if not isinstance(fx, dict) or not isinstance(fx.get("edits"), list) or not fx["edits"]:
            raise ConditionError(f"{where}: expected {{title, edits: [...]}} with at least one edit")
        unknown = set(fx) - {"title", "edits", "preferred", "safe"}
        if unknown:
            raise ConditionError(f"{where}: unknown keys {sorted(unknown)}")
        edits = []
        for j, e in enumerate(fx["edits"]):
            w = f"{where}.edits[{j}]"
            if not isinstance(e, dict):
                raise ConditionError(f"{w}: expected {{remove: --flag}}, {{add: --flag}} or {{set: --flag, value: v}}")
            ops = [k for k in ("remove", "add", "set") if k in e]
            if len(ops) != 1 or set(e) - {"remove", "add", "set", "value"}:
                raise ConditionError(f"{w}: expected exactly one of remove, add, set (and value)")
            op = ops[0]
            name = e[op]
            opt = catalog.lookup(name) if isinstance(name, str) else None
            if opt is None:
                raise ConditionError(f"{w}: SGLang {catalog.version} has no option {name!r}")
            if op == "set" and "value" not in e:
                raise ConditionError(f"{w}: set needs a value")
            if op == "add" and opt.takes_value and "value" not in e and opt.kind != "optional":
                raise ConditionError(f"{w}: {name} takes a value; give one with value")
            edits.append(FixEdit(op, opt, name, e.get("value")))
        title = fx.get("title") or "; ".join(_edit_title(e) for e in edits)
        fixes.append(RuleFix(title, tuple(edits), bool(fx.get("preferred")), bool(fx.get("safe"))))
    if fixes and not any(f.preferred for f in fixes):
        fixes[0] = RuleFix(fixes[0].title, fixes[0].edits, True, fixes[0].safe)
    return fixes


def _edit_title(e: FixEdit) -> str:
    if e.op == "remove":
        return f"Remove {e.name}"
    if e.value is None:
        return f"Add {e.name}"
    return f"{'Add' if e.op == 'add' else 'Set'} {e.name} {_show(e.value)}"


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def build_rule(rec: dict, catalog: Catalog, source: str) -> Rule:
    """A Rule from a valid record; ConditionError when its condition or fixes do not
    make sense for this catalog."""
    from servelint.rules.derive import derive

    STATS["built"] += 1
    code = rule_code(rec)
    severity = SEVERITIES.get(str(rec.get("severity", "error")).lower(), Severity.ERROR)
    derived = "condition" not in rec
    if derived:
        condition, fixes = derive(rec, catalog)
    else:
        condition = parse_condition(rec["condition"], catalog)
        fixes = _parse_fixes(rec.get("fixes", []), catalog)
    template = rec.get("messageTemplate")
    if template:
        for name in re.findall(r"\{(--[A-Za-z0-9-]+)\}", template):
            if catalog.lookup(name) is None:
                raise ConditionError(f"messageTemplate: SGLang {catalog.version} has no option {name}")
    return Rule(code=code, id=str(rec["id"]), message=rec["errorMessage"], severity=severity,
                condition=condition, fixes=fixes, record=rec, source=source, derived=derived,
                applies=rec.get("appliesTo"), examples=rec.get("examples") or {}, template=template)


# --- packs ------------------------------------------------------------------------------------


def parse_pack_text(text: str, path: str) -> tuple[Any, list[PackProblem]]:
    """The data of a pack file, or the syntax problem with its position."""
    is_json = path.lower().endswith(".json")
    if is_json:
        try:
            return json.loads(text), []
        except json.JSONDecodeError as exc:
            return None, [PackProblem(path, f"invalid JSON: {exc.msg}", exc.lineno - 1, exc.colno - 1)]
    yaml = _yaml()
    try:
        return yaml.load(text, Loader=_fast_loader()), []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        return None, [PackProblem(path, f"invalid YAML: {problem}", mark.line if mark else 0,
                                  mark.column if mark else 0)]


def _record_positions(text: str) -> list[tuple[int, int]]:
    """Line and column of each record in a pack (JSON is read as YAML for this)."""
    yaml = _yaml()
    try:
        node = yaml.compose(text, Loader=_fast_loader() if text.isascii() else yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if node is None:
        return []
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    out = []
    for item in items:
        target = item
        if isinstance(item, yaml.MappingNode):
            for k, v in item.value:
                if getattr(k, "value", None) == "record" and isinstance(v, yaml.MappingNode):
                    target = v
        out.append((target.start_mark.line, target.start_mark.column))
    return out


class LoadedPack(Record):
    path: str
    rules: list[Rule]
    problems: list[PackProblem]
    # ids of the records whose appliesTo leaves out the catalog's release: they were not
    # compiled against it, and they still replace an earlier record with their id
    skipped: list[str] = field(default_factory=list)


def load_pack_text(text: str, path: str, catalog: Catalog) -> LoadedPack:
    data, problems = parse_pack_text(text, path)
    if problems:
        return LoadedPack(path, [], problems)
    return load_pack_data(data, lambda: text, path, catalog)


def load_pack_data(data, get_text, path: str, catalog: Catalog) -> LoadedPack:
    problems: list[PackProblem] = []
    if data is None:
        return LoadedPack(path, [], [PackProblem(path, "the rule pack is empty")])
    records = unwrap(data)
    positions_cache: list = []

    def position(i: int) -> tuple[int, int]:
        if not positions_cache:
            positions_cache.append(_record_positions(get_text()))  # only when something is wrong
        pos = positions_cache[0]
        return pos[i] if i < len(pos) else (0, 0)

    rules: list[Rule] = []
    skipped: list[str] = []
    seen_codes: dict[str, int] = {}
    for i, rec in enumerate(records):
        label = f"record {i + 1}"
        if isinstance(rec, dict) and rec.get("id"):
            label += f" ({rec.get('code') or rec['id']})"
        errs = validate_record(rec)
        if errs:
            line, col = position(i)
            problems.extend(PackProblem(path, f"{label}: {e}", line, col, i) for e in errs)
            continue
        rid = str(rec["id"])
        if not version_matches(rec.get("appliesTo"), catalog.version):
            # Not for this release: its options need not exist in its catalog. Filtered
            # before compiling, so a release outside the record's range has no problem
            # with it (and costs nothing for it).
            rules = [r for r in rules if r.id != rid]
            if rid not in skipped:
                skipped.append(rid)
            continue
        if rid in skipped:
            skipped.remove(rid)
        try:
            rule = build_rule(rec, catalog, path)
        except ConditionError as exc:
            line, col = position(i)
            problems.append(PackProblem(path, f"{label}: {exc}", line, col, i))
            continue
        if rule.code in seen_codes:
            line, col = position(i)
            problems.append(PackProblem(path, f"{label}: code {rule.code} is already used by "
                                        f"record {seen_codes[rule.code] + 1}", line, col, i))
            continue
        seen_codes[rule.code] = i
        rules.append(rule)
    return LoadedPack(path, rules, problems, skipped)


def load_pack_file(path: str, catalog: Catalog) -> LoadedPack:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        return LoadedPack(path, [], [PackProblem(path, f"cannot read the rule pack: {exc}")])
    return load_pack_text(text, path, catalog)


_file_cache: dict[tuple[str, int | None, int | None, str], LoadedPack] = {}


def load_pack_cached(path: str, catalog: Catalog) -> LoadedPack:
    try:
        st = os.stat(path)
        key: tuple[str, int | None, int | None, str] = (path, st.st_mtime_ns, st.st_size,
                                                        catalog.version)
    except OSError:
        key = (path, None, None, catalog.version)
    pack = _file_cache.get(key)
    if pack is None:
        pack = load_pack_file(path, catalog)
        _file_cache[key] = pack
    return pack


COMPILED = "bundled.json"  # the packs/*.yaml as JSON, made by tools/build_packs.py


def compile_bundled() -> str:
    """The bundled YAML packs as one JSON document (YAML is slow to read at start-up)."""
    from importlib import resources
    base = resources.files("servelint.rules").joinpath("packs")
    out = {}
    for entry in sorted(base.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".json", ".yaml", ".yml")):
            text = entry.read_text(encoding="utf-8")
            out[entry.name] = json.loads(text) if entry.name.endswith(".json") else \
                _yaml().load(text, Loader=_fast_loader())
    return json.dumps(out, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


BUNDLED_SOURCE = "servelint/rules/packs/"  # the `source` of every bundled rule
_HERE = os.path.dirname(os.path.abspath(__file__))


def _bundled_bytes() -> bytes | None:
    try:
        with open(os.path.join(_HERE, COMPILED), "rb") as fh:
            return fh.read()
    except OSError:
        try:  # not a plain folder (a zip): ask the package's resources
            from importlib import resources
            return resources.files("servelint.rules").joinpath(COMPILED).read_bytes()
        except (OSError, ValueError):
            return None


@lru_cache(maxsize=1)
def _bundled_data() -> dict:
    """bundled.json as data (the packs/*.yaml when it is missing or broken)."""
    raw = _bundled_bytes()
    try:
        if raw is None:
            raise ValueError("missing")
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a mapping")
        return data
    except ValueError:
        return json.loads(compile_bundled())


def _pack_source(name: str) -> Callable[[], str]:
    """The text of a bundled pack's YAML source (for the positions of its problems)."""
    def read() -> str:
        from importlib import resources
        return (resources.files("servelint.rules") / "packs" / name).read_text(encoding="utf-8")
    return read


@lru_cache(maxsize=4)
def bundled_packs(version: str) -> tuple[LoadedPack, ...]:
    """Every bundled pack, each record compiled against the release's catalog (all of
    them: `rule_set` compiles only the rules a launch can trigger, see _bundled_set)."""
    from servelint.catalog import load_catalog

    catalog = load_catalog(version)
    data = _bundled_data()
    packs = []
    for name in sorted(data):
        # The pack's data is given directly; positions (only needed for problems) come
        # from the YAML source when a bundled record is ever broken.
        packs.append(load_pack_data(data[name], _pack_source(name), f"{BUNDLED_SOURCE}{name}",
                                    catalog))
    return tuple(packs)


# --- the cache of the bundled rule index -----------------------------------------------
#
# Compiling all ~450 bundled records against a catalog and working out which options can
# trigger each one took most of a cold `servelint check` (issue 16). What a run needs to
# pick the rules a launch can trigger (each rule's code, id, trigger dests, whether it
# reads the GPU) and the records themselves are kept in one file per release in the user's
# cache folder, keyed by everything they are computed from; a run then compiles only the
# rules its launches can trigger. A missing, stale, corrupt or unwritable cache only costs
# the full build (the result is the same).

CACHE_FORMAT = 1

# What the index is computed from, besides bundled.json: the rule code and the catalogs.
_FINGERPRINT = ("rules/__init__.py", "rules/condition.py", "rules/resolve.py", "rules/derive.py",
                "rules/context.py", "rules/normalize.yaml", "args.py", "valuetypes.py", "model.py",
                "schema.py", "catalog/__init__.py", "catalog/data/releases.json.gz",
                "extract/common.py")

# How many records were compiled (`build_rule`) and index files written in this process
# (tests count work with these; they are never read by the linter).
STATS = {"built": 0, "cache_written": 0, "cache_read": 0}


def json_cached(name: str, key: str, make: Callable[[], Any]) -> Any:
    """`make()` (JSON data), kept in the cache file `name` under `key`: a file with another
    key, or one that does not read, is made again."""
    raw = read_cache(name)
    if raw is not None:
        try:
            got = json.loads(raw)
            if isinstance(got, dict) and got.get("key") == key and "value" in got:
                return got["value"]
        except ValueError:
            pass
    value = make()
    try:
        text = json.dumps({"key": key, "value": value}, ensure_ascii=False)
    except (TypeError, ValueError):
        return value
    write_cache(name, text.encode("utf-8"))
    return value


@lru_cache(maxsize=1)
def _fingerprint() -> str:
    """What the rule index is computed from, as one key: servelint's version, and the size
    and modification time of bundled.json, the rule code and the catalogs (as Python's
    own bytecode cache checks its sources)."""
    from servelint import __version__
    parts = [str(CACHE_FORMAT), __version__]
    pkg = os.path.dirname(_HERE)
    for rel in (f"rules/{COMPILED}",) + _FINGERPRINT:
        try:
            st = os.stat(os.path.join(pkg, *rel.split("/")))
            parts.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{rel}:-")
    return "|".join(parts)


def _index_file(version: str) -> str:
    return f"rules-{re.sub(r'[^0-9A-Za-z.+-]', '_', version)}.idx"


class _Slot:
    """One rule of a RuleSet: compiled, or compiled when first needed (`load`)."""

    __slots__ = ("code", "id", "trigger", "gpu", "rule", "load")

    def __init__(self, code: str, rid: str, rule: Rule | None = None,
                 load: Callable[[], Rule | None] | None = None,
                 trigger: Any = None, gpu: bool | None = None) -> None:
        self.code = code
        self.id = rid
        self.rule = rule
        self.load = load
        self.trigger = trigger  # frozenset of dests, None (may hold with nothing written)
        self.gpu = gpu  # None: not worked out yet

    def get(self) -> Rule | None:
        rule = self.rule
        if rule is None:
            load = self.load
            if load is None:
                return self.rule  # compiled by another thread meanwhile (or it failed)
            # Two threads asking at once may both compile it; either rule will do.
            rule = self.rule = load()
            self.load = None
        return rule

    def settle(self) -> None:
        """Work out the trigger dests and the GPU mention of a compiled rule."""
        if self.gpu is None:
            from servelint.rules.condition import mentions_gpu, trigger_key
            rule = self.get()
            key = trigger_key(rule.condition) if rule is not None else None
            self.trigger = frozenset(key) if key is not None else None
            self.gpu = bool(rule is not None and mentions_gpu(rule.condition))


class _RuleIndex(Record):
    always: list[int]  # slots of the rules that may hold with nothing written
    by_dest: dict[str, list[int]]  # the others, under each dest that can make them hold
    gpu: list[int]  # slots of the rules that read the GPU


class RuleSet:
    """Rules in order, with the problems of their packs. The rules of a set made by
    `rule_set` are compiled when first needed: `candidates` compiles only the rules a
    launch can trigger, `rules` all of them."""

    def __init__(self, rules: Sequence[Rule] = (), problems: list[PackProblem] | None = None,
                 *, slots: list[_Slot] | None = None) -> None:
        self.problems: list[PackProblem] = list(problems) if problems else []
        if slots is None:
            self._slots = [_Slot(r.code, r.id, rule=r) for r in rules]
            self._all: list[Rule] | None = list(rules)
        else:
            self._slots = slots
            self._all = None
        self._index: _RuleIndex | None = None

    @property
    def rules(self) -> list[Rule]:
        if self._all is None:
            self._all = [r for r in (s.get() for s in self._slots) if r is not None]
        return self._all

    @property
    def codes(self) -> list[str]:
        """The rules' codes, without compiling any rule."""
        return [s.code for s in self._slots]

    def by_code(self, code: str) -> Rule | None:
        for s in self._slots:
            if s.code == code:
                rule = s.get()
                if rule is not None:
                    return rule
        return None

    def candidates(self, written: set[str], gpu: str | None = None) -> list[Rule]:
        """The rules that can hold for a launch that writes these dests.

        A rule whose condition is false for a launch that writes nothing can only hold
        when one of its own options is written (conditions read option values and
        presence, and unknowns never turn false into true), so it is looked at only
        then."""
        index = self._index
        if index is None:
            always: list[int] = []
            by_dest: dict[str, list[int]] = {}
            gpu_slots: list[int] = []
            for i, s in enumerate(self._slots):
                s.settle()
                if s.gpu:
                    gpu_slots.append(i)
                if s.trigger is None:
                    always.append(i)
                else:
                    for dest in s.trigger:
                        by_dest.setdefault(dest, []).append(i)
            index = self._index = _RuleIndex(always, by_dest, gpu_slots)
        picked = set(index.always)
        if gpu is not None:
            picked.update(index.gpu)
        for d in written:
            got = index.by_dest.get(d)
            if got:
                picked.update(got)
        out = []
        for i in sorted(picked):
            rule = self._slots[i].get()
            if rule is not None:
                out.append(rule)
        return out


def _write_index(version: str, rs: RuleSet) -> None:
    """Save a freshly compiled bundled set's index and records (see above)."""
    data = _bundled_data()
    where: dict[int, tuple[str, int]] = {}
    for name, raw in data.items():
        for i, rec in enumerate(unwrap(raw)):
            where[id(rec)] = (name, i)
    body = bytearray()
    entries = []
    try:
        for s in rs._slots:
            s.settle()
            rule = s.rule
            if rule is None or id(rule.record) not in where:
                return  # not made from bundled.json as read: nothing to cache
            name, i = where[id(rule.record)]
            text = json.dumps(rule.record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            entries.append([s.code, s.id, sorted(s.trigger) if s.trigger is not None else None,
                            s.gpu, name, i, len(body), len(body) + len(text)])
            body += text
        problems = [[p.path, p.message, p.line, p.column, p.record] for p in rs.problems]
        header = json.dumps({"format": CACHE_FORMAT, "key": _fingerprint(), "version": version,
                             "crc": zlib.crc32(body), "entries": entries, "problems": problems},
                            ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError):
        return
    if write_cache(_index_file(version), header + b"\n" + bytes(body), prefix="rules-"):
        STATS["cache_written"] += 1


def _read_index(version: str) -> RuleSet | None:
    """The bundled set from the cache file, its rules compiled when first needed; None
    when there is no usable file (missing, another key, not readable, corrupt)."""
    raw = read_cache(_index_file(version))
    if raw is None:
        return None
    try:
        nl = raw.index(b"\n")
        head = json.loads(raw[:nl])
        if (not isinstance(head, dict) or head.get("format") != CACHE_FORMAT
                or head.get("key") != _fingerprint() or head.get("version") != version):
            return None
        body = memoryview(raw)[nl + 1:]
        if zlib.crc32(body) != head["crc"]:
            return None
        problems = [PackProblem(str(p), str(m), int(ln), int(col), None if r is None else int(r))
                    for p, m, ln, col, r in head["problems"]]
        from servelint.catalog import load_catalog
        catalog = load_catalog(version)
        slots = []
        end = len(body)
        for code, rid, trigger, gpu, name, i, start, stop in head["entries"]:
            if not (isinstance(code, str) and isinstance(rid, str) and isinstance(name, str)
                    and 0 <= start <= stop <= end and isinstance(gpu, bool)):
                return None
            key = frozenset(trigger) if trigger is not None else None
            slots.append(_Slot(code, rid, load=_loader(body, start, stop, rid, name, i, catalog),
                               trigger=key, gpu=gpu))
    except (ValueError, TypeError, KeyError, IndexError):
        return None
    STATS["cache_read"] += 1
    return RuleSet(problems=problems, slots=slots)


def _loader(body: memoryview, start: int, stop: int, rid: str, name: str, i: int,
            catalog: Catalog) -> Callable[[], Rule | None]:
    def load() -> Rule | None:
        try:
            rec = json.loads(bytes(body[start:stop]))
            if not isinstance(rec, dict) or str(rec.get("id")) != rid:
                raise ValueError("another record")
        except ValueError:  # the file changed under us: read the record from bundled.json
            rec = unwrap(_bundled_data()[name])[i]
        try:
            return build_rule(rec, catalog, f"{BUNDLED_SOURCE}{name}")
        except ConditionError:
            return None
    return load


PROJECT_DIR = os.path.join(".servelint", "rules")


def project_pack_dir(path: str | None) -> str | None:
    """The nearest `.servelint/rules` folder above a linted file."""
    if not path:
        return None
    d = os.path.dirname(os.path.abspath(path))
    while True:
        cand = os.path.join(d, PROJECT_DIR)
        if os.path.isdir(cand):
            return cand
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def pack_files(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n.endswith((".json", ".yaml", ".yml"))]


def is_pack_path(path: str | None, extra: Sequence[str] = ()) -> bool:
    if not path:
        return False
    norm = os.path.abspath(path)
    if any(os.path.abspath(e) == norm for e in extra):
        return True
    return (os.sep + PROJECT_DIR + os.sep) in norm and norm.endswith((".json", ".yaml", ".yml"))




_COMBINED: dict[tuple, tuple[tuple[LoadedPack, ...], RuleSet]] = {}


def rule_set(version: str, user_paths: Sequence[str] = (), file_path: str | None = None,
             include_project: bool = True) -> RuleSet:
    """Bundled rules, then the user's packs (settings, then the project folder), each
    record only if its appliesTo names `version`. A user record with the id of an earlier
    one replaces it. The same packs give the same RuleSet object."""
    paths = []
    for p in user_paths:
        if os.path.isdir(p):
            paths.extend(pack_files(p))
        else:
            paths.append(p)
    if include_project:
        folder = project_pack_dir(file_path)
        if folder:
            paths.extend(pack_files(folder))
    if not paths:
        return _bundled_set(version)  # no user packs: the same rules every time
    from servelint.catalog import load_catalog

    catalog = load_catalog(version)
    seen = set()
    packs = []
    for p in paths:
        ap = os.path.abspath(p)
        if ap in seen:
            continue
        seen.add(ap)
        packs.append(load_pack_cached(ap, catalog))
    key = (catalog.version, tuple(id(p) for p in packs))
    got = _COMBINED.get(key)
    if got is not None and all(a is b for a, b in zip(got[0], packs)):
        return got[1]
    base = _bundled_set(version)
    by_id = {s.id: s for s in base._slots}
    problems = list(base.problems)
    for pack in packs:
        problems.extend(pack.problems)
        for rid in pack.skipped:
            by_id.pop(rid, None)
        for rule in pack.rules:
            by_id[rule.id] = _Slot(rule.code, rule.id, rule=rule)
    made = RuleSet(problems=problems, slots=list(by_id.values()))
    if len(_COMBINED) > 32:
        _COMBINED.clear()
    _COMBINED[key] = (tuple(packs), made)
    return made


def _combine(packs: Sequence[LoadedPack]) -> RuleSet:
    """The packs' rules in order, a record replacing an earlier one with its id (also
    when it does not apply to the release: then neither does the one it replaces)."""
    by_id: dict[str, Rule] = {}
    problems: list[PackProblem] = []
    for pack in packs:
        problems.extend(pack.problems)
        for rid in pack.skipped:
            by_id.pop(rid, None)
        for rule in pack.rules:
            by_id[rule.id] = rule
    return RuleSet(list(by_id.values()), problems)


@lru_cache(maxsize=4)
def _bundled_set(version: str) -> RuleSet:
    """The bundled rules for a release: from the cache file when it is there and current
    (rules compiled when first needed), else compiled in full and saved for the next run."""
    got = _read_index(version)
    if got is not None:
        return got
    made = _combine(bundled_packs(version))
    _write_index(version, made)
    return made
