"""The editor product end to end in headless Neovim: what a VS Code user does after
installing the extension (see docs/vscode.md), through Neovim's built-in LSP client.

A workspace with a `.servelint.toml`; open a launch script; see findings (with the
project's severity); hover; apply the quick fix; change a setting while the server runs
and see the effect; silence a finding with a reason through the code action; complete a
half-typed option. tests/nvim/product.lua does the steps and reports; this checks them.
"""

import json

from nvim_harness import run_headless

SCRIPT = """#!/bin/bash
  python3 -m sglang.launch_server --model-path m \\
    --tp_size 2 \\
    --attention-backend flash_infer \\
    --port 30000
"""


def test_a_user_session_with_project_config_suppression_settings_and_completion(tmp_path):
    (tmp_path / ".servelint.toml").write_text('[severity]\nSL007 = "warning"\n')
    script = tmp_path / "serve.sh"
    script.write_text(SCRIPT)
    report, output = run_headless(tmp_path, "product.lua", {"SERVELINT_NVIM_FILE": str(script)})
    context = f"\n--- report\n{json.dumps(report, indent=2)}\n{output}"
    assert not report["errors"], "the Lua script hit errors" + context

    initial = {d["code"]: d for d in report["initial"]}
    assert initial["SL002"]["severity"] == "ERROR", context
    assert initial["SL007"]["severity"] == "WARN", context  # from .servelint.toml
    assert (initial["SL002"]["lnum"], initial["SL002"]["col"]) == (2, 4), context

    assert "--port" in report["hover_option"]["value"], context
    assert "SL002" in report["hover_finding"]["value"], context

    assert report["after_fix"][2] == "    --tp-size 2 \\", context

    assert "SL007" not in report["with_ignore"], context
    assert "SL007" in report["without_ignore"], context

    titles = [a["title"] for a in report["sl007_actions"]]
    assert "Disable SL007 for this launch" in titles, context
    assert report["after_suppress"][:3] == [
        "#!/bin/bash",
        "  # servelint: disable=SL007 -- our fork registers flash_infer",
        "  python3 -m sglang.launch_server --model-path m \\",
    ], context
    assert report["after_suppress_codes"] == [], context  # no SL007, and no unused-suppression

    labels = report["completion_labels"]
    assert "--enable-hierarchical-cache" in labels, context
    assert "--tp-size" not in labels and "--port" not in labels, context  # already written
    assert "hierarchical" in (report.get("resolved_doc") or {}).get("value", "").lower(), context
    assert report.get("server_exit", {}).get("code") in (0, None), context
