"""Deterministic generators of realistic shell scripts for the benchmarks.

Every generator takes a seed and returns the same text for the same arguments, so the
numbers of two runs (or two machines) measure the same input.
"""

from __future__ import annotations

import random

MODELS = [
    "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct",
    "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-72B-Instruct", "deepseek-ai/DeepSeek-V3",
    "mistralai/Mistral-7B-Instruct-v0.3", "google/gemma-2-9b-it", "/models/llama-3-8b",
]
BACKENDS = ["flashinfer", "triton", "fa3", "torch_native"]
# Mistakes a person really makes; each one is a finding servelint reports.
MISTAKES = [
    ("--tp-size", "--tp_size"),
    ("--attention-backend {backend}", "--attention-backend flash_infer"),
    ("--port {port}", "--port 3OOO1"),
    ("--enable-metrics", "--enable_metrics"),
]
SERVICES = ["prefill", "decode", "router", "chat", "embed", "batch", "eval", "canary"]


def launch(rng: random.Random, n: int, mistake: int | None = None) -> list[str]:
    """One SGLang launch continued over 7 lines; `mistake` picks one of MISTAKES."""
    backend = rng.choice(BACKENDS)
    mem = rng.choice(["0.8", "0.85", "0.88", "0.9"])
    port = 30000 + n % 1000
    lines = [
        f"python3 -m sglang.launch_server --model-path {rng.choice(MODELS)} \\",
        f"  --tp-size {rng.choice([1, 2, 4, 8])} --mem-fraction-static {mem} \\",
        f"  --attention-backend {backend} \\",
        f"  --host 0.0.0.0 --port {port} \\",
    ]
    extra = rng.sample([
        "--enable-metrics", "--trust-remote-code", "--context-length 8192",
        "--chunked-prefill-size 4096", "--max-running-requests 128", "--log-level info",
        "--schedule-policy lpm", "--dtype bfloat16",
    ], 3)
    lines.append("  " + " ".join(extra[:2]) + " \\")
    lines.append("  " + extra[2] + " \\")
    lines.append(f'  > "$LOG_DIR/server_{n}.log" 2>&1 &')
    if mistake is not None:
        good, bad = MISTAKES[mistake % len(MISTAKES)]
        good = good.format(backend=backend, port=port)
        bad = bad.format(backend=backend, port=port)
        target = next((i for i, l in enumerate(lines) if good in l), None)
        if target is None:  # the flag of this mistake was not drawn: add the bad one
            lines.insert(1, f"  {bad} \\")
        else:
            lines[target] = lines[target].replace(good, bad, 1)
    return lines


def filler_block(rng: random.Random, k: int) -> list[str]:
    """Ordinary shell code that is not an SGLang launch (and never says 'sglang')."""
    svc = rng.choice(SERVICES)
    kind = rng.randrange(7)
    if kind == 0:
        return [f"# --- {svc} stage {k}: prepare the environment ---",
                f"# keep the {svc} workers on their own GPUs"]
    if kind == 1:
        return [f'{svc.upper()}_DIR="${{WORK_DIR}}/{svc}_{k}"',
                f"{svc.upper()}_RETRIES={rng.randint(1, 9)}",
                f'export CUDA_VISIBLE_DEVICES="{",".join(str(x) for x in range(rng.choice([1, 2, 4])))}"']
    if kind == 2:
        return [f"{svc}_{k}_ready() {{",
                '  local url="$1"',
                '  for i in $(seq 1 "$RETRIES"); do',
                '    if curl -sf "$url/health" > /dev/null; then',
                "      return 0",
                "    fi",
                "    sleep 2",
                "  done",
                "  return 1",
                "}"]
    if kind == 3:
        return [f'if [ -z "${{{svc.upper()}_TOKEN:-}}" ]; then',
                f'  echo "warning: {svc} token not set, using anonymous access" >&2',
                "else",
                f'  echo "using token for {svc}"',
                "fi"]
    if kind == 4:
        return [f'echo "[$(date +%T)] starting {svc} step {k}"',
                f'mkdir -p "$LOG_DIR/{svc}"']
    if kind == 5:
        return [f"for f in \"$DATA_DIR\"/{svc}_*.jsonl; do",
                '  wc -l "$f" | awk \'{print $1}\' >> "$LOG_DIR/counts.txt"',
                "done"]
    return [f"case \"${{MODE:-run}}\" in",
            f"  dry) echo \"dry run of {svc}\" ;;",
            "  run) : ;;",
            '  *) echo "unknown mode $MODE" >&2; exit 2 ;;',
            "esac"]


HEADER = [
    "#!/usr/bin/env bash",
    "# Generated benchmark script: launches and ordinary shell code.",
    "set -euo pipefail",
    "",
    'WORK_DIR="${WORK_DIR:-/srv/work}"',
    'LOG_DIR="${LOG_DIR:-$WORK_DIR/logs}"',
    'DATA_DIR="$WORK_DIR/data"',
    "RETRIES=30",
    'MODE="${1:-run}"',
    "",
    "log() {",
    '  echo "[$(date +%T)] $*" >&2',
    "}",
    "",
]


