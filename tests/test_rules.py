"""Rule records end to end: schema, derivation, conditions, findings, fixes, packs."""

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from servelint.args import Reader
from servelint.catalog import load_catalog
from servelint.engine import fix_all_text, lint
from servelint.edits import apply_edits
from servelint.extract.shell import extract_shell
from servelint.model import LineIndex
from servelint.rules import (bundled_packs, load_pack_text, rule_set, split_example, unwrap,
                             validate_record)
from servelint.rules.condition import ConditionError, evaluate, parse_condition
from servelint.rules.context import RuleContext
from servelint.settings import Settings

from rule_examples import settled_example

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "tests" / "data" / "packs" / "seed.json"
SCHEMA = json.loads((ROOT / "schemas" / "rule.schema.json").read_text())
CAT = load_catalog()
REQ = "--is-embedding --chunked-prefill-size -1 --disable-radix-cache"


def parse(args: str):
    text = f"python3 -m sglang.launch_server --model-path m {args}\n"
    (launch,) = extract_shell(text, LineIndex(text)).launches
    return Reader(CAT).read(launch)


def codes(text: str, **kw) -> list[str]:
    return [f.code for f in lint(text, path="x.sh", **kw).findings]


# --- schema and the seed ------------------------------------------------------------


def test_schema_is_valid_and_accepts_seed_and_bundled_packs():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    v = jsonschema.Draft202012Validator(SCHEMA)
    assert list(v.iter_errors(json.loads(SEED.read_text()))) == []
    for f in (ROOT / "server/servelint/rules/packs").iterdir():
        assert list(v.iter_errors(yaml.safe_load(f.read_text()))) == [], f.name


def test_schema_and_loader_agree_on_bad_records():
    v = jsonschema.Draft202012Validator(SCHEMA)
    bad = [
        {"errorMessage": "x", "exampleFix": "# before\n--a\n# after\n"},          # no id
        {"id": "a", "errorMessage": "x"},                                        # no condition, no exampleFix
        {"id": "a", "errorMessage": "x", "condition": {}, "colour": "red"},      # unknown field
        {"id": "a", "errorMessage": 3, "condition": {"present": "--tp-size"}},   # wrong type
        {"id": "a", "errorMessage": "x", "severity": "fatal", "condition": {"present": "--tp-size"}},
    ]
    for rec in bad:
        assert list(v.iter_errors(rec)), rec
        assert validate_record(rec), rec
    good = {"id": "a", "errorMessage": "x", "condition": {"present": "--tp-size"}, "x-team": "infra"}
    assert list(v.iter_errors(good)) == [] and validate_record(good) == []


def test_seed_loads_unchanged_and_works_through_derivation():
    pack = load_pack_text(SEED.read_text(), str(SEED), CAT)
    assert pack.problems == []
    (rule,) = pack.rules
    assert rule.derived and rule.code == "SGL-d5a97f"
    assert [o.name for o in rule.options] == ["--prefill-only-disable-kv-cache", "--enable-hisparse"]
    assert [(f.title, f.preferred, f.safe) for f in rule.fixes] == [
        ("Remove --enable-hisparse", True, True),
        ("Remove --prefill-only-disable-kv-cache", False, False)]
    assert evaluate(rule.condition, RuleContext.of(parse("--prefill-only-disable-kv-cache --enable-hisparse"))) is True
    assert evaluate(rule.condition, RuleContext.of(parse("--prefill-only-disable-kv-cache"))) is False


def test_seed_as_user_pack_replaces_the_bundled_record(tmp_path):
    rs = rule_set("0.5.23", [str(SEED)])
    (rule,) = [r for r in rs.rules if r.id == "d5a97f5076b7adab"]
    assert rule.derived and rule.code == "SGL-d5a97f"
    bundled = [r for p in bundled_packs("0.5.23") for r in p.rules if r.id == "d5a97f5076b7adab"]
    assert bundled[0].code == "SL101" and not bundled[0].derived


# --- the seed conflict, written in several ways ----------------------------------------

