"""The bundled rule packs are hand-maintained source: each record stands alone (no YAML
anchor or alias, which tie records together), they are in the formatter's layout
(tools/fmt_packs.py), and the start-up cache built from them (rules/bundled.json,
tools/build_packs.py) is current."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKS = sorted((ROOT / "server" / "servelint" / "rules" / "packs").glob("*.yaml"))


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.name)
def test_no_record_borrows_from_another(pack):
    text = pack.read_text(encoding="utf-8")
    tied = [(e.start_mark.line + 1, type(e).__name__) for e in yaml.parse(text)
            if isinstance(e, yaml.AliasEvent) or getattr(e, "anchor", None)]
    assert tied == []


def test_the_walk_sees_anchors():
    events = list(yaml.parse("- a: &x [1]\n- b: *x\n"))
    assert any(isinstance(e, yaml.AliasEvent) for e in events)


@pytest.mark.parametrize("tool", ["fmt_packs.py", "build_packs.py"])
def test_packs_formatted_and_cache_current(tool):
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / tool), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
