"""End to end through a real editor: headless Neovim's built-in LSP client against servelint.

tests/nvim/e2e.lua does what a user does (open a .sh file, wait for diagnostics, hover,
ask for code actions, apply the preferred quick fix) and records it all in a JSON file;
this module runs it and checks the record. A missing `nvim` is a failure, not a skip:
`make test` installs Neovim before running the tests.
"""

import json
import shutil
from pathlib import Path

from nvim_harness import NVIM_DIR, run_headless


def run_nvim(tmp_path: Path) -> tuple[dict, str]:
    script = tmp_path / "launch.sh"
    shutil.copy(NVIM_DIR / "launch.sh", script)
    return run_headless(tmp_path, "e2e.lua", {"SERVELINT_NVIM_FILE": str(script)})


def test_neovim_user_session(tmp_path):
    report, output = run_nvim(tmp_path)
    context = f"\n--- report\n{json.dumps(report, indent=2)}\n{output}"
    timing = report.get("timing_ms", {})
    print(f"\nNeovim: didChange -> publishDiagnostics {timing.get('did_change_to_diagnostics')} ms; "
          f"buffer edit -> publishDiagnostics {timing.get('edit_to_diagnostics')} ms "
          f"(includes Neovim's didChange debounce)")

    assert not report["errors"], "the Lua script hit errors" + context
    assert report["filetype"] == "sh", context

    # 1. Diagnostics land on the exact tokens.
    initial = {d["code"]: d for d in report["initial"]}
    assert {"SL002", "SL007"} <= set(initial), context
    sl002, sl007 = initial["SL002"], initial["SL007"]
    assert (sl002["lnum"], sl002["col"], sl002["end_lnum"], sl002["end_col"]) == (2, 2, 2, 11), context
    assert sl002["severity"] == "ERROR" and sl002["source"] == "servelint", context
    assert (sl007["lnum"], sl007["col"], sl007["end_lnum"], sl007["end_col"]) == (3, 22, 3, 33), context
    assert "flash_infer" in sl007["message"], context

    # 3. Hover: an option's documentation, and the finding under the cursor.
    assert "--port" in (report["hover_port"].get("value") or ""), context
    assert report["hover_port"].get("kind") == "markdown", context
    assert "SL002" in (report["hover_finding"].get("value") or ""), context
    assert "SL007" in (report["hover_after_fix"].get("value") or ""), context

    # 4. The fix-all source action is offered when asked for by kind.
    assert [a["kind"] for a in report["fix_all"]] == ["source.fixAll.servelint"], context
    assert report["fix_all"][0]["has_edit"], context

    # 2. The preferred quick fix rewrites the flag and nothing else.
    assert any(a["kind"] == "quickfix" and a["isPreferred"] for a in report["quick_fixes"]), context
    lines = report["lines_after_fix"]
    assert lines == [
        "#!/bin/bash",
        "python3 -m sglang.launch_server --model-path m \\",
        "  --tp-size 2 \\",
        "  --attention-backend flash_infer \\",
        "  --port 30000",
    ], context
    assert all(line.endswith(" \\") for line in lines[1:4]), context

    # ...and the re-lint after didChange drops SL002 and keeps SL007.
    after = {d["code"] for d in report["after_fix"]}
    assert "SL002" not in after and "SL007" in after, context
    assert report["versions"]["after"] > report["versions"]["before"], context

    # 5. Timing is recorded, not asserted.
    assert isinstance(timing.get("did_change_to_diagnostics"), (int, float)), context
