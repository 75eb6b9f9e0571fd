"""The bundled rules across SGLang releases: each record says the releases it was verified
for (appliesTo, verifiedBy), a rule set for any shipped release loads without a problem
and holds exactly the rules verified there, a rule is silent outside its range and fires
inside it, the verification (tools/verify_rules.py) re-run from the wheels of two
releases agrees with the packs, and version ranges order releases as PEP 440 does."""

import copy
import json
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from servelint.args import Reader
from servelint.catalog import known_versions, load_catalog, version_key
from servelint.extract.shell import extract_shell
from servelint.model import LineIndex
from servelint.rules import (
    _vtuple,
    build_rule,
    bundled_packs,
    load_pack_text,
    rule_set,
    split_example,
    validate_record,
    version_matches,
)
from servelint.rules.apply import apply_rules
from servelint.rules.condition import ConditionError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import verify_rules

SCHEMA = json.loads((ROOT / "schemas" / "rule.schema.json").read_text())
RELEASES = list(known_versions())
NEWEST = RELEASES[-1]
RECORDS = [rec for path in sorted((ROOT / "server/servelint/rules/packs").glob("*.yaml"))
           for rec in yaml.safe_load(path.read_text(encoding="utf-8"))]


def parse(args: str, version: str):
    text = f"python3 -m sglang.launch_server --model-path m {args}\n"
    (launch,) = extract_shell(text, LineIndex(text)).launches
    return Reader(load_catalog(version)).read(launch)


def fired(args: str, version: str) -> list[str]:
    return [f.code for f in apply_rules(parse(args, version), rule_set(version))]


# --- the records ---------------------------------------------------------------------


def test_every_record_says_how_its_releases_were_verified():
    by = {"source": 0, "validator": 0}
    for rec in RECORDS:
        applies, verified = rec["appliesTo"], rec["verifiedBy"]
        by[verified["method"]] += 1
        if verified["method"] == "source":
            assert verified == {"method": "source", "tool": "tools/verify_rules.py",
                                "releases": applies["sglang"]}, rec["code"]
        else:  # no source evidence: make conformance saw SGLang's validator reject it
            assert verified == {"method": "validator", "tool": "tools/conformance.py",
                                "releases": f"=={NEWEST}"}, rec["code"]
            assert applies == {"sglang": f">={NEWEST}"}, rec["code"]
        # verified where the records were written and judged by SGLang's own validator
        assert version_matches(applies, NEWEST), rec["code"]
    assert by["source"] > 380


def test_ranges_are_within_the_known_releases():
    """Every verified range starts and ends at a known release, so a range names releases
    that were looked at, not versions nobody checked."""
    known = set(RELEASES)
    for rec in RECORDS:
        spec = rec["verifiedBy"]["releases"]
        for text in spec if isinstance(spec, list) else [spec]:
            for clause in text.split(","):
                assert clause.lstrip("<>=!") in known, (rec["code"], text)


@pytest.mark.parametrize("version", RELEASES)
def test_bundled_rule_set_loads_for_every_release(version):
    rs = rule_set(version)
    assert rs.problems == []
    want = sorted(rec["code"] for rec in RECORDS if version_matches(rec["appliesTo"], version))
    assert sorted(r.code for r in rs.rules) == want


def test_some_rules_reach_back_and_the_oldest_release_has_few():
    sizes = {v: len(rule_set(v).rules) for v in (RELEASES[0], "0.5.3", "0.5.14", NEWEST)}
    assert sizes[NEWEST] == len(RECORDS)
    assert 0 < sizes[RELEASES[0]] < sizes["0.5.3"] < sizes["0.5.14"] < sizes[NEWEST]


# --- silent outside the range, firing inside ----------------------------------------


def rule(code: str):
    return next(r for p in bundled_packs(NEWEST) for r in p.rules if r.code == code)


