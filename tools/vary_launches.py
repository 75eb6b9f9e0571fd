"""Variants of real-world launches, to measure servelint against SGLang on launches no rule
was written from (servelint issue 14).

    .venv/bin/python tools/vary_launches.py --count 400 --seed 808 > /tmp/cases.jsonl

The launches come from real files: SGLang's own repository
(tests/data/corpus/sglang-own-verdicts.jsonl, a copy of the shared corpus: the argv SGLang judged) and servelint's real-file
corpora (tests/data/real/<format>/verdicts.jsonl). Most of them are accepted by SGLang, so
about half of the families also get a flag-decided problem injected: the words of one
bundled rule's trigger example (server/servelint/rules/packs/*.yaml, `examples.trigger`),
replacing the launch's own options of the same settings.

Each family is written once as it is (`variations: []`, the original) and then as variants,
each applying one to three of these variations (the names are what a case lists):

- `equals`: `--opt v` written `--opt=v`, or `--opt=v` written `--opt v`;
- `prefix`: option names shortened to a prefix that is unique among SGLang 0.5.23's option
  strings (argparse allow_abbrev; servelint's flag catalog is generated from that parser);
- `alias`: another spelling of the same setting: another long name of the option
  (`--tp-size` / `--tensor-parallel-size`, `--ep` / `--ep-size`, ...), or
  `--enable-dp-attention --dp-size N` <-> `--attn-dp-size N` (SGLang 0.5.23 turns the first
  into the second, parallel_hook._handle_deprecated_dp_attention);
- `case`: the case of `--speculative-algorithm`'s value, which SGLang upper-cases;
- `reorder`: the options in another order (each with its values; options written twice keep
  their order, since the last one wins);
- `extra`: one or two unrelated options added (host, port, logging, metrics, ...);
- `other-value`: another value for an injected option (another choice, another number);
- `config`: some options moved into a SGLang `--config` YAML file (keys as written, values
  as YAML scalars or lists; options SGLang refuses in a config file stay on the command line,
  and so do the model and the device, which the oracle must see). The case carries the
  file's name and content (`config_name`, `config`); whoever judges it writes the file next
  to the launch (tools/agreement.py writes it into a temporary folder for SGLang and for
  servelint).

Output: one JSON object per line: `argv`, `model` (a folder of tools/oracle-model), `family`,
`source` (which real launch), `injected` (the rule code and its trigger, or null),
`variations`, and for config variants `config_name` and `config`. Deterministic for a seed:
the trigger examples are read from the packs as committed at PACKS_REV (`--packs-rev`;
`worktree` reads the checkout's), not from packs being edited. No verdict is assumed: every
case is judged by SGLang (tools/agreement.py --vary).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "server"))

CORPUS = os.path.join(ROOT, "tests", "data", "corpus", "sglang-own-verdicts.jsonl")
REAL = os.path.join(ROOT, "tests", "data", "real")
VERSION = "0.5.23"
# The rule packs the trigger examples are read from (a git revision of this checkout): the
# packs as they were when the held-out samples vary-808-sm90 and vary-909-cpu were made.
PACKS_REV = "4d8e7705cbf955c2891924dde33265c9ebe16fb6"
NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")

EXTRA = [
    ["--host", "0.0.0.0"], ["--port", "30001"], ["--log-level", "info"], ["--enable-metrics"],
    ["--served-model-name", "my-model"], ["--api-key", "sk-local"], ["--enable-cache-report"],
    ["--log-requests"], ["--watchdog-timeout", "600"], ["--random-seed", "42"],
    ["--show-time-cost"], ["--decode-log-interval", "40"], ["--max-queued-requests", "512"],
]
# The oracle finds the model and the device by their exact words (--model-path/--model,
# --device): those keep their spelling and stay on the command line.
ORACLE_READS = {"model_path", "device"}
VARIATIONS = ["equals", "prefix", "alias", "case", "reorder", "extra", "other-value", "config"]


def _catalog():
    from servelint.catalog import load_catalog
    return load_catalog(VERSION)


def real_launches() -> list[dict]:
    """The real launches, in a fixed order: {source, argv, model, verdict}. Launches the
    recorded verdict calls environment or depends-on-unknown are left out (a variant of
    them cannot be judged on the flags)."""
    out = []
    if os.path.exists(CORPUS):
        for line in open(CORPUS, encoding="utf-8"):
            rec = json.loads(line)
            if rec.get("verdict") in ("environment", "depends-on-unknown") or rec.get("argv_judged") is None:
                continue
            out.append({"source": f"sglang-own:{rec['record']}:{rec['path']}", "argv": rec["argv_judged"],
                        "model": None, "verdict": rec["verdict"]})
    for fmt in sorted(os.listdir(REAL)):
        path = os.path.join(REAL, fmt, "verdicts.jsonl")
        if not os.path.exists(path):
            continue
        for line in open(path, encoding="utf-8"):
            rec = json.loads(line)
            if rec.get("verdict") == "environment":
                continue
            out.append({"source": f"real/{fmt}:{rec['file']}#{rec['launch']}", "argv": rec["argv"],
                        "model": rec.get("model"), "verdict": rec["verdict"]})
    return out


def triggers(packs_rev: str | None = None) -> list[tuple[str, list[str]]]:
    """(rule code, argv) of every bundled rule's trigger example that targets no GPU, for
    SGLang 0.5.23, in the bundled packs' order. The packs are read as committed at
    `packs_rev` (server/servelint/rules/bundled.json, the packs' compiled form), so that a
    seed makes the same launches while the packs in the checkout are being edited; None
    reads the checkout's packs as servelint loads them."""
    from servelint.rules import split_example
    if packs_rev is None:
        from servelint.rules import bundled_packs
        records = [[{"code": r.code, "id": r.id, "examples": r.examples} for r in pack.rules]
                   for pack in bundled_packs(VERSION)]
    else:
        import subprocess
        from servelint.rules import rule_code, unwrap, version_matches
        text = subprocess.run(["git", "-C", ROOT, "show", f"{packs_rev}:server/servelint/rules/bundled.json"],
                              capture_output=True, text=True, check=True).stdout
        data = json.loads(text)
        records = []
        for name in sorted(data):
            kept: list[dict] = []
            for rec in unwrap(data[name]):
                rid = str(rec["id"])
                kept = [r for r in kept if r["id"] != rid]  # a later record with an id replaces it
                if version_matches(rec.get("appliesTo"), VERSION):
                    kept.append({"code": rule_code(rec), "id": rid, "examples": rec.get("examples") or {}})
            records.append(kept)
    out = []
    for pack in records:
        for rec in pack:
            for ex in rec["examples"].get("trigger", []):
                gpu, words = split_example(ex)
                if gpu is None:
                    out.append((rec["code"], shlex.split(words)))
    return out


# --- words grouped by option ---------------------------------------------------------------


def is_option(word: str) -> bool:
    return word.startswith("-") and len(word) > 1 and not NUMBER.match(word)


def groups(argv: list[str]) -> list[list[str]]:
    """The words as options, each with the values after it (a leading value stands alone)."""
    out: list[list[str]] = []
    for w in argv:
        if is_option(w) or not out:
            out.append([w])
        else:
            out[-1].append(w)
    return out


def resolve(cat, word: str):
    """The option a word names (exactly, with `=value`, or by a unique prefix), or None."""
    name = word.split("=", 1)[0]
    opt = cat.lookup(name)
    if opt is None and name.startswith("--"):
        m = cat.prefix_matches(name)
        if len(m) == 1:
            opt = cat.lookup(m[0])
    return opt


def dest_of(cat, group: list[str]) -> str | None:
    opt = resolve(cat, group[0]) if is_option(group[0]) else None
    return opt.dest if opt else None


def flat(gs: list[list[str]]) -> list[str]:
    return [w for g in gs for w in g]


# --- the variations: each takes (groups, state) and returns True if it changed something ----


def v_equals(gs, st):
    cands = []
    for i, g in enumerate(gs):
        opt = resolve(st.cat, g[0]) if is_option(g[0]) else None
        if opt is None or not g[0].startswith("--") or opt.dest in ORACLE_READS:
            continue
        if "=" in g[0] and len(g) == 1:
            value = g[0].split("=", 1)[1]
            if not value.startswith("-") or NUMBER.match(value):
                cands.append((i, "split"))
        elif len(g) == 2 and opt.takes_value and opt.nargs in (None, "?"):
            cands.append((i, "join"))
    if not cands:
        return False
    for i, how in st.rng.sample(cands, st.rng.randint(1, len(cands))):
        g = gs[i]
        gs[i] = g[0].split("=", 1) if how == "split" else [f"{g[0]}={g[1]}"]
    return True


def unique_prefixes(cat, name: str) -> list[str]:
    """Prefixes of `name` (shorter than it) that argparse resolves to it and to nothing else."""
    out = []
    for n in range(3, len(name)):
        p = name[:n]
        if cat.lookup(p) is None and cat.prefix_matches(p) == [name]:
            out.append(p)
    return out


def v_prefix(gs, st):
    cands = []
    for i, g in enumerate(gs):
        name = g[0].split("=", 1)[0]
        if not name.startswith("--") or st.cat.lookup(name) is None \
                or st.cat.lookup(name).dest in ORACLE_READS:
            continue
        ps = unique_prefixes(st.cat, name)
        if ps:
            cands.append((i, name, ps))
    if not cands:
        return False
    for i, name, ps in st.rng.sample(cands, st.rng.randint(1, min(3, len(cands)))):
        g = gs[i]
        gs[i] = [st.rng.choice(ps) + g[0][len(name):]] + g[1:]
    return True


def v_alias(gs, st):
    cat = st.cat
    dests = [dest_of(cat, g) for g in gs]
    cands = []
    for i, g in enumerate(gs):
        name = g[0].split("=", 1)[0]
        opt = cat.lookup(name)
        if opt is None:
            continue
        others = [n for n in opt.names if n.startswith("--") and n != name and not n.startswith("--no-")]
        if others:
            cands.append(("name", i, others))
    if "enable_dp_attention" in dests and dests.count("dp_size") == 1 and "attn_dp_size" not in dests:
        cands.append(("to-attn-dp", None, None))
    if dests.count("attn_dp_size") == 1 and not {"dp_size", "enable_dp_attention"} & set(dests):
        cands.append(("from-attn-dp", None, None))
    if not cands:
        return False
    kind, i, others = st.rng.choice(cands)
    if kind == "name":
        g = gs[i]
        name = g[0].split("=", 1)[0]
        gs[i] = [st.rng.choice(others) + g[0][len(name):]] + g[1:]
    elif kind == "to-attn-dp":
        e = dests.index("enable_dp_attention")
        d = dests.index("dp_size")
        value = gs[d][0].split("=", 1)[1] if "=" in gs[d][0] else gs[d][1]
        gs[d] = ["--attn-dp-size", value]
        del gs[e]
    else:
        a = dests.index("attn_dp_size")
        value = gs[a][0].split("=", 1)[1] if "=" in gs[a][0] else gs[a][1]
        gs[a:a + 1] = [["--enable-dp-attention"], ["--dp-size", value]]
    return True


def v_case(gs, st):
    cands = [i for i, g in enumerate(gs) if dest_of(st.cat, g) == "speculative_algorithm"]
    if not cands:
        return False
    i = st.rng.choice(cands)
    g = gs[i]
    if "=" in g[0]:
        name, value = g[0].split("=", 1)
    else:
        if len(g) < 2:
            return False
        name, value = g[0], g[1]
    forms = {value.lower(), value.upper(), value.capitalize()} - {value}
    if not forms:
        return False
    new = st.rng.choice(sorted(forms))
    gs[i] = [f"{name}={new}"] if "=" in g[0] else [name, new] + g[2:]
    return True


def v_reorder(gs, st):
    if len(gs) < 2 or not all(is_option(g[0]) for g in gs):
        return False
    dests = [dest_of(st.cat, g) or g[0] for g in gs]
    order = list(range(len(gs)))
    st.rng.shuffle(order)
    # options written twice keep their relative order (the last one wins in argparse)
    slots: dict[str, list[int]] = {}
    for i in range(len(gs)):
        slots.setdefault(dests[i], []).append(i)
    taken: dict[str, int] = {}
    new = []
    for i in order:
        d = dests[i]
        k = taken.get(d, 0)
        taken[d] = k + 1
        new.append(gs[slots[d][k]])
    if new == gs:
        return False
    gs[:] = new
    return True


def v_extra(gs, st):
    have = {dest_of(st.cat, g) for g in gs}
    cands = [e for e in EXTRA if dest_of(st.cat, e) not in have]
    if not cands:
        return False
    for e in st.rng.sample(cands, st.rng.randint(1, min(2, len(cands)))):
        gs.insert(st.rng.randint(0, len(gs)), list(e))
    return True


def other_values(opt, value: str) -> list[str]:
    if opt.choices:
        return [str(c) for c in opt.choices if str(c) != value]
    if opt.type == "int":
        try:
            n = int(value)
        except ValueError:
            return ["0", "1", "3"]
        return [str(x) for x in (0, 1, -1, 3, 7, n + 1, n * 2, n * 3 + 1) if str(x) != value]
    if opt.type == "float":
        return [x for x in ("0", "0.5", "1.5", "-0.1") if x != value]
    return []


def v_other_value(gs, st):
    cands = []
    for i, g in enumerate(gs):
        if i not in st.injected_at:
            continue
        opt = resolve(st.cat, g[0]) if is_option(g[0]) else None
        if opt is None or not opt.takes_value or opt.nargs not in (None, "?"):
            continue
        value = g[0].split("=", 1)[1] if "=" in g[0] else (g[1] if len(g) > 1 else None)
        if value is None:
            continue
        vals = other_values(opt, value)
        if vals:
            cands.append((i, vals))
    if not cands:
        return False
    i, vals = st.rng.choice(cands)
    g = gs[i]
    new = st.rng.choice(vals)
    gs[i] = [g[0].split("=", 1)[0] + "=" + new] if "=" in g[0] else [g[0], new] + g[2:]
    return True


KEEP_ON_COMMAND_LINE = ORACLE_READS | {"config"}


def yaml_value(word: str):
    try:
        v = yaml.safe_load(word)
    except yaml.YAMLError:
        return word
    if isinstance(v, (int, float)) and not isinstance(v, bool) and str(v) == word:
        return v
    return word


def v_config(gs, st):
    cat = st.cat
    cands = []
    for i, g in enumerate(gs):
        name = g[0].split("=", 1)[0]
        opt = resolve(cat, g[0]) if is_option(g[0]) and name.startswith("--") else None
        if opt is None or opt.dest in KEEP_ON_COMMAND_LINE or opt.action not in ("store", "store_true"):
            continue
        values = ([g[0].split("=", 1)[1]] if "=" in g[0] else []) + g[1:]
        if opt.action == "store_true" and values:
            continue
        if opt.action == "store" and not values:
            continue
        cands.append(i)
    if not cands:
        return False
    moved = sorted(st.rng.sample(cands, st.rng.randint(1, len(cands))))
    data = {}
    for i in moved:
        g = gs[i]
        name = g[0].split("=", 1)[0]
        key = name[2:]
        opt = resolve(cat, g[0])
        values = ([g[0].split("=", 1)[1]] if "=" in g[0] else []) + g[1:]
        if key in data:  # written twice: the file keeps one key, the last value (as argparse would)
            del data[key]
        if opt.action == "store_true":
            data[key] = True
        elif opt.nargs in ("+", "*"):
            data[key] = [yaml_value(v) for v in values]
        else:
            data[key] = yaml_value(values[0])
    gs[:] = [g for i, g in enumerate(gs) if i not in moved]
    st.config = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    gs.insert(st.rng.randint(0, len(gs)), ["--config", st.config_name])
    return True


APPLY = {"equals": v_equals, "prefix": v_prefix, "alias": v_alias, "case": v_case, "reorder": v_reorder,
         "extra": v_extra, "other-value": v_other_value, "config": v_config}


class _State:
    def __init__(self, cat, rng, injected_at, config_name):
        self.cat, self.rng, self.injected_at, self.config_name = cat, rng, injected_at, config_name
        self.config = None


def inject(cat, base: list[str], trigger: list[str], rng) -> tuple[list[list[str]], set[int]]:
    """The base launch with the trigger's options put in (at one place), the base's own
    options of the same settings taken out. Returns the groups and the injected ones' indexes."""
    tg = groups(trigger)
    tdests = {dest_of(cat, g) for g in tg} - {None}
    bg = [g for g in groups(base) if dest_of(cat, g) not in tdests]
    at = rng.randint(0, len(bg))
    gs = bg[:at] + [list(g) for g in tg] + bg[at:]
    return gs, set(range(at, at + len(tg)))


def generate(count: int, seed: int, packs_rev: str | None = PACKS_REV) -> list[dict]:
    rng = random.Random(seed)
    cat = _catalog()
    bases = real_launches()
    trig = triggers(packs_rev)
    out: list[dict] = []
    seen: set[tuple] = set()
    family = 0
    while len(out) < count:
        base = rng.choice(bases)
        injected = None
        if rng.random() < 0.6:
            code, words = rng.choice(trig)
            gs, at = inject(cat, base["argv"], words, rng)
            injected = {"rule": code, "trigger": shlex.join(words)}
        else:
            gs, at = groups(base["argv"]), set()
        original = flat(gs)
        if (tuple(original), None) in seen:
            continue
        fam = f"{seed}-{family}"
        family += 1
        seen.add((tuple(original), None))
        common = {"family": fam, "source": base["source"], "model": base["model"], "injected": injected}
        out.append(dict(common, argv=original, variations=[]))
        for k in range(rng.randint(2, 4)):
            if len(out) >= count:
                break
            names = [v for v in VARIATIONS if v != "other-value" or injected]
            chosen = rng.sample(names, rng.randint(1, 3))
            # another value first (it finds the injected options where they were put), the
            # config file last (the words moved into it keep the spelling the others gave)
            chosen.sort(key=lambda v: {"other-value": 0, "config": 2}.get(v, 1))
            vg = [list(g) for g in gs]
            st = _State(cat, rng, set(at), f"vary-{fam}-{k}.yaml")
            applied = []
            for v in chosen:
                if APPLY[v](vg, st):
                    applied.append(v)
            argv = flat(vg)
            key = (tuple(argv), st.config)
            if not applied or key in seen:
                continue
            seen.add(key)
            case = dict(common, argv=argv, variations=applied)
            if st.config is not None:
                case["config_name"] = st.config_name
                case["config"] = st.config
            out.append(case)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=808)
    ap.add_argument("--packs-rev", default=PACKS_REV,
                    help="git revision whose rule packs give the trigger examples ('worktree': the checkout's)")
    args = ap.parse_args()
    for case in generate(args.count, args.seed, None if args.packs_rev == "worktree" else args.packs_rev):
        print(json.dumps(case))
    return 0


if __name__ == "__main__":
    sys.exit(main())
