"""End to end through a real editor: a rule conflict (SL101) seen and fixed in headless Neovim.

tests/nvim/seed.lua opens a copy of tests/nvim/seed.sh, which launches an embedding server with
both --prefill-only-disable-kv-cache and --enable-hisparse. It records the diagnostics (an error
on --enable-hisparse, a hint on the other flag), both hovers, the fix-all source action on the
original text, the quick fixes of both diagnostics, applies the preferred one, waits for the
re-lint and saves the file; this module runs it and checks the record, then runs `bash -n` on
the saved script. Same harness as tests/test_nvim_e2e.py: a missing `nvim` is a failure.
"""

import json
import shutil
import subprocess
from pathlib import Path

from nvim_harness import NVIM_DIR, run_headless


SEED = NVIM_DIR / "seed.sh"
REMOVED_LINE = "  --enable-hisparse \\"


def run_nvim(tmp_path: Path, lua: str, script_name: str) -> tuple[dict, str, Path]:
    script = tmp_path / script_name
    shutil.copy(NVIM_DIR / script_name, script)
    report, output = run_headless(tmp_path, lua, {"SERVELINT_NVIM_FILE": str(script)})
    return report, output, script


def as_list(value) -> list:
    # Neovim's JSON encoder writes an empty Lua table as {}.
    return list(value) if isinstance(value, list) else []


def span(d: dict) -> tuple:
    return (d["lnum"], d["col"], d["end_lnum"], d["end_col"])


def test_neovim_fixes_a_rule_conflict(tmp_path):
    original = SEED.read_text().splitlines()
    assert REMOVED_LINE in original, f"{SEED} no longer contains {REMOVED_LINE!r}"
    expected_fixed = [line for line in original if line != REMOVED_LINE]

    report, output, saved = run_nvim(tmp_path, "seed.lua", "seed.sh")
    context = f"\n--- report\n{json.dumps(report, indent=2)}\n{output}"

    assert not report["errors"], "the Lua script hit errors" + context
    assert report["filetype"] == "sh", context
    assert as_list(report["lines_original"]) == original, "Neovim did not load seed.sh as is" + context

    # 1. One error on --enable-hisparse and one hint on the other flag of the conflict; nothing else.
    initial = as_list(report["initial"])
    shape = [(d["code"], d["severity"], span(d)) for d in initial]
    assert shape == [("SL101", "HINT", (4, 2, 4, 33)), ("SL101", "ERROR", (5, 2, 5, 19))], (
        f"expected exactly an SL101 HINT on line 4 cols 2..33 and an SL101 ERROR on line 5 "
        f"cols 2..19, got {shape}" + context)
    hint, error = initial
    assert error["message"].startswith(
        "--prefill-only-disable-kv-cache replaces the KV cache with a pool that stores nothing, while --enable-hisparse needs a KV pool of its own"), (
        f"unexpected SL101 error message {error['message']!r}" + context)
    assert "part of" in hint["message"] and "line 6" in hint["message"], (
        f"the hint should say it is part of the problem reported on line 6: {hint['message']!r}" + context)
    assert all(d["source"] == "servelint" for d in initial), context

    # 2. Hover on the flagged token: the rule record.
    hover = report["hover_hisparse"]
    assert hover.get("kind") == "markdown", f"hover on --enable-hisparse: {hover}" + context
    text = hover.get("value") or ""
    for needle in ("SL101", "SGLang's message:", "HiSparse attention selects its own KV pool family", "Solutions",
                   "Remove --enable-hisparse when using --prefill-only-disable-kv-cache",
                   "Prevention", "# before", "github.com/sgl-project/sglang"):
        assert needle in text, f"hover on --enable-hisparse lacks {needle!r}" + context

    # 3. Hover on the other flag: its option documentation and the rules that mention it.
    hover = report["hover_prefill"]
    text = hover.get("value") or ""
    for needle in ("**--prefill-only-disable-kv-cache** (SGLang", "Default", "Rules about this option"):
        assert needle in text, f"hover on --prefill-only-disable-kv-cache lacks {needle!r}" + context
    rules_section = text.split("Rules about this option", 1)[1].split("\n---\n", 1)[0]
    assert "SL101" in rules_section, "SL101 is not listed under 'Rules about this option'" + context

    # 5. Fix all on the original text: one action, and its edit gives the preferred fix's result.
    fix_all = as_list(report["fix_all"])
    assert [a["kind"] for a in fix_all] == ["source.fixAll.servelint"], (
        "expected exactly one source.fixAll.servelint action" + context)
    assert fix_all[0]["has_edit"], context
    assert as_list(report.get("lines_after_fix_all")) == expected_fixed, (
        "fix all's edit, applied to the original text, does not just drop the --enable-hisparse line"
        + context)

    # 4. Quick fixes: the preferred one removes --enable-hisparse, the other the other flag.
    fixes = as_list(report["quick_fixes"])
    titles = [(a["title"], a["kind"], a["isPreferred"]) for a in fixes]
    assert ("Remove --enable-hisparse (SL101)", "quickfix", True) in titles, (
        f"no preferred quickfix 'Remove --enable-hisparse (SL101)': {titles}" + context)
    assert ("Remove --prefill-only-disable-kv-cache (SL101)", "quickfix", False) in titles, (
        f"no quickfix 'Remove --prefill-only-disable-kv-cache (SL101)': {titles}" + context)
    assert sum(a["isPreferred"] for a in fixes) == 1, f"more than one preferred fix: {titles}" + context
    assert all(a["has_edit"] for a in fixes), context
    hint_fixes = report.get("hint_quick_fixes")
    assert isinstance(hint_fixes, (list, dict)), "no SL101 hint diagnostic on line 4 to ask fixes for" + context
    hint_titles = [(a["title"], a["kind"], a["isPreferred"]) for a in as_list(hint_fixes)]
    assert sorted(hint_titles) == sorted(titles), (
        f"the hint offers {hint_titles}, the error {titles}" + context)
    assert report["preferred_title"] == "Remove --enable-hisparse (SL101)", context

    lines = as_list(report["lines_after_fix"])
    assert lines == expected_fixed, "the preferred fix did more than drop the --enable-hisparse line" + context
    assert all(line.endswith(" \\") for line in lines[2:5]), "a continuation backslash was lost" + context
    assert report["versions"]["after"] > report["versions"]["before"], context

    # ...and the re-lint of the fixed text finds nothing.
    assert report["publish_after_fix"]["count"] == 0, "the server published diagnostics after the fix" + context
    assert not as_list(report["after_fix"]), "diagnostics remain after the fix" + context

    # The saved file is the fixed script, and it still parses.
    assert report["modified_after_write"] is False, context
    assert Path(report["saved"]).resolve() == saved.resolve(), context
    assert saved.read_text() == "\n".join(expected_fixed) + "\n", (
        f"the saved file differs from the fixed script:\n{saved.read_text()}" + context)
    bash = shutil.which("bash")
    assert bash, "bash not found on PATH"
    check = subprocess.run([bash, "-n", str(saved)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, f"bash -n {saved} exited {check.returncode}: {check.stderr}" + context
