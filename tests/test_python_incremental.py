"""Python launchers read incrementally (python_launch._extract_chunked): after any edit, a
lint with a LintCache gives exactly what a fresh lint gives (findings with their spans,
messages and fixes, launches, notices), whatever the edit does to the module: typing in
a launch, adding or removing lines and whole statements, breaking the syntax and
repairing it, assigning a name a second time, changing an import. And an edit inside one
launch reads that launch's statement again, not the module."""

from __future__ import annotations

import ast
import random
import sys
import warnings
from pathlib import Path

import pytest

from servelint import engine
from servelint.extract import python_launch
from servelint.lintcache import LintCache

ROOT = Path(__file__).resolve().parent.parent
PATH = "/tmp/servelint-python-incremental/launch.py"


def _gen():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gen
    finally:
        sys.path.pop(0)
    return gen


def signature(result) -> tuple:
    """What a lint result tells the editor and the command line."""
    findings = tuple(
        (f.code, int(f.severity), f.message, f.span.start, f.span.end, f.launch_index,
         tuple((r.span.start, r.span.end, r.message, r.path) for r in f.related),
         tuple((x.title, x.preferred, x.safe,
                tuple((e.span.start, e.span.end, e.new_text) for e in x.edits))
               for x in f.fixes))
        for f in result.findings)
    launches = tuple((l.kind, l.span.start, l.span.end, l.anchor, l.entry.span.start,
                      l.entry.text, tuple(sorted(l.env.items())), l.host.name,
                      tuple((t.span.start, t.span.end, t.text, t.splat, t.prefix, t.raw)
                            for t in l.tokens))
                     for l in result.launches)
    return findings, tuple(result.notices), launches


# --- modules ------------------------------------------------------------------------------

HEADER = ['"""Launchers for the benchmark cluster."""', "import os", "import subprocess",
          "import sys", ""]
IMPORTS = [
    ["from sglang.utils import launch_server_cmd", ""],
    ["import sglang as sgl", ""],
    ["from sglang.test.test_utils import popen_launch_server", ""],
    ["try:", "    from ci_patch import launch_server_cmd", "except ImportError:",
     "    from sglang.utils import launch_server_cmd", ""],
]
MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B", "m"]
BAD = [("--tp_size", "2"), ("--attention-backend", "flash_infer"), ("--port", "3OOO1"),
       ("--enable-metricz", None), ("--mem-fraction-static", "0.8.5"), ("--tp", "two")]


def _args(rng: random.Random) -> list[tuple[str, str | None]]:
    args = [("--model-path", rng.choice(MODELS)), ("--tp-size", str(rng.choice([1, 2, 4])))]
    if rng.random() < 0.5:
        args.append(rng.choice(BAD))
    if rng.random() < 0.3:
        args.append(("--port", str(rng.randrange(30000, 31000))))
    return args


def _words(args) -> list[str]:
    return [w for a, v in args for w in ([a] if v is None else [a, v])]