@pytest.mark.parametrize("code,args,inside,outside", [
    # schedule_conservativeness must be non-negative: the assert came in 0.5.5
    ("SL217", "--schedule-conservativeness=-1", "0.5.5", "0.5.4.post3"),
    # pp_max_micro_batch_size must be positive: 0.5.11
    ("SL201", "--pp-max-micro-batch-size 0", "0.5.11", "0.5.10.post1"),
    # --disable-cuda-graph-padding with --enable-torch-compile: 0.5.12
    ("SL202", "--disable-cuda-graph-padding --enable-torch-compile", "0.5.12", "0.5.11"),
])
def test_rule_is_silent_before_its_range_and_fires_in_it(code, args, inside, outside):
    r = rule(code)
    assert version_matches(r.applies, inside) and not version_matches(r.applies, outside)
    assert code in fired(args, inside)
    assert code in fired(args, NEWEST)
    # The rule would fire on the older release too: its options are there and its
    # condition holds, but that release's source has no such check.
    older = build_rule(r.record, load_catalog(outside), r.source)
    assert apply_rules(parse(args, outside), [older])
    assert code not in fired(args, outside)
    assert all(x.code != code for x in rule_set(outside).rules)


def test_a_rule_verified_from_the_oldest_release_fires_there():
    r = rule("SL204")  # base_gpu_id must be non-negative
    assert version_matches(r.applies, RELEASES[0])
    assert "SL204" in fired("--base-gpu-id -1", RELEASES[0])


def test_a_rule_whose_options_are_missing_in_a_release_is_not_compiled_there():
    """SL400 names --disaggregation-decode-enable-radix-cache, which 0.4.6 does not have:
    compiling it there fails, so the rule set of 0.4.6 leaves it out before compiling."""
    r = rule("SL400")
    with pytest.raises(ConditionError):
        build_rule(r.record, load_catalog("0.4.6"), r.source)
    assert not version_matches(r.applies, "0.4.6")
    assert rule_set("0.4.6").problems == []


def test_a_rule_whose_check_changed_is_silent_where_it_differs():
    """SL142: 0.5.17-0.5.22 have the message and the options, but their check allows a
    different set of prefill backends (no flashinfer); the rule is left to 0.5.23."""
    r = rule("SL142")
    assert [v for v in RELEASES if version_matches(r.applies, v)] == [NEWEST]
    build_rule(r.record, load_catalog("0.5.22"), r.source)  # it would compile there
    assert all(x.code != "SL142" for x in rule_set("0.5.22").rules)


def _invalid_choice(parsed) -> bool:
    """A value that release's parser refuses (a choice it did not have yet): SL007's
    finding, which rules do not read past."""
    from servelint.valuetypes import convert
    for use in parsed.uses:
        opt = use.option
        for v in use.values:
            if opt.choices and v.text is not None:
                try:
                    if convert(opt.type, v.text) not in opt.choices:
                        return True
                except ValueError:
                    return True
    return False


def test_trigger_examples_fire_on_the_oldest_release_of_their_range():
    """On the first release a rule is verified for, its trigger examples fire, unless a
    default the condition reads is another there (the rule then reads what that
    release's SGLang reads: SL153 asks for --disaggregation-decode-host-receive-threshold
    >= 1, whose default was 0.0 before 0.5.22)."""
    fired_n, by_default = 0, []
    newest = load_catalog(NEWEST)
    for rec in RECORDS:
        first = next(v for v in RELEASES if version_matches(rec["appliesTo"], v))
        if first == NEWEST:
            continue
        catalog = load_catalog(first)
        names, _ = verify_rules.condition_refs(rec["condition"])
        moved = [n for n in names if catalog.lookup(n).default != newest.lookup(n).default]
        for example in rec["examples"].get("trigger", []):
            gpu, args = split_example(example)
            parsed = parse(args, first)
            if parsed.problems or _invalid_choice(parsed):
                continue  # an example that needs something newer than the rule
            if rec["code"] in [f.code for f in apply_rules(parsed, rule_set(first), gpu)]:
                fired_n += 1
            else:
                assert moved, (rec["code"], first, example)
                by_default.append(rec["code"])
    assert fired_n > 200 and len(by_default) < 10


# --- user packs: filtered before compiling -------------------------------------------


NEW_ONLY = """
- id: team-new-only
  code: ACME-1
  errorMessage: only for new releases
  appliesTo: {sglang: '>=0.5.23'}
  condition: {present: --enable-hisparse}
"""