SEED_CASES = {
    "one line": f"python3 -m sglang.launch_server --model-path m {REQ} --prefill-only-disable-kv-cache --enable-hisparse\n",
    "continued": ("#!/bin/bash\npython3 -m sglang.launch_server \\\n  --model-path m \\\n"
                  "  --is-embedding --chunked-prefill-size=-1 --disable-radix-cache \\\n"
                  "  --enable-hisparse \\\n  --prefill-only-disable-kv-cache \\\n  --port=30000\n"),
    "last line": ("python3 -m sglang.launch_server --model-path \"$MODEL\" --tp-size=${TP:-1} \\\n"
                  f"  {REQ} --prefill-only-disable-kv-cache \\\n  --enable-hisparse\necho next\n"),
    "abbreviated": f"python3 -m sglang.launch_server --model-path m {REQ} --prefill-only-disable-kv --enable-hisp\n",
    "bash -c": f"bash -c 'python3 -m sglang.launch_server --model-path m {REQ} --enable-hisparse --prefill-only-disable-kv-cache'\n",
}


@pytest.mark.parametrize("name", list(SEED_CASES))
def test_seed_conflict_reported_on_both_flags_and_fixed(name):
    text = SEED_CASES[name]
    result = lint(text, path="x.sh")
    (f,) = [f for f in result.findings if f.code == "SL101"]
    # servelint's own words for the launch; SGLang's text kept for searching
    assert f.message.startswith("--prefill-only-disable-kv-cache replaces the KV cache with a pool that stores nothing, while --enable-hisparse needs a KV pool of its own")
    assert f.message.endswith("Remove --enable-hisparse or --prefill-only-disable-kv-cache.")
    assert f.sglang.startswith("--prefill-only-disable-kv-cache is incompatible with --enable-hisparse")
    assert text[f.span.start:f.span.end].startswith("--enable-hisp")
    (rel,) = f.related
    assert rel.mark and text[rel.span.start:rel.span.end].startswith("--prefill-only-disable-kv")
    assert [x.title for x in f.fixes] == ["Remove --enable-hisparse", "Remove --prefill-only-disable-kv-cache"]
    fixed = apply_edits(text, f.fixes[0].edits)
    assert "--enable-hisp" not in fixed
    after = lint(fixed, path="x.sh")
    assert "SL101" not in [x.code for x in after.findings]
    assert [x.code for x in after.findings if x.severity == 1] == []
    assert len(after.launches) == len(result.launches)
    if name == "last line":
        assert fixed.endswith("--prefill-only-disable-kv-cache\necho next\n")
    other = apply_edits(text, f.fixes[1].edits)
    assert "SL101" not in codes(other)


def test_every_violation_is_reported_at_once():
    text = ("python3 -m sglang.launch_server --model-path m --prefill-only-disable-kv-cache "
            "--enable-hisparse --enable-prefill-cp --kv-cache-dtype mxfp8\n")
    got = sorted(c for c in codes(text) if c.startswith("SL1"))
    assert got == ["SL101", "SL102", "SL104", "SL105", "SL106", "SL107"]


def test_fix_all_applies_safe_rule_fixes_without_overlap():
    text = ("python3 -m sglang.launch_server --model-path m --is-embedding --chunked-prefill-size -1 \\\n"
            "  --prefill-only-disable-kv-cache \\\n  --enable-hisparse \\\n  --enable-prefill-cp\n")
    fixed, count = fix_all_text(text, "x.sh")
    assert fixed == ("python3 -m sglang.launch_server --model-path m --is-embedding --chunked-prefill-size -1 \\\n"
                     "  --prefill-only-disable-kv-cache --disable-radix-cache\n")
    assert count == 3
    assert [c for c in codes(fixed) if c.startswith("SL1")] == []


def test_unknown_values_keep_rules_silent():
    assert "SL105" not in codes(f"python3 -m sglang.launch_server --model-path m --is-embedding "
                                f"--chunked-prefill-size $CHUNK --disable-radix-cache --prefill-only-disable-kv-cache\n")
    assert "SL106" not in codes('python3 -m sglang.launch_server --model-path m --prefill-only-disable-kv-cache "$@"\n')
    assert "SL101" in codes('python3 -m sglang.launch_server --model-path m --prefill-only-disable-kv-cache --enable-hisparse "$@"\n')


# --- the condition language ---------------------------------------------------------------


def cond(raw):
    return parse_condition(raw, CAT)


