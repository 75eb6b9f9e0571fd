"""servelint's agreement with SGLang on the sampled launches (tests/data/conformance/
sampled.jsonl, recorded by `make conformance`):

- of the launches SGLang rejects for a reason the flags decide (its parser, or a site
  the coverage inventory classes as `flags`/`derived`), the share servelint reports an
  error on;
- the launches SGLang accepts on which servelint reports an error (must be zero);
- of the rejections without an error, how many get a rule's warning that names what
  SGLang's verdict depends on (the GPU, the environment, the model: "SGLang refuses this
  unless ..."), printed apart, never added to the first figure;
- for samples judged on a pretended GPU, the first two figures again with servelint's `gpu`
  setting at that GPU (the way a team deploying on it configures servelint): a default SGLang
  picks from the GPU is then decided, not a warning; and once more with the launch given the
  model folder SGLang judged it with (servelint reads a local config.json), so that what the
  model decides is settled too. The first figure stays the one without either.

    .venv/bin/python tools/agreement.py [--verbose]

A held-out measurement: `--judge N --seed S` samples N new launches (tools/sample_launches.py,
a seed the recorded sample did not use), asks SGLang about them (tools/sglang_oracle.py in
.venv-sglang) and measures servelint on those, so rules written while looking at the recorded
sample are not graded on it. `--device cpu` judges them the way the CPU-only check does
(`--device cpu` written into every launch, no GPU pretended) instead of on a pretended sm90.
The judged rows go to `--data` (default: a file under /tmp). The samples judged so far are
kept in tests/data/conformance/holdout/<seed>-<device>.jsonl; re-measure one with
`--data tests/data/conformance/holdout/505-sm90.jsonl`.

What the model and the GPU decide: `--alternatives` has SGLang judge every flag-decided
rejection of the `--data` sample again with the other oracle models (qwen3-moe-tiny,
deepseek-tiny) and, for rows judged on a pretended GPU, on the other GPU (sm100 for sm90), and
keeps the verdicts beside the sample (`<sample>.alt.jsonl`, keyed by the launch). A rejection
that some model or GPU accepts is decided by the model or the GPU, not by the flags alone:
the figures then also give the share of rejections that every alternative refuses (rejected
whatever the model and the GPU) that servelint reports, and how many of servelint's errors
fall on launches some alternative accepts (an error there is wrong for that model or GPU,
unless servelint knows the model or the GPU).

Variants of real-world launches: `--vary N --seed S` generates N launches with
tools/vary_launches.py (real launches from SGLang's repo and servelint's real-file corpora,
some with a bundled rule's trigger injected, each family once as written and then varied:
`--opt=v`, unique prefixes, aliases, value case, order, extra options, another value, options
moved into a `--config` YAML file), has SGLang judge every one (config files written into a
temporary folder: SGLang is given its full path, servelint reads it next to the launch it
lints; the oracle runs from the checkout, since rule examples name tools/oracle-model/... by
a relative path), keeps the judged rows in
tests/data/conformance/holdout/vary-<seed>-<device>.jsonl and prints the same two figures,
plus, per variant family, how often servelint's verdict (error or not) equals SGLang's on
each variant, and how often servelint's verdict changes from the original's exactly when
SGLang's does. `--verbose` lists misses and false errors with the variations that were
applied, and groups them by rule and site.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "server"))
sys.path.insert(0, os.path.join(ROOT, "tools"))


def site_classes() -> dict[str, str]:
    """file:line -> class of the coverage inventory's sites. A raise or assert written over
    several lines is known by its first line, while SGLang's traceback (the oracle's `where`)
    can name a later one (`assert (a\n and b), msg` names the line of `and b`): every line of
    the statement gets its class (tools/coverage/sites.json records where each one ends)."""
    from sglang_coverage import load
    sites, rows = load()
    out = {f"{f}:{line}": got[0]["class"] for (f, line), got in rows.items()}
    for site in sites:
        got = rows.get((site["file"], site["line"]))
        if got:
            for n in range(site["line"] + 1, site.get("end_line", site["line"]) + 1):
                out.setdefault(f"{site['file']}:{n}", got[0]["class"])
    return out


RULES_FAILED = "internal error while applying rules"
DEPENDS = "SGLang refuses this unless"  # a rule's warning naming what the verdict hangs on


ORACLE_MODEL = os.path.join(ROOT, "tools", "oracle-model", "llama-tiny")  # what the oracle injects


def servelint_lint(args: str, config: str | None = None, config_name: str | None = None,
                   gpu: str | None = None, judged_model: bool = False):
    """servelint's result on the launch; with a config file, the file is written next to
    the launch (a temporary folder) under the name the launch gives it. `gpu`: servelint's
    `gpu` setting (None: not said, servelint's default); `judged_model`: give the launch the
    model folder SGLang judged it with (the oracle's tiny Llama, a local config.json) instead
    of a model servelint cannot read."""
    import tempfile
    from servelint.engine import lint
    from servelint.settings import Settings
    settings = Settings(gpu=gpu)
    argv = shlex.split(args)
    if not {"--model-path", "--model"} & set(argv):
        argv = ["--model-path", ORACLE_MODEL if judged_model else "/models/tiny"] + argv
    text = "python3 -m sglang.launch_server " + shlex.join(argv) + "\n"
    if config is None:
        return lint(text, path="sampled.sh", settings=settings)
    with tempfile.TemporaryDirectory(prefix="servelint-vary-") as tmp:
        with open(os.path.join(tmp, config_name), "w", encoding="utf-8") as fh:
            fh.write(config)
        return lint(text, path=os.path.join(tmp, "sampled.sh"), settings=settings)


def servelint_errors(args: str, config: str | None = None, config_name: str | None = None) -> list[str]:
    result = servelint_lint(args, config, config_name)
    return [f"{f.code} {f.message}" for f in result.findings if f.severity == 1]


def config_file_errors(row) -> list[str]:
    """The codes of the errors servelint reports on a row's config file linted on its own
    (where a problem made only of the file's words is reported: config_merge.settle_foreign)."""
    from servelint.engine import lint
    return [f.code for f in lint(row["config"], path=row["config_name"], fmt="sglang-config").findings
            if f.severity == 1]


def sglang_class(row, classes) -> str:
    """accepted / flag (rejected for a flag-decided reason) / other (model, hardware,
    unclassified site) / environment."""
    if row["verdict"] == "accepted":
        return "accepted"
    if row["verdict"] == "rejected":
        cls = "flags" if row.get("step") == "parse" else classes.get(row.get("where") or "", "?")
        return "flag" if cls in ("flags", "derived") else "other"
    return "environment"


def measure(rows, classes, gpu_setting: bool = False, judged_model: bool = False):
    """The figures; `gpu_setting`: lint each launch with servelint's `gpu` setting at the GPU
    SGLang judged it on (the row's `gpu`; none for the CPU-only rows), as a team that
    deploys on that GPU configures servelint."""
    from servelint.schema import GPUS
    out = {"accepted": 0, "false_errors": [], "flag_rejections": 0, "reported": 0, "missed": [],
           "other_rejections": 0, "environment": 0, "rules_failed": 0, "errors": [], "warned": 0}
    for row in rows:
        gpu = row.get("gpu") if gpu_setting and row.get("gpu") in GPUS else None
        result = servelint_lint(row["args"], row.get("config"), row.get("config_name"), gpu,
                                judged_model)
        errors = [f"{f.code} {f.message}" for f in result.findings if f.severity == 1]
        out["errors"].append(errors)
        if any(RULES_FAILED in n for n in result.notices):
            out["rules_failed"] += 1
        got = sglang_class(row, classes)
        if got == "accepted":
            out["accepted"] += 1
            if errors:
                out["false_errors"].append((row, errors))
        elif got == "flag":
            out["flag_rejections"] += 1
            if errors:
                out["reported"] += 1
            else:
                out["missed"].append(row)
                if any(f.severity == 2 and DEPENDS in f.message for f in result.findings):
                    out["warned"] += 1  # named as depending on the GPU, the environment or the model
        elif got == "other":
            out["other_rejections"] += 1
        else:
            out["environment"] += 1
    return out


def families(rows, errors, classes):
    """Per variant (a row with variations whose family has its original judged): does
    servelint's verdict (error or not) equal SGLang's (accepted = no error, flag-decided
    rejection = error; other verdicts not counted), and does servelint's verdict change
    from the original's exactly when SGLang's does."""
    def sg(row):
        c = sglang_class(row, classes)
        return {"accepted": False, "flag": True}.get(c)

    originals = {r["family"]: (r, e) for r, e in zip(rows, errors) if r.get("family") and not r.get("variations")}
    out = {"variants": 0, "equal": 0, "pairs": 0, "consistent": 0, "inconsistent": []}
    for row, errs in zip(rows, errors):
        if not row.get("family") or not row.get("variations"):
            continue
        s = sg(row)
        if s is None:
            continue
        out["variants"] += 1
        out["equal"] += (bool(errs) == s)
        orig = originals.get(row["family"])
        if orig is None or sg(orig[0]) is None:
            continue
        out["pairs"] += 1
        so, lo = sg(orig[0]), bool(orig[1])
        if (bool(errs) == lo) == (s == so):
            out["consistent"] += 1
        else:
            out["inconsistent"].append((row, errs, orig[0], orig[1]))
    return out


def vary_judge(count: int, seed: int, device: str, out: str) -> None:
    """Generate variants (tools/vary_launches.py), have SGLang judge them, write the rows."""
    import subprocess
    import tempfile
    from vary_launches import generate
    cases = generate(count, seed)
    gpu = "none" if device == "cpu" else "sm90"
    lines = []
    with tempfile.TemporaryDirectory(prefix="servelint-vary-") as tmp:
        for case in cases:
            argv = list(case["argv"])
            if device == "cpu":
                argv = ["--device", "cpu"] + argv
            case["args"] = shlex.join(argv)
            if case.get("config") is not None:
                # SGLang gets the file's full path; the row keeps the name the launch gives it
                # (servelint reads it next to the launch).
                full = os.path.join(tmp, case["config_name"])
                with open(full, "w", encoding="utf-8") as fh:
                    fh.write(case["config"])
                argv = [full if w == case["config_name"] else w for w in argv]
            req = {"argv": argv, "gpu": gpu}
            if case.get("model"):
                req["model"] = case["model"]
            lines.append(json.dumps(req))
        python = os.path.join(ROOT, ".venv-sglang", "bin", "python")
        # From the checkout, as the other modes: rule examples name files such as
        # tools/oracle-model/llama-tiny by a relative path.
        proc = subprocess.run([python, os.path.join(ROOT, "tools", "sglang_oracle.py"), "--stage", "full",
                               "--gpu", gpu], input="\n".join(lines) + "\n", capture_output=True, text=True,
                              cwd=ROOT)
    verdicts = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
    if proc.returncode != 0 or len(verdicts) != len(cases):
        raise SystemExit(f"the oracle failed ({proc.returncode}): {proc.stderr[-2000:]}")
    with open(out, "w", encoding="utf-8") as fh:
        for case, v in zip(cases, verdicts):
            row = {"args": case["args"], "gpu": gpu, "verdict": v.get("verdict"), "error": v.get("error"),
                   "where": v.get("where"), "step": v.get("step"), "family": case["family"],
                   "source": case["source"], "model": case.get("model"), "injected": case.get("injected"),
                   "variations": case["variations"]}
            if case.get("config") is not None:
                row["config_name"] = case["config_name"]
                row["config"] = case["config"]
            fh.write(json.dumps(row) + "\n")


def judge(count: int, seed: int, device: str, out: str) -> None:
    import subprocess
    from sample_launches import sample
    todo = []
    for argv in sample(count, seed):
        if device == "cpu":
            argv = ["--device", "cpu"] + [a for a in argv]
        todo.append(shlex.join(argv))
    gpu = "none" if device == "cpu" else "sm90"
    lines = [json.dumps({"argv": shlex.split(a), "gpu": gpu}) for a in todo]
    python = os.path.join(ROOT, ".venv-sglang", "bin", "python")
    proc = subprocess.run([python, os.path.join(ROOT, "tools", "sglang_oracle.py"), "--stage", "full",
                           "--gpu", gpu], input="\n".join(lines) + "\n", capture_output=True, text=True)
    verdicts = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
    if proc.returncode != 0 or len(verdicts) != len(todo):
        raise SystemExit(f"the oracle failed ({proc.returncode}): {proc.stderr[-2000:]}")
    with open(out, "w", encoding="utf-8") as fh:
        for a, v in zip(todo, verdicts):
            fh.write(json.dumps({"args": a, "gpu": gpu, "verdict": v.get("verdict"), "error": v.get("error"),
                                 "where": v.get("where"), "step": v.get("step")}) + "\n")


ALT_MODELS = ("qwen3-moe-tiny", "deepseek-tiny")
ALT_GPUS = {"sm90": "sm100", "sm100": "sm90"}


def alt_path(data: str) -> str:
    """Where the alternative verdicts of a sample are kept: beside it."""
    root, _ = os.path.splitext(data)
    return root + ".alt.jsonl"


def alternatives_of(row) -> list[tuple[str, str]]:
    """(model, gpu) pairs to judge a row under besides the one it was judged with."""
    gpu = row.get("gpu") or "none"
    model = row.get("model") or "llama-tiny"
    out = [(m, gpu) for m in ALT_MODELS if m != model]
    if gpu in ALT_GPUS:
        out.append((model, ALT_GPUS[gpu]))
    return out


def judge_alternatives(rows, classes, data: str) -> dict:
    """Have SGLang judge each flag-decided rejection (not a parser error: the parser does not
    read the model or the GPU) under the alternatives; the verdicts are added to the file
    beside the sample, rows already there are kept."""
    import subprocess
    import tempfile
    path = alt_path(data)
    have = load_alternatives(data)
    todo = []
    for row in rows:
        if sglang_class(row, classes) != "flag" or row.get("step") == "parse":
            continue
        for model, gpu in alternatives_of(row):
            if (row["args"], model, gpu) not in have:
                todo.append((row, model, gpu))
    if not todo:
        return have
    by_gpu: dict[str, list] = {}
    for item in todo:
        by_gpu.setdefault(item[2], []).append(item)
    python = os.path.join(ROOT, ".venv-sglang", "bin", "python")
    with tempfile.TemporaryDirectory(prefix="servelint-alt-") as tmp, open(path, "a", encoding="utf-8") as out:
        for gpu, items in by_gpu.items():
            lines = []
            for row, model, _ in items:
                argv = shlex.split(row["args"])
                if row.get("config") is not None:
                    full = os.path.join(tmp, row["config_name"])
                    with open(full, "w", encoding="utf-8") as fh:
                        fh.write(row["config"])
                    argv = [full if w == row["config_name"] else w for w in argv]
                lines.append(json.dumps({"argv": argv, "gpu": gpu, "model": model}))
            proc = subprocess.run([python, os.path.join(ROOT, "tools", "sglang_oracle.py"), "--stage", "full",
                                   "--gpu", gpu], input="\n".join(lines) + "\n", capture_output=True,
                                  text=True, cwd=ROOT)
            verdicts = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
            if proc.returncode != 0 or len(verdicts) != len(items):
                raise SystemExit(f"the oracle failed ({proc.returncode}): {proc.stderr[-2000:]}")
            for (row, model, _), v in zip(items, verdicts):
                rec = {"args": row["args"], "model": model, "gpu": gpu, "verdict": v.get("verdict"),
                       "error": v.get("error"), "where": v.get("where")}
                out.write(json.dumps(rec) + "\n")
                have[(row["args"], model, gpu)] = rec
    return have


def load_alternatives(data: str) -> dict:
    path = alt_path(data)
    if not os.path.exists(path):
        return {}
    out = {}
    for line in open(path, encoding="utf-8"):
        if line.strip():
            rec = json.loads(line)
            out[(rec["args"], rec["model"], rec["gpu"])] = rec
    return out


def flags_alone(row, alts: dict) -> bool | None:
    """True: every alternative model and GPU refuses the launch too; False: one accepts it
    (the model or the GPU decides); None: not judged under every alternative."""
    if row.get("step") == "parse":
        return True
    seen = [alts.get((row["args"], m, g)) for m, g in alternatives_of(row)]
    if any(s is None for s in seen):
        return None
    return all(s["verdict"] == "rejected" for s in seen)


def alternatives_report(rows, classes, m, alts: dict, verbose: bool) -> None:
    """The first figure restricted to the rejections every alternative refuses, and the
    errors that fall on launches some alternative accepts."""
    strict = hit = unjudged = decided_elsewhere = err_elsewhere = 0
    misses = []
    for row, errors in zip(rows, m["errors"]):
        if sglang_class(row, classes) != "flag":
            continue
        alone = flags_alone(row, alts)
        if alone is None:
            unjudged += 1
        elif alone:
            strict += 1
            hit += bool(errors)
            if not errors:
                misses.append(row)
        else:
            decided_elsewhere += 1
            err_elsewhere += bool(errors)
    share = hit / strict if strict else 1.0
    print(f"rejections every alternative model and GPU also refuses (the flags alone decide): "
          f"servelint reports {hit}/{strict} ({share:.1%}); {decided_elsewhere} rejections are "
          f"accepted with another model or GPU, servelint gives an error on {err_elsewhere} of them"
          + (f"; {unjudged} not judged under every alternative (run --alternatives)" if unjudged else ""))
    if verbose:
        for row in misses:
            print(f"MISSED (flags alone)  {row.get('where')}  {(row.get('error') or '')[:90]}\n        {row['args']}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--data", default=os.path.join(ROOT, "tests", "data", "conformance", "sampled.jsonl"))
    ap.add_argument("--judge", type=int, default=0, help="sample and judge this many new launches")
    ap.add_argument("--seed", type=int, default=101)
    ap.add_argument("--device", choices=["sm90", "cpu"], default="sm90")
    ap.add_argument("--vary", type=int, default=0,
                    help="generate and judge this many variants of real-world launches")
    ap.add_argument("--alternatives", action="store_true",
                    help="judge the flag-decided rejections again with the other models and GPU")
    args = ap.parse_args()
    if args.vary:
        if args.data == ap.get_default("data"):
            args.data = os.path.join(ROOT, "tests", "data", "conformance", "holdout",
                                     f"vary-{args.seed}-{args.device}.jsonl")
        vary_judge(args.vary, args.seed, args.device, args.data)
    elif args.judge:
        if args.data == ap.get_default("data"):
            args.data = f"/tmp/servelint-holdout-{args.seed}-{args.device}.jsonl"
        judge(args.judge, args.seed, args.device, args.data)
    rows = [json.loads(l) for l in open(args.data, encoding="utf-8") if l.strip()]
    classes = site_classes()
    m = measure(rows, classes)
    share = m["reported"] / m["flag_rejections"] if m["flag_rejections"] else 1.0
    print(f"{len(rows)} sampled launches judged by SGLang: {m['accepted']} accepted, "
          f"{m['flag_rejections']} rejected for a flag-decided reason, {m['other_rejections']} "
          f"rejected for the model or hardware, {m['environment']} environment")
    print(f"flag-decided rejections servelint reports: {m['reported']}/{m['flag_rejections']} "
          f"({share:.1%}); errors on accepted launches: {len(m['false_errors'])}")
    if m["warned"]:
        both = (m["reported"] + m["warned"]) / m["flag_rejections"]
        print(f"  of the rest, {m['warned']} get a warning that names what SGLang's verdict depends on "
              f"(the GPU, the environment, the model): {m['reported'] + m['warned']}/"
              f"{m['flag_rejections']} ({both:.1%}) flagged either way")
    alts = judge_alternatives(rows, classes, args.data) if args.alternatives else load_alternatives(args.data)
    if alts:
        alternatives_report(rows, classes, m, alts, args.verbose)
    judged_on = sorted({r.get("gpu") for r in rows} - {None, "none"})
    if judged_on:
        g = measure(rows, classes, gpu_setting=True)
        gshare = g["reported"] / g["flag_rejections"] if g["flag_rejections"] else 1.0
        print(f"  with servelint's `gpu` setting at the GPU SGLang judged on ({', '.join(judged_on)}): "
              f"{g['reported']}/{g['flag_rejections']} ({gshare:.1%}); errors on accepted launches: "
              f"{len(g['false_errors'])}")
        k = measure(rows, classes, gpu_setting=True, judged_model=True)
        kshare = k["reported"] / k["flag_rejections"] if k["flag_rejections"] else 1.0
        print(f"  and with the model SGLang judged with (a local config.json): {k['reported']}/"
              f"{k['flag_rejections']} ({kshare:.1%}); errors on accepted launches: "
              f"{len(k['false_errors'])}")
        if args.verbose:
            for row, e in g["false_errors"] + k["false_errors"]:
                print(f"FALSE (gpu setting)  {e}\n        {row['args']}")
            for row in k["missed"]:
                print(f"MISSED (gpu setting and model)  {row.get('where')}  {(row.get('error') or '')[:90]}"
                      f"\n        {row['args']}")
    if m["rules_failed"]:
        print(f"WARNING: servelint's rules failed (internal error) on {m['rules_failed']} launches: "
              f"these figures do not measure the rules")
    fam = families(rows, m["errors"], classes) if any(r.get("family") for r in rows) else None
    if fam:
        eq = fam["equal"] / fam["variants"] if fam["variants"] else 1.0
        co = fam["consistent"] / fam["pairs"] if fam["pairs"] else 1.0
        print(f"variants: servelint's verdict (error or not) equals SGLang's on {fam['equal']}/"
              f"{fam['variants']} ({eq:.1%}); changes from the original's exactly when SGLang's does "
              f"on {fam['consistent']}/{fam['pairs']} ({co:.1%})")
    if args.verbose:
        def how(row):
            extra = []
            if row.get("injected"):
                extra.append(f"injected {row['injected']['rule']}")
            if row.get("family"):
                extra.append(f"family {row['family']} variations {','.join(row.get('variations') or []) or 'none'}")
            if row.get("config") is not None:
                extra.append("config " + row["config"].strip().replace("\n", "; "))
            return ("\n        " + " | ".join(extra)) if extra else ""

        for row in m["missed"]:
            print(f"MISSED  {row.get('where')}  {(row.get('error') or '')[:100]}\n        {row['args']}{how(row)}")
        for row, e in m["false_errors"]:
            print(f"FALSE   {e}\n        {row['args']}{how(row)}")
        if fam:
            for row, errs, orig, oerrs in fam["inconsistent"]:
                print(f"CHANGED SGLang {orig['verdict']} -> {row['verdict']} ({(row.get('error') or '')[:80]}); "
                      f"servelint {'error' if oerrs else 'no error'} -> {'error' if errs else 'no error'}"
                      f"\n        {orig['args']}\n     -> {row['args']}{how(row)}")
        from collections import Counter
        vary = any(r.get("family") for r in rows)
        if m["missed"]:
            print("misses by site" + (" and injected rule:" if vary else ":"))
            for (w, r), n in Counter((row.get("where"), (row.get("injected") or {}).get("rule"))
                                     for row in m["missed"]).most_common():
                print(f"  {n:3d}  {w}" + (f"  injected {r}" if vary else ""))
        if vary and m["missed"]:
            print("misses by variation:")
            for v, n in Counter(v for row in m["missed"] for v in (row.get("variations") or ["none"])).most_common():
                print(f"  {n:3d}  {v}")
            alone = [(row, config_file_errors(row)) for row in m["missed"] if row.get("config") is not None]
            if alone:
                print(f"misses on config variants: {len(alone)}; servelint linting the config file alone "
                      f"reports an error on {sum(1 for _, e in alone if e)} of them:")
                for row, errs in alone:
                    print(f"  {row['family']}: {', '.join(errs) or 'nothing'}")
        if m["false_errors"]:
            print("false errors by code:")
            for c, n in Counter(e.split()[0] for _, errs in m["false_errors"] for e in errs).most_common():
                print(f"  {n:3d}  {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
