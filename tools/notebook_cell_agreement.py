"""Do the two notebook readers agree? `servelint check x.ipynb` reads a notebook's JSON
(extract/notebook.py: `lint(file_text, path, None)`); an editor sends each cell as its own
document (extract/notebook_cell.py: `lint(cell_text, path, "python"|"shellscript")`). On
the same notebook both must report the same findings at the same places with the same fixes.

    .venv/bin/python tools/notebook_cell_agreement.py NOTEBOOK_OR_FOLDER... [-v] [--json OUT]

For each notebook:

- the file is linted as a notebook;
- it is split into its cells with Python's `json` (nbformat 4 `cells`, nbformat 3
  `worksheets[*].cells` with `input`; `source` a list of strings or one string), and each
  code cell is linted as VS Code sends it: the cell's text, the notebook's path, and the
  cell's language (`metadata.vscode.languageId` of the cell, else the kernel's language:
  python -> `python`, bash/sh/zsh -> `shellscript`);
- each notebook finding is moved back into its cell: its JSON-document span becomes a cell
  span through the cell's source strings (jsonpos), checked against the text `json` decodes,
  and "line N" in its message (document lines) becomes the cell's line;
- findings are matched on (code, message, cell, start line/column, end line/column in the
  cell); matched pairs must also have the same severity, flagged text, related locations and
  fix titles, and each fix applied must give the same cell: the cell finding's fix on the
  cell text, the notebook finding's fix on the file, which must stay valid JSON and is split
  into cells again (no other cell may change);
- fix-all (engine.fix_all_text) on every cell and on the notebook must give the same cells;
- both sides must find the same number of launches in each cell.

Markdown cells are compared too: an editor sends them with languageId `markdown` (read by
the Markdown reader), and the notebook reader reads their fenced blocks the same way.

Prints a summary per notebook and totals; exits 1 on any disagreement (2 on no notebook).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "server"))

from servelint.engine import fix_all_text, lint
from servelint.edits import apply_edits  # noqa: E402
from servelint.extract import notebook as nbreader  # noqa: E402
from servelint.extract.jsonpos import InnerText, JArray, JObject, JString, parse  # noqa: E402
from servelint.model import LineIndex  # noqa: E402
from servelint.settings import Settings  # noqa: E402

SHELL_KERNELS = {"bash", "sh", "shell", "zsh"}
_LINE_REF = re.compile(r"\b(line|lines) (\d+)\b")


# --- the notebook as an editor splits it ----------------------------------------------------


def json_cells(nb) -> list[dict]:
    """The cells of a notebook object, in the order notebook.py reads them."""
    out = []
    if isinstance(nb, dict):
        if isinstance(nb.get("cells"), list):
            out.extend(c for c in nb["cells"] if isinstance(c, dict))
        for ws in nb.get("worksheets") or []:
            if isinstance(ws, dict) and isinstance(ws.get("cells"), list):
                out.extend(c for c in ws["cells"] if isinstance(c, dict))
    return out


def cell_source(cell: dict) -> str | None:
    src = cell.get("source", cell.get("input"))
    if isinstance(src, str):
        return src
    if isinstance(src, list) and all(isinstance(s, str) for s in src):
        return "".join(src)
    return None


def kernel_language(nb) -> str:
    meta = nb.get("metadata") if isinstance(nb, dict) else None
    if not isinstance(meta, dict):
        return ""
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        v = (meta.get(key) or {}).get(field) if isinstance(meta.get(key), dict) else None
        if isinstance(v, str) and v:
            return v.lower()
    return ""


def language_id(cell: dict, kernel: str) -> str:
    """The languageId VS Code gives a code cell."""
    meta = cell.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("vscode"), dict):
        lang = meta["vscode"].get("languageId")
        if isinstance(lang, str) and lang:
            return lang
    if kernel in SHELL_KERNELS:
        return "shellscript"
    if kernel in ("", "python", "python3", "ipython"):
        return "python"
    return kernel


def split_cells(text: str):
    """[(cell index, cell dict, source text)] of a notebook file, or raises ValueError."""
    nb = json.loads(text)
    return nb, [(i, c, cell_source(c)) for i, c in enumerate(json_cells(nb))]


# --- notebook positions back into cells -----------------------------------------------------


class CellMap:
    """Document offsets of a notebook file -> (cell index, cell offset), through each cell's
    source strings as jsonpos reads them."""

    def __init__(self, text: str, sources: dict[int, str]):
        self.inner: dict[int, InnerText] = {}
        self.problems: list[str] = []
        root = parse(text).root
        cells = nbreader._cells(root) if isinstance(root, JObject) else []
        self.start_at: dict[int, tuple[int, int]] = {}
        self.end_at: dict[int, tuple[int, int]] = {}
        for k, cell in enumerate(cells):
            src = cell.get("source")
            if src is None:
                src = cell.get("input")
            if isinstance(src, JString):
                strings = [src]
            elif isinstance(src, JArray) and all(isinstance(e, JString) for e in src.elements):
                strings = list(src.elements)
            else:
                continue
            if not strings:
                continue
            inner = InnerText.of_strings(strings)
            if inner is None:
                continue
            if k in sources and sources[k] is not None and inner.text != sources[k]:
                self.problems.append(f"cell #{k}: jsonpos decodes its source differently from json")
                continue
            self.inner[k] = inner
            for c, s in enumerate(inner.starts):
                self.start_at.setdefault(s, (k, c))
            for c, e in enumerate(inner.ends):
                self.end_at.setdefault(e, (k, c + 1))

    def span(self, start: int, end: int):
        """(cell, cell start, cell end) of a document span, or None."""
        a = self.start_at.get(start)
        if a is None:
            return None
        if end == start:
            return a[0], a[1], a[1]
        b = self.end_at.get(end)
        if b is None or b[0] != a[0] or b[1] < a[1]:
            return None
        return a[0], a[1], b[1]


def decode_fragment(fragment: str) -> str | None:
    """The text of a piece of one JSON string's content, or None when it is not one."""
    try:
        return json.loads('"' + fragment + '"')
    except ValueError:
        return None


