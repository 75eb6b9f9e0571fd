"""The measurement tools of issue 14 (no SGLang needed): tools/vary_launches.py makes the
same variants for a seed, its variations keep a launch's meaning (read with servelint's own
reader), config variants give a file servelint reads, and the held-out rows recorded in
tests/data/conformance/holdout/ have every field tools/agreement.py reads."""

from __future__ import annotations

import glob
import json
import os
import random
import shlex
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import vary_launches as vl  # noqa: E402
from servelint.engine import lint  # noqa: E402

HOLDOUT = os.path.join(ROOT, "tests", "data", "conformance", "holdout")
EXTRA_DESTS = None


@pytest.fixture(scope="module")
def cases():
    return vl.generate(160, 808)


def parsed(argv, tmp=None, config=None, config_name=None):
    """servelint's reading of the launch (with the config file written next to it)."""
    text = "python3 -m sglang.launch_server " + shlex.join(argv) + "\n"
    path = "launch.sh"
    if config is not None:
        with open(os.path.join(tmp, config_name), "w", encoding="utf-8") as fh:
            fh.write(config)
        path = os.path.join(tmp, "launch.sh")
    result = lint(text, path=path)
    return result, result.parsed[0]


def meaning(p, drop=()):
    """The settings a launch makes, as SGLang resolves the spellings the variations use: one
    entry per option written (dest, values), in the order written for each dest; the deprecated
    `--enable-dp-attention --dp-size N` read as `--attn-dp-size N`; the speculative algorithm
    upper-cased."""
    uses = [(u.option.dest, tuple(v.text for v in u.values)) for u in p.uses if u.option.dest not in drop]
    dests = [d for d, _ in uses]
    if "enable_dp_attention" in dests and "attn_dp_size" not in dests and dests.count("dp_size") == 1:
        uses = [("attn_dp_size", v) if d == "dp_size" else (d, v) for d, v in uses if d != "enable_dp_attention"]
    uses = [(d, tuple(x.upper() for x in v)) if d == "speculative_algorithm" else (d, v) for d, v in uses]
    return sorted(uses, key=lambda u: u[0])  # stable: the order within a dest is kept


def test_deterministic_for_a_seed():
    a = vl.generate(60, 808)
    assert a == vl.generate(60, 808)
    assert a != vl.generate(60, 809)
    assert len(a) == 60


def test_cases_say_where_they_came_from(cases):
    sources = {b["source"] for b in vl.real_launches()}
    fams = {}
    for c in cases:
        assert c["source"] in sources
        assert set(c["variations"]) <= set(vl.VARIATIONS)
        fams.setdefault(c["family"], []).append(c)
        if c["injected"]:
            assert c["injected"]["rule"].startswith("SL") and c["injected"]["trigger"]
        assert ("config" in c["variations"]) == ("config" in c)
    for members in fams.values():
        assert [m["variations"] for m in members][0] == []  # the original comes first
        assert all(m["variations"] for m in members[1:])
    applied = {v for c in cases for v in c["variations"]}
    assert applied >= {"equals", "prefix", "alias", "reorder", "extra", "other-value", "config"}
    assert sum(1 for c in cases if c["injected"]) > len(cases) / 3


def test_variations_keep_the_meaning(cases, tmp_path):
    originals = {c["family"]: c for c in cases if not c["variations"]}
    extra = {vl.dest_of(vl._catalog(), e) for e in vl.EXTRA}
    checked = {v: 0 for v in vl.VARIATIONS}
    for c in cases:
        if not c["variations"] or "other-value" in c["variations"]:
            continue
        o = originals[c["family"]]
        _, po = parsed(o["argv"])
        result, pv = parsed(c["argv"], str(tmp_path), c.get("config"), c.get("config_name"))
        if c.get("config") is not None:
            data = yaml.safe_load(c["config"])
            cat = vl._catalog()
            switches = [k for k, v in data.items() if v is True and cat.lookup("--" + k) is None]
            if switches:
                # An abbreviated key of a switch is not that switch: SGLang writes `--key true`
                # and its parser refuses the `true`. servelint says so; the meaning changed.
                assert any(f.code == "SL013" for f in lint(c["config"], path=str(tmp_path / "c.yaml"),
                                                           fmt="sglang-config").findings)
                continue
        drop = extra - {d for d, _ in meaning(po)} if "extra" in c["variations"] else ()
        assert meaning(pv, drop) == meaning(po, drop), (o["argv"], c["argv"], c.get("config"))
        for v in c["variations"]:
            checked[v] += 1
    assert all(checked[v] >= 3 for v in vl.VARIATIONS if v not in ("other-value", "case")), checked


