"""The catalog pack: its size and what loading from it costs. Prints numbers only.

    .venv/bin/python bench/catalog_load.py [--runs N]

- size of server/servelint/catalog/data/releases.json.gz, compressed and not, and
  what the same releases weigh as separate catalog files;
- cold load of ONE release in a fresh process (the time of `load_catalog(v)` alone:
  read, gunzip, decode, build the `Catalog`), for the newest, the oldest and a middle
  release, next to the same measure for one catalog JSON file read on its own (how
  0.5.23 shipped before the pack);
- loading every release after that, and building `history()`;
- `servelint check` of a one-launch shell script, a whole fresh process, as a user
  starts it.

Each fresh-process figure is the median of N runs (default 15), min and max beside it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from servelint import catalog  # noqa: E402

PY = sys.executable
PACK = ROOT / "server" / "servelint" / "catalog" / "data" / catalog.PACK_NAME

ONE = """
import time
t = time.perf_counter()
from servelint.catalog import load_catalog
t1 = time.perf_counter()
load_catalog({version!r})
t2 = time.perf_counter()
print((t1 - t) * 1e3, (t2 - t1) * 1e3)
"""

# The pre-pack loader, verbatim in substance: read one JSON file, build the Catalog.
FILE = """
import json, time
from servelint.catalog import Catalog
t = time.perf_counter()
with open({path!r}, encoding="utf-8") as fh:
    Catalog(json.loads(fh.read()))
print(0.0, (time.perf_counter() - t) * 1e3)
"""

# `servelint check` with load_catalog replaced by the loader servelint had before the
# pack (one JSON file per release): the A/B of what the pack costs a cold CLI run.
OLD_CLI = """
import functools, json, sys
import servelint.catalog as c

@functools.lru_cache(maxsize=4)
def load_catalog(version=c.DEFAULT_VERSION):
    with open({path!r}, encoding="utf-8") as fh:
        return c.Catalog(json.loads(fh.read()))

c.load_catalog = load_catalog
# and a world with that one release: what the version helpers answer without the pack
c.known_versions = lambda: ({version!r},)
c._known = lambda v: {version!r} if v.lstrip("v") == {version!r} else None
from servelint.cli import main
sys.exit(main(["check", *sys.argv[1:]]))
"""

ALL = """
import time
t = time.perf_counter()
from servelint.catalog import history, known_versions, load_catalog
load_catalog({newest!r})
t1 = time.perf_counter()
for v in known_versions():
    load_catalog.__wrapped__(v)
t2 = time.perf_counter()
history()
t3 = time.perf_counter()
print((t1 - t) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3)
"""


def fresh(code: str, runs: int) -> list[list[float]]:
    out = []
    for _ in range(runs):
        proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "server")})
        out.append([float(x) for x in proc.stdout.split()])
    return out


def stats(values: list[float]) -> str:
    return (f"{statistics.median(values):7.2f} ms  (min {min(values):.2f}, "
            f"max {max(values):.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    runs = args.runs

    # As `make install` does (the environment may say PYTHONDONTWRITEBYTECODE): fresh
    # processes then load compiled modules, as an installed servelint does.
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "server" / "servelint")],
                   check=True, stdout=subprocess.DEVNULL)
    packed = PACK.read_bytes()
    raw = gzip.decompress(packed)
    doc = json.loads(raw)
    versions = catalog.known_versions()
    newest, oldest = versions[-1], versions[0]
    middle = versions[len(versions) // 2]
    separate = sum(len(json.dumps(catalog.catalog_data(v), indent=1, ensure_ascii=False)) + 1
                   for v in versions)
    separate_gz = sum(len(gzip.compress((json.dumps(catalog.catalog_data(v), indent=1,
                                                    ensure_ascii=False) + "\n").encode(),
                                        9, mtime=0))
                      for v in versions)
    print(f"pack {PACK.relative_to(ROOT)}")
    print(f"  {len(versions)} releases ({oldest} .. {newest}), "
          f"{sum(r['options'].count(',') + 1 for r in doc['releases'])} option entries, "
          f"{len(doc['records'])} distinct records, {len(doc['values'])} distinct values")
    print(f"  {len(packed):,} bytes gzip ({len(packed) / 1024:.1f} KiB), "
          f"{len(raw):,} bytes decoded")
    print(f"  the same releases as catalog files: {separate:,} bytes, "
          f"{separate_gz:,} bytes gzipped one by one")

    print(f"\ncold load of one release in a fresh process (median of {runs}; the cases "
          "take turns, so a busy machine slows them alike)")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"sglang-{newest}.json")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(catalog.catalog_data(newest), indent=1, ensure_ascii=False)
                     + "\n")
        cases = {f"load_catalog({v!r})": ONE.format(version=v) for v in (newest, middle, oldest)}
        cases[f"one catalog file, {newest} (before the pack)"] = FILE.format(path=path)
        rows: dict[str, list[list[float]]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, code in cases.items():
                rows[name] += fresh(code, 1)
    width = max(map(len, cases)) + 2
    for name in cases:
        print(f"  {name + ':':<{width}}{stats([r[1] for r in rows[name]])}")
    first = next(iter(cases))
    print(f"  {'import servelint.catalog:':<{width}}{stats([r[0] for r in rows[first]])}")

    print(f"\nafter the first release, in the same process (median of {runs})")
    rows = fresh(ALL.format(newest=newest), runs)
    print(f"  every other release:            {stats([r[1] for r in rows])}"
          f"  ({len(versions)} catalogs)")
    print(f"  history():                      {stats([r[2] for r in rows])}")

    print(f"\nservelint check, whole fresh process (median of {runs}; turns as above)")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "launch.sh")
        with open(script, "w", encoding="utf-8") as fh:
            fh.write("python -m sglang.launch_server --model-path m --tp-size 2 --port 30000\n")
        path = os.path.join(tmp, f"sglang-{newest}.json")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(catalog.catalog_data(newest), indent=1, ensure_ascii=False)
                     + "\n")
        cases = {
            "servelint check launch.sh": [PY, "-m", "servelint", "check", script],
            "the same, pre-pack loader": [PY, "-c", OLD_CLI.format(path=path, version=newest),
                                          script],
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, cmd in cases.items():
                t = time.perf_counter()
                subprocess.run(cmd, capture_output=True, cwd=tmp, check=False)
                times[name].append((time.perf_counter() - t) * 1e3)
        for name in cases:
            print(f"  {name + ':':<{width}}{stats(times[name])}")

if __name__ == "__main__":
    main()