def test_a_user_record_outside_the_release_is_not_compiled_there(tmp_path):
    pack = tmp_path / "team.yaml"
    pack.write_text(NEW_ONLY)
    old = rule_set("0.4.6", [str(pack)], include_project=False)
    assert old.problems == [] and old.by_code("ACME-1") is None
    new = rule_set(NEWEST, [str(pack)], include_project=False)
    assert new.problems == [] and new.by_code("ACME-1") is not None
    # Without appliesTo the record is for every release, and 0.4.6 has no such option.
    pack.write_text(NEW_ONLY.replace("  appliesTo: {sglang: '>=0.5.23'}\n", ""))
    (problem,) = rule_set("0.4.6", [str(pack)], include_project=False).problems
    assert "no option --enable-hisparse" in problem.message


def test_a_user_record_outside_the_release_still_replaces_the_bundled_one(tmp_path):
    """A record with a bundled record's id replaces it; when it does not apply to the
    release, neither does the bundled one (as before the filter moved)."""
    pack = tmp_path / "team.yaml"
    pack.write_text("- id: servelint-sl204\n  code: ACME-2\n  errorMessage: ours\n"
                    "  appliesTo: '>=0.5.23'\n  condition: {present: --base-gpu-id}\n")
    old = rule_set("0.5.3", [str(pack)], include_project=False)
    assert old.by_code("SL204") is None and old.by_code("ACME-2") is None
    assert rule_set("0.5.3").by_code("SL204") is not None
    new = rule_set(NEWEST, [str(pack)], include_project=False)
    assert new.by_code("SL204") is None and new.by_code("ACME-2") is not None


def test_within_a_pack_a_later_record_with_the_same_id_wins():
    text = ("- {id: a, code: ACME-3, errorMessage: x, condition: {present: --tp-size}}\n"
            "- {id: a, code: ACME-4, errorMessage: y, appliesTo: '<0.5', condition: {present: --tp-size}}\n")
    pack = load_pack_text(text, "p.yaml", load_catalog(NEWEST))
    assert pack.rules == [] and pack.skipped == ["a"] and pack.problems == []
    pack = load_pack_text(text, "p.yaml", load_catalog("0.4.6"))
    assert [r.code for r in pack.rules] == ["ACME-3", "ACME-4"] and pack.skipped == []
    text = text.replace("'<0.5'", "'>=0.5'")  # the later record for new releases only
    pack = load_pack_text(text, "p.yaml", load_catalog("0.4.6"))
    assert pack.rules == [] and pack.skipped == ["a"]


# --- version ranges ------------------------------------------------------------------


def test_versions_order_as_pep_440():
    order = ["0.4.9.post6", "0.5.0rc0", "0.5.0rc2", "0.5.0", "0.5.1", "0.5.1.post1",
             "0.5.1.post3", "0.5.2rc0", "0.5.2rc2", "0.5.2", "0.5.10rc0", "0.5.10",
             "0.5.10.post1", "0.5.23"]
    assert sorted(order[1::2] + order[::2], key=_vtuple) == order
    assert _vtuple("v0.5.3") == _vtuple("0.5.3") == _vtuple("0.5.3.0") == _vtuple("0.5.3+cu124")
    assert _vtuple("0.5.3.dev1") < _vtuple("0.5.3rc0") < _vtuple("0.5.3")
    with pytest.raises(ValueError):
        _vtuple("latest")
    assert RELEASES == sorted(RELEASES, key=version_key)


