"""End to end through a real editor, on every file format servelint reads.

tests/nvim/formats.lua opens copies of the fixtures in tests/nvim/formats/ (names kept, since
formats are detected by name) in one headless Neovim with one servelint client: a Kubernetes
Deployment running a `bash -c` block scalar, a compose file with a folded `command: >`, a
.vscode/launch.json with comments, a Dockerfile exec-form CMD, a Python subprocess.Popen argv, a
```bash fence in Markdown and an SGLang --config YAML file. Each has exactly one problem. For each
file the script records the diagnostics, a hover on the flagged token and the quick fixes, applies
the preferred one (where the server prefers none, as for an ambiguous option, the test names the
menu entry to pick), waits for the re-lint and saves the file. This module runs it once and checks,
per format: the code and exact range (as `servelint check --format json` reports them), the hover,
that the fix removed the finding, that the saved file is still valid in its own syntax, and that
`servelint check` on the saved file no longer reports the code. Same harness as
tests/test_nvim_seed.py: a missing `nvim` is a failure.
"""

import json

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nvim_harness import run_headless

NVIM_DIR = Path(__file__).parent / "nvim"
FIXTURES = NVIM_DIR / "formats"


def strip_json_comments(text: str) -> str:
    """JSON with comments (as VS Code reads launch.json) to plain JSON: drops // and /* */
    comments outside strings and trailing commas before } or ]."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def check_deploy(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    assert len(docs) == 1 and docs[0]["kind"] == "Deployment", docs
    container = docs[0]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["/bin/bash", "-c"], container
    script = container["args"][0]
    assert isinstance(script, str) and script.startswith("python3 -m sglang.launch_server \\\n"), script
    assert "  --tp-size 2 \\\n" in script and "--tp_size" not in script, script
    assert script.endswith("--port 30000\n"), script


def check_stack(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    assert len(docs) == 1, docs
    service = docs[0]["services"]["sglang"]
    assert service["entrypoint"] == "python3 -m sglang.launch_server", service
    command = service["command"]
    assert command.endswith("--attention-backend flashinfer\n"), command
    assert "\n" not in command.rstrip("\n"), f"the folded scalar no longer folds to one line: {command!r}"


def check_launch_json(path: Path) -> None:
    text = path.read_text()
    assert "// Debug the SGLang server" in text, "the comment was lost"
    data = json.loads(strip_json_comments(text))
    (config,) = data["configurations"]
    assert config["module"] == "sglang.launch_server", config
    args = config["args"]
    assert args[:2] == ["--model-path", "m"] and args[3:] == ["8"], args
    assert args[2] == "--cuda-graph-max-bs-decode", args  # its successor (SGLang 0.5.14-0.5.19)


def check_dockerfile(path: Path) -> None:
    cmd_lines = [ln for ln in path.read_text().splitlines() if ln.startswith("CMD ")]
    assert len(cmd_lines) == 1, cmd_lines
    argv = json.loads(cmd_lines[0][len("CMD "):])
    assert argv == ["python3", "-m", "sglang.launch_server", "--model-path", "m",
                    "--trust-remote-code"], argv


def check_python(path: Path) -> None:
    source = path.read_text()
    compile(source, str(path), "exec")
    assert ('["python3", "-m", "sglang.launch_server", "--model-path", model, "--tp-size", "2"]'
            in source), source


FENCE_BODY_END = "  --port 30000"


def check_markdown(path: Path) -> None:
    lines = path.read_text().splitlines()
    fences = [i for i, ln in enumerate(lines) if ln.startswith("```")]
    assert [lines[i] for i in fences] == ["```bash", "```", "```bash", "```"], fences
    body = lines[fences[0] + 1:fences[1]]
    assert body[0] == "python3 -m sglang.launch_server \\", body
    assert body[-1] == FENCE_BODY_END, body
    assert all(ln.endswith(" \\") for ln in body[:-1]), f"a continuation backslash was lost: {body}"
    assert not any("--enable-ep-moe" in ln for ln in body), body
    assert "  --ep-size 8 \\" in body, body  # SGLang's advice: the --tp-size value
    bash = shutil.which("bash")
    assert bash, "bash not found on PATH"
    check = subprocess.run([bash, "-n"], input="\n".join(body) + "\n", capture_output=True,
                           text=True, timeout=30)
    assert check.returncode == 0, f"bash -n on the fence: {check.stderr}"


def check_config(path: Path) -> None:
    assert yaml.safe_load(path.read_text()) == {"model-path": "m", "tp-size": 2, "port": 30000}


# name (path relative to the tmp dir), code, range (0-based: line, char, end line, end char)
# as `servelint check --format json` reports it, the token that range covers, filetype to set
# when Neovim detects none, the preferred quick fix's title, the fix to pick from the menu when
# the server prefers none (several equal choices), and the validity check of the saved file.
CASES = [
    ("deploy.yml", "SL002", (25, 16, 25, 25), "--tp_size", "yaml",
     "Replace --tp_size with --tp-size (SL002)", None, check_deploy),
    ("stack.yaml", "SL007", (15, 26, 15, 37), "flash_infer", "yaml",
     "Use 'flashinfer' (SL007)", None, check_stack),
    (".vscode/launch.json", "SL009", (9, 36, 9, 57), '"--cuda-graph-max-bs"', "jsonc",
     "Replace --cuda-graph-max-bs with --cuda-graph-max-bs-decode (SL009)", None,
     check_launch_json),
    ("Dockerfile", "SL013", (12, 90, 12, 96), '"true"', "dockerfile",
     "Remove 'true' (SL013)", None, check_dockerfile),
    ("serve.py", "SL002", (11, 93, 11, 104), '"--tp_size"', "python",
     "Replace --tp_size with --tp-size (SL002)", None, check_python),
    ("DEPLOY.md", "SL009", (10, 2, 10, 17), "--enable-ep-moe", "markdown",
     "Replace --enable-ep-moe with --ep-size 8 (SL009)", None, check_markdown),
    ("server-config.yaml", "SL002", (1, 0, 1, 7), "tp_size", "yaml",
     "Replace --tp_size with --tp-size (SL002)", None, check_config),
]
IDS = [c[0] for c in CASES]


def as_list(value) -> list:
    # Neovim's JSON encoder writes an empty Lua table as {}.
    return list(value) if isinstance(value, list) else []


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    nvim = shutil.which("nvim")
    assert nvim, ("`nvim` was not found on PATH: the editor end-to-end test needs Neovim >= 0.7 "
                  "(`make test` installs it; or `apt-get install neovim`)")
    tmp_path = tmp_path_factory.mktemp("formats")
    spec = []
    for name, code, _, _, filetype, _, pick, _ in CASES:
        dest = tmp_path / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / name, dest)
        spec.append({"name": name, "path": str(dest), "code": code, "filetype": filetype,
                     "pick": pick})
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    report, output = run_headless(tmp_path, "formats.lua", {"SERVELINT_NVIM_SPEC": str(spec_file)})
    return report, output, tmp_path


def test_one_client_for_every_buffer(session):
    report, output, _ = session
    context = f"\n--- report errors\n{report['errors']}\n{output}"
    assert not report["errors"], "the Lua script hit errors" + context
    assert report.get("client_count") == 1, context
    assert set(report["files"]) == set(IDS), context


@pytest.mark.parametrize("name,code,rng,token,filetype,preferred,pick,check", CASES, ids=IDS)
def test_format_in_neovim(session, name, code, rng, token, filetype, preferred, pick, check):
    report, output, root = session
    rec = report["files"].get(name)
    assert rec is not None, f"no record for {name}\n{output}"
    context = f"\n--- record of {name}\n{json.dumps(rec, indent=2)}\n{output}"
    assert not as_list(rec["errors"]), f"the Lua script hit errors on {name}" + context
    original = (FIXTURES / name).read_text().splitlines()
    assert as_list(rec["lines_original"]) == original, f"Neovim did not load {name} as is" + context
    assert rec["attached"] is True, context
    allowed = {"json", "jsonc"} if filetype == "jsonc" else {filetype}
    assert rec["filetype"] in allowed, (
        f"filetype {rec['filetype']!r} (detected {rec['detected_filetype']!r})" + context)

    # 1. Exactly one diagnostic, with the code and the range the CLI reports, on the token.
    initial = as_list(rec["initial"])
    assert [d["code"] for d in initial] == [code], f"expected only {code}, got {initial}" + context
    (diag,) = initial
    assert tuple(diag["lsp_range"]) == rng, f"{code} range {diag['lsp_range']} != {rng}" + context
    assert (diag["lnum"], diag["col"], diag["end_lnum"], diag["end_col"]) == rng, context
    assert original[rng[0]][rng[1]:rng[3]] == token, context
    assert diag["source"] == "servelint", context

    # 2. Hover on the flagged token names the rule.
    hover = rec["hover"]
    assert code in (hover.get("value") or ""), f"hover at {rec['hover_position']}: {hover}" + context

    # 3. The preferred quick fix (or, when the server prefers none, the one picked from the
    # menu), applied: the finding is gone from the re-lint of the new version.
    actions = as_list(rec["actions"])
    titles = [(a["title"], a["isPreferred"]) for a in actions if a["kind"] == "quickfix"]
    assert all(a["has_edit"] for a in actions), context
    assert [t for t, p in titles if p] == ([preferred] if preferred else []), (
        f"expected the preferred quick fix {preferred!r}: {titles}" + context)
    assert rec["preferred_title"] == (preferred or None), context
    assert rec["applied_title"] == (preferred or pick), f"{titles}" + context
    assert rec["versions"]["after"] > rec["versions"]["before"], context
    assert not any(d["code"] == code for d in as_list(rec["after_fix"])), (
        f"{code} is still reported after the fix" + context)
    assert rec["publish_after_fix"]["count"] == 0, "the re-lint published diagnostics" + context

    # 4. The saved file is what the editor showed, and valid in its own syntax.
    saved = root / name
    assert Path(rec["saved"]).resolve() == saved.resolve(), context
    assert rec["modified_after_write"] is False, context
    assert saved.read_text().splitlines() == as_list(rec["lines_after_fix"]), context
    check(saved)

    # 5. The command line agrees.
    proc = subprocess.run([sys.executable, "-m", "servelint", "check", "--format", "json-lines", str(saved)],
                          capture_output=True, text=True, timeout=60, cwd=root)
    findings = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.strip().startswith("{")]
    assert not [f for f in findings if f["code"] == code], (
        f"servelint check still reports {code} on the saved {name}:\n{proc.stdout}{proc.stderr}")