# --- findings in comparable form -----------------------------------------------------------


def pos(index: LineIndex, s: int, e: int) -> tuple:
    return index.position(s) + index.position(e)


class Item:
    """One finding, in cell coordinates."""

    def __init__(self, f, cell: int, cs: int, ce: int, cell_text: str, message: str, related,
                 flagged_doc: str | None = None):
        self.f = f
        self.cell = cell
        self.span = (cs, ce)
        self.range = pos(LineIndex(cell_text), cs, ce)
        self.message = message
        self.flagged = cell_text[cs:ce]
        self.flagged_doc = flagged_doc
        self.related = related
        self.titles = [(x.title, x.safe, x.preferred) for x in f.fixes]

    @property
    def key(self):
        return (self.cell, self.f.code, self.message, self.range)

    def describe(self) -> str:
        (l1, c1, l2, c2) = self.range
        return (f"cell #{self.cell} {l1 + 1}:{c1 + 1}-{l2 + 1}:{c2 + 1} {self.f.code} "
                f"{self.f.severity.name.lower()} {self.message!r} on {self.flagged!r}")


def cell_line_message(message: str, doc_index: LineIndex, cmap: CellMap, cell: int) -> str:
    """A notebook finding's message with "line N" (a document line) made the cell's line."""
    inner = cmap.inner.get(cell)
    if inner is None:
        return message
    cell_index = LineIndex(inner.text)

    def sub(m):
        row = int(m.group(2)) - 1
        if not 0 <= row < len(doc_index.starts):
            return m.group(0)
        # the first character of the cell on that document line
        hit = next((c for c, s in enumerate(inner.starts[:-1]) if doc_index.line_of(s) == row), None)
        if hit is None:
            return m.group(0)
        return f"{m.group(1)} {cell_index.line_of(hit) + 1}"
    return _LINE_REF.sub(sub, message)


# --- one notebook --------------------------------------------------------------------------


class Report:
    def __init__(self, path: str):
        self.path = path
        self.code_cells = 0
        self.cells_with_launches = 0
        self.launches = [0, 0]  # notebook, cells
        self.findings = [0, 0]
        self.agree = 0
        self.markdown_findings = 0
        self.fixes_compared = 0
        self.disagreements: list[str] = []
        self.notes: list[str] = []
        self.error: str | None = None

    def bad(self, what: str) -> None:
        self.disagreements.append(what)


def cells_after(text: str) -> tuple[list | None, str | None]:
    try:
        _, cells = split_cells(text)
    except ValueError as exc:
        return None, f"not JSON any more: {exc}"
    return [src for _, _, src in cells], None


def check_fix(rep: Report, a: Item, b: Item, doc_text: str, cell_text: str, k: int,
              before: list) -> None:
    """Each fix of the pair, applied: the same cell text on both sides."""
    for xa, xb in zip(a.f.fixes, b.f.fixes):
        rep.fixes_compared += 1
        cell_new = apply_edits(cell_text, xb.edits)
        doc_new = apply_edits(doc_text, xa.edits)
        after, err = cells_after(doc_new)
        where = f"{b.describe()} fix {xb.title!r}"
        if err:
            rep.bad(f"{where}: the notebook's fix leaves {err}")
            continue
        if len(after) != len(before):
            rep.bad(f"{where}: the notebook's fix changes the number of cells")
            continue
        changed = [i for i, (x, y) in enumerate(zip(before, after)) if x != y and i != k]
        if changed:
            rep.bad(f"{where}: the notebook's fix also changes cells {changed}")
        if after[k] != cell_new:
            rep.bad(f"{where}: fixed cells differ:\n      notebook: {after[k]!r}\n      cell:     {cell_new!r}")


