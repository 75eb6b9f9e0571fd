"""Real public files (tests/data/real/yaml, cited in its README) against SGLang's own verdicts
on their launches (verdicts.jsonl, recorded with tools/sglang_oracle.py by record_verdicts.py):
servelint reads the same arguments, reports no error on a launch SGLang accepts (or stops for
a reason outside the flags), and reports a rejection the flags decide on the word SGLang
names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from servelint.engine import lint
from servelint.model import Severity
from servelint.settings import Settings

DATA = Path(__file__).parent / "data" / "real" / "yaml"
RECORDS = [json.loads(line) for line in (DATA / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()
           if line.strip()]
FILES = sorted({r["file"] for r in RECORDS})
RELEASE = Settings(sglang_version="0.5.23")  # the release the verdicts are from


def read(rel: str):
    path = DATA / rel
    return lint(path.read_text(encoding="utf-8"), path=str(path), settings=RELEASE)


@pytest.mark.parametrize("rel", FILES)
def test_servelint_reads_every_launch_sglang_judged(rel):
    result = read(rel)
    records = [r for r in RECORDS if r["file"] == rel]
    assert len(result.launches) == len(records)
    for record, launch in zip(records, result.launches):
        assert result.index.position(launch.entry.span.start)[0] + 1 == record["line"]
        assert [t.text for t in launch.tokens] == record["read"]


@pytest.mark.parametrize("record", RECORDS, ids=[f"{r['file']}#{r['launch']}" for r in RECORDS])
def test_findings_agree_with_sglang(record):
    result = read(record["file"])
    text = result.text
    errors = [f for f in result.findings
              if f.launch_index == record["launch"] and f.severity == Severity.ERROR]
    if record["label"] in ("accepted", "environment", "depends-on-unknown"):
        assert errors == [], [f.message for f in errors]
        return
    assert record["label"] == "rejected"
    assert errors, f"SGLang rejects it: {record['error']}"
    # the word SGLang names is the word servelint reports
    named = set(re.findall(r"--[a-z0-9-]+", record["error"]))
    assert any(text[f.span.start:f.span.end] in named for f in errors)


def test_every_file_is_cited():
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    files = sorted(str(p.relative_to(DATA)) for p in DATA.rglob("*")
                   if p.is_file() and p.suffix in (".yaml", ".yml", ".tpl"))
    assert files
    for rel in files:
        row = next((line for line in readme.splitlines() if f"`{rel}`" in line), None)
        assert row is not None, f"{rel} is not cited in the README"
        assert re.search(r"\b[0-9a-f]{40}\b", row) and "Apache-2.0" in row