@pytest.mark.parametrize("raw,args,want", [
    ({"present": "--tp-size"}, "--tp-size 2", True),
    ({"present": "--tp-size"}, "--tp 2", True),                       # any spelling
    ({"present": "--tp-size"}, "", False),
    ({"present": "--tp-size"}, '"$@"', None),                         # may hide in "$@"
    ({"absent": "--tp-size"}, '"$@"', None),
    ({"option": "--tp-size", "gt": 1}, "--tp-size 2", True),
    ({"option": "--tp-size", "gt": 1}, "", False),                     # catalog default 1
    ({"option": "--tp-size", "gt": 1}, "--tp-size $TP", None),
    ({"option": "--tp-size", "gt": 1}, "--tp-size two", None),         # SL006's business
    ({"option": "--context-length", "ge": 32768}, "--context-length 32Ki", True),
    ({"option": "--context-length", "ge": 32768}, "--context-length 32k", False),
    ({"option": "--context-length", "ge": 32768}, "--context-length 1Ki", False),
    ({"option": "--context-length", "ge": 32768}, "", None),           # decided at start-up
    ({"option": "--attention-backend", "in": ["fa3", "fa4"]}, "--attention-backend fa3", True),
    ({"option": "--attention-backend", "notIn": ["fa3", "fa4"]}, "--attention-backend=triton", True),
    ({"option": "--dtype", "eq": "auto"}, "", True),
    ({"option": "--dtype", "ne": "auto"}, "--dtype half", True),
    ({"option": "--trust-remote-code", "truthy": True}, "--trust-remote-code", True),
    ({"option": "--trust-remote-code", "truthy": False}, "", True),
    ({"option": "--enable-tf32-matmul", "eq": False}, "--no-enable-tf32-matmul", True),
    ({"option": "--enable-tf32-matmul", "eq": True}, "--enable-tf32-matmul --no-enable-tf32-matmul", False),
    ({"option": "--tp-size", "eq": 4}, "--tp-size 2 --tp-size 4", True),        # last one wins
    ({"option": "--cuda-graph-bs-decode", "eq": [1, 2]}, "--cuda-graph-bs-decode 1 2", True),
    ({"not": {"present": "--tp-size"}}, "", True),
    ({"all": [{"present": "--tp-size"}, {"present": "--dp-size"}]}, "--tp-size 2", False),
    ({"all": [{"present": "--tp-size"}, {"option": "--dp-size", "gt": 1}]}, "--tp-size 2 --dp-size $DP", None),
    ({"all": [{"present": "--port"}, {"option": "--dp-size", "gt": 1}]}, "--dp-size $DP", False),  # False wins
    ({"any": [{"present": "--port"}, {"option": "--dp-size", "gt": 1}]}, "--port 1 --dp-size $DP", True),  # True wins
    ({"any": [{"present": "--port"}, {"option": "--dp-size", "gt": 1}]}, "--dp-size $DP", None),
])
def test_condition_semantics(raw, args, want):
    assert evaluate(cond(raw), RuleContext.of(parse(args))) is want


@pytest.mark.parametrize("raw,message", [
    ({"present": "--no-such-flag"}, "has no option --no-such-flag"),
    ({"present": "tp-size"}, "expected an option name"),
    ({"option": "--tp-size", "gt": "2"}, "expected a number"),
    ({"option": "--tp-size", "eq": 1, "ne": 2}, "exactly one of"),
    ({"option": "--tp-size"}, "exactly one of"),
    ({"all": []}, "non-empty list"),
    ({"either": []}, "unknown condition keys either"),
    ({"option": "--dtype", "in": "auto"}, "expected a list"),
    ("present --tp-size", "expected a mapping"),
])
def test_condition_errors(raw, message):
    with pytest.raises(ConditionError, match=message):
        cond(raw)


# --- user packs: good and broken -----------------------------------------------------------

GOOD_RULE = """
- id: team-no-lora-with-hisparse
  code: ACME-1
  errorMessage: our clusters do not run LoRA adapters with HiSparse
  severity: warning
  condition:
    all: [{present: --enable-lora}, {present: --enable-hisparse}]
  fixes:
    - {title: Drop HiSparse, safe: true, edits: [{remove: --enable-hisparse}]}
"""