def run_notebook(path: str, settings: Settings, verbose: bool) -> Report:
    full = os.path.abspath(path)
    rep = Report(path)
    with open(full, encoding="utf-8", errors="surrogateescape") as fh:
        text = fh.read()
    try:
        nb, cells = split_cells(text)
    except ValueError as exc:
        rep.error = f"not a JSON notebook: {exc}"
        return rep
    kernel = kernel_language(nb)
    sources = {k: src for k, c, src in cells}
    before = [src for _, _, src in cells]

    # The file as a notebook.
    whole = lint(text, full, None, settings)
    if whole.format != "notebook":
        rep.bad(f"the file is read as {whole.format!r}, not as a notebook")
    rep.notes.extend(f"notebook notice: {n}" for n in whole.notices)
    doc_index = whole.index
    cmap = CellMap(text, sources)
    for p in cmap.problems:
        rep.bad(p)

    nb_items: dict[int, list[Item]] = defaultdict(list)
    nb_launches: Counter = Counter()
    for launch in whole.launches:
        m = cmap.span(launch.span.start, launch.span.start)
        if m is None:
            rep.bad(f"a notebook launch at offset {launch.span.start} maps to no cell")
            continue
        nb_launches[m[0]] += 1
    for f in whole.findings:
        m = cmap.span(f.span.start, f.span.end)
        if m is None:
            rep.bad(f"notebook finding {f.code} {f.message!r} at {doc_index.position(f.span.start)}"
                    f" ({text[f.span.start:f.span.end]!r}) maps to no cell")
            continue
        k, cs, ce = m
        frag = text[f.span.start:f.span.end]
        related = []
        for r in f.related:
            if r.path is not None:
                related.append((r.message, r.path, r.range))
                continue
            rm = cmap.span(r.span.start, r.span.end)
            if rm is None:
                related.append((r.message, "unmapped", doc_index.position(r.span.start)))
            else:
                related.append((cell_line_message(r.message, doc_index, cmap, rm[0]), rm[0],
                                pos(LineIndex(sources[rm[0]]), rm[1], rm[2])))
        item = Item(f, k, cs, ce, sources[k], cell_line_message(f.message, doc_index, cmap, k),
                    related, frag)
        decoded = decode_fragment(frag)
        if decoded is not None and decoded != item.flagged:
            rep.bad(f"{item.describe()}: the file's flagged text decodes to {decoded!r}")
        nb_items[k].append(item)

    # Each code cell as an editor sends it.
    cell_items: dict[int, list[Item]] = defaultdict(list)
    for k, cell, src in cells:
        if cell.get("cell_type") not in ("code", "markdown") or src is None:
            continue
        if cell.get("cell_type") == "markdown":
            lang = "markdown"
            res = lint(src, full, lang, settings)
            rep.markdown_findings += len(res.findings)
        else:
            rep.code_cells += 1
            lang = language_id(cell, kernel)
            res = lint(src, full, lang, settings)
        rep.notes.extend(f"cell #{k} notice: {n}" for n in res.notices)
        if res.launches:
            rep.cells_with_launches += 1
        rep.launches[1] += len(res.launches)
        if len(res.launches) != nb_launches[k]:
            rep.bad(f"cell #{k} ({lang}, read as {res.format}): {nb_launches[k]} launch(es) in the "
                    f"notebook, {len(res.launches)} in the cell")
        for f in res.findings:
            related = []
            for r in f.related:
                if r.path is not None:
                    related.append((r.message, r.path, r.range))
                else:
                    related.append((r.message, k, pos(res.index, r.span.start, r.span.end)))
            cell_items[k].append(Item(f, k, f.span.start, f.span.end, src, f.message, related))
    rep.launches[0] = sum(nb_launches.values())
    rep.findings = [sum(map(len, nb_items.values())), sum(map(len, cell_items.values()))]

    # Match the findings.
    for k in sorted(set(nb_items) | set(cell_items)):
        left = {}
        for it in nb_items.get(k, []):
            left.setdefault(it.key, []).append(it)
        for b in cell_items.get(k, []):
            cands = left.get(b.key)
            if not cands:
                rep.bad(f"only in the cell:     {b.describe()}")
                continue
            a = cands.pop(0)
            ok = True
            if a.f.severity != b.f.severity:
                rep.bad(f"{b.describe()}: severity {a.f.severity.name} in the notebook")
                ok = False
            if a.flagged != b.flagged:
                rep.bad(f"{b.describe()}: flags {a.flagged!r} in the notebook")
                ok = False
            if a.related != b.related:
                rep.bad(f"{b.describe()}: related\n      notebook: {a.related}\n      cell:     {b.related}")
                ok = False
            if a.titles != b.titles:
                rep.bad(f"{b.describe()}: fixes\n      notebook: {a.titles}\n      cell:     {b.titles}")
                ok = False
            else:
                n = len(rep.disagreements)
                check_fix(rep, a, b, text, sources[k], k, before)
                ok = ok and len(rep.disagreements) == n
            if ok:
                rep.agree += 1
                if verbose:
                    rep.notes.append(f"agree: {b.describe()}"
                                     + (f" fixes {[t for t, _, _ in b.titles]}" if b.titles else ""))
        for rest in left.values():
            for a in rest:
                rep.bad(f"only in the notebook: {a.describe()}")

    # Fix-all on both sides.
    if any(it.f.fixes for its in cell_items.values() for it in its) or any(
            it.f.fixes for its in nb_items.values() for it in its):
        fixed_doc, _ = fix_all_text(text, full, None, settings)
        after, err = cells_after(fixed_doc)
        if err:
            rep.bad(f"fix-all on the notebook leaves {err}")
        else:
            for k, cell, src in cells:
                if cell.get("cell_type") not in ("code", "markdown") or src is None:
                    if after[k] != src:
                        rep.bad(f"fix-all on the notebook changes {cell.get('cell_type')} cell #{k}")
                    continue
                lang = "markdown" if cell.get("cell_type") == "markdown" else language_id(cell, kernel)
                fixed_cell, _ = fix_all_text(src, full, lang, settings)
                if fixed_cell != after[k]:
                    rep.bad(f"fix-all differs in cell #{k}:\n      notebook: {after[k]!r}\n"
                            f"      cell:     {fixed_cell!r}")
    return rep


