"""Check servelint's knowledge against SGLang itself and record SGLang's verdicts.

    make conformance        # = tools/make-sglang-env.sh, then this script

Collects the cases (every bundled rule's trigger and ok examples, every catalog check's
example and its alternative, every fully literal launch of the golden scripts), asks
SGLang 0.5.23's own validator about each one (tools/sglang_oracle.py, full stage:
parse, resolve_once, check_server_args, on a pretended 8x H100 sm90 node with a tiny
local Llama config), and writes the verdicts to tests/data/conformance/verdicts.jsonl.
tests/test_conformance.py then checks, without SGLang, that servelint agrees with every
verdict. Run it after changing a rule or the catalog, and commit the verdicts file.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "server"))

OUT = os.path.join(ROOT, "tests", "data", "conformance", "verdicts.jsonl")
SAMPLED = os.path.join(ROOT, "tests", "data", "conformance", "sampled.jsonl")
GPU = "sm90"
ORACLE_GPUS = ("sm90", "sm100")  # the GPUs tools/sglang_oracle.py can pretend


def cases() -> list[dict]:
    from servelint.checks import load_checks
    from servelint.engine import lint
    from servelint.rules import bundled_packs, split_example
    from servelint.rules.derive import example_fix_args

    out = []
    for pack in bundled_packs("0.5.23"):
        for rule in pack.rules:
            for kind in ("trigger", "ok"):
                for i, example in enumerate(rule.examples.get(kind, [])):
                    gpu, args = split_example(example)
                    # gpu_named: the example says which GPU (servelint is then told too);
                    # otherwise SGLang judges it on an sm90 and servelint knows no GPU.
                    out.append({"source": f"rule:{rule.code}:{kind}:{i}", "args": args,
                                "gpu": gpu or GPU, "gpu_named": gpu is not None})
            pair = example_fix_args(rule.record)
            if pair is not None:
                for kind, line in zip(("before", "after"), pair):
                    gpu, args = split_example(line)  # a [gpu=..] tag: judged on that GPU
                    if args.startswith("[") or gpu not in (None, *ORACLE_GPUS):
                        continue  # settled by an environment, a model or a GPU the validator is not given
                    out.append({"source": f"fix:{rule.code}:{kind}", "args": args, "gpu": gpu or GPU,
                                "gpu_named": gpu is not None})
    for code, check in sorted(load_checks().items()):
        if check.lang != "bash" or "<" in check.example or "--config" in check.example:
            continue  # placeholders, non-launch examples, and files that exist only in the docs
        for kind, text in (("example", check.example), ("instead", check.instead)):
            for n, launch in enumerate(lint(text + "\n", path="example.sh").launches):
                if all(t.text is not None for t in launch.tokens):
                    out.append({"source": f"check:{code}:{kind}:{n}",
                                "args": shlex.join(t.text for t in launch.tokens)})
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "shell", "*.sh"))):
        text = open(path, encoding="utf-8").read()
        for n, launch in enumerate(lint(text, path=path).launches):
            if launch.kind != "launch_server" or any(t.text is None for t in launch.tokens):
                continue
            out.append({"source": f"golden:{os.path.basename(path)}:{n}",
                        "args": shlex.join(t.text for t in launch.tokens)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv-sglang", "bin", "python"),
                    help="the SGLang venv's python (tools/make-sglang-env.sh makes it)")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--sampled", type=int, default=400,
                    help="also judge this many launches from tools/sample_launches.py (0: none)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--missing", action="store_true",
                    help="judge only cases the verdicts file does not have as they are now "
                         "(changed and removed cases' rows are dropped)")
    args = ap.parse_args()
    if not os.path.exists(args.python):
        print(f"no SGLang venv at {args.python}: run tools/make-sglang-env.sh first", file=sys.stderr)
        return 2
    todo = cases()
    kept: list[str] = []
    if args.missing:
        # a case is judged when a row has its source and its arguments as they are now;
        # rows of cases that changed or went away are dropped
        current = {(c["source"], c["args"]) for c in todo}
        have = set()
        if os.path.exists(args.out):
            for line in open(args.out, encoding="utf-8"):
                if line.strip():
                    row = json.loads(line)
                    if (row["source"], row["args"]) in current:
                        have.add((row["source"], row["args"]))
                        kept.append(line if line.endswith("\n") else line + "\n")
        todo = [c for c in todo if (c["source"], c["args"]) not in have]
        args.sampled = 0
        if not todo:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.writelines(kept)  # without the rows of cases that changed or went away
            print(f"every case is judged already; {len(kept)} rows kept")
            return 0
    if args.sampled:
        from sample_launches import sample
        for i, argv in enumerate(sample(args.sampled, args.seed)):
            todo.append({"source": f"sampled:{args.seed}:{i}", "args": shlex.join(argv)})
    lines = [json.dumps({"argv": shlex.split(c["args"]), "gpu": c.get("gpu", GPU)}) for c in todo]
    proc = subprocess.run([args.python, os.path.join(ROOT, "tools", "sglang_oracle.py"),
                           "--stage", "full", "--gpu", GPU],
                          input="\n".join(lines) + "\n", capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr[-4000:], file=sys.stderr)
        return proc.returncode or 1
    verdicts = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
    if len(verdicts) != len(todo):
        print(f"oracle answered {len(verdicts)} of {len(todo)} cases", file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    sampled_path = os.devnull if args.missing else SAMPLED
    with open(args.out, "w", encoding="utf-8") as fh, open(sampled_path, "w", encoding="utf-8") as sfh:
        fh.writelines(kept)
        for case, v in zip(todo, verdicts):
            row = {"source": case["source"], "args": case["args"], "gpu": case.get("gpu", GPU),
                   "gpu_named": case.get("gpu_named", False), "verdict": v.get("verdict"),
                   "error": v.get("error"), "where": v.get("where"), "step": v.get("step")}
            (sfh if case["source"].startswith("sampled:") else fh).write(
                json.dumps(row, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.get("verdict")] = counts.get(v.get("verdict"), 0) + 1
    print(f"{len(verdicts)} cases judged by SGLang: "
          + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + f"; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