def _fill_to(rng: random.Random, lines: list[str], target: int, k: int) -> int:
    """Append whole filler blocks (never a cut one: the script stays valid shell) and
    then one-line comments until `lines` has exactly `target` lines."""
    while True:
        block = filler_block(rng, k) + [""]
        if len(lines) + len(block) > target:
            break
        lines.extend(block)
        k += 1
    while len(lines) < target:
        lines.append(f"# note {k}: {rng.choice(SERVICES)} output goes to $LOG_DIR")
        k += 1
    return k


LAUNCH_LINES = 8  # a `log` line and the 7 lines of `launch()`


def script(n_lines: int, n_launches: int, seed: int, mistake_every: int = 4,
           launches_at_end: bool = False) -> str:
    """A script of exactly `n_lines` lines with `n_launches` launches spread evenly
    (or all at the end), every `mistake_every`-th launch with a mistake."""
    rng = random.Random(seed)
    lines = list(HEADER)
    k = 0
    tail = 1  # the final `wait`
    filler = n_lines - len(HEADER) - n_launches * LAUNCH_LINES - tail
    if filler < 0:
        raise ValueError("too many launches for the line count")
    if launches_at_end:
        k = _fill_to(rng, lines, len(lines) + filler, k)
    gap = 0 if launches_at_end or n_launches == 0 else filler // n_launches
    for n in range(n_launches):
        k = _fill_to(rng, lines, len(lines) + gap, k)
        lines.append(f'log "launch {n}"')
        mistake = n // mistake_every if mistake_every and n % mistake_every == 1 else None
        lines.extend(launch(rng, n, mistake))
    k = _fill_to(rng, lines, n_lines - tail, k)
    lines.append("wait")
    assert len(lines) == n_lines, (len(lines), n_lines)
    return "\n".join(lines) + "\n"


def big_file(n_bytes: int, seed: int) -> str:
    """At least `n_bytes` characters of ordinary shell code with one launch in it."""
    rng = random.Random(seed)
    lines = list(HEADER) + launch(rng, 0, 0) + [""]
    size = sum(len(l) + 1 for l in lines)
    k = 0
    while size < n_bytes:
        block = filler_block(rng, k) + [""]
        lines.extend(block)
        size += sum(len(l) + 1 for l in block)
        k += 1
    return "\n".join(lines) + "\n"


def python_module(n_lines: int, seed: int) -> str:
    """A Python module of about n_lines: helper functions and classes (with docstrings and
    decorators), module constants, and one launcher function that starts SGLang with a
    mistake in it, at the end."""
    rng = random.Random(seed)
    out = ["import functools", "import subprocess", "", "MODEL = '/models/llama'", ""]
    i = 0
    while len(out) < n_lines - 12:
        i += 1
        if rng.random() < 0.2:
            out += [f"class Helper{i}:", f'    """Helper number {i}."""', "",
                    f"    def run(self, x):", f"        return [x * {i} for _ in range(3)]", ""]
        else:
            out += ["@functools.lru_cache(maxsize=None)" if rng.random() < 0.3 else "# helper",
                    f"def helper_{i}(x, y={i}):", f'    """Return a number from x and {i}."""',
                    "    total = 0", "    for k in range(y):", "        total += k * x",
                    "    return {'total': total, 'name': 'h%d' % y}", ""]
    out += ["def launch(port):", "    cmd = [", "        'python', '-m', 'sglang.launch_server',",
            "        '--model-path', MODEL, '--port', str(port),",
            "        '--tp_size', '2',", "    ]", "    return subprocess.Popen(cmd)", ""]
    return "\n".join(out) + "\n"