@pytest.mark.parametrize("spec,version,expected", [
    (None, "0.4.0", True),
    ({}, "0.4.0", True),
    ({"sglang": ">=0.5.23"}, "0.5.23", True),
    ({"sglang": ">=0.5.23"}, "0.5.22", False),
    (">=0.5.2", "0.5.2rc2", False),  # a pre-release comes before its release
    ("<0.5.2", "0.5.2rc0", True),
    (">0.5.1", "0.5.1.post1", True),  # a post-release comes after it
    ("<=0.5.1", "0.5.1.post1", False),
    (">=0.5.10,<=0.5.23", "0.5.9", False),  # numbers, not text: 10 > 9
    (">=0.5.10,<=0.5.23", "0.5.10rc0", False),
    (">=0.5.10rc0,<=0.5.23", "0.5.10rc0", True),
    (">=0.5.3,!=0.5.4", "0.5.4", False),
    ("==0.5.3", "v0.5.3", True),
    ("0.5.3", "0.5.3.post1", False),  # a bare version is ==
    (["0.5.3", "0.5.4"], "0.5.4", True),  # a list of versions
    ([">=0.4.6,<=0.4.9.post6", ">=0.5.14,<=0.5.23"], "0.5.0", False),  # a gap
    ([">=0.4.6,<=0.4.9.post6", ">=0.5.14,<=0.5.23"], "0.4.7", True),
    ([">=0.4.6,<=0.4.9.post6", ">=0.5.14,<=0.5.23"], "0.5.14", True),
    (">=0.5.0", "latest", False),  # a version that cannot be read matches no range
])
def test_version_matches(spec, version, expected):
    assert version_matches(spec, version) is expected


def test_schema_and_loader_agree_on_applies_to_and_verified_by():
    v = jsonschema.Draft202012Validator(SCHEMA)
    base = {"id": "a", "errorMessage": "x", "condition": {"present": "--tp-size"}}
    good = [
        {"appliesTo": {"sglang": ">=0.5.14,<=0.5.23"}},
        {"appliesTo": {"sglang": [">=0.4.6,<=0.4.9.post6", "==0.5.3"]}},
        {"appliesTo": "0.5.3"},
        {"appliesTo": ["0.5.3", "v0.5.4"]},
        {"appliesTo": {"sglang": ">=0.5.23"},
         "verifiedBy": {"method": "source", "tool": "tools/verify_rules.py", "releases": ">=0.5.23"}},
        {"verifiedBy": {"method": "validator", "releases": ["==0.5.23"]}},
    ]
    bad = [
        {"appliesTo": {"sglang": "newest"}},
        {"appliesTo": {"sglang": []}},
        {"appliesTo": {"sglang": [0.5]}},
        {"appliesTo": ">=0.5, <"},
        {"appliesTo": {"vllm": ">=0.6"}},
        {"verifiedBy": {"method": "guess", "releases": ">=0.5.23"}},
        {"verifiedBy": {"method": "source"}},
        {"verifiedBy": {"method": "source", "releases": "soon"}},
        {"verifiedBy": {"method": "source", "releases": ">=0.5.23", "by": "me"}},
        {"verifiedBy": "source"},
    ]
    for extra in good:
        rec = {**base, **extra}
        assert list(v.iter_errors(rec)) == [] and validate_record(rec) == [], extra
    for extra in bad:
        rec = {**base, **extra}
        assert list(v.iter_errors(rec)), extra
        assert validate_record(rec), extra


# --- the verification itself -----------------------------------------------------------


def target(message: str, pattern: str | None = None, **extra):
    rec = {"id": "t", "code": "T1", "errorMessage": message, "messagePattern": pattern,
           "condition": {"present": "--tp-size"}, **extra}
    return verify_rules.make_target(rec, "test.yaml")


def found(source: str, t) -> list[int]:
    sites = verify_rules.find_sites([("sglang/srt/x.py", source)], [t])
    return [s.line for s in sites[t.code]]


def test_a_reflowed_message_is_found_and_a_different_one_is_not():
    t = target("--a requires --b to be set.")
    src = ('def check(cfg):\n'
           '    if cfg.a and not cfg.b:\n'
           '        raise ValueError(\n'
           '            "--a requires "\n'
           '            "--b "  "to be set."\n'
           '        )\n'
           '    if cfg.c:\n'
           '        raise ValueError("--a requires --c to be set.")\n'
           '    if cfg.d:\n'
           '        raise ValueError("--a requires --b to be set, unless --d.")\n')
    assert found(src, t) == [3]


