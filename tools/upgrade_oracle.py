"""Prove servelint's upgrade fixes against SGLang 0.5.23 itself.

    .venv/bin/python tools/upgrade_oracle.py [--sglang-python .venv-sglang/bin/python] \
        [--out tests/data/upgrade/verdicts.jsonl]

For every option string that successors.json knows and SGLang 0.5.23 no longer accepts,
and every choice value with a recorded replacement, it writes a launch that uses it
("before"), lints it as SGLang 0.5.23 with servelint, applies the preferred fix of the
finding on that word ("after"), and asks SGLang 0.5.23 (tools/sglang_oracle.py, full stage:
parse, resolve, check, on a pretended 8x sm90) for its verdict on both. One JSON line per
case goes to --out: argv before and after, both verdicts (and SGLang's error), the fix's
title and safety, the SGLang version. tests/test_upgrade_knowledge.py replays the lint and
the fix without SGLang and compares with these lines.

The launches name a tiny local model (tools/oracle-model): the MoE one where the option
is about experts, else the Llama. A value-taking option is given a value its successor
accepts in 0.5.23 (the first choice, or a number, or a path); CONTEXT below lists what
some launches carry around the option (`--enable-ep-moe` after `--tp-size 2`, since its
successor copies that value).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from servelint.catalog import load_catalog  # noqa: E402
from servelint.edits import apply_edits  # noqa: E402
from servelint.engine import lint  # noqa: E402
from servelint.settings import Settings  # noqa: E402
from servelint.successors import plan, retired, table  # noqa: E402

VERSION = "0.5.23"
OUT = ROOT / "tests" / "data" / "upgrade" / "verdicts.jsonl"
ENTRY = "python3 -m sglang.launch_server"

# Launches the issue names, first (with what they need around them).
NAMED = [
    ["--enable-deepep-moe"],
    ["--tp-size", "2", "--enable-ep-moe"],
    ["--cuda-graph-max-bs", "8"],
    ["--file-storage-pth", "/tmp/servelint-upgrade"],
    ["--impl", "transformers"],
    ["--max-micro-batch-size", "4"],
    ["--disable-flashinfer"],
    ["--tool-call-parser", "qwen3"],
]
# What a launch needs around the option for SGLang 0.5.23 to accept the successor: what the
# successor copies (`--tp-size`), or what 0.5.23 requires beside it (an elastic EP backend
# for `--elastic-ep-join-mode`; a `--cp-strategy` for `--enable-prefill-cp`; an FP4
# quantization for the CuteDSL MoE runner, which the old flag's help already named).
CONTEXT = {
    "--enable-ep-moe": ["--tp-size", "2"],
    "--elastic-ep-rejoin": ["--elastic-ep-backend", "mooncake"],
    "--enable-flashinfer-cutedsl-moe": ["--quantization", "modelopt_fp4"],
    "--enable-dsa-prefill-context-parallel": ["--cp-strategy", "zigzag"],
    "--enable-nsa-prefill-context-parallel": ["--cp-strategy", "zigzag"],
    "--enable-prefill-context-parallel": ["--cp-strategy", "zigzag"],
}


def sample(name: str, catalog) -> list[str]:
    """A value for a retired option that its successor takes in the launch's release."""
    info = retired(name, catalog)
    if info is None or info.kind in ("flag", "bool_optional"):
        return []
    succ = info.successor or {}
    if succ.get("values"):
        return [next(iter(succ["values"]))]
    target = catalog.lookup(succ.get("rename", "")) if "rename" in succ else None
    if target is not None and target.choices:
        return [str(target.choices[0])]
    typ = (target.type if target is not None else None) or ""
    if typ in ("int", "human_readable_int"):
        value = "8"
    elif typ == "float":
        value = "0.5"
    elif "endpoint" in name:
        value = "localhost:4317"
    elif "path" in name or "pth" in name:
        value = "/tmp/servelint-upgrade"
    else:
        value = "x"
    return [value] if info.kind != "list" else [value, value]


def cases(catalog) -> list[list[str]]:
    out = [list(c) for c in NAMED]
    seen = {c[-1] if c[-1].startswith("--") else c[0] for c in out}
    seen |= {c[0] for c in out}
    for name in table()["options"]:
        if name in seen:
            continue
        info = retired(name, catalog)
        if info is None:
            continue
        the_plan = plan(info, catalog, sample(name, catalog), lambda n: None)
        if the_plan.why_no_fix is not None and not CONTEXT.get(name):
            continue
        out.append(CONTEXT.get(name, []) + [name] + sample(name, catalog))
    for opt_name, values in table()["choices"].items():
        for value, rec in values.items():
            if rec.get("replacement") and catalog.lookup(opt_name) is not None:
                case = [opt_name, value]
                if case not in out:
                    out.append(case)
    return out


def model_for(argv: list[str]) -> str:
    text = " ".join(argv)
    return "qwen3-moe-tiny" if ("moe" in text or "ep-" in text or "expert" in text) else "llama-tiny"


def fixed(argv: list[str]) -> tuple[list[str] | None, dict | None]:
    """The argv after the preferred fix of the finding on the retired word (or value)."""
    script = f"{ENTRY} {shlex.join(argv)}\n"
    result = lint(script, path="upgrade.sh", settings=Settings(sglang_version=VERSION))
    for f in result.findings:
        if f.code not in ("SL009", "SL007"):
            continue
        pref = next((x for x in f.fixes if x.preferred), None)
        if pref is None:
            continue
        new = apply_edits(script, pref.edits)
        words = shlex.split(new)
        return words[3:], {"code": f.code, "fix": pref.title, "safe": pref.safe,
                           "message": f.message}
    return None, None


def judge(python: str, rows: list[dict]) -> list[dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
        name = fh.name
    with open(name) as inp:
        done = subprocess.run([python, str(ROOT / "tools" / "sglang_oracle.py"), "--stage", "full",
                               "--gpu", "sm90"], stdin=inp, capture_output=True, text=True,
                              check=True)
    sys.stderr.write(done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sglang-python", default=str(ROOT / ".venv-sglang" / "bin" / "python"))
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    catalog = load_catalog(VERSION)
    plans = []
    for before in cases(catalog):
        after, how = fixed(before)
        if after is None:
            print(f"no fix for {shlex.join(before)}", file=sys.stderr)
            continue
        plans.append((before, after, how))
    rows = []
    for before, after, _ in plans:
        model = model_for(before + after)
        rows.append({"argv": before, "model": model})
        rows.append({"argv": after, "model": model})
    verdicts = judge(args.sglang_python, rows)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    with out.open("w", encoding="utf-8") as fh:
        for k, (before, after, how) in enumerate(plans):
            vb, va = verdicts[2 * k], verdicts[2 * k + 1]
            assert vb["argv"] == before and va["argv"] == after
            rec = {"sglang": VERSION, "stage": "full", "gpu": "sm90", "model": vb["model"],
                   "argv_before": before, "argv_after": after,
                   "verdict_before": vb["verdict"], "error_before": vb.get("error"),
                   "verdict_after": va["verdict"], "error_after": va.get("error"), **how,
                   "tool": "tools/upgrade_oracle.py"}
            key = f"{vb['verdict']}->{va['verdict']}"
            counts[key] = counts.get(key, 0) + 1
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"{len(plans)} cases: {counts}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