def k8s_yaml(n_lines: int, n_launches: int, seed: int, mistake_every: int = 4) -> str:
    """Kubernetes manifests of exactly `n_lines` lines: `n_launches` Deployments whose
    container command is an SGLang launch (a block list, one argument a line), with
    Services and ConfigMaps (no launch, never saying 'sglang') spread between them;
    every `mistake_every`-th launch has one mistake, as in `script()`."""
    rng = random.Random(seed)
    docs: list[list[str]] = []
    for n in range(n_launches):
        svc = rng.choice(SERVICES)
        name = f"{svc}-{n}"
        args = [("--model-path", rng.choice(MODELS)), ("--tp-size", str(rng.choice([1, 2, 4, 8]))),
                ("--mem-fraction-static", rng.choice(["0.8", "0.85", "0.88", "0.9"])),
                ("--attention-backend", rng.choice(BACKENDS)), ("--host", "0.0.0.0"),
                ("--port", str(30000 + n % 1000))]
        flags = rng.sample(["--enable-metrics", "--trust-remote-code"], 1)
        if mistake_every and n % mistake_every == 1:
            k = (n // mistake_every) % 4
            if k == 0:
                args[1] = ("--tp_size", args[1][1])
            elif k == 1:
                args[3] = ("--attention-backend", "flash_infer")
            elif k == 2:
                args[5] = ("--port", "3OOO1")
            else:
                flags = ["--enable_metrics"]
        body = [
            "apiVersion: apps/v1", "kind: Deployment", "metadata:", f"  name: {name}",
            "spec:", "  replicas: 1", "  selector:", f"    matchLabels: {{app: {name}}}",
            "  template:", "    metadata:", f"      labels: {{app: {name}}}", "    spec:",
            "      containers:", "        - name: server",
            "          image: lmsysorg/sglang:v0.5.2-cu126", "          command:",
            "            - python3", "            - -m", "            - sglang.launch_server",
        ]
        for flag, value in args:
            body += [f"            - {flag}", f'            - "{value}"']
        body += [f"            - {f}" for f in flags]
        body += ["          ports:", f"            - containerPort: {30000 + n % 1000}"]
        docs.append(body)
    launch_lines = sum(len(d) + 1 for d in docs)  # each document starts with ---
    filler = n_lines - launch_lines
    if filler < 0:
        raise ValueError("too many launches for the line count")

    def filler_doc(k: int) -> list[str]:
        svc = rng.choice(SERVICES)
        if k % 2:
            return ["apiVersion: v1", "kind: Service", "metadata:", f"  name: {svc}-svc-{k}",
                    "spec:", f"  selector: {{app: {svc}-{k}}}", "  ports:",
                    f"    - port: {8000 + k % 1000}", f"      targetPort: {30000 + k % 1000}"]
        return ["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: {svc}-config-{k}",
                "data:", f'  LOG_LEVEL: "{rng.choice(["info", "debug", "warning"])}"',
                f'  RETRIES: "{rng.randint(1, 9)}"', f"  # settings of the {svc} stage {k}"]

    lines: list[str] = []
    per_gap = filler // (n_launches + 1) if n_launches else filler
    k = 0
    for d in docs + [None]:
        target = len(lines) + per_gap
        while True:
            block = filler_doc(k)
            if len(lines) + len(block) + 1 > target:
                break
            lines += ["---"] + block
            k += 1
        if d is not None:
            lines += ["---"] + d
    while len(lines) < n_lines:  # pad the last document with comment lines
        lines.append(f"# note {k}: the servers log to /var/log")
        k += 1
    assert len(lines) == n_lines, (len(lines), n_lines)
    return "\n".join(lines) + "\n"


def python_launches(n_lines: int, n_launches: int, seed: int, mistake_every: int = 4) -> str:
    """A Python module of exactly `n_lines` lines: `n_launches` launcher functions (an
    argv list passed to subprocess.Popen) spread evenly between helper functions; every
    `mistake_every`-th launch has one mistake, as in `script()`."""
    rng = random.Random(seed)
    out = ['"""Generated benchmark module: launchers and ordinary helpers."""', "import subprocess", ""]

    def launcher(n: int) -> list[str]:
        args = [("--model-path", rng.choice(MODELS)), ("--tp-size", str(rng.choice([1, 2, 4, 8]))),
                ("--attention-backend", rng.choice(BACKENDS)), ("--port", str(30000 + n % 1000))]
        flag = "--enable-metrics"
        if mistake_every and n % mistake_every == 1:
            k = (n // mistake_every) % 4
            if k == 0:
                args[1] = ("--tp_size", args[1][1])
            elif k == 1:
                args[2] = ("--attention-backend", "flash_infer")
            elif k == 2:
                args[3] = ("--port", "3OOO1")
            else:
                flag = "--enable_metrics"
        body = [f"def launch_{n}():", "    cmd = [", "        'python3', '-m', 'sglang.launch_server',"]
        body += [f"        '{a}', '{v}'," for a, v in args]
        body += [f"        '{flag}',", "    ]", "    return subprocess.Popen(cmd)", ""]
        return body

    def helper(i: int) -> list[str]:
        return [f"def helper_{i}(x, y={i}):", f'    """Return a number from x and {i}."""',
                "    total = 0", "    for k in range(y):", "        total += k * x",
                "    return {'total': total, 'name': 'h%d' % y}", ""]

    launchers = [launcher(n) for n in range(n_launches)]
    filler = n_lines - len(out) - sum(len(b) for b in launchers)
    if filler < 0:
        raise ValueError("too many launches for the line count")
    per_gap = filler // (n_launches + 1) if n_launches else filler
    i = 0
    for block in launchers + [None]:
        target = len(out) + per_gap
        while len(out) + 7 <= target:
            out += helper(i)
            i += 1
        if block is not None:
            out += block
    while len(out) < n_lines:
        out.append(f"# note {i}")
        i += 1
    assert len(out) == n_lines, (len(out), n_lines)
    return "\n".join(out) + "\n"
