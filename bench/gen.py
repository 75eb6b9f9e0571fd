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


# --- the other formats at 20,000 lines (issue 16 point 1: every format within 2x of shell) ---


def _argv(rng: random.Random, n: int, mistake_every: int) -> list[str]:
    """The words of one launch after the module, as `launch()` draws them (every
    `mistake_every`-th launch with one mistake, rotating as in `script()`)."""
    words = [line.strip().rstrip("\\").strip() for line in launch(
        rng, n, n // mistake_every if mistake_every and n % mistake_every == 1 else None)]
    words = " ".join(w for w in words[:-1] if w).split()  # the last line is the redirection
    return words[3:]  # after `python3 -m sglang.launch_server`


def _spread(n_lines: int, blocks: list[list[str]], head: list[str], filler, tail: list[str]) -> list[str]:
    """`head`, then `blocks` spread evenly with filler blocks (`filler(k)` gives one) between
    them, then `tail`, padded to exactly `n_lines` lines with the last filler cut."""
    out = list(head)
    room = n_lines - len(head) - len(tail) - sum(len(b) for b in blocks)
    if room < 0:
        raise ValueError("too many launches for the line count")
    per_gap = room // (len(blocks) + 1)
    k = 0
    for block in blocks + [None]:
        target = len(out) + per_gap
        while True:
            piece = filler(k)
            if len(out) + len(piece) > target:
                break
            out += piece
            k += 1
        if block is not None:
            out += block
    return out


def markdown_doc(n_lines: int, n_launches: int, seed: int, mistake_every: int = 4) -> str:
    """A Markdown guide of exactly `n_lines` lines: `n_launches` ```bash blocks, each one
    launch continued over 7 lines as in `script()`, between headings, prose, lists and
    other code blocks (no `sglang` in them)."""
    rng = random.Random(seed)
    blocks = []
    for n in range(n_launches):
        mistake = n // mistake_every if mistake_every and n % mistake_every == 1 else None
        blocks.append([f"Start the {rng.choice(SERVICES)} server number {n}:", "", "```bash",
                       *launch(rng, n, mistake), "```", ""])

    def filler(k: int) -> list[str]:
        svc = rng.choice(SERVICES)
        if k % 3 == 0:
            return [f"## The {svc} stage, part {k}", "",
                    f"The {svc} workers read their inputs from the shared volume and write",
                    "their logs next to them. Keep one GPU free for the evaluation jobs.", ""]
        if k % 3 == 1:
            return [f"- check that `{svc}` answers on its health endpoint",
                    f"- keep {rng.randint(2, 9)} retries before giving up", ""]
        return ["```bash", f'curl -sf "http://localhost:{8000 + k % 1000}/health"', "```", ""]

    out = _spread(n_lines, blocks, ["# Serving guide (generated)", ""], filler, [])
    while len(out) < n_lines:
        out.append(f"Note {len(out)}: the servers log to /var/log.")
    assert len(out) == n_lines, (len(out), n_lines)
    return "\n".join(out) + "\n"


def compose_yaml(n_lines: int, n_launches: int, seed: int, mistake_every: int = 4) -> str:
    """A docker compose file of exactly `n_lines` lines: `n_launches` services whose
    `command` is an SGLang launch (a folded string, as compose files usually write it),
    each in its own image, with other services (a cache, a proxy, workers; no `sglang`)
    between them."""
    rng = random.Random(seed)
    blocks = []
    for n in range(n_launches):
        words = ["python3", "-m", "sglang.launch_server"] + _argv(rng, n, mistake_every)
        lines = []
        while words:  # about five words a line
            lines.append("      " + " ".join(words[:5]))
            words = words[5:]
        port = 30000 + n % 1000
        blocks.append([f"  {rng.choice(SERVICES)}-{n}:", "    image: lmsysorg/sglang:v0.5.2-cu126",
                       "    command: >-", *lines, "    ports:", f'      - "{port}:{port}"'])

    def filler(k: int) -> list[str]:
        svc = rng.choice(SERVICES)
        return [f"  {svc}-cache-{k}:", "    image: redis:7", "    restart: unless-stopped",
                "    environment:", f"      LOG_LEVEL: {rng.choice(['info', 'debug'])}"]

    out = _spread(n_lines, blocks, ["# generated compose file", "services:"], filler, [])
    while len(out) < n_lines:
        out.append(f"# note {len(out)}: the servers log to /var/log")
    assert len(out) == n_lines, (len(out), n_lines)
    return "\n".join(out) + "\n"


def launch_json(n_lines: int, n_launches: int, seed: int, mistake_every: int = 4) -> str:
    """A VS Code launch.json (JSON with comments) of exactly `n_lines` lines:
    `n_launches` debug configurations running `sglang.launch_server` with an `args`
    array, between other configurations (pytest, a script; no `sglang`)."""
    rng = random.Random(seed)
    blocks = []
    for n in range(n_launches):
        words = _argv(rng, n, mistake_every)
        lines = []
        while words:
            lines.append("        " + ", ".join(f'"{w}"' for w in words[:4]) + ",")
            words = words[4:]
        lines[-1] = lines[-1].rstrip(",")
        blocks.append(["    {", f"      // {rng.choice(SERVICES)} server {n}",
                       f'      "name": "server {n}", "type": "debugpy", "request": "launch",',
                       '      "module": "sglang.launch_server",', '      "args": [', *lines,
                       "      ]", "    },"])

    def filler(k: int) -> list[str]:
        return ["    {", f'      "name": "tests {k}", "type": "debugpy", "request": "launch",',
                f'      "module": "pytest", "args": ["-q", "tests/test_{rng.choice(SERVICES)}.py"]',
                "    },"]

    out = _spread(n_lines - 2, blocks, ["{", '  "version": "0.2.0",', '  "configurations": ['],
                  filler, [])
    while len(out) < n_lines - 2:
        out.append(f"    // note {len(out)}")
    out += ["  ]", "}"]
    assert len(out) == n_lines, (len(out), n_lines)
    return "\n".join(out) + "\n"


def dockerfile(n_lines: int, n_launches: int, seed: int, mistake_every: int = 4) -> str:
    """A multi-stage Dockerfile of exactly `n_lines` lines: `n_launches` stages, each from
    an SGLang image, whose `CMD` is a launch (shell form continued over lines, every
    other one exec form), with RUN/COPY/ENV instructions (no `sglang`) between them."""
    rng = random.Random(seed)
    blocks = []
    for n in range(n_launches):
        words = ["python3", "-m", "sglang.launch_server"] + _argv(rng, n, mistake_every)
        head = [f"FROM lmsysorg/sglang:v0.5.2-cu126 AS server-{n}", f"ENV SERVER_ID={n}"]
        if n % 2:
            lines = []
            while words:
                lines.append("    " + ", ".join(f'"{w}"' for w in words[:4]) + ", \\")
                words = words[4:]
            lines[0] = 'CMD [' + lines[0].strip()
            lines[-1] = lines[-1][:-len(", \\")] + "]"
            blocks.append(head + lines)
        else:
            lines = []
            while words:
                lines.append("    " + " ".join(words[:5]) + " \\")
                words = words[5:]
            lines[0] = "CMD " + lines[0].strip()
            lines[-1] = lines[-1][:-2]
            blocks.append(head + lines)

    def filler(k: int) -> list[str]:
        svc = rng.choice(SERVICES)
        if k % 2:
            return [f"RUN mkdir -p /srv/{svc}/{k} && \\",
                    f"    echo 'prepared {svc} {k}' > /srv/{svc}/{k}/README"]
        return [f"COPY config/{svc}-{k}.json /srv/config/", f"ENV {svc.upper()}_RETRIES={rng.randint(1, 9)}"]

    out = _spread(n_lines, blocks, ["# syntax=docker/dockerfile:1", "FROM python:3.12-slim AS base"],
                  filler, [])
    while len(out) < n_lines:
        out.append(f"# note {len(out)}")
    assert len(out) == n_lines, (len(out), n_lines)
    return "\n".join(out) + "\n"
