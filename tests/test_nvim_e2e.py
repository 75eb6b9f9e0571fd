"""End to end through a real editor: headless Neovim's built-in LSP client against servelint.

tests/nvim/e2e.lua does what a user does (open a .sh file, wait for diagnostics, hover,
ask for code actions, apply the preferred quick fix) and records it all in a JSON file;
this module runs it and checks the record. A missing `nvim` is a failure, not a skip:
`make test` installs Neovim before running the tests.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

NVIM_DIR = Path(__file__).parent / "nvim"
TIMEOUT_S = 60


def run_nvim(tmp_path: Path) -> tuple[dict, str]:
    nvim = shutil.which("nvim")
    assert nvim, ("`nvim` was not found on PATH: the editor end-to-end test needs Neovim >= 0.7 "
                  "(`make test` installs it; or `apt-get install neovim`)")
    script = tmp_path / "launch.sh"
    shutil.copy(NVIM_DIR / "launch.sh", script)
    out = tmp_path / "report.json"
    xdg = tmp_path / "xdg"
    env = dict(
        os.environ,
        SERVELINT_NVIM_FILE=str(script),
        SERVELINT_NVIM_ROOT=str(tmp_path),
        SERVELINT_NVIM_OUT=str(out),
        SERVELINT_NVIM_PYTHON=sys.executable,
        # Keep Neovim's state and lsp.log inside the tmp dir.
        XDG_CONFIG_HOME=str(xdg / "config"),
        XDG_DATA_HOME=str(xdg / "data"),
        XDG_STATE_HOME=str(xdg / "state"),
        XDG_CACHE_HOME=str(xdg / "cache"),
    )
    cmd = [nvim, "-u", "NONE", "-i", "NONE", "--headless", "-S", str(NVIM_DIR / "e2e.lua")]
    try:
        proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
        output = f"nvim exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    except subprocess.TimeoutExpired as exc:
        output = f"nvim timed out after {TIMEOUT_S}s\n--- stdout\n{exc.stdout}\n--- stderr\n{exc.stderr}"
    lsp_log = xdg / "cache" / "nvim" / "lsp.log"
    if lsp_log.exists():
        output += "\n--- lsp.log (tail)\n" + lsp_log.read_text(errors="replace")[-4000:]
    assert out.exists(), f"nvim wrote no report\n{output}"
    return json.loads(out.read_text()), output


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