def test_values_filled_in_by_the_source_match_the_record():
    t = target("--tp-size 3 is not a multiple of --dp-size 2",
               r"--tp-size \d+ is not a multiple of --dp-size \d+")
    assert found('def f(cfg):\n    if cfg.tp_size % cfg.dp_size:\n'
                 '        raise ValueError(f"--tp-size {cfg.tp_size} is not a multiple of "\n'
                 '                         "--dp-size %d" % cfg.dp_size)\n', t) == [3]
    assert found('def f(cfg):\n    raise ValueError("--tp-size {} is not a multiple of {}".format(1, 2))\n',
                 t) == [2]
    # a value where the record has fixed text, and little else: not the same message
    assert found('def f(cfg):\n    raise ValueError(f"{a} is not {b}")\n', t) == []


def test_a_record_message_cut_before_the_value_is_found():
    t = target("--x must be positive", r"--x must be positive, got: .*")
    assert found('def f(cfg):\n    msg = f"--x must be positive, got: {cfg.x}"\n'
                 '    raise ValueError(msg)\n', t) == [3]
    # a prefix pattern alone does not make a message with other fixed text the same
    t = target("Invalid quantization 'fp8'. Backend A supports only: 'fp4'.",
               r"Invalid quantization '.+'\.")
    src = ('def f(q):\n'
           '    assert q in ("fp4",), f"Invalid quantization \'{q}\'. Backend B supports only: \'fp8\'."\n'
           '    assert q in ("fp4",), f"Invalid quantization \'{q}\'. Backend A supports only: \'fp4\'."\n')
    assert found(src, t) == [3]


def test_a_bare_assert_is_found_by_its_test_however_the_args_are_named():
    t = target("assert cfg.tp_size % cfg.attn_dp_size == 0")
    assert found("def f(self):\n    assert self.tp_size % self.attn_dp_size == 0\n", t) == [2]
    assert found("def f(self):\n    assert self.tp_size % self.dp_size == 0\n", t) == []


def test_what_the_condition_reads_is_compared_with_the_reference():
    t = target("no two", condition={"all": [{"option": "--attention-backend", "in": ["fa3"]},
                                            {"present": "--enable-dp-attention"}]})
    catalog = load_catalog(NEWEST)
    source = ('def f(cfg):\n'
              '    if cfg.enable_dp_attention and cfg.attention_backend in ("fa3", "fa4"):\n'
              '        raise ValueError("no two")\n')
    reference = verify_rules.find_sites([("a.py", source)], [t])["T1"]
    base = verify_rules.baseline(t, reference, catalog)
    assert base.options == ["--attention-backend", "--enable-dp-attention"]
    assert base.choices == {"--attention-backend": ["fa3", "fa4"]}

    def judged(source: str) -> str | None:
        (site,) = verify_rules.find_sites([("b.py", source)], [t])["T1"]
        return verify_rules.reads_as(site, base, catalog, catalog, t)

    # the same check, written otherwise: a local, nested ifs, a list
    assert judged('def f(self):\n    backend = self.attention_backend\n'
                  '    if self.enable_dp_attention:\n        if backend in ["fa4", "fa3"]:\n'
                  '            raise ValueError("no two")\n') is None
    assert "does not read enable_dp_attention" in judged(
        'def f(cfg):\n    if cfg.attention_backend in ("fa3", "fa4"):\n'
        '        raise ValueError("no two")\n')
    assert "names ['fa3'] of --attention-backend, not ['fa3', 'fa4']" in judged(
        'def f(cfg):\n    if cfg.enable_dp_attention and cfg.attention_backend == "fa3":\n'
        '        raise ValueError("no two")\n')
    # a value the older release does not accept is not asked of it
    older = load_catalog("0.4.6")
    assert not verify_rules._accepted("fa4", older.lookup("--attention-backend").choices)
    source = ('def f(cfg):\n'
              '    if cfg.enable_dp_attention and cfg.attention_backend == "fa3":\n'
              '        raise ValueError("no two")\n')
    (site,) = verify_rules.find_sites([("c.py", source)], [t])["T1"]
    assert verify_rules.reads_as(site, base, older, catalog, t) is None


