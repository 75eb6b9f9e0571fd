"""servelint's agreement with SGLang on the sampled launches (tests/data/conformance/
sampled.jsonl, recorded by `make conformance`):

- of the launches SGLang rejects for a reason the flags decide (its parser, or a site
  the coverage inventory classes as `flags`/`derived`), the share servelint reports an
  error on;
- the launches SGLang accepts on which servelint reports an error (must be zero).

    .venv/bin/python tools/agreement.py [--verbose]

A held-out measurement: `--judge N --seed S` samples N new launches (tools/sample_launches.py,
a seed the recorded sample did not use), asks SGLang about them (tools/sglang_oracle.py in
.venv-sglang) and measures servelint on those, so rules written while looking at the recorded
sample are not graded on it. `--device cpu` judges them the way the CPU-only check does
(`--device cpu` written into every launch, no GPU pretended) instead of on a pretended sm90.
The judged rows go to `--data` (default: a file under /tmp). The samples judged so far are
kept in tests/data/conformance/holdout/<seed>-<device>.jsonl; re-measure one with
`--data tests/data/conformance/holdout/505-sm90.jsonl`.
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
    from sglang_coverage import load
    sites, rows = load()
    return {f"{f}:{line}": got[0]["class"] for (f, line), got in rows.items()}


def servelint_errors(args: str) -> list[str]:
    from servelint.engine import lint
    argv = shlex.split(args)
    if not {"--model-path", "--model"} & set(argv):
        argv = ["--model-path", "/models/tiny"] + argv
    text = "python3 -m sglang.launch_server " + shlex.join(argv) + "\n"
    return [f"{f.code} {f.message}" for f in lint(text, path="sampled.sh").findings if f.severity == 1]


def measure(rows, classes):
    out = {"accepted": 0, "false_errors": [], "flag_rejections": 0, "reported": 0, "missed": [],
           "other_rejections": 0, "environment": 0}
    for row in rows:
        errors = servelint_errors(row["args"])
        if row["verdict"] == "accepted":
            out["accepted"] += 1
            if errors:
                out["false_errors"].append((row["args"], errors))
        elif row["verdict"] == "rejected":
            cls = "flags" if row.get("step") == "parse" else classes.get(row.get("where") or "", "?")
            if cls in ("flags", "derived"):
                out["flag_rejections"] += 1
                if errors:
                    out["reported"] += 1
                else:
                    out["missed"].append((row["args"], row["error"], row.get("where")))
            else:
                out["other_rejections"] += 1
        else:
            out["environment"] += 1
    return out


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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--data", default=os.path.join(ROOT, "tests", "data", "conformance", "sampled.jsonl"))
    ap.add_argument("--judge", type=int, default=0, help="sample and judge this many new launches")
    ap.add_argument("--seed", type=int, default=101)
    ap.add_argument("--device", choices=["sm90", "cpu"], default="sm90")
    args = ap.parse_args()
    if args.judge:
        if args.data == ap.get_default("data"):
            args.data = f"/tmp/servelint-holdout-{args.seed}-{args.device}.jsonl"
        judge(args.judge, args.seed, args.device, args.data)
    rows = [json.loads(l) for l in open(args.data, encoding="utf-8") if l.strip()]
    m = measure(rows, site_classes())
    share = m["reported"] / m["flag_rejections"] if m["flag_rejections"] else 1.0
    print(f"{len(rows)} sampled launches judged by SGLang: {m['accepted']} accepted, "
          f"{m['flag_rejections']} rejected for a flag-decided reason, {m['other_rejections']} "
          f"rejected for the model or hardware, {m['environment']} environment")
    print(f"flag-decided rejections servelint reports: {m['reported']}/{m['flag_rejections']} "
          f"({share:.1%}); errors on accepted launches: {len(m['false_errors'])}")
    if args.verbose:
        for a, e, w in m["missed"]:
            print(f"MISSED  {w}  {e[:100]}\n        {a}")
        for a, e in m["false_errors"]:
            print(f"FALSE   {e}\n        {a}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
