"""Rewrite the README's speed table from the last `make bench-peers` run.

    .venv/bin/python bench/readme_table.py            rewrite README.md
    .venv/bin/python bench/readme_table.py --check    exit 1 if README.md differs

Reads the `peers` key of bench/out/results.json (written by bench/peers.py) and
replaces what lies between the markers `<!-- bench:start -->` and `<!-- bench:end -->`
in README.md. Nothing else in the README changes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The other formats' language servers (bench/peers.py format_rows), named when measured.
FORMAT_PEERS = ("docker-langserver", "vscode-json-language-server", "vscode-markdown-language-server")
START = "<!-- bench:start -->"
END = "<!-- bench:end -->"


class TableError(ValueError):
    pass


def load_rows(results: dict) -> tuple[dict, list[dict]]:
    """(meta, rows) of the peers run in a results.json object."""
    peers = results.get("peers") if isinstance(results, dict) else None
    if not isinstance(peers, dict) or not isinstance(peers.get("rows"), list):
        raise TableError("no peers results: run `make bench-peers` (bench/peers.py) first")
    rows = peers["rows"]
    for r in rows:
        missing = {"measure", "servelint_ms", "peer", "peer_ms", "ratio"} - set(r)
        if missing:
            raise TableError(f"row {r.get('key', '?')} lacks {sorted(missing)}")
    return peers.get("meta") or {}, rows


def cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def fmt_ms(v: float | None, error: str | None = None) -> str:
    """A time in ms; a missing one says why when the error was a wait that ran out."""
    if v is None:
        m = re.search(r"^no diagnostics\b.* within (\S+ s)$", error or "")
        return f"none within {m.group(1)}" if m else "no result"
    if v < 10:
        return f"{v:.1f} ms"
    return f"{v:,.0f} ms"


def fmt_ratio(r: float | None) -> str:
    if r is None:
        return "–"
    if r < 1:
        return f"{r:.2g} ({1 / r:.3g}× faster)"
    return f"{r:.3g} ({r:.3g}× slower)"


def render(meta: dict, rows: list[dict]) -> str:
    """The Markdown between the markers (without them)."""
    versions = meta.get("versions") or {}
    load = meta.get("load_before") or ["?"]
    load_after = meta.get("load_after") or ["?"]
    lines = [
        f"Made by `bench/readme_table.py` from `make bench-peers` (`bench/peers.py`) on "
        f"{meta.get('date_utc', '?')} UTC: servelint at {meta.get('servelint', '?')}, "
        f"{meta.get('cpus', '?')} CPUs, 1-minute load {load[0]} before and {load_after[0]} after, "
        f"peers ShellCheck {versions.get('shellcheck')}, bash-language-server "
        f"{versions.get('bash-language-server')}, yaml-language-server "
        f"{versions.get('yaml-language-server')}, Ruff {versions.get('ruff')}"
        + "".join(f", {name} {versions[name]}" for name in FORMAT_PEERS if versions.get(name))
        + ". Each server runs "
        "alone over stdio with the same client; an edit changes one launch and is timed until "
        "the server publishes diagnostics for it. Ratio = servelint ÷ peer (below 1: servelint "
        "is faster).",
        "",
        "| measure | servelint | peer | ratio |",
        "| --- | ---: | --- | ---: |",
    ]
    for r in rows:
        lines.append(f"| {cell(r['measure'])} | {fmt_ms(r['servelint_ms'], r.get('servelint_error'))} | "
                     f"{cell(r['peer'])}: {fmt_ms(r['peer_ms'], r.get('peer_error'))} | "
                     f"{fmt_ratio(r['ratio'])} |")
    notes = [f"- {cell(r['measure'])}: {cell(r['note'])}" for r in rows if r.get("note")]
    notes += [f"- {cell(n)}" for n in meta.get("notes") or []]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def replace_section(readme: str, body: str) -> str:
    """`readme` with everything between the markers replaced by `body`."""
    if readme.count(START) != 1 or readme.count(END) != 1:
        raise TableError(f"README needs exactly one {START} and one {END}")
    a = readme.index(START) + len(START)
    b = readme.index(END)
    if b < a:
        raise TableError(f"{END} comes before {START}")
    return readme[:a] + "\n" + body.rstrip("\n") + "\n" + readme[b:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=os.path.join(HERE, "out", "results.json"))
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    try:
        with open(args.results) as fh:
            meta, rows = load_rows(json.load(fh))
        with open(args.readme, encoding="utf-8") as fh:
            old = fh.read()
        new = replace_section(old, render(meta, rows))
    except (OSError, ValueError) as exc:
        print(f"readme_table: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if new != old:
            print("readme_table: README.md's speed table differs from the results", file=sys.stderr)
            return 1
        return 0
    if new != old:
        with open(args.readme, "w", encoding="utf-8") as fh:
            fh.write(new)
    print(f"readme_table: {len(rows)} rows written to {os.path.relpath(args.readme)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
