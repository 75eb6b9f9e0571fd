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
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Sequence

import yaml

# libyaml's loader is ten times faster; its marks count bytes, so it is used for
# positions only where bytes are characters (ASCII text) or where a line is enough.
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

from servelint.catalog import Catalog, Option, version_key
from servelint.model import Severity
from servelint.rules.condition import ConditionError, options_of, parse_condition

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


@dataclass
class PackProblem:
    path: str
    message: str
    line: int = 0  # zero-based
    column: int = 0
    record: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line + 1}:{self.column + 1}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class FixEdit:
    op: str  # remove | add | set
    option: Option
    name: str
    value: Any = None


@dataclass(frozen=True)
class RuleFix:
    title: str
    edits: tuple[FixEdit, ...]
    preferred: bool = False
    safe: bool = False


@dataclass
class Rule:
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
    try:
        if is_json:
            return json.loads(text), []
        return yaml.load(text, Loader=FAST_LOADER), []
    except json.JSONDecodeError as exc:
        return None, [PackProblem(path, f"invalid JSON: {exc.msg}", exc.lineno - 1, exc.colno - 1)]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        return None, [PackProblem(path, f"invalid YAML: {problem}", mark.line if mark else 0,
                                  mark.column if mark else 0)]


def _record_positions(text: str) -> list[tuple[int, int]]:
    """Line and column of each record in a pack (JSON is read as YAML for this)."""
    try:
        node = yaml.compose(text, Loader=FAST_LOADER if text.isascii() else yaml.SafeLoader)
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


@dataclass
class LoadedPack:
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
    base = resources.files("servelint.rules").joinpath("packs")
    out = {}
    for entry in sorted(base.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".json", ".yaml", ".yml")):
            text = entry.read_text(encoding="utf-8")
            out[entry.name] = json.loads(text) if entry.name.endswith(".json") else \
                yaml.load(text, Loader=FAST_LOADER)
    return json.dumps(out, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


BUNDLED_SOURCE = "servelint/rules/packs/"  # the `source` of every bundled rule


@lru_cache(maxsize=4)
def bundled_packs(version: str) -> tuple[LoadedPack, ...]:
    from servelint.catalog import load_catalog

    catalog = load_catalog(version)
    compiled = resources.files("servelint.rules").joinpath(COMPILED)
    try:
        data = json.loads(compiled.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        data = json.loads(compile_bundled())
    packs = []
    for name in sorted(data):
        # The pack's data is given directly; positions (only needed for problems) come
        # from the YAML source when a bundled record is ever broken.
        source = resources.files("servelint.rules") / "packs" / name
        packs.append(load_pack_data(data[name], lambda s=source: s.read_text(encoding="utf-8"),
                                    f"{BUNDLED_SOURCE}{name}", catalog))
    return tuple(packs)


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


@dataclass
class _RuleIndex:
    always: list[Rule]  # rules that may hold with nothing written
    by_dest: dict[str, list[Rule]]  # the others, under each dest that can make them hold
    order: dict[int, int]  # id(rule) -> its place in the set
    gpu_rules: list[Rule]  # rules that read the GPU


_INDEXES: dict[tuple[int, ...], _RuleIndex] = {}  # rules (by identity) -> their index; rules live as long as their cache


@dataclass
class RuleSet:
    rules: list[Rule]
    problems: list[PackProblem]
    _index: _RuleIndex | None = None

    def by_code(self, code: str) -> Rule | None:
        return next((r for r in self.rules if r.code == code), None)

    def candidates(self, written: set[str], gpu: str | None = None) -> list[Rule]:
        """The rules that can hold for a launch that writes these dests.

        A rule whose condition is false for a launch that writes nothing can only hold
        when one of its own options is written (conditions read option values and
        presence, and unknowns never turn false into true), so it is looked at only
        then."""
        if self._index is None:
            key = tuple(id(r) for r in self.rules)
            self._index = _INDEXES.get(key)
        if self._index is None:
            from servelint.rules.condition import mentions_gpu, trigger_key
            always: list[Rule] = []
            by_dest: dict[str, list[Rule]] = {}
            gpu_rules = [r for r in self.rules if mentions_gpu(r.condition)]
            order = {id(r): i for i, r in enumerate(self.rules)}
            for r in self.rules:
                trigger = trigger_key(r.condition)
                if trigger is None:
                    always.append(r)
                else:
                    for dest in trigger:
                        by_dest.setdefault(dest, []).append(r)
            self._index = _RuleIndex(always, by_dest, order, gpu_rules)
            if len(_INDEXES) > 32:
                _INDEXES.clear()
            _INDEXES[tuple(id(r) for r in self.rules)] = self._index
        index = self._index
        picked = {id(r): r for r in index.always}
        if gpu is not None:
            picked.update((id(r), r) for r in index.gpu_rules)
        for d in written:
            for r in index.by_dest.get(d, ()):
                picked[id(r)] = r
        return sorted(picked.values(), key=lambda r: index.order[id(r)])


def rule_set(version: str, user_paths: Sequence[str] = (), file_path: str | None = None,
             include_project: bool = True) -> RuleSet:
    """Bundled rules, then the user's packs (settings, then the project folder), each
    record only if its appliesTo names `version`. A user record with the id of an earlier
    one replaces it."""
    from servelint.catalog import load_catalog

    catalog = load_catalog(version)
    packs = list(bundled_packs(version))
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
    seen = set()
    for p in paths:
        ap = os.path.abspath(p)
        if ap in seen:
            continue
        seen.add(ap)
        packs.append(load_pack_cached(ap, catalog))
    if len(packs) == len(bundled_packs(version)):
        return _bundled_set(version)  # no user packs: the same rules every time
    return _combine(packs)


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
def _bundled_set(version: str) -> "RuleSet":
    return _combine(bundled_packs(version))