def test_project_pack_applies_and_broken_records_are_reported(tmp_path):
    rules_dir = tmp_path / ".servelint" / "rules"
    rules_dir.mkdir(parents=True)
    (rules_dir / "team.yaml").write_text(GOOD_RULE + """
- id: broken-condition
  errorMessage: x
  condition: {present: --enable-magic}
- id: broken-type
  errorMessage: [not, a, string]
  condition: {present: --tp-size}
""")
    (rules_dir / "syntax.json").write_text('[{"id": "x", "errorMessage": "y",}]')
    script = tmp_path / "deploy" / "run.sh"
    script.parent.mkdir()
    script.write_text("python3 -m sglang.launch_server --model-path m --enable-lora --enable-hisparse\n")
    result = lint(script.read_text(), path=str(script))
    assert "ACME-1" in [f.code for f in result.findings]
    probs = result.rules.problems
    msgs = [p.message for p in probs]
    assert any("SGLang 0.5.23 has no option --enable-magic" in m for m in msgs)
    assert any("field 'errorMessage' must be str" in m for m in msgs)
    assert any(m.startswith("invalid JSON") for m in msgs)
    line_of = {p.message.split(":")[0]: p.line for p in probs if p.path.endswith("team.yaml")}
    assert line_of["record 2 (broken-condition)"] == 10
    # Untrusted: project packs are not read.
    quiet = lint(script.read_text(), path=str(script), settings=Settings(project_rules=False))
    assert "ACME-1" not in [f.code for f in quiet.findings]


def test_pack_file_open_in_editor_gets_diagnostics(tmp_path):
    path = tmp_path / ".servelint" / "rules" / "x.yaml"
    path.parent.mkdir(parents=True)
    text = GOOD_RULE + "- id: bad\n  errorMessage: x\n  condition: {present: --nope}\n"
    result = lint(text, path=str(path))
    assert result.format == "rulepack"
    (f,) = result.findings
    assert f.code == "SL090" and "--nope" in f.message
    assert result.index.position(f.span.start) == (9, 2)
    bad_yaml = lint("- id: [unclosed\n", path=str(path))
    assert bad_yaml.findings[0].message.startswith("invalid YAML")


def test_rule_packs_setting_and_cli(tmp_path, capsys):
    from servelint.cli import main
    pack = tmp_path / "packs" / "extra.yaml"
    pack.parent.mkdir()
    pack.write_text(GOOD_RULE)
    script = tmp_path / "run.sh"
    script.write_text("python3 -m sglang.launch_server --model-path m --enable-lora --max-lora-rank 8 "
                      "--lora-target-modules all --enable-hisparse\n")
    assert main(["check", str(script)]) == 0
    assert main(["check", "--rules", str(pack.parent), str(script)]) == 0  # a warning only
    out = capsys.readouterr().out
    assert "warning ACME-1 our clusters do not run LoRA adapters with HiSparse" in out
    pack.write_text("- id: broken\n  errorMessage: x\n  condition: {present: --nope}\n")
    assert main(["check", "--rules", str(pack), str(script)]) == 1
    out = capsys.readouterr().out
    assert f"{pack}:1:3: error SL090 record 1 (broken): condition.present: SGLang 0.5.23 has no option --nope" in out


def test_derivation_errors_are_clear():
    rec = {"id": "d", "errorMessage": "m", "exampleFix": "# before\n--tp-size 2 --made-up\n# after\n--tp-size 2\n"}
    pack = load_pack_text(json.dumps(rec), "p.json", CAT)
    assert "exampleFix: the before line has unknown '--made-up'" in pack.problems[0].message
    rec["exampleFix"] = "--tp-size 2"
    pack = load_pack_text(json.dumps(rec), "p.json", CAT)
    assert "expected a '# before' line" in pack.problems[0].message


def test_derivation_with_values_and_set():
    rec = {"id": "d", "errorMessage": "triton cannot run with fp8 kv here",
           "exampleFix": "# before\npython -m sglang.launch_server --attention-backend triton --kv-cache-dtype fp8_e5m2\n"
                         "# after\npython -m sglang.launch_server --attention-backend flashinfer --kv-cache-dtype fp8_e5m2\n"}
    (rule,) = load_pack_text(json.dumps(rec), "p.json", CAT).rules
    assert evaluate(rule.condition, RuleContext.of(parse("--kv-cache-dtype fp8_e5m2 --attention-backend triton"))) is True
    assert evaluate(rule.condition, RuleContext.of(parse("--kv-cache-dtype fp8_e5m2 --attention-backend fa3"))) is False
    assert rule.fixes[0].title == "Set --attention-backend flashinfer"
    text = "python3 -m sglang.launch_server --model-path m --attention-backend triton --kv-cache-dtype fp8_e5m2\n"
    result = lint(text, path="x.sh", settings=Settings())
    from servelint.rules.apply import apply_rules
    (f,) = apply_rules(result.parsed[0], [rule])
    assert apply_edits(text, f.fixes[0].edits) == text.replace("triton", "flashinfer")


