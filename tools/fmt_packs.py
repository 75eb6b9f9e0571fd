"""Write the bundled rule packs (server/servelint/rules/packs/*.yaml) in one plain layout:
each record stands alone (no YAML anchors or aliases, which a YAML dumper had put across
records: `&id001` in one record, `*id001` in others), keys in the order they are written,
multi-line text as `|` blocks, the file's leading comment kept.

    .venv/bin/python tools/fmt_packs.py          # rewrite the packs
    .venv/bin/python tools/fmt_packs.py --check  # exit 1 if a pack would change

The packs are maintained by hand; this is their formatter (as ruff format is for code),
run after an edit. The data a pack loads to never changes: the tool checks that before
it writes. tests/test_rule_packs_source.py keeps the packs anchor-free and formatted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

PACKS = Path(__file__).resolve().parents[1] / "server" / "servelint" / "rules" / "packs"


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):  # every record written out in full
        return True


def _text(dumper: yaml.SafeDumper, value: str):
    style = "|" if "\n" in value and value == value.rstrip(" ") and "\t" not in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def formatted(text: str) -> str:
    lines = text.splitlines(keepends=True)
    head = []
    for line in lines:
        if line.startswith("#"):
            head.append(line)
        else:
            break
    data = yaml.safe_load(text)
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False, indent=2)
    out = "".join(head) + body
    if yaml.safe_load(out) != data:
        raise SystemExit("formatting would change what the pack loads to; nothing written")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only say which packs would change")
    args = ap.parse_args(argv)
    changed = []
    for path in sorted(PACKS.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        new = formatted(text)
        if new != text:
            changed.append(path.name)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and changed:
        print("not formatted: " + ", ".join(changed) + " (run tools/fmt_packs.py)")
        return 1
    if not args.check:
        print(f"{len(changed)} pack(s) rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