def test_option_problems_follow_the_release_catalog():
    rec = next(r for r in RECORDS if r["code"] == "SL142")
    t = verify_rules.make_target(rec, "kv-cache.yaml")
    reference = load_catalog(NEWEST)
    assert verify_rules.option_problems(t, reference, reference) == []
    assert any("accepts none of" in p for p in verify_rules.option_problems(t, load_catalog("0.5.16"), reference))
    assert any(p.startswith("no option") for p in verify_rules.option_problems(t, load_catalog("0.4.6"), reference))


def test_ranges_compress_runs_of_known_releases():
    rel = ["0.5.1", "0.5.2rc0", "0.5.2", "0.5.3", "0.5.4"]
    assert verify_rules.ranges(["0.5.2rc0", "0.5.2", "0.5.4"], rel) == [">=0.5.2rc0,<=0.5.2", "==0.5.4"]
    assert verify_rules.spec_of(verify_rules.ranges(rel, rel)) == ">=0.5.1,<=0.5.4"
    for verified in (["0.5.2rc0", "0.5.2", "0.5.4"], ["0.5.1"], rel):
        spec = verify_rules.spec_of(verify_rules.ranges(verified, rel))
        assert [v for v in rel if version_matches(spec, v)] == verified


@pytest.fixture(scope="module")
def rerun():
    """The verification of two releases re-run from their wheels (downloaded from PyPI
    into the tool's cache when missing), with the reference release it compares to."""
    releases = ["0.5.3", "0.5.21"]
    targets, results, _ = verify_rules.run(releases, verify_rules.default_cache(), jobs=1,
                                           log=lambda s: None)
    return releases, targets, results


def test_rerun_from_the_wheels_agrees_with_the_packs(rerun):
    releases, targets, results = rerun
    # the records without source evidence in the reference are the validator's
    missing = sorted(t.code for t in targets if not results[verify_rules.REFERENCE][t.code].ok)
    assert missing == sorted(r["code"] for r in RECORDS if r["verifiedBy"]["method"] == "validator")
    targets = [t for t in targets if t.code not in missing]
    for v in releases:
        verified = sorted(t.code for t in targets if results[v][t.code].ok)
        claimed = sorted(t.code for t in targets if version_matches(t.record["appliesTo"], v))
        assert verified == claimed, v
        assert len(verified) > 30


def test_check_reports_a_pack_that_claims_too_much(rerun):
    releases, targets, results = rerun
    assert verify_rules.compare(targets, results, releases, RELEASES, subset=True)[1] == []
    wrong = copy.deepcopy(targets)
    t = next(t for t in wrong if t.code == "SL204")
    t.record["appliesTo"] = {"sglang": ">=0.5.21"}
    _, differ, _ = verify_rules.compare(wrong, results, releases, RELEASES, subset=True)
    assert differ == ["SL204: the pack says ['0.5.21'], the source says ['0.5.3', '0.5.21']"]


def test_writing_the_packs_back_changes_nothing(tmp_path, monkeypatch):
    """What the packs say, written back by the tool, is byte for byte what they are."""
    copied = tmp_path / "packs"
    shutil.copytree(ROOT / "server/servelint/rules/packs", copied)
    monkeypatch.setattr(verify_rules, "PACKS", copied)
    specs = {rec["code"]: rec["appliesTo"]["sglang"] for rec in RECORDS
             if rec["verifiedBy"]["method"] == "source"}
    unverified = {rec["code"]: rec["verifiedBy"] for rec in RECORDS
                  if rec["verifiedBy"]["method"] != "source"}
    assert verify_rules.write_packs(specs, unverified) == []
    specs["SL204"] = [">=0.4.0,<=0.4.6", "==0.5.23"]
    assert verify_rules.write_packs(specs) == ["validation.yaml"]
    (rec,) = [r for r in yaml.safe_load((copied / "validation.yaml").read_text()) if r["code"] == "SL204"]
    assert rec["appliesTo"] == {"sglang": [">=0.4.0,<=0.4.6", "==0.5.23"]}
    assert rec["verifiedBy"]["releases"] == [">=0.4.0,<=0.4.6", "==0.5.23"]
