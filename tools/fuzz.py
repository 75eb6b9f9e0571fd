"""The attack suite's fuzzer (servelint issue 17, points 1 and 7): documents in every
format servelint reads, mutated at random, linted, and every fix servelint offers applied.

    .venv/bin/python tools/fuzz.py --seed 17 --count 300      # a fixed set of documents
    .venv/bin/python tools/fuzz.py --seconds 600             # as many as fit (make fuzz)

Documents start from the test corpora (tests/data, tests/golden, examples/, and the SGLang
launches of tests/data/corpus written into each host format), then get one to four random
mutations: characters inserted or deleted (quotes, backslashes, `#`, `$`, brackets),
flags misspelt or added, suppression comments, line ends changed (\\r\\n, a lone \\r, form
feed, NEL, U+2028), a byte order mark, text that was not UTF-8 (decoded with
replacement characters or as lone surrogates, as the command line and the editor would
see it).

Each document is checked for:

- `crash`: linting raises (the lint itself, a re-lint of a fixed text, fix-all);
- `internal-error`: the lint caught a failure of its own (an extractor or a check raised;
  the file gets a notice instead of its findings);
- `hang`: linting and fixing one document takes longer than `--limit` seconds;
- `bad-edit`: an edit out of the text, edits of one fix that overlap (one would be
  dropped), or an edit that starts or ends between the \\r and \\n of a line end;
- `fix-breaks-syntax` (a safe fix) and `action-breaks-syntax` (an unsafe one, offered in
  the editor only): a file that parsed in the format's own syntax does not after the fix
  (servelint.fixcheck.breaks_syntax). Such a fix is not offered (the editor's code actions
  and fix-all check every fix), but its making is a bug all the same;
- `fix-all-breaks-syntax`: the same for `engine.fix_all_text` (`--fix`, the editor's
  fix-all);
- `window-disagrees`: fixcheck's fast check (the edited statement alone) and its check of
  the whole text disagree.

Counted apart, and no failure: `caught-on-broken-input`, a fix that adds a parse problem
to a file that did not parse before (a half-typed line): breaks_syntax keeps it from being
offered, which is what it is for.

It prints the counts (documents, fixes tried, failures by kind) and a minimal
reproduction of the first failures of each kind, and exits 1 when anything failed.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "server") not in sys.path:
    sys.path.insert(0, str(ROOT / "server"))

from servelint import fixcheck  # noqa: E402
from servelint.edits import apply_edits  # noqa: E402
from servelint.engine import detect_format, fix_all_text, lint  # noqa: E402
from servelint.settings import Settings  # noqa: E402

# The documents' names live in a folder that does not exist: nothing near them (a project
# configuration, a pyproject.toml, a --config file) is ever read from this repository.
FAKE_ROOT = "/nonexistent-servelint-fuzz"
SEED_DIRS = ("tests/data", "tests/golden", "examples")
# SGLang's own launches (the copy of ../shared/corpus in the repository: a clone has no ../shared).
SHARED_CORPUS = ROOT / "tests" / "data" / "corpus" / "sglang-own-launches.json"
SKIP_SUFFIXES = (".jsonl", ".expected", ".fixed", ".txt", ".lock")
MAX_SEED_CHARS = 64_000
KINDS = ("crash", "internal-error", "hang", "bad-edit", "fix-breaks-syntax", "action-breaks-syntax",
         "fix-all-breaks-syntax", "window-disagrees")
CAUGHT = "caught-on-broken-input"  # counted, not a failure


@dataclass
class Seed:
    name: str  # a relative path: its suffix and folders say the format
    text: str


@dataclass
class Failure:
    kind: str
    name: str
    text: str
    detail: str
    fix: str = ""  # the title of the fix, when one is to blame


@dataclass
class Counts:
    documents: int = 0
    fixes: int = 0
    fix_alls: int = 0
    by_format: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=lambda: {k: 0 for k in KINDS})


# --- documents -------------------------------------------------------------------------------


def corpus_seeds() -> list[Seed]:
    """Every file of the test corpora servelint reads as a format (small ones)."""
    seeds = []
    for top in SEED_DIRS:
        for folder, dirs, files in os.walk(ROOT / top):
            dirs.sort()
            for f in sorted(files):
                path = Path(folder) / f
                if f.endswith(SKIP_SUFFIXES) or path.stat().st_size > MAX_SEED_CHARS:
                    continue
                try:
                    text = path.read_text(encoding="utf-8")
                except (UnicodeDecodeError, OSError):
                    continue
                name = str(path.relative_to(ROOT))
                if detect_format(f"{FAKE_ROOT}/{name}", None, text) is not None:
                    seeds.append(Seed(name, text))
    return seeds


def _quote(word: str) -> str:
    return word if word and all(c.isalnum() or c in "-_./:=,@%+" for c in word) else \
        "'" + word.replace("'", "'\\''") + "'"


def launch_documents(entry: str, argv: list[str]) -> list[Seed]:
    """One launch written into each host format servelint reads."""
    words = entry.split() + argv
    line = " ".join(_quote(w) for w in words)
    cont = " \\\n    ".join([" ".join(entry.split())] + [
        " ".join(_quote(w) for w in argv[i:i + 2]) for i in range(0, len(argv), 2)])
    js = json.dumps(words)
    py_args = ", ".join(json.dumps(w) for w in words)
    yaml_args = "".join(f"        - {json.dumps(w)}\n" for w in words)
    cell: dict[str, object] = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": ["import os\n", f"!{line}\n"]}
    notebook = json.dumps({"cells": [cell], "metadata": {"kernelspec": {"language": "python"}},
                           "nbformat": 4, "nbformat_minor": 5}, indent=1)
    launch_json = json.dumps({"version": "0.2.0", "configurations": [{
        "name": "serve", "type": "debugpy", "request": "launch",
        "module": words[2] if words[1:2] == ["-m"] and len(words) > 2 else "sglang.launch_server",
        "args": argv}]}, indent=2)
    config = "".join(f"{a[2:]}: {json.dumps(argv[i + 1]) if i + 1 < len(argv) and not argv[i + 1].startswith('--') else 'true'}\n"
                     for i, a in enumerate(argv) if a.startswith("--"))
    return [
        Seed("gen/run.sh", f"#!/bin/bash\nset -e\n{cont}\n"),
        Seed("gen/one.sh", f"#!/bin/sh\nexport X=1\n{line} &\nwait\n"),
        Seed("gen/compose.yaml", f"services:\n  sglang:\n    image: lmsysorg/sglang:latest\n"
                                 f"    command: {line}\n"),
        Seed("gen/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: s\nspec:\n  containers:\n"
                             f"    - name: s\n      image: lmsysorg/sglang:latest\n      command:\n{yaml_args}"),
        Seed("gen/Dockerfile", f"FROM lmsysorg/sglang:latest\nCMD {js}\n"),
        Seed("gen/shell.Dockerfile", f"FROM lmsysorg/sglang:latest\nRUN pip list\nCMD {cont}\n"),
        Seed("gen/serve.py", f"import subprocess\n\nsubprocess.run([{py_args}], check=True)\n"),
        Seed("gen/README.md", f"# Serve\n\nRun:\n\n```bash\n{cont}\n```\n\nThen query it.\n"),
        Seed("gen/nb.ipynb", notebook + "\n"),
        Seed("gen/.vscode/launch.json", launch_json + "\n"),
        Seed("gen/config.yaml", "# SGLang server config\n" + config) if config else Seed(
            "gen/empty.sh", f"{line}\n"),
    ]


def shared_seeds() -> list[Seed]:
    """The SGLang launches recorded in tests/data/corpus, in every format."""
    if not SHARED_CORPUS.is_file():
        return []
    seeds = []
    for rec in json.loads(SHARED_CORPUS.read_text(encoding="utf-8")):
        entry, argv = rec.get("entrypoint") or "python3 -m sglang.launch_server", rec.get("argv")
        if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
            seeds.extend(launch_documents(entry, argv))
    return seeds


def all_seeds() -> list[Seed]:
    return corpus_seeds() + shared_seeds()


# --- mutations -------------------------------------------------------------------------------

PIECES = ["'", '"', "`", "\\", "\\\n", "#", "$", "${", "}", "{{", "}}", "[", "]", "{", ":",
          ",", "-", "=", " ", "\t", "\n", "\r", "\r\n", "\f", "\x85", "\u2028", "\ufeff",
          "\ufffd", "\udcff", "\x00", "é", "😀", "--", " --tp_size 2", " --tp-size", " --tp 2",
          " --model-path m", " --disable-cuda-graph", " --enable-ep-moe", " --mem-fraction 0.9",
          " --trust-remote-code true", " \\\n  --port 30000", "\"\"\"", "<<EOF\n", "EOF\n",
          "```", "\n```\n", "<!-- servelint: disable=SL008 -->", "# servelint: disable-file=SL001\n",
          "# servelint: disable=SL094\n", "  # servelint: disable=SL040\n", "key:\n  true\n",
          "- ", "? ", "&a ", "*a ", "!!str ", "|\n", ">-\n", "%%bash\n", "!", "%"]
FLAG_SWAPS = [("--tp-size", "--tp_size"), ("--tp-size", "--tp"), ("--model-path", "--model_path"),
              ("--port", "--prot"), ("--mem-fraction-static", "--mem-fraction"),
              ("--host", "--host="), ("--dp-size", "--dp_size"), (" --", " ---"),
              ("--trust-remote-code", "--trust-remote-code true"),
              ("--enable-torch-compile", "--enable_torch_compile")]


def _near_flag(rng: random.Random, text: str) -> int:
    """A position, often next to an option (where fixes are)."""
    if text and rng.random() < 0.6:
        spots = [i for i in range(len(text) - 1) if text.startswith("--", i)]
        if spots:
            i = rng.choice(spots)
            return max(0, min(len(text), i + rng.randint(-3, 12)))
    return rng.randint(0, len(text))


def mutate(rng: random.Random, text: str) -> tuple[str, list[str]]:
    """One to four mutations of `text`, and their names."""
    done = []
    for _ in range(rng.randint(1, 4)):
        what = rng.random()
        if what < 0.35:
            i = _near_flag(rng, text)
            piece = rng.choice(PIECES)
            text = text[:i] + piece + text[i:]
            done.append(f"insert {piece!r}@{i}")
        elif what < 0.5 and text:
            i = _near_flag(rng, text)
            n = rng.randint(1, 8)
            done.append(f"delete {text[i:i + n]!r}@{i}")
            text = text[:i] + text[i + n:]
        elif what < 0.7:
            old, new = rng.choice(FLAG_SWAPS)
            if old in text:
                text = text.replace(old, new, rng.randint(1, 2))
                done.append(f"swap {old}->{new}")
        elif what < 0.8:
            end = rng.choice(["\r\n", "\r", "\f\n", "\x85", "\u2028", "\n\n"])
            if rng.random() < 0.5:
                text = text.replace("\n", end)
            else:
                lines = text.split("\n")
                k = rng.randrange(len(lines))
                lines[k] += end[:-1] if end.endswith("\n") and len(end) > 1 else ""
                text = "\n".join(lines[:k + 1]) + end + "\n".join(lines[k + 1:]) if k + 1 < len(lines) \
                    else "\n".join(lines)
            done.append(f"line ends {end!r}")
        elif what < 0.85:
            text = "\ufeff" + text
            done.append("BOM")
        elif what < 0.92 and text:
            # bytes that are not UTF-8, as the reader decodes them
            i = rng.randint(0, len(text))
            bad = bytes([rng.randint(0x80, 0xff) for _ in range(rng.randint(1, 3))])
            how = rng.choice(["replace", "surrogateescape"])
            text = text[:i] + bad.decode("utf-8", how) + text[i:]
            done.append(f"not utf-8 ({how})@{i}")
        else:
            lines = text.split("\n")
            k = rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines.insert(k, lines[k])
                done.append(f"duplicate line {k + 1}")
            else:
                del lines[k]
                done.append(f"drop line {k + 1}")
            text = "\n".join(lines)
    return text, done


# --- checking one document -------------------------------------------------------------------


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def _edit_problem(text: str, edits) -> str | None:
    last_end = -1
    for e in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        s, t = e.span.start, e.span.end
        if not 0 <= s <= t <= len(text):
            return f"edit {s}..{t} outside the text (length {len(text)})"
        if s < last_end:
            return f"edits overlap at {s} (one would be dropped)"
        for at in {s, t}:
            if 0 < at < len(text) and text[at - 1] == "\r" and text[at] == "\n":
                return f"an edit boundary at {at} splits a \\r\\n line end"
        last_end = t
    return None


def check_document(name: str, text: str, settings: Settings, counts: Counts | None = None,
                   relint: bool = True, cross_check: bool = True) -> list[Failure]:
    """Lint `text` as the file `name`, try every fix and the fix-all; the failures."""
    path = f"{FAKE_ROOT}/{name}"
    out: list[Failure] = []

    def fail(kind: str, detail: str, fix: str = "") -> None:
        out.append(Failure(kind, name, text, detail, fix))

    try:
        result = lint(text, path, None, settings, suppression_actions=True)
    except Hang:
        raise
    except Exception:
        fail("crash", "lint: " + traceback.format_exc(limit=-3))
        return out
    fmt = result.format
    for said in result.notices:
        if "internal error" in said:
            fail("internal-error", said)
    if counts is not None:
        counts.documents += 1
        counts.by_format[fmt or "none"] = counts.by_format.get(fmt or "none", 0) + 1
    seen: set[tuple] = set()
    for f in result.findings:
        for fx in f.fixes:
            key = tuple((e.span.start, e.span.end, e.new_text) for e in fx.edits)
            if key in seen:
                continue
            seen.add(key)
            if counts is not None:
                counts.fixes += 1
            label = f"{f.code}: {fx.title}"
            bad = _edit_problem(text, fx.edits)
            if bad is not None:
                fail("bad-edit", bad, label)
                continue
            after = apply_edits(text, fx.edits)
            why = fixcheck.breaks_syntax(fmt, text, after)
            if why is not None:
                old = fixcheck.parse_result(fmt or "", text)
                if old is not None and old.errors:
                    fail(CAUGHT, why, label)
                else:
                    fail("fix-breaks-syntax" if fx.safe else "action-breaks-syntax", why, label)
            if cross_check and fmt in fixcheck.PARSERS:
                old = fixcheck.parse_result(fmt, text)
                assert old is not None
                whole = fixcheck.compare(fmt, old, text, after)
                if (whole is None) != (why is None):
                    fail("window-disagrees", f"window: {why}; whole text: {whole}", label)
            if relint and fx.safe:
                try:
                    lint(after, path, None, settings)
                except Hang:
                    raise
                except Exception:
                    fail("crash", "re-lint after the fix: " + traceback.format_exc(limit=-3), label)
    if any(x.safe for f in result.findings for x in f.fixes):
        if counts is not None:
            counts.fix_alls += 1
        try:
            fixed, _ = fix_all_text(text, path, None, settings)
        except Hang:
            raise
        except Exception:
            fail("crash", "fix-all: " + traceback.format_exc(limit=-3))
        else:
            why = fixcheck.breaks_syntax(fmt, text, fixed)
            if why is not None:
                fail("fix-all-breaks-syntax", why)
    return out


def timed_check(name: str, text: str, settings: Settings, limit: float,
                counts: Counts | None = None, **kw) -> list[Failure]:
    """check_document with a time limit (SIGALRM: the main thread of a POSIX process)."""
    use_alarm = hasattr(signal, "setitimer") and limit > 0
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return check_document(name, text, settings, counts, **kw)
    except Hang:
        return [Failure("hang", name, text, f"more than {limit:g} s")]
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


# --- reducing a failure ----------------------------------------------------------------------


def minimize(failure: Failure, settings: Settings, limit: float, budget: float = 20.0) -> str:
    """A smaller text that fails the same way (lines, then characters, removed while the
    failure of the same kind, and fix, stays)."""
    deadline = time.monotonic() + budget

    def still(text: str) -> bool:
        got = timed_check(failure.name, text, settings, limit, relint=False)
        return any(f.kind == failure.kind and f.fix.split(":")[0] == failure.fix.split(":")[0]
                   for f in got)

    text = failure.text
    for unit in ("lines", "chars"):
        parts: list[str] = text.splitlines(keepends=True) if unit == "lines" else list(text)
        chunk = max(1, len(parts) // 2)
        while chunk >= 1 and time.monotonic() < deadline:
            i = 0
            changed = False
            while i < len(parts) and time.monotonic() < deadline:
                trial = parts[:i] + parts[i + chunk:]
                if trial and still("".join(trial)):
                    parts = trial
                    changed = True
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        text = "".join(parts)
        if unit == "lines" and len(text) > 2000:
            break
    return text


# --- the run ---------------------------------------------------------------------------------


def run(seed: int, count: int | None, seconds: float | None, limit: float,
        out: Callable[[str], None] = print, show: int = 2, reduce: bool = True,
        relint: bool = True, corpus: bool = True) -> tuple[Counts, list[Failure]]:
    """Check `count` documents (or as many as `seconds` allow): with `corpus`, every corpus
    document as it is first, then mutated ones. The counts and the failures (the fixes
    caught on broken input are counted and shown, and are no failure)."""
    # what servelint logs when it catches its own failure is counted (internal-error), not
    # printed
    logging.getLogger("servelint").setLevel(logging.CRITICAL)
    rng = random.Random(seed)
    settings = Settings(project_rules=False)
    seeds = all_seeds()
    counts = Counts()
    found: list[Failure] = []
    start = time.monotonic()
    n = 0
    while True:
        if count is not None and n >= count:
            break
        if seconds is not None and time.monotonic() - start >= seconds:
            break
        as_is = corpus and n < len(seeds)  # the corpus once as it is, then mutations
        base = seeds[n] if as_is else rng.choice(seeds)
        text = base.text if as_is else mutate(rng, base.text)[0]
        n += 1
        found.extend(timed_check(base.name, text, settings, limit, counts, relint=relint))
    counts.failures = {k: sum(1 for f in found if f.kind == k) for k in KINDS + (CAUGHT,)}
    out(f"seed {seed}: {counts.documents} documents ({len(seeds)} corpus files and launches"
        f"{' as they are, then mutations' if corpus else ', mutated'}) in "
        f"{time.monotonic() - start:.1f} s; {counts.fixes} fixes tried, {counts.fix_alls} fix-alls")
    out("  by format: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.by_format.items())))
    out("  failures: " + ", ".join(f"{k} {v}" for k, v in counts.failures.items() if k != CAUGHT))
    out(f"  not failures: {CAUGHT} {counts.failures[CAUGHT]} (fixes the check keeps from being "
        "offered on files that did not parse)")
    shown: dict[str, int] = {}
    for f in found:
        if shown.get(f.kind, 0) >= show:
            continue
        shown[f.kind] = shown.get(f.kind, 0) + 1
        small = minimize(f, settings, limit) if reduce and f.kind != "hang" else f.text
        out(f"\n[{f.kind}] {f.name}: {f.detail.strip()}")
        if f.fix:
            out(f"  fix: {f.fix}")
        out(f"  reproduction ({len(small)} characters): {small[:600]!r}")
    return counts, [f for f in found if f.kind != CAUGHT]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--count", type=int, default=None, help="documents to check")
    ap.add_argument("--seconds", type=float, default=None, help="check documents for this long")
    ap.add_argument("--limit", type=float, default=10.0,
                    help="seconds one document may take before it counts as a hang")
    ap.add_argument("--show", type=int, default=2, help="reproductions printed per kind")
    ap.add_argument("--no-reduce", action="store_true", help="print failing texts unreduced")
    ap.add_argument("--mutated-only", action="store_true",
                    help="skip checking every corpus document as it is first")
    args = ap.parse_args(argv)
    if args.count is None and args.seconds is None:
        args.count = 500
    _, failures = run(args.seed, args.count, args.seconds, args.limit, show=args.show,
                      reduce=not args.no_reduce, corpus=not args.mutated_only)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
