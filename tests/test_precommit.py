"""The pre-commit hooks of .pre-commit-hooks.yaml, run by the real `pre-commit` tool in a
temporary git repository whose .pre-commit-config.yaml names a snapshot of this checkout as
the hook repository (`repo: <path>`, `rev: <its HEAD>`). pre-commit installs servelint from
it into its own environment (the dependencies come from PyPI, at the newest versions the
ranges allow), as it does for a team's `repo: https://github.com/servelint/servelint`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_packaging import (
    BAD_LAUNCH,
    GOOD_LAUNCH,
    ROOT,
    ok,
    pip_env,
    run,
    source_snapshot,
)

GIT = ["git", "-c", "user.name=servelint tests", "-c", "user.email=tests@servelint.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]


def launch_files(launch: str) -> dict[str, str]:
    """The same launch in each kind of file the hooks are for (docs/formats/README.md)."""
    words = launch.split()
    argv = ", ".join(json.dumps(w) for w in words)
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                           "outputs": [], "source": ["!" + launch]}],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                            "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    launch_json = {"version": "0.2.0", "configurations": [
        {"name": "serve", "type": "debugpy", "request": "launch", "module": "sglang.launch_server",
         "args": words[3:]}]}
    return {
        "serve.sh": "#!/bin/sh\n" + launch,
        "scripts/serve.bash": launch,
        "Dockerfile": "FROM lmsysorg/sglang:v0.5.23\nCMD " + launch,
        "k8s/pod.yaml": ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: sglang\nspec:\n"
                         "  containers:\n    - name: sglang\n      image: lmsysorg/sglang:v0.5.23\n"
                         f"      command: [{argv}]\n"),
        "launch.py": f"import subprocess\n\nsubprocess.run([{argv}])\n",
        "README.md": f"# Serving\n\n```bash\n{launch}```\n",
        ".vscode/launch.json": json.dumps(launch_json, indent=2) + "\n",
        "serve.ipynb": json.dumps(notebook, indent=1) + "\n",
    }


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[Path, str]:
    """A git repository holding this checkout's package sources and hooks file, committed."""
    repo = source_snapshot(tmp_path_factory.mktemp("hook-repo"))
    assert (repo / ".pre-commit-hooks.yaml").is_file()
    ok([*GIT, "init", "-q"], cwd=repo)
    ok([*GIT, "add", "-A"], cwd=repo)
    ok([*GIT, "commit", "-q", "-m", "snapshot"], cwd=repo)
    return repo, ok(["git", "rev-parse", "HEAD"], cwd=repo).stdout.strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    """One cache for the module, so the hook environment is installed once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path, hook_repo):
    """A function that makes a git repository using the hooks, with these files staged."""
    repo_path, sha = hook_repo

    def make(files: dict[str, str], hook_ids=("servelint", "servelint-fix")) -> Path:
        root = tmp_path / "project"
        root.mkdir()
        config = {"repos": [{"repo": str(repo_path), "rev": sha,
                             "hooks": [{"id": h} for h in hook_ids]}]}
        (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        ok([*GIT, "init", "-q"], cwd=root)
        ok([*GIT, "add", "-A"], cwd=root)
        return root
    return make


def pre_commit(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = pip_env(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    return run([sys.executable, "-m", "pre_commit", *args], cwd=root, env=env)


def test_the_hooks_file_declares_both_hooks():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert sorted(hooks) == ["servelint", "servelint-fix"]
    assert hooks["servelint"]["entry"] == "servelint check"
    assert hooks["servelint-fix"]["entry"] == "servelint check --fix"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert set(hook["types_or"]) >= {"shell", "yaml", "json", "jupyter", "dockerfile",
                                         "python", "markdown"}


def test_the_hook_fails_on_a_bad_launch_in_every_format_and_prints_the_findings(project, pre_commit_home):
    files = launch_files(BAD_LAUNCH)
    root = project({**files, "notes.txt": BAD_LAUNCH}, hook_ids=("servelint",))
    proc = pre_commit(root, pre_commit_home, "run", "servelint", "--all-files")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "servelint" in out and "Failed" in out, out
    for rel in files:
        assert f"{rel}:" in out and "error SL013" in out, f"no finding for {rel}:\n{out}"
    lines = [line for line in out.splitlines() if "error SL013" in line]
    assert len(lines) == len(files), out
    # A kind of file servelint does not read is not handed to it.
    assert "notes.txt" not in out, out


def test_the_hook_passes_on_good_launches(project, pre_commit_home):
    root = project(launch_files(GOOD_LAUNCH), hook_ids=("servelint",))
    proc = pre_commit(root, pre_commit_home, "run", "servelint", "--all-files")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Passed" in out and "SL013" not in out, out


def test_the_fix_hook_rewrites_the_file_and_then_passes(project, pre_commit_home):
    root = project({"serve.sh": BAD_LAUNCH, "k8s/pod.yaml": launch_files(BAD_LAUNCH)["k8s/pod.yaml"]},
                   hook_ids=("servelint-fix",))
    first = pre_commit(root, pre_commit_home, "run", "servelint-fix", "--all-files")
    out = first.stdout + first.stderr
    assert first.returncode == 1, out
    assert "files were modified by this hook" in out, out
    assert (root / "serve.sh").read_text(encoding="utf-8") == GOOD_LAUNCH
    assert (root / "k8s/pod.yaml").read_text(encoding="utf-8") == launch_files(GOOD_LAUNCH)["k8s/pod.yaml"]
    ok([*GIT, "add", "-A"], cwd=root)
    second = pre_commit(root, pre_commit_home, "run", "servelint-fix", "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr


def test_an_installed_hook_refuses_a_commit_with_a_bad_launch(project, pre_commit_home):
    """`pre-commit install` then `git commit`, as a team uses it."""
    root = project({"serve.sh": BAD_LAUNCH}, hook_ids=("servelint",))
    env = pip_env(PRE_COMMIT_HOME=str(pre_commit_home), PRE_COMMIT_COLOR="never")
    ok([sys.executable, "-m", "pre_commit", "install"], cwd=root, env=env)
    refused = run([*GIT, "commit", "-q", "-m", "bad"], cwd=root, env=env)
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "serve.sh:1:" in refused.stdout + refused.stderr
    (root / "serve.sh").write_text(GOOD_LAUNCH, encoding="utf-8")
    ok([*GIT, "add", "serve.sh"], cwd=root)
    ok([*GIT, "commit", "-q", "-m", "good"], cwd=root, env=env)
