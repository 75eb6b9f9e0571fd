"""servelint's agreement with SGLang on the sampled launches (tests/data/conformance/
sampled.jsonl, recorded by `make conformance`):

- of the launches SGLang rejects for a reason the flags decide (its parser, or a site
  the coverage inventory classes as `flags`/`derived`), the share servelint reports an
  error on;
- the launches SGLang accepts on which servelint reports an error (must be zero).

    .venv/bin/python tools/agreement.py [--verbose]
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--data", default=os.path.join(ROOT, "tests", "data", "conformance", "sampled.jsonl"))
    args = ap.parse_args()
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
