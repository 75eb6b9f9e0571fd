"""The composite GitHub Action (action.yml), run here without GitHub: each step's `if:` is
evaluated as the runner does (for the expressions the action uses), `${{ ... }}` in a step's
`env:` and `with:` is replaced by the inputs and earlier steps' outputs, and each `run:`
script goes through `bash --noprofile --norc -eo pipefail`, GitHub's `shell: bash`, with
GITHUB_OUTPUT, RUNNER_TEMP and GITHUB_ACTION_PATH set. A `uses:` step (the SARIF upload) is
recorded with its inputs, not run."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from test_packaging import (
    BAD_LAUNCH,
    GOOD_LAUNCH,
    PYTHON,
    ROOT,
    ok,
    pip_env,
    source_snapshot,
)

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


# -- a small evaluator for the expressions of GitHub's `if:` and `${{ }}` -------------------

TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))"
                   r"|(?P<call>[A-Za-z_]+\(\))|(?P<ref>[A-Za-z_][A-Za-z0-9_.-]*))")


def evaluate(expr: str, context: dict, step_failed: bool = False):
    """Evaluate the subset of GitHub expression syntax the action uses: strings, context
    references (inputs.x, steps.id.outputs.x, github.action_path), ==, != (case-insensitive
    for strings, as on GitHub), &&, ||, !, parentheses and success()/failure()/always().
    Anything else is an error, so the action cannot use syntax this test ignores."""
    tokens, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            raise ValueError(f"expression {expr!r}: cannot read {expr[pos:]!r}")
        if m.group("str") is not None:
            tokens.append(("str", m.group("str")[1:-1].replace("''", "'")))
        elif m.group("op"):
            tokens.append(("op", m.group("op")))
        elif m.group("call"):
            tokens.append(("call", m.group("call")))
        else:
            tokens.append(("ref", m.group("ref")))
        pos = m.end()
        while pos < len(expr) and expr[pos].isspace():
            pos += 1
    i = 0

    def peek():
        return tokens[i] if i < len(tokens) else (None, None)

    def take():
        nonlocal i
        i += 1
        return tokens[i - 1]

    def primary():
        kind, value = take()
        if kind == "str":
            return value
        if kind == "ref":
            node = context
            for part in value.split("."):
                if not isinstance(node, dict) or part not in node:
                    return ""  # GitHub: a missing property is null, shown as ''
                node = node[part]
            return node
        if kind == "call":
            calls = {"success()": not step_failed, "failure()": step_failed, "always()": True}
            if value not in calls:
                raise ValueError(f"expression {expr!r}: unknown function {value}")
            return calls[value]
        if (kind, value) == ("op", "("):
            result = disjunction()
            assert take() == ("op", ")"), f"expression {expr!r}: missing )"
            return result
        if (kind, value) == ("op", "!"):
            return not truthy(primary())
        raise ValueError(f"expression {expr!r}: unexpected {value!r}")

    def comparison():
        left = primary()
        while peek() in (("op", "=="), ("op", "!=")):
            op = take()[1]
            right = primary()
            same = (left.lower() == right.lower() if isinstance(left, str) and isinstance(right, str)
                    else left == right)
            left = same if op == "==" else not same
        return left

    def conjunction():
        left = comparison()
        while peek() == ("op", "&&"):
            take()
            right = comparison()
            left = right if truthy(left) else left
        return left

    def disjunction():
        left = conjunction()
        while peek() == ("op", "||"):
            take()
            right = conjunction()
            left = left if truthy(left) else right
        return left

    result = disjunction()
    if i != len(tokens):
        raise ValueError(f"expression {expr!r}: unexpected {tokens[i][1]!r}")
    return result


def truthy(value) -> bool:
    return bool(value) and value != "0" if isinstance(value, str) else bool(value)


def substitute(text: str, context: dict) -> str:
    return EXPR.sub(lambda m: str(evaluate(m.group(1), context)), text)


def uses_status_function(expr: str) -> bool:
    return bool(re.search(r"\b(success|failure|always|cancelled)\(\)", expr))


# -- the runner --------------------------------------------------------------------------

@dataclass
class StepRun:
    name: str
    ran: bool
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    outputs: dict = field(default_factory=dict)
    uses: str | None = None
    with_: dict = field(default_factory=dict)


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict
    failed: bool

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)

    @property
    def log(self) -> str:
        return "\n".join(f"## {s.name} (ran={s.ran}, exit {s.exit_code})\n{s.stdout}{s.stderr}"
                         for s in self.steps)


def read_outputs(path: Path) -> dict:
    """GITHUB_OUTPUT's `name=value` lines and `name<<DELIM ... DELIM` blocks."""
    outputs, lines = {}, path.read_text(encoding="utf-8").splitlines()
    it = iter(lines)
    for line in it:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            for inner in it:
                if inner == delim:
                    break
                body.append(inner)
            outputs[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def run_action(inputs: dict[str, str], workspace: Path, action_path: Path, runner_temp: Path,
               extra_env: dict[str, str] | None = None) -> ActionRun:
    declared = ACTION["inputs"]
    unknown = set(inputs) - set(declared)
    assert not unknown, f"action.yml has no input {sorted(unknown)}"
    values = {k: str(v.get("default", "")) for k, v in declared.items()}
    values.update(inputs)
    context: dict = {"inputs": values, "steps": {},
                     "github": {"action_path": str(action_path), "workspace": str(workspace)},
                     "runner": {"temp": str(runner_temp), "os": "Linux"}}
    runner_temp.mkdir(parents=True, exist_ok=True)
    failed = False
    records = []
    base_env = pip_env(GITHUB_ACTION_PATH=str(action_path), GITHUB_WORKSPACE=str(workspace),
                       RUNNER_TEMP=str(runner_temp), GITHUB_ACTIONS="true", CI="true",
                       **(extra_env or {}))
    for index, step in enumerate(ACTION["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        condition = str(step.get("if", "success()"))
        if not uses_status_function(condition):
            condition = f"success() && ({condition})"
        if not truthy(evaluate(condition, context, step_failed=failed)):
            records.append(StepRun(name, ran=False))
            continue
        if "uses" in step:
            with_ = {k: substitute(str(v), context) for k, v in step.get("with", {}).items()}
            records.append(StepRun(name, ran=True, uses=step["uses"], with_=with_))
            continue
        assert step.get("shell") == "bash", f"step {name!r}: give it `shell: bash`"
        assert "${{" not in step["run"], (f"step {name!r} writes an expression into its script "
                                          "(script injection): pass it through env:")
        output_file = runner_temp / f"output-{index}"
        output_file.write_text("", encoding="utf-8")
        env = {**base_env, "GITHUB_OUTPUT": str(output_file)}
        env.update({k: substitute(str(v), context) for k, v in step.get("env", {}).items()})
        script = runner_temp / f"step-{index}.sh"
        script.write_text(step["run"], encoding="utf-8")
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                              cwd=workspace, env=env, capture_output=True, text=True, check=False)
        outputs = read_outputs(output_file)
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": outputs,
                                            "outcome": "failure" if proc.returncode else "success"}
        records.append(StepRun(name, ran=True, exit_code=proc.returncode, stdout=proc.stdout,
                               stderr=proc.stderr, outputs=outputs))
        failed = failed or proc.returncode != 0
    outputs = {k: substitute(str(v["value"]), context) for k, v in ACTION.get("outputs", {}).items()}
    return ActionRun(records, outputs, failed)


# -- fixtures ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def action_path(tmp_path_factory) -> Path:
    """What `uses: servelint/servelint@<ref>` checks out: this checkout's files (a snapshot,
    so installing from it writes nothing here)."""
    return source_snapshot(tmp_path_factory.mktemp("action") / "servelint")


@pytest.fixture(scope="module")
def local_index(action_path, tmp_path_factory) -> Path:
    """servelint's wheel and its pinned dependencies in a folder, standing in for PyPI for
    the `version` input (servelint is not published there yet)."""
    folder = tmp_path_factory.mktemp("index")
    ok([PYTHON, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(folder), str(action_path)],
       env=pip_env())
    wheel = next(folder.glob("servelint-*.whl"))
    ok([PYTHON, "-m", "pip", "download", "--quiet", "-d", str(folder), "-c",
        str(action_path / "constraints.txt"), str(wheel)], env=pip_env())
    return folder


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Path:
    """RUNNER_TEMP for the runs that install servelint from local_index: the first makes
    servelint's environment there, the next find servelint==VERSION installed already (a
    runner starts each job with an empty RUNNER_TEMP; the fresh case is the first test's)."""
    return tmp_path_factory.mktemp("runner")


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    (ws / "deploy").mkdir(parents=True)
    (ws / "deploy" / "bad.sh").write_text(BAD_LAUNCH, encoding="utf-8")
    (ws / "good.sh").write_text(GOOD_LAUNCH, encoding="utf-8")
    return ws


def from_local_index(local_index: Path) -> dict[str, str]:
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(local_index)}


