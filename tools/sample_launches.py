"""Launches no test was written for, to measure servelint against SGLang itself.

    python3 tools/sample_launches.py --count 300 --seed 7 > /tmp/cases.jsonl

Makes launches the way people write them: a few of the options real deployments use
(parallelism, attention and KV-cache choices, speculative decoding, MoE, LoRA, caching,
disaggregation), with values from their choices or the numbers people pick, plus launches
built around the options of each bundled rule (its trigger with one option changed, its
flags combined with others). Deterministic for a seed. tools/conformance.py --sampled
judges them with SGLang and measures the agreement.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "server"))

COMMON = {
    "--tp-size": ["1", "2", "4", "8"], "--dp-size": ["1", "2", "4", "8"],
    "--pp-size": ["1", "2"], "--ep-size": ["1", "2", "8"], "--enable-dp-attention": None,
    "--attention-backend": ["flashinfer", "fa3", "triton", "torch_native", "fa4", "flashmla", "trtllm_mha"],
    "--prefill-attention-backend": ["fa3", "flashinfer", "triton"],
    "--decode-attention-backend": ["fa3", "flashinfer", "triton"],
    "--kv-cache-dtype": ["auto", "fp8_e4m3", "fp8_e5m2", "bf16"],
    "--chunked-prefill-size": ["-1", "2048", "4096", "8192"],
    "--mem-fraction-static": ["0.7", "0.8", "0.85", "0.9"],
    "--max-running-requests": ["16", "64", "256"], "--page-size": ["1", "16", "32", "64"],
    "--context-length": ["4096", "8192", "16k"], "--max-total-tokens": ["65536", "200000"],
    "--disable-radix-cache": None, "--enable-mixed-chunk": None, "--enable-torch-compile": None,
    "--trust-remote-code": None, "--enable-metrics": None, "--disable-cuda-graph": None,
    "--schedule-policy": ["lpm", "fcfs", "random", "dfs-weight"],
    "--speculative-algorithm": ["EAGLE", "EAGLE3", "NGRAM", "STANDALONE"],
    "--speculative-num-steps": ["1", "2", "3", "5"], "--speculative-eagle-topk": ["1", "2", "4", "8"],
    "--speculative-num-draft-tokens": ["2", "4", "8", "16"],
    "--enable-hierarchical-cache": None, "--hicache-ratio": ["1.5", "2"],
    "--hicache-write-policy": ["write_through", "write_back"],
    "--moe-a2a-backend": ["none", "deepep"], "--moe-runner-backend": ["auto", "triton", "deep_gemm"],
    "--enable-eplb": None, "--enable-two-batch-overlap": None,
    "--enable-lora": None, "--max-loras-per-batch": ["1", "4"], "--max-lora-rank": ["16", "64"],
    "--lora-target-modules": ["all", "q_proj"], "--is-embedding": None,
    "--enable-multimodal": None, "--quantization": ["fp8", "awq", "gptq"],
    "--dtype": ["auto", "bfloat16", "float16"], "--load-format": ["auto", "dummy"],
    "--stream-interval": ["1", "4"], "--cuda-graph-max-bs-decode": ["8", "64", "256"],
    "--nnodes": ["1", "2"], "--node-rank": ["0", "1"], "--enable-dp-lm-head": None,
    "--moe-dense-tp-size": ["1"], "--grammar-backend": ["xgrammar", "outlines", "none"],
    "--enable-prefill-cp": None, "--attn-cp-size": ["1", "2"], "--disable-overlap-schedule": None,
    "--enable-deterministic-inference": None, "--sampling-backend": ["flashinfer", "pytorch"],
}


def rule_options():
    from servelint.rules import bundled_packs
    out = []
    for pack in bundled_packs("0.5.23"):
        for rule in pack.rules:
            out.append(rule)
    return out


def words_for(name, values, rng):
    return [name] if values is None else [name, rng.choice(values)]


def sample(count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    names = sorted(COMMON)
    rules = rule_options()
    cases: list[list[str]] = []
    seen = set()
    while len(cases) < count:
        argv: list[str] = []
        mode = rng.random()
        if rules and mode < 0.45:
            rule = rng.choice(rules)
            examples = rule.examples.get("trigger", []) + rule.examples.get("ok", [])
            if examples:
                from servelint.rules import split_example
                argv = shlex.split(split_example(rng.choice(examples))[1])
                # Change the launch a little: drop one option, or add a common one.
                if argv and rng.random() < 0.5:
                    opts = [i for i, w in enumerate(argv) if w.startswith("--")]
                    i = rng.choice(opts)
                    j = i + 1
                    while j < len(argv) and not argv[j].startswith("--"):
                        j += 1
                    argv = argv[:i] + argv[j:]
                else:
                    n = rng.choice(names)
                    if n not in argv:
                        argv += words_for(n, COMMON[n], rng)
        else:
            for n in rng.sample(names, rng.randint(2, 6)):
                argv += words_for(n, COMMON[n], rng)
        key = tuple(argv)
        if key in seen:
            continue
        seen.add(key)
        cases.append(argv)
    return cases


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    for argv in sample(args.count, args.seed):
        print(json.dumps(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
