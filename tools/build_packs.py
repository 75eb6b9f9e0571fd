"""Build the start-up cache of the bundled rule packs: server/servelint/rules/bundled.json,
the packs/*.yaml as one JSON document (YAML is slow to read when the server starts).

    .venv/bin/python tools/build_packs.py          # write it (make install does)
    .venv/bin/python tools/build_packs.py --check  # exit 1 if it is not current

The YAML packs are the source; this file is a build product, kept in the repository so
that `pip install .` from a checkout has it. tests/test_rule_packs_source.py fails when
it is not current.
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "server"))
COMPILED = os.path.join(ROOT, "server", "servelint", "rules", "bundled.json")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="build server/servelint/rules/bundled.json")
    ap.add_argument("--check", action="store_true", help="only say whether it is current")
    args = ap.parse_args(argv)
    from servelint.rules import compile_bundled
    compiled = compile_bundled()
    have = open(COMPILED, encoding="utf-8").read() if os.path.exists(COMPILED) else None
    if have == compiled:
        return 0
    if args.check:
        print("out of date: server/servelint/rules/bundled.json; run tools/build_packs.py")
        return 1
    tmp = COMPILED + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(compiled)
    os.replace(tmp, COMPILED)
    return 0


if __name__ == "__main__":
    sys.exit(main())