def test_bundled_rule_examples_behave(tmp_path):
    """Every bundled record's trigger examples fire it as written (an error, or a warning
    when the record's severity says so), its ok examples get no error from it (a warning is
    allowed only where SGLang's verdict depends on something the launch does not say: the
    GPU, the environment, the model). Its dependent examples get no error until a prefix
    settles what the verdict depends on (`[env=NAME=1]`, `[model=Arch]`, `[gpu=sm90]`):
    then the rule's own severity; unsettled, a warning that names the condition where the
    refusal is the usual case, else nothing."""
    n = 0
    settled_shown = set()
    for pack in bundled_packs("0.5.23"):
        assert pack.problems == []
        for rule in pack.rules:
            def found(text, gpu):
                return [f for f in lint(text, path=str(tmp_path / "x.sh"), settings=Settings(gpu=gpu)).findings
                        if f.code == rule.code]
            for ex in rule.examples.get("trigger", []):
                gpu, args = split_example(ex)
                got = found(f"python3 -m sglang.launch_server --model-path m {args}\n", gpu)
                assert [f.severity for f in got] == [rule.severity], (rule.code, ex, got)
                n += 1
            for ex in rule.examples.get("ok", []):
                gpu, args = split_example(ex)
                got = found(f"python3 -m sglang.launch_server --model-path m {args}\n", gpu)
                assert all(f.severity == 2 and "SGLang refuses this" in f.message and rule.dependencies
                           for f in got), (rule.code, ex, got)
                n += 1
            for ex in rule.examples.get("dependent", []):
                assert rule.dependencies, f"{rule.code}: dependent examples, but nothing it depends on"
                gpu, text = settled_example(ex, tmp_path)
                got = found(text, gpu)
                if ex.startswith("["):
                    assert [f.severity for f in got] == [rule.severity], (rule.code, ex, got)
                    settled_shown.add(rule.code)
                else:
                    assert all(f.severity == 2 and "SGLang refuses this unless" in f.message
                               for f in got), (rule.code, ex, got)
                n += 1
    assert n >= 14
    assert len(settled_shown) >= 10


@pytest.mark.parametrize("raw,args,gpu,want", [
    ({"option": "--tp-size", "divisibleBy": {"option": "--dp-size"}}, "--tp-size 4 --dp-size 2", None, True),
    ({"option": "--tp-size", "divisibleBy": {"option": "--dp-size"}}, "--tp-size 4 --dp-size 3", None, False),
    ({"option": "--tp-size", "divisibleBy": {"option": "--dp-size"}}, "--tp-size 4 --dp-size $DP", None, None),
    ({"option": "--tp-size", "divisibleBy": 2}, "", None, False),          # default 1
    ({"option": "--dp-size", "gt": {"option": "--tp-size"}}, "--dp-size 4", None, True),
    ({"option": "--dp-size", "le": {"option": "--tp-size"}}, "--dp-size 2 --tp-size 2", None, True),
    ({"gpu": ["sm100"]}, "", None, None),                                  # not said: unknown
    ({"gpu": ["sm100"]}, "", "sm100", True),
    ({"gpu": "sm100"}, "", "sm90", False),
])
def test_relations_and_gpu(raw, args, gpu, want):
    assert evaluate(cond(raw), RuleContext.of(parse(args), gpu)) is want


def test_relation_errors():
    with pytest.raises(ConditionError, match="expected a literal"):
        cond({"option": "--tp-size", "in": {"option": "--dp-size"}})
    with pytest.raises(ConditionError, match="expected GPU generations"):
        cond({"gpu": ["h100"]})


def test_message_template_shows_the_launchs_values():
    rec = {"id": "t", "errorMessage": "tp_size (4) must be divisible by dp_size (3)",
           "messageTemplate": "tp_size ({--tp-size}) must be divisible by dp_size ({--dp-size})",
           "condition": {"not": {"option": "--tp-size", "divisibleBy": {"option": "--dp-size"}}}}
    (rule,) = load_pack_text(json.dumps(rec), "p.json", CAT).rules
    from servelint.rules.apply import apply_rules
    (f,) = apply_rules(parse("--tp-size 6 --dp-size 4"), [rule])
    assert f.message == "tp_size (6) must be divisible by dp_size (4)"
    rec["messageTemplate"] = "{--no-such}"
    assert "has no option --no-such" in load_pack_text(json.dumps(rec), "p.json", CAT).problems[0].message