# -- the tests ---------------------------------------------------------------------------

def test_the_action_is_composite_with_the_documented_inputs():
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) == {"paths", "version", "format", "args", "sarif-file",
                                     "upload-sarif", "python"}
    assert ACTION["inputs"]["format"]["default"] == "github"
    uses = [s["uses"] for s in ACTION["runs"]["steps"] if "uses" in s]
    assert uses == ["github/codeql-action/upload-sarif@v4"]
    documented = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    for name in ACTION["inputs"]:
        assert f"`{name}`" in documented, f"docs/ci.md does not describe the input {name}"


def test_the_cli_offers_the_formats_the_action_runs():
    help_text = ok([PYTHON, "-m", "servelint", "check", "--help"], cwd=ROOT).stdout
    for needed in ("github", "sarif", "--output-file"):
        assert needed in help_text, f"`servelint check --help` does not mention {needed}"


def test_github_format_installs_from_the_action_and_annotates_the_findings(action_path, workspace, tmp_path):
    result = run_action({"paths": "deploy good.sh"}, workspace, action_path, tmp_path / "runner")
    install = result.step("Install servelint")
    assert install.exit_code == 0, result.log
    assert install.stdout.startswith("servelint 0.1.0"), result.log
    lint = result.step("Run servelint")
    assert lint.exit_code == 1 and result.failed, result.log
    annotations = [line for line in lint.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 1, result.log
    assert re.match(r"::error file=deploy/bad\.sh,line=1,.*SL013", annotations[0]), annotations
    assert lint.outputs == {"exit-code": "1"}
    assert not result.step("Upload SARIF to code scanning").ran
    assert not result.step("Fail on findings").ran
    assert result.outputs["exit-code"] == "1"


def test_github_format_passes_on_good_launches_and_takes_args(action_path, workspace, runner, local_index):
    (workspace / "deploy" / "bad.sh").write_text(GOOD_LAUNCH, encoding="utf-8")
    (workspace / "tp.sh").write_text(GOOD_LAUNCH.replace("--trust-remote-code", "--tp 2"),
                                     encoding="utf-8")
    # A hint (--tp is an abbreviation) fails nothing by default ...
    quiet = run_action({"paths": "deploy\ngood.sh tp.sh", "version": "0.1.0"}, workspace,
                       action_path, runner, from_local_index(local_index))
    assert not quiet.failed and quiet.outputs["exit-code"] == "0", quiet.log
    assert "::notice file=tp.sh" in quiet.step("Run servelint").stdout, quiet.log
    # ... and does with --fail-on hint in args.
    strict = run_action({"paths": ". ", "version": "0.1.0", "args": "--fail-on hint"}, workspace,
                        action_path, runner, from_local_index(local_index))
    assert strict.failed and strict.outputs["exit-code"] == "1", strict.log


def test_sarif_format_writes_the_report_uploads_it_then_fails(action_path, workspace, runner, local_index):
    result = run_action({"format": "sarif", "version": "0.1.0", "sarif-file": "out/servelint.sarif",
                         "args": "--gpu sm90"},
                        workspace, action_path, runner, from_local_index(local_index))
    lint = result.step("Run servelint")
    assert lint.exit_code == 0, result.log  # the job fails after the upload, not before
    assert lint.outputs == {"sarif-file": "out/servelint.sarif", "exit-code": "1"}
    sarif = json.loads((workspace / "out" / "servelint.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["SL013"], results
    location = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert location.endswith("deploy/bad.sh"), location
    upload = result.step("Upload SARIF to code scanning")
    assert upload.ran and upload.with_ == {"sarif_file": "out/servelint.sarif", "category": "servelint"}
    fail = result.step("Fail on findings")
    assert fail.ran and fail.exit_code == 1 and result.failed, result.log
    assert result.outputs == {"exit-code": "1", "sarif-file": "out/servelint.sarif"}


def test_sarif_without_upload_leaves_the_file_and_a_clean_run_passes(action_path, workspace, runner, local_index):
    (workspace / "deploy" / "bad.sh").unlink()
    result = run_action({"format": "sarif", "version": "0.1.0", "upload-sarif": "false"},
                        workspace, action_path, runner, from_local_index(local_index))
    assert not result.failed, result.log
    assert not result.step("Upload SARIF to code scanning").ran
    assert not result.step("Fail on findings").ran
    sarif = json.loads((workspace / "servelint.sarif").read_text(encoding="utf-8"))
    assert sarif["runs"][0]["results"] == []


@pytest.mark.parametrize("inputs, message", [
    ({"format": "junit"}, "the format input is 'junit'; use github (annotations) or sarif"),
    ({"paths": "  \n "}, "the paths input is empty"),
    ({"args": "--select XX9"}, "XX9"),
])
def test_bad_inputs_fail_with_a_message_and_upload_nothing(inputs, message, action_path, workspace,
                                                           runner, local_index):
    result = run_action({"version": "0.1.0", **inputs}, workspace, action_path, runner,
                        from_local_index(local_index))
    lint = result.step("Run servelint")
    assert lint.exit_code == 2 and result.failed, result.log
    assert message in lint.stdout + lint.stderr, result.log
    assert not result.step("Upload SARIF to code scanning").ran


def test_a_missing_version_names_the_release_pip_could_not_find(action_path, workspace, runner, local_index):
    result = run_action({"version": "9.9.9"}, workspace, action_path, runner,
                        from_local_index(local_index))
    install = result.step("Install servelint")
    assert install.exit_code != 0 and "servelint==9.9.9" in install.stderr, result.log
    assert not result.step("Run servelint").ran


def test_the_evaluator_reads_what_the_action_writes(tmp_path):
    ctx = {"inputs": {"format": "SARIF", "upload-sarif": "true"}, "steps": {"run": {"outputs": {"exit-code": "1"}}}}
    assert evaluate("inputs.format == 'sarif' && inputs.upload-sarif == 'true'", ctx) is True
    assert evaluate("inputs.format == 'sarif' && steps.run.outputs.exit-code != '0'", ctx) is True
    assert evaluate("inputs.format == 'github' || !(inputs.upload-sarif == 'true')", ctx) is False
    assert evaluate("steps.nope.outputs.x", ctx) == ""
    with pytest.raises(ValueError):
        evaluate("contains(inputs.format, 'x')", ctx)
    (tmp_path / "out").write_text("a=1\nb<<EOF\nx\ny\nEOF\nc=d=e\n", encoding="utf-8")
    assert read_outputs(tmp_path / "out") == {"a": "1", "b": "x\ny", "c": "d=e"}