def test_each_variation_alone():
    cat = vl._catalog()
    argv = ["--tp-size", "2", "--enable-dp-attention", "--dp-size", "2", "--speculative-algorithm", "EAGLE",
            "--chunked-prefill-size", "-1", "--trust-remote-code"]
    for name, check in [
        ("equals", lambda new: "--tp-size=2" in new or "--chunked-prefill-size=-1" in new
         or "--dp-size=2" in new or "--speculative-algorithm=EAGLE" in new),
        ("prefix", lambda new: any(w.startswith("--") and cat.lookup(w.split("=")[0]) is None for w in new)),
        ("alias", lambda new: "--tensor-parallel-size" in new or "--data-parallel-size" in new
         or "--attn-dp-size" in new),
        ("case", lambda new: any(w in ("eagle", "Eagle") for w in new)),
        ("reorder", lambda new: new != argv and sorted(new) == sorted(argv)),
        ("extra", lambda new: len(new) > len(argv)),
    ]:
        gs = vl.groups(argv)
        st = vl._State(cat, random.Random(3), set(), "c.yaml")
        assert vl.APPLY[name](gs, st), name
        new = vl.flat(gs)
        assert check(new), (name, new)
        _, pn = parsed(new)
        _, po = parsed(argv)
        drop = {vl.dest_of(cat, e) for e in vl.EXTRA} if name == "extra" else ()
        assert meaning(pn, drop) == meaning(po, drop), (name, new)


def test_prefixes_are_unique_in_sglangs_parser():
    cat = vl._catalog()
    ps = vl.unique_prefixes(cat, "--speculative-algorithm")
    assert ps and all(cat.prefix_matches(p) == ["--speculative-algorithm"] for p in ps)
    # --dp-size has a longer sibling (--dp-size...)? only prefixes argparse resolves to it alone
    for p in vl.unique_prefixes(cat, "--enable-dp-attention"):
        assert cat.prefix_matches(p) == ["--enable-dp-attention"]
    assert "--enable-dp-att" not in vl.unique_prefixes(cat, "--enable-dp-attention")


def test_another_value_changes_only_an_injected_option():
    cat = vl._catalog()
    gs, at = vl.inject(cat, ["--tp-size", "8", "--trust-remote-code"], ["--tp-size", "3", "--dp-size", "2"],
                       random.Random(1))
    assert vl.flat(gs).count("--tp-size") == 1  # the base's own --tp-size made way for the trigger's
    before = vl.flat(gs)
    st = vl._State(cat, random.Random(2), at, "c.yaml")
    assert vl.v_other_value(gs, st)
    after = vl.flat(gs)
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(changed) == 1 and before[changed[0] - 1] in ("--tp-size", "--dp-size")


def test_config_variant_is_a_file_servelint_reads(tmp_path):
    cat = vl._catalog()
    argv = ["--model-path", "m", "--tp-size", "2", "--enable-metrics", "--cuda-graph-bs-decode", "1", "2",
            "--enable-dp-attention", "--dp-size", "2"]
    gs = vl.groups(argv)
    st = vl._State(cat, random.Random(0), set(), "conf.yaml")
    while not vl.v_config(gs, st):
        pass
    new = vl.flat(gs)
    data = yaml.safe_load(st.config)
    assert isinstance(data, dict) and data
    assert "model-path" not in data and "--model-path" in new  # the oracle must see the model
    assert "enable-dp-attention" not in data  # SGLang refuses it in a config file
    assert new.count("--config") == 1 and new[new.index("--config") + 1] == "conf.yaml"
    result, p = parsed(new, str(tmp_path), st.config, "conf.yaml")
    assert meaning(p) == meaning(parsed(argv)[1])
    assert not [f for f in result.findings if f.severity == 1]
    # and the file really is read: without it the moved options are unknown
    os.remove(tmp_path / "conf.yaml")
    _, p2 = parsed(new, str(tmp_path), None, None)
    assert meaning(p2) != meaning(p)