def test_rule_index_finds_exactly_what_evaluating_every_rule_finds():
    """The index only skips rules that cannot hold; checked on every judged launch."""
    import shlex as _shlex
    from servelint.rules.apply import apply_rules
    rows = [json.loads(l) for l in (ROOT / "tests/data/conformance/sampled.jsonl").read_text().splitlines()]
    rows += [json.loads(l) for l in (ROOT / "tests/data/conformance/verdicts.jsonl").read_text().splitlines()]
    rs = rule_set("0.5.23")
    assert len(rows) > 1000
    for row in rows:
        for gpu in (None, "sm100"):
            p = parse(_shlex.join(_shlex.split(row["args"])))
            fast = [f.code for f in apply_rules(p, rs, gpu)]
            slow = [f.code for f in apply_rules(p, rs.rules, gpu)]
            assert fast == slow, (row["args"], gpu)


def test_examples_can_name_a_gpu():
    assert split_example("[gpu=sm100] --kv-cache-dtype nvfp4") == ("sm100", "--kv-cache-dtype nvfp4")
    assert split_example("--tp-size 2") == (None, "--tp-size 2")
    rec = {"id": "g", "errorMessage": "x", "condition": {"all": [{"gpu": ["sm90"]}, {"present": "--tp-size"}]}}
    (rule,) = load_pack_text(json.dumps(rec), "p.json", CAT).rules
    from servelint.rules.apply import apply_rules
    (f,) = apply_rules(parse("--tp-size 2"), [rule], "sm90")
    assert f.severity == 1
    assert not apply_rules(parse("--tp-size 2"), [rule], "sm100")
    # not said: refused on one generation only, so nothing until the setting names it
    assert not apply_rules(parse("--tp-size 2"), [rule], None)
    rec["condition"]["all"][0] = {"not": {"gpu": ["sm90"]}}  # refused everywhere but sm90
    (rule,) = load_pack_text(json.dumps(rec), "p.json", CAT).rules
    (f,) = apply_rules(parse("--tp-size 2"), [rule], None)
    assert f.severity == 2 and f.message.startswith("x SGLang refuses this unless the GPU is sm90")


# --- expressions: arithmetic, lists, JSON, text ------------------------------------------

