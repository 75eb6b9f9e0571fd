"""Rule documentation: generated pages in sync, every code documented, examples real."""

import subprocess
import sys
from pathlib import Path

from servelint.checks import load_checks
from servelint.cli import main as cli_main
from servelint.engine import lint

ROOT = Path(__file__).resolve().parent.parent


def test_generated_rule_pages_are_in_sync():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_docs.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_check_has_every_section():
    for code, check in load_checks().items():
        doc = check.doc_markdown()
        for section in ("## What it does", "## Why it matters", "## Example", "## Use instead",
                        "## Fix safety", "## Since"):
            assert section in doc, (code, section)


def test_examples_trigger_and_alternatives_do_not():
    """Each check's example reports that check; its 'use instead' does not."""
    for code, check in load_checks().items():
        if "<" in check.example or check.lang != "bash":
            continue  # a placeholder (no such option in 0.5.23), or not a launch (SL090)
        bad = lint(check.example + "\n", path="example.sh")
        good = lint(check.instead + "\n", path="example.sh")
        assert code in {f.code for f in bad.findings}, (code, [f.message for f in bad.findings])
        assert code not in {f.code for f in good.findings}, (code, [f.message for f in good.findings])
        assert not [f for f in good.findings if f.severity <= 2], (code, [f.message for f in good.findings])


def test_rule_command_prints_docs(capsys):
    assert cli_main(["rule", "SL003"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# SL003 ambiguous-option")
    assert cli_main(["rule", "SL999"]) == 2