def test_config_variant_carries_a_bad_value_into_the_file(tmp_path):
    cat = vl._catalog()
    argv = ["--tp-size", "2", "--dp-size", "3", "--enable-dp-attention"]
    gs = vl.groups(argv)
    st = vl._State(cat, random.Random(5), set(), "bad.yaml")
    while not vl.v_config(gs, st):
        pass
    result, p = parsed(vl.flat(gs), str(tmp_path), st.config, "bad.yaml")
    assert meaning(p) == meaning(parsed(argv)[1])


FIELDS = {"args": str, "gpu": str, "verdict": str}
VERDICTS = {"accepted", "rejected", "environment"}


SAMPLES = sorted(p for p in glob.glob(os.path.join(HOLDOUT, "*.jsonl")) if not p.endswith(".alt.jsonl"))


@pytest.mark.parametrize("path", SAMPLES, ids=os.path.basename)
def test_holdout_rows_have_what_agreement_reads(path):
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    assert rows
    vary = os.path.basename(path).startswith("vary-")
    families = {}
    for row in rows:
        for key, typ in FIELDS.items():
            assert isinstance(row.get(key), typ), (key, row)
        assert row["verdict"] in VERDICTS
        for key in ("error", "where", "step"):
            assert key in row
        if row["verdict"] == "rejected":
            assert row["error"] and row["step"] in ("parse", "resolve", "check")
        shlex.split(row["args"])
        if vary:
            assert isinstance(row["family"], str) and isinstance(row["variations"], list)
            assert isinstance(row["source"], str) and "injected" in row
            families.setdefault(row["family"], []).append(row)
            if "config" in row["variations"]:
                assert row["config_name"] in shlex.split(row["args"])
                assert isinstance(yaml.safe_load(row["config"]), dict)
            else:
                assert "config" not in row
    if vary:
        for fam, members in families.items():
            assert sum(1 for m in members if not m["variations"]) == 1, fam


def test_agreement_reads_a_vary_file(tmp_path):
    """measure() and families() on two hand-written rows: a config variant whose problem
    is on the command line is reported, an accepted original is not an error."""
    import agreement
    rows = [
        {"args": "--tp-size 2 --dp-size 2", "gpu": "sm90", "verdict": "accepted", "error": None,
         "where": None, "step": None, "family": "t-0", "variations": [], "source": "x", "injected": None},
        {"args": "--config c.yaml --unknown-flag-xyz", "gpu": "sm90", "verdict": "rejected",
         "error": "argparse: sglang serve: error: unrecognized arguments: --unknown-flag-xyz", "where": None,
         "step": "parse", "family": "t-0", "variations": ["config"], "source": "x", "injected": None,
         "config_name": "c.yaml", "config": "tp-size: 2\ndp-size: 2\n"},
    ]
    m = agreement.measure(rows, {})
    assert (m["accepted"], m["flag_rejections"], m["reported"], m["false_errors"]) == (1, 1, 1, [])
    fam = agreement.families(rows, m["errors"], {})
    assert (fam["variants"], fam["equal"], fam["pairs"], fam["consistent"]) == (1, 1, 1, 1)


@pytest.mark.parametrize("name,count,seed,device", [("vary-808-sm90", 400, 808, "sm90"),
                                                    ("vary-909-cpu", 300, 909, "cpu")])