@pytest.mark.parametrize("raw,args,want", [
    # products and quotients of options (parallel sizes)
    ({"not": {"option": "--tp-size", "divisibleBy": {"mul": ["--dp-size", "--attn-cp-size"]}}},
     "--tp-size 4 --dp-size 2 --attn-cp-size 4", True),
    ({"not": {"option": "--tp-size", "divisibleBy": {"mul": ["--dp-size", "--attn-cp-size"]}}},
     "--tp-size 8 --dp-size 2 --attn-cp-size 4", False),
    ({"not": {"option": "--tp-size", "divisibleBy": {"mul": ["--dp-size", "--attn-cp-size"]}}},
     "--tp-size $TP --dp-size 2", None),
    ({"value": {"floordiv": ["--tp-size", "--dp-size"]}, "eq": 2}, "--tp-size 8 --dp-size 4", True),
    ({"value": {"floordiv": ["--tp-size", "--dp-size"]}, "eq": 2}, "--tp-size 8 --dp-size 0", None),
    ({"value": {"add": ["--tp-size", 1]}, "gt": {"option": "--dp-size"}}, "--tp-size 2 --dp-size 3", False),
    ({"value": {"sub": ["--tp-size", "--dp-size"]}, "lt": 0}, "--tp-size 2 --dp-size 3", True),
    # list length, items, min, duplicates
    ({"value": {"len": "--gc-threshold"}, "gt": 3}, "--gc-threshold 1 2 3 4", True),
    ({"value": {"len": "--gc-threshold"}, "gt": 3}, "--gc-threshold 1 2 3", False),
    ({"value": {"len": "--gc-threshold"}, "gt": 3}, "", None),            # default None: unknown
    ({"value": {"item": ["--prompt-tokens-buckets", 0]}, "eq": "tse"},
     "--prompt-tokens-buckets tse 1 2 3", True),
    ({"value": {"item": ["--prompt-tokens-buckets", 5]}, "eq": "tse"},
     "--prompt-tokens-buckets tse 1", False),                            # missing item
    ({"value": {"type": {"number": {"item": ["--prompt-tokens-buckets", 1]}}}, "eq": "invalid"},
     "--prompt-tokens-buckets tse x 2 3", True),
    ({"value": {"number": {"item": ["--prompt-tokens-buckets", 2]}}, "le": 1},
     "--prompt-tokens-buckets tse 1 0.5 3", True),
    ({"value": {"min": "--return-aux-hidden-state-layer-ids"}, "lt": 0},
     "--return-aux-hidden-state-layer-ids 1 -2", True),
    ({"value": {"duplicates": "--return-aux-hidden-state-layer-ids"}, "gt": 0},
     "--return-aux-hidden-state-layer-ids 1 2 1", True),
    ({"value": {"duplicates": "--return-aux-hidden-state-layer-ids"}, "gt": 0},
     "--return-aux-hidden-state-layer-ids 1 2 3", False),
    ({"option": "--lora-target-modules", "contains": "all"}, "--lora-target-modules all q_proj", True),
    ({"option": "--lora-target-modules", "subsetOf": ["q_proj", "k_proj"]},
     "--lora-target-modules q_proj v_proj", False),
    # JSON values
    ({"value": {"type": {"json": "--mm-process-config"}}, "ne": "object"},
     "--mm-process-config '[1, 2]'", True),
    ({"value": {"type": {"json": "--mm-process-config"}}, "ne": "object"},
     "--mm-process-config '{\"image\": {}}'", False),
    ({"value": {"type": {"json": "--mm-process-config"}}, "eq": "invalid"},
     "--mm-process-config '{not json'", True),
    ({"value": {"json": "--preferred-sampling-params"}, "contains": "watermark"},
     "--preferred-sampling-params '{\"watermark\": 1}'", True),
    ({"value": {"keys": {"json": "--limit-mm-data-per-request"}}, "subsetOf": ["image", "video", "audio"]},
     "--limit-mm-data-per-request '{\"image\": 1, \"text\": 2}'", False),
    ({"value": {"get": [{"json": "--mm-process-config"}, "image"]}, "eq": 3},
     "--mm-process-config '{\"image\": 3}'", True),
    ({"value": {"type": {"get": [{"json": "--mm-process-config"}, "video"]}}, "eq": "missing"},
     "--mm-process-config '{\"image\": 3}'", True),
    # text
    ({"option": "--served-model-name", "contains": ":"}, "--served-model-name a:b", True),
    ({"option": "--served-model-name", "startsWith": "runai"}, "--served-model-name runai://x", True),
    ({"option": "--served-model-name", "matches": "^[a-z]+$"}, "--served-model-name Abc", False),
    ({"value": {"lower": "--served-model-name"}, "matches": "^[a-z]+$"}, "--served-model-name Abc", True),
])
def test_expressions(raw, args, want):
    assert evaluate(cond(raw), RuleContext.of(parse(args))) is want


@pytest.mark.parametrize("raw,msg", [
    ({"value": {"mul": ["--tp-size"]}, "gt": 1}, "takes 2 or more"),
    ({"value": {"len": ["--tp-size", "--dp-size"]}, "gt": 1}, "takes 1 argument"),
    ({"value": {"frobnicate": "--tp-size"}, "gt": 1}, "expected an option, a literal or one of"),
    ({"value": {"item": ["--gc-threshold", "x"]}, "eq": 1}, "index must be an integer"),
    ({"value": "--no-such-option", "eq": 1}, "has no option --no-such-option"),
    ({"value": 3, "eq": 1}, "expected an option or an expression"),
    ({"value": "--tp-size", "matches": "(unclosed"}, "not a regular expression"),
    ({"value": "--tp-size", "subsetOf": "x"}, "expected a list"),
    ({"value": "--tp-size", "gt": 1, "lt": 3}, "exactly one of"),
])
def test_expression_errors(raw, msg):
    with pytest.raises(ConditionError, match=msg):
        cond(raw)


def test_expression_rules_are_indexed_by_the_options_they_read():
    from servelint.rules.condition import trigger_key
    c = cond({"all": [{"present": "--gc-threshold"}, {"value": {"len": "--gc-threshold"}, "gt": 3}]})
    assert trigger_key(c) == {"gc_threshold"}
    c = cond({"value": {"mul": ["--dp-size", "--attn-cp-size"]}, "gt": {"option": "--tp-size"}})
    assert trigger_key(c) in ({"dp_size", "attn_cp_size", "tp_size"},)
