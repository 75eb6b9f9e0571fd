"""The inventory of SGLang's raise/assert sites and what covers them (docs/sglang-coverage.md)."""

import subprocess
import sys
from pathlib import Path

from servelint.checks import load_checks
from servelint.rules import bundled_packs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import sglang_coverage as cov  # noqa: E402

CLASSES = {c for c, _ in cov.CLASSES}


def test_every_site_is_classified_once_with_a_known_class():
    sites, rows = cov.load()
    assert len(sites) > 700
    keys = {(s["file"], s["line"]) for s in sites}
    for key, got in rows.items():
        assert key in keys, f"{key} is not a site"
        assert len(got) == 1, f"{key} is classified {len(got)} times ({[g['source'] for g in got]})"
        assert got[0]["class"] in CLASSES, (key, got[0]["class"])
    missing = keys - set(rows)
    assert not missing, f"{len(missing)} sites not classified, e.g. {sorted(missing)[:5]}"


def test_flag_decided_sites_have_a_rule_or_a_reason():
    sites, rows = cov.load()
    codes = {r.code for p in bundled_packs("0.5.23") for r in p.rules} | set(load_checks())
    for key, (row,) in rows.items():
        if row.get("rule"):
            assert row["rule"] in codes, f"{key}: rule {row['rule']} does not exist"
        if row["class"] in ("flags", "derived") and not row.get("rule"):
            assert len((row.get("reason") or "").split()) >= 5, f"{key}: say why no rule covers it"


def test_page_in_sync():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "sglang_coverage.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_every_bundled_rule_is_audited_against_its_raise_site():
    audit = cov.load_audit()
    by_rule = {}
    for row in audit:
        by_rule.setdefault(row["rule"], []).append(row)
    rules = {r.code: r for p in bundled_packs("0.5.23") for r in p.rules}
    missing = sorted(set(rules) - set(by_rule))
    assert not missing, f"{len(missing)} rules not audited, e.g. {missing[:8]}"
    for code, rows in by_rule.items():
        assert code in rules, f"audit names {code}, which is not a bundled rule"
        for row in rows:
            assert row.get("status") in ("full", "narrower", "dependent"), (code, row.get("status"))
            assert row.get("site") and row.get("guard") and row.get("covers"), code
            if row["status"] != "full":
                assert len((row.get("note") or "").split()) >= 4, f"{code}: say why it is {row['status']}"
            if row["status"] == "dependent":
                assert rules[code].dependencies, f"{code}: dependent, but its condition has no env/model/gpu atom"