def notebooks(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        if os.path.isdir(p):
            for d, dirs, files in os.walk(p):
                dirs.sort()
                out.extend(os.path.join(d, f) for f in sorted(files) if f.lower().endswith(".ipynb"))
        else:
            out.append(p)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="notebooks, or folders searched for *.ipynb")
    ap.add_argument("-v", "--verbose", action="store_true", help="also list the agreements")
    ap.add_argument("--json", help="write the per-notebook numbers and disagreements here")
    args = ap.parse_args(argv)
    files = notebooks(args.paths)
    if not files:
        print("no notebooks", file=sys.stderr)
        return 2
    settings = Settings()
    totals = Counter()
    rows = []
    for path in files:
        rep = run_notebook(path, settings, args.verbose)
        rows.append(rep)
        if rep.error:
            print(f"{path}: skipped, {rep.error}")
            totals["skipped"] += 1
            continue
        status = "ok" if not rep.disagreements else f"{len(rep.disagreements)} DISAGREEMENT(S)"
        print(f"{path}: {rep.code_cells} code cells, {rep.cells_with_launches} with launches, "
              f"launches {rep.launches[0]}/{rep.launches[1]}, findings notebook {rep.findings[0]} "
              f"cells {rep.findings[1]}, {rep.agree} agree, {rep.fixes_compared} fixes compared"
              + (f", {rep.markdown_findings} in markdown cells" if rep.markdown_findings else "")
              + f": {status}")
        for d in rep.disagreements:
            print(f"    - {d}")
        for n in rep.notes:
            if args.verbose or "notice" in n or "editor only" in n:
                print(f"    . {n}")
        totals["notebooks"] += 1
        totals["code cells"] += rep.code_cells
        totals["cells with launches"] += rep.cells_with_launches
        totals["launches (notebook)"] += rep.launches[0]
        totals["launches (cells)"] += rep.launches[1]
        totals["findings (notebook)"] += rep.findings[0]
        totals["findings (cells)"] += rep.findings[1]
        totals["agreements"] += rep.agree
        totals["findings in markdown cells"] += rep.markdown_findings
        totals["fixes compared"] += rep.fixes_compared
        totals["disagreements"] += len(rep.disagreements)
        totals["notebooks with disagreements"] += bool(rep.disagreements)
    print("\nTotal: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([{"path": r.path, "error": r.error, "code_cells": r.code_cells,
                        "cells_with_launches": r.cells_with_launches, "launches": r.launches,
                        "findings": r.findings, "agree": r.agree,
                        "markdown_findings": r.markdown_findings,
                        "disagreements": r.disagreements} for r in rows], fh, indent=1)
    return 1 if totals["disagreements"] else 0


if __name__ == "__main__":
    sys.exit(main())