def block(rng: random.Random, i: int) -> list[str]:
    """One top-level statement (or a few), of a kind chosen at random."""
    args = _args(rng)
    quoted = ", ".join(repr(w) for w in _words(args))
    kind = rng.randrange(17)
    if kind == 0:
        lines = [f"def launch_{i}():", "    cmd = [",
                 "        'python3', '-m', 'sglang.launch_server',"]
        lines += [f"        {w!r}," for w in _words(args)]
        lines += ["    ]"]
        if rng.random() < 0.4:
            lines += ["    cmd += ['--enable-metricz']"]
        if rng.random() < 0.4:
            lines += ["    if os.environ.get('X'):", "        cmd.append('--dtype=bf16')"]
        return lines + ["    return subprocess.Popen(cmd)", ""]
    if kind == 1:
        return [f"def helper_{i}(x, y={i}):", f'    """Return a number from x and {i}."""',
                "    total = 0", "    for k in range(y):", "        total += k * x",
                "    return total", ""]
    if kind == 2:
        return [f"BASE_{i} = ['python3', '-m', 'sglang.launch_server']", "",
                f"def run_{i}():", f"    subprocess.run(BASE_{i} + [{quoted}])", ""]
    if kind == 3:
        return [f"os.system('python3 -m sglang.launch_server {' '.join(_words(args))} &')", ""]
    if kind == 4:
        return [f"LAUNCH_{i} = \"\"\"python3 -m sglang.launch_server --model-path m \\",
                f"  {' '.join(_words(args[1:]))}", "  --port 30000", '"""',
                f"subprocess.Popen(LAUNCH_{i}, shell=True)", ""]
    if kind == 5:
        return [f"server_{i}, port_{i} = launch_server_cmd(",
                f"    \"python3 -m sglang.launch_server {' '.join(_words(args))}\"", ")", ""]
    if kind == 6:
        return [f"engine_{i} = sgl.Engine(model_path={args[0][1]!r}, tp_size=2,"
                f" {rng.choice(['tp_sise=2', 'mem_fraction_static=0.8', 'enable_metricz=True'])})", ""]
    if kind == 7:
        return [f"def test_{i}():",
                f"    popen_launch_server({args[0][1]!r}, 'http://127.0.0.1:{30000 + i}', 60,",
                f"                        other_args=[{quoted}])", ""]
    if kind == 8:
        return [f"class Server{i}:", "    def start(self):",
                f"        return subprocess.Popen(['python3', '-m', 'sglang.launch_server', {quoted}])", ""]
    if kind == 9:
        return ["@staticmethod", f"def decorated_{i}():",
                f"    subprocess.call(['python3', '-m', 'sglang.launch_server', {quoted}])", ""]
    if kind == 10:
        return ["if sys.argv[1:]:", f"    subprocess.run(['python3', '-m', 'sglang.launch_server', {quoted}])",
                "else:", "    subprocess.run(['python3', '-m', 'sglang.launch_server', '--tp', '2'])", ""]
    if kind == 11:
        return [f"cmd_{i} = ['python3', '-m', 'sglang.launch_server', {quoted}]",
                f"cmd_{i}.append('--enable-metricz')", f"subprocess.run(cmd_{i})", ""]
    if kind == 12:
        return ["# a comment with a triple quote: \"\"\"", ""]
    if kind == 13:
        return [f"MODEL_{i} = 'm'", "",
                f"def use_{i}():",
                f"    subprocess.run(['python3', '-m', 'sglang.launch_server', '--model-path', MODEL_{i}, {quoted}])", ""]
    if kind == 14:
        return [f"def shell_{i}():", "    return subprocess.check_output(",
                "        'python3 -m sglang.launch_server '", f"        {' '.join(_words(args))!r},",
                "        shell=True)", ""]
    if kind == 16:  # a broken continuation: its finding names lines
        return ['os.system(r"""python3 -m sglang.launch_server --model-path m \\',
                f"  {' '.join(_words(args[1:]))}", '  --port 30000""")', ""]
    return [f"x_{i} = {{'a': [1, 2,", "       3], 'b': '''text", "with lines'''}", ""]


def module(seed: int, blocks: int, kinds: set[int] | None = None) -> str:
    rng = random.Random(seed)
    lines = list(HEADER)
    for imp in rng.sample(IMPORTS, rng.randrange(len(IMPORTS) + 1)):
        lines += imp
    made = 0
    i = 0
    while made < blocks:
        i += 1
        b = block(rng, i)
        if kinds is not None and not any(_kind_of(b) == k for k in kinds):
            continue
        lines += b
        made += 1
    return "\n".join(lines) + "\n"


def _kind_of(lines: list[str]) -> int:
    first = lines[0]
    return 0 if first.startswith("def launch_") else 1 if first.startswith("def helper_") else -1


# --- edits --------------------------------------------------------------------------------