def test_recorded_variant_samples_are_what_the_seed_makes(name, count, seed, device):
    """The generator reads the trigger examples from the packs at PACKS_REV, so a seed still
    makes the recorded launches while the checkout's packs are rewritten."""
    rows = [json.loads(line) for line in open(os.path.join(HOLDOUT, name + ".jsonl"), encoding="utf-8")]
    made = vl.generate(count, seed)
    assert len(rows) == len(made)
    for row, case in zip(rows, made):
        argv = (["--device", "cpu"] if device == "cpu" else []) + case["argv"]
        assert row["args"] == shlex.join(argv)
        assert (row["family"], row["variations"], row.get("config")) == \
            (case["family"], case["variations"], case.get("config"))


def test_a_multi_line_assert_is_classified_by_any_of_its_lines():
    import agreement
    classes = agreement.site_classes()
    # `assert (cfg.speculative_algorithm.upper() == "EAGLE"\n and not ...), msg` starts on
    # line 132; SGLang's traceback names line 133.
    assert classes["sglang/srt/arg_groups/validation_hook.py:132"] == "flags"
    assert classes["sglang/srt/arg_groups/validation_hook.py:133"] == "flags"
    assert "sglang/srt/arg_groups/validation_hook.py:100000" not in classes


def test_a_dependency_warning_is_counted_apart_from_errors():
    """A flag-decided rejection that servelint reports only as a warning naming what the
    verdict depends on is not in the first figure, but is counted as warned."""
    import agreement
    where = "sglang/srt/arg_groups/serving_hook.py:403"  # `--sidecar must not be empty`: flags
    rows = [
        # --sidecar without --grpc-port: SGLang (no SGLANG_GRPC_PORT) refuses; servelint warns
        {"args": "--sidecar ./agent", "verdict": "rejected", "where": where, "step": "full",
         "error": "ValueError: --sidecar requires --grpc-port or SGLANG_GRPC_PORT."},
        {"args": "--sidecar ' '", "verdict": "rejected", "where": where, "step": "full",
         "error": "ValueError: --sidecar must not be empty."},
        {"args": "--sidecar ./agent --grpc-port 5", "verdict": "accepted", "where": None,
         "step": None, "error": None},
    ]
    m = agreement.measure(rows, {where: "flags"})
    assert (m["flag_rejections"], m["reported"], m["warned"], m["false_errors"]) == (2, 1, 1, [])


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(HOLDOUT, "*.alt.jsonl"))),
                         ids=os.path.basename)
def test_alternative_verdicts_belong_to_their_sample(path):
    """Each alternative verdict is a flag-decided rejection of its sample judged again with
    another model or GPU than the one the sample was judged with."""
    import agreement
    sample = path[: -len(".alt.jsonl")] + ".jsonl"
    rows = {json.loads(line)["args"]: json.loads(line) for line in open(sample, encoding="utf-8") if line.strip()}
    alts = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    assert alts
    for rec in alts:
        row = rows[rec["args"]]
        assert row["verdict"] == "rejected" and row["step"] != "parse"
        assert (rec["model"], rec["gpu"]) in agreement.alternatives_of(row)
        assert rec["verdict"] in VERDICTS


def test_a_rejection_some_model_accepts_is_not_decided_by_the_flags_alone():
    import agreement
    where = "sglang/srt/arg_groups/serving_hook.py:403"
    row = {"args": "--sidecar ./agent", "verdict": "rejected", "where": where, "step": "resolve",
           "gpu": "sm90", "error": "ValueError: x"}
    assert agreement.alternatives_of(row) == [("qwen3-moe-tiny", "sm90"), ("deepseek-tiny", "sm90"),
                                              ("llama-tiny", "sm100")]
    assert agreement.alternatives_of({**row, "gpu": "none"}) == [("qwen3-moe-tiny", "none"),
                                                                  ("deepseek-tiny", "none")]
    alts = {("--sidecar ./agent", m, g): {"verdict": "rejected"} for m, g in agreement.alternatives_of(row)}
    assert agreement.flags_alone(row, alts) is True
    alts[("--sidecar ./agent", "deepseek-tiny", "sm90")] = {"verdict": "accepted"}
    assert agreement.flags_alone(row, alts) is False
    del alts[("--sidecar ./agent", "deepseek-tiny", "sm90")]
    assert agreement.flags_alone(row, alts) is None
    assert agreement.flags_alone({**row, "step": "parse"}, {}) is True
