"""Running headless Neovim's built-in LSP client against servelint, for the editor tests.

Each test writes what the Lua script needs into environment variables; the Lua script in
tests/nvim/ drives the editor and writes a JSON report, which the test checks. A missing
`nvim` is a failure, not a skip: `make test` installs Neovim first.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

NVIM_DIR = Path(__file__).parent / "nvim"
TIMEOUT_S = 60


def run_headless(tmp_path: Path, lua: str, env: dict[str, str]) -> tuple[dict, str]:
    """Run tests/nvim/<lua> in headless Neovim; return its report and what it printed
    (with the tail of Neovim's lsp.log), for failure messages."""
    nvim = shutil.which("nvim")
    assert nvim, ("`nvim` was not found on PATH: the editor end-to-end test needs Neovim >= 0.7 "
                  "(`make test` installs it; or `apt-get install neovim`)")
    out = tmp_path / "report.json"
    xdg = tmp_path / "xdg"
    full_env = dict(
        os.environ,
        SERVELINT_NVIM_ROOT=str(tmp_path),
        SERVELINT_NVIM_OUT=str(out),
        SERVELINT_NVIM_PYTHON=sys.executable,
        # Keep Neovim's state and lsp.log inside the tmp dir.
        XDG_CONFIG_HOME=str(xdg / "config"),
        XDG_DATA_HOME=str(xdg / "data"),
        XDG_STATE_HOME=str(xdg / "state"),
        XDG_CACHE_HOME=str(xdg / "cache"),
        **env,
    )
    cmd = [nvim, "-u", "NONE", "-i", "NONE", "--headless", "-S", str(NVIM_DIR / lua)]
    try:
        proc = subprocess.run(cmd, env=full_env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
        output = f"nvim exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    except subprocess.TimeoutExpired as exc:
        output = f"nvim timed out after {TIMEOUT_S}s\n--- stdout\n{exc.stdout}\n--- stderr\n{exc.stderr}"
    lsp_log = xdg / "cache" / "nvim" / "lsp.log"
    if lsp_log.exists():
        output += "\n--- lsp.log (tail)\n" + lsp_log.read_text(errors="replace")[-4000:]
    assert out.exists(), f"nvim wrote no report\n{output}"
    return json.loads(out.read_text()), output