LINES = ["", "# note", "x = 1", "cmd = []", "BASE_1 = ['python3', '-m', 'sglang.launch_server']",
         "import sglang as sgl", "from sglang.utils import launch_server_cmd as run",
         "def f(", "'''", '"""', "(", "@decorator", "else:", "    pass",
         "    cmd.append('--tp')", "cmd += ['--dp', '2']", "MODEL_1 = 'other'",
         "subprocess.run(cmd)", "subprocess.run(BASE_1 + ['--tp', '2'])",
         "class C:", "    'python3 -m sglang.launch_server --tp 2'", "\\",
         "Engine = None", "from sglang import Engine",
         "subprocess.run(['python3', '-m', 'sglang.launch_server', '--tp_size', '2'])"]
CHARS = ["x", " ", "-", "_", "0", "'", '"', "(", ")", "[", "]", "\n", "#", "\\", ",", ":"]
BENIGN_CHARS = ["x", "-", "_", "0"]
BENIGN_LINES = ["", "# note", "x = 1", "cmd = []", "MODEL_1 = 'other'", "subprocess.run(cmd)",
                "import sglang as sgl",
                "subprocess.run(['python3', '-m', 'sglang.launch_server', '--tp_size', '2'])"]


def _statements(lines: list[str]) -> list[int]:
    return [k for k, line in enumerate(lines) if line[:1] not in ("", " ", "#", ")", "]", "}")]


def edit(rng: random.Random, text: str, benign: bool = False) -> str:
    """One random edit: characters, lines or whole statements. `benign`: characters and
    lines that leave the syntax whole (mostly)."""
    kind = rng.randrange(8)
    if benign and kind <= 1:  # type a character inside an option's string
        hits = [k + 2 for k in range(len(text)) if text.startswith("'-", k)]
        p = rng.choice(hits) if hits else 0
        return text[:p] + rng.choice(BENIGN_CHARS) + text[p:]
    if kind <= 1:  # type a character, mostly inside a launch
        hits = [k for k in range(len(text)) if text.startswith("sglang", k)]
        p = rng.choice(hits) + rng.randrange(-40, 80) if hits and kind == 0 else rng.randrange(len(text) + 1)
        p = max(0, min(p, len(text)))
        return text[:p] + rng.choice(BENIGN_CHARS if benign else CHARS) + text[p:]
    if benign and kind == 2:
        kind = 3
    if kind == 2 and text:  # delete a few characters
        p = rng.randrange(len(text))
        return text[:p] + text[p + rng.randrange(1, 4):]
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    if benign:  # whole statements only
        starts = _statements(lines) or [0]
        i = rng.choice(starts)
        kind = 3 if kind in (3, 4, 5) else kind
    if kind == 3:
        lines.insert(i, rng.choice(BENIGN_LINES if benign else LINES))
    elif kind == 4 and len(lines) > 2:
        del lines[i]
    elif kind == 5:
        lines.insert(i, lines[i])
    else:  # delete or duplicate a whole top-level statement
        starts = _statements(lines)
        if not starts:
            return text
        k = rng.randrange(len(starts))
        a = starts[k]
        b = starts[k + 1] if k + 1 < len(starts) else len(lines)
        if kind == 6:
            del lines[a:b]
        else:
            lines[b:b] = lines[a:b]
    return "\n".join(lines)


def break_and_repair(rng: random.Random, text: str) -> tuple[str, str]:
    """An edit that breaks the syntax (an unclosed bracket or string), and the text that
    repairs it again."""
    p = rng.randrange(len(text) + 1)
    return text[:p] + rng.choice(["(", "[", '"""', "'''", "'", '"', "def", ":", "\\"]) + text[p:], text


def parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def check_edits(text: str, steps: int, seed: int, benign: bool = False) -> None:
    """Random edits; after each, the cached lint equals a fresh one. Returns how often the
    chunked reading answered (and how often it left the module to the whole reading)."""
    rng = random.Random(seed)
    cache = LintCache()
    got = engine.lint(text, PATH, cache=cache)
    assert signature(got) == signature(engine.lint(text, PATH))
    repair = None
    for step in range(steps):
        if repair is not None:  # the edit before broke the syntax: repair it
            text, repair = repair, None
        elif not benign and rng.random() < 0.15:
            text, repair = break_and_repair(rng, text)
        else:
            before = text
            text = edit(rng, text, benign)
            if not parses(text):
                repair = before
        got = engine.lint(text, PATH, cache=cache)
        want = engine.lint(text, PATH)
        assert signature(got) == signature(want), f"edit {step} (seed {seed})"
        assert [len(p.uses) for p in got.parsed] == [len(p.uses) for p in want.parsed]


@pytest.fixture
def counted(monkeypatch):
    """How often the chunked reading answered, and how often it gave the module back."""
    counts = {"chunked": 0, "whole": 0, "read": 0}
    real = python_launch._extract_chunked
    real_read = python_launch._read

    def counting(*a, **k):
        out = real(*a, **k)
        counts["chunked" if out is not None else "whole"] += 1
        return out

    def counting_read(*a, **k):
        counts["read"] += 1
        return real_read(*a, **k)
    monkeypatch.setattr(python_launch, "_extract_chunked", counting)
    monkeypatch.setattr(python_launch, "_read", counting_read)
    return counts


@pytest.mark.parametrize("seed", range(4))
def test_random_edits_match_a_fresh_lint(seed: int, counted):
    check_edits(module(seed, 30), steps=40, seed=seed)
    # Most lints are answered chunk by chunk (a broken syntax is read whole).
    assert counted["chunked"] > counted["whole"]


@pytest.mark.parametrize("seed", range(3))
def test_random_edits_pruned_modules(seed: int, monkeypatch, counted):
    # Big modules are pruned before parsing (functions that name nothing of SGLang's are
    # blanked); make small ones take that path too.
    monkeypatch.setattr(python_launch, "PRUNE_LINES", 20)
    check_edits(module(100 + seed, 40), steps=40, seed=seed)
    assert counted["chunked"] > 0


@pytest.mark.parametrize("seed", range(2))
def test_random_edits_local_launchers(seed: int, counted):
    # Launcher and helper functions only: every chunk reads on its own, and most edits are
    # answered without reading the whole module.
    check_edits(module(200 + seed, 30, kinds={0, 1}), steps=40, seed=seed, benign=True)
    assert counted["chunked"] > counted["whole"]


def test_generated_benchmark_module(counted):
    # The benchmark's module, above the pruning size: edits in launches, between them,
    # and a name assigned a second time.
    text = _gen().python_launches(2400, 60, seed=12)
    rng = random.Random(5)
    cache = LintCache()
    engine.lint(text, PATH, cache=cache)
    for step in range(12):
        if step == 6:
            text = text.replace("import subprocess\n", "import subprocess\ncmd = ['x']\n", 1)
        else:
            text = edit(rng, text)
        assert signature(engine.lint(text, PATH, cache=cache)) == \
            signature(engine.lint(text, PATH)), f"edit {step}"
    assert counted["chunked"] > 0


def test_one_launch_edit_reads_one_statement(counted):
    # Typing into one launch reads that launch's statement again, whatever the module's
    # size: the other statements' launches are re-used.
    for launches in (20, 80):
        text = _gen().python_launches(40 * launches, launches, seed=3)
        cache = LintCache()
        first = engine.lint(text, PATH, cache=cache)
        assert len(first.launches) == launches
        counted["read"] = 0
        at = text.index("'--model-path', '", first.launches[launches // 2].span.start) + 20
        edited = text[:at] + "x" + text[at:]
        got = engine.lint(edited, PATH, cache=cache)
        assert signature(got) == signature(engine.lint(edited, PATH))
        assert counted["read"] == 1
        assert cache.ran == launches + 1  # and the engine checked that launch only
