"""servelint as a package: the wheel and sdist that `python -m build` makes from this
checkout pass `twine check` and hold every data file; the wheel installed alone into a
fresh environment (as pipx and uvx do) runs `servelint` and `python -m servelint`; the
dependencies are ranges that constraints.txt pins a point of; and installing the wheel into
SGLang 0.5.23's environment changes no package there.

These tests use the network (PyPI): the build backend, the dependencies, uv's resolution.
source_snapshot() is shared with tests/test_action.py and tests/test_precommit.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# What a project needs to build and what the action and the hooks read, besides server/.
TOP_FILES = {"pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "constraints.txt",
             "action.yml", ".pre-commit-hooks.yaml"}

# A launch SGLang refuses (--trust-remote-code takes no value), with a safe fix: drop `true`.
BAD_LAUNCH = "python -m sglang.launch_server --model-path m --trust-remote-code true\n"
GOOD_LAUNCH = "python -m sglang.launch_server --model-path m --trust-remote-code\n"


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    kw.setdefault("capture_output", True)
    return subprocess.run(cmd, text=True, check=False, **kw)


def ok(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    """Run cmd and fail the test with its output when it exits non-zero."""
    proc = run(cmd, **kw)
    assert proc.returncode == 0, (f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
                                  f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def source_snapshot(dest: Path) -> Path:
    """A copy of the checkout's package sources as they are on disk now (tracked and new
    files that git does not ignore, under server/ and the top-level files of TOP_FILES), so
    that builds write nothing into the shared working tree and test what is there, committed
    or not."""
    listed = ok(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=ROOT).stdout.split("\0")
    dest.mkdir(parents=True, exist_ok=True)
    copied = 0
    for rel in listed:
        if not rel or not (rel.startswith("server/") or rel in TOP_FILES):
            continue
        src = ROOT / rel
        if not src.is_file():  # deleted in the working tree, not yet in the index
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
        copied += 1
    assert copied > 100 and (dest / "pyproject.toml").is_file(), f"only {copied} files copied"
    return dest


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def constraint_pins() -> dict[str, tuple[str, str]]:
    """constraints.txt as {normalized name: (version, marker)}."""
    pins: dict[str, tuple[str, str]] = {}
    for number, raw in enumerate((ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        specs = list(req.specifier)
        assert len(specs) == 1 and specs[0].operator == "==", \
            f"constraints.txt:{number}: {raw!r} is not an exact pin (name==version)"
        name = canonicalize_name(req.name)
        assert name not in pins, f"constraints.txt:{number}: {req.name} is pinned twice"
        pins[name] = (specs[0].version, str(req.marker or ""))
    return pins


def requirement_lines(path: Path) -> dict[str, str]:
    """A pinned requirements file (name==version per line) as {normalized name: version}."""
    out: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {raw!r} is not pinned"
            out[canonicalize_name(name)] = version.strip()
    return out


def new_venv(path: Path) -> Path:
    """A fresh virtual environment (no system site-packages); its python."""
    ok([PYTHON, "-m", "venv", str(path)])
    return path / "bin" / "python"


def pip_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path]:
    """(sdist, wheel) from `python -m build`, which builds the wheel from the sdist, so a
    file missing from the sdist is missing from the wheel too."""
    base = tmp_path_factory.mktemp("build")
    src = source_snapshot(base / "src")
    out = base / "dist"
    ok([PYTHON, "-m", "build", "--outdir", str(out), str(src)], env=pip_env())
    sdists, wheels = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(p.name for p in out.iterdir())
    return sdists[0], wheels[0]


def tracked_data_files() -> list[str]:
    """The files git tracks under server/servelint that are not Python source: what the
    package reads at run time (catalog, rule cache and packs, normalize.yaml, rule pages)."""
    listed = ok(["git", "ls-files", "server/servelint"], cwd=ROOT).stdout.split()
    return sorted(p.removeprefix("server/") for p in listed
                  if not p.endswith(".py") and (ROOT / p).is_file())


# -- build and metadata -------------------------------------------------------------------

def test_twine_check_passes_on_the_wheel_and_the_sdist(dists):
    proc = ok([PYTHON, "-m", "twine", "check", "--strict", *map(str, dists)])
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_the_wheel_holds_every_data_file_and_the_script(dists):
    _, wheel = dists
    data = tracked_data_files()
    assert "servelint/rules/normalize.yaml" in data and "servelint/rules/bundled.json" in data
    assert any(p.startswith("servelint/rules/pages/") for p in data)
    assert any(p.startswith("servelint/catalog/data/") for p in data)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        missing = [p for p in data if p not in names]
        assert not missing, (f"the wheel lacks {len(missing)} data file(s) the package reads, "
                             f"e.g. {missing[:5]}: add their pattern to "
                             "[tool.setuptools.package-data] in pyproject.toml")
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        entry_points = zf.read(f"{dist_info}/entry_points.txt").decode()
        metadata = zf.read(f"{dist_info}/METADATA").decode()
    assert re.search(r"^servelint = servelint\.cli:main$", entry_points, re.MULTILINE), entry_points
    assert "servelint/__main__.py" in names
    # The installed requirements are the ranges of pyproject.toml, not pins.
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert sorted(map(canonicalize_name, (Requirement(r).name for r in requires))) == \
        sorted(canonicalize_name(Requirement(r).name) for r in pyproject()["project"]["dependencies"])
    pinned = [r for r in requires if any(s.operator in ("==", "===") for s in Requirement(r).specifier)]
    assert not pinned, f"the wheel pins {pinned}: pyproject.toml's dependencies are ranges"


def test_the_sdist_holds_the_sources_and_the_data_files(dists):
    sdist, _ = dists
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    for needed in ("pyproject.toml", "README.md", "LICENSE", "server/servelint/cli.py",
                   "server/servelint/__main__.py"):
        assert needed in names, f"the sdist lacks {needed}"
    missing = [p for p in tracked_data_files() if f"server/{p}" not in names]
    assert not missing, f"the sdist lacks {missing[:5]}"


# -- ranges and pins ----------------------------------------------------------------------

def test_dependencies_are_ranges_and_constraints_pin_a_point_inside_each():
    pins = constraint_pins()
    for raw in pyproject()["project"]["dependencies"]:
        req = Requirement(raw)
        name = canonicalize_name(req.name)
        ops = {s.operator for s in req.specifier}
        assert ops and ops <= {">=", "<", "!="} and "<" in ops and ">=" in ops, \
            f"pyproject.toml dependency {raw!r}: give a compatible range (>=low,<next-major)"
        assert name in pins, f"constraints.txt does not pin {req.name}, a dependency of servelint"
        version, _ = pins[name]
        assert req.specifier.contains(version, prereleases=True), \
            f"constraints.txt pins {req.name}=={version}, outside pyproject.toml's {req.specifier}"


def test_the_test_environment_runs_the_pinned_versions():
    """The tests run against what constraints.txt pins (make install-test installs with
    -c constraints.txt), so the pins are the versions that were tested."""
    from importlib.metadata import PackageNotFoundError, version
    wrong = []
    for name, (pinned, marker) in constraint_pins().items():
        if marker and not Requirement(f"x; {marker}").marker.evaluate():  # type: ignore[union-attr]
            continue
        try:
            installed = version(name)
        except PackageNotFoundError:
            installed = "not installed"
        if installed != pinned:
            wrong.append(f"{name} {installed} (constraints.txt: {pinned})")
    assert not wrong, ("the test environment differs from constraints.txt: " + ", ".join(wrong)
                       + "; reinstall with `pip install -c constraints.txt -e '.[test]'`")


# -- isolated installs --------------------------------------------------------------------

@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    (folder / "serve.sh").write_text(BAD_LAUNCH, encoding="utf-8")
    return folder


def check_runs(cmd: list[str], example: Path, env: dict[str, str]) -> None:
    """cmd (a way to start servelint) prints a version naming SGLang releases and reports the
    bad launch in example/serve.sh with exit code 1."""
    version = ok([*cmd, "--version"], cwd=example, env=env).stdout
    assert version.startswith("servelint 0.1.0"), version
    assert "0.5.23" in version, f"--version names no SGLang release: {version!r}"
    proc = run([*cmd, "check", "serve.sh"], cwd=example, env=env)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "internal error" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert re.search(r"^serve\.sh:1:\d+: error SL013 ", proc.stdout, re.MULTILINE), proc.stdout
    page = ok([*cmd, "rule", "SL013"], cwd=example, env=env).stdout
    assert page.startswith("# SL013 "), page[:200]


def test_the_wheel_alone_in_a_fresh_environment_runs_the_script_and_the_module(dists, example, tmp_path):
    """The pipx way: a virtual environment holding only the wheel and its dependencies (at
    the pins we ship), started from another folder so that nothing of the checkout is read."""
    _, wheel = dists
    py = new_venv(tmp_path / "venv")
    env = pip_env()
    ok([str(py), "-m", "pip", "install", "--quiet", "-c", str(ROOT / "constraints.txt"), str(wheel)],
       env=env)
    where = ok([str(py), "-c", "import servelint; print(servelint.__file__)"], cwd=example, env=env).stdout
    assert where.startswith(str(tmp_path / "venv")), f"servelint imported from {where}"
    check_runs([str(tmp_path / "venv" / "bin" / "servelint")], example, env)
    check_runs([str(py), "-m", "servelint"], example, env)


def test_uvx_runs_the_wheel_with_the_newest_dependencies_in_range(dists, example, tmp_path):
    """The uv way (`uvx --from <wheel> servelint`): uv resolves the dependencies itself, to
    the newest releases the ranges allow, in a throw-away environment."""
    _, wheel = dists
    uv = Path(PYTHON).with_name("uv")
    assert uv.is_file(), f"{uv} is missing: the test extra installs uv (pip install -e '.[test]')"
    env = pip_env(UV_PYTHON_DOWNLOADS="never", UV_PYTHON=PYTHON, UV_NO_CONFIG="1",
                  UV_TOOL_DIR=str(tmp_path / "tools"))
    check_runs([str(uv), "tool", "run", "--isolated", "--from", str(wheel), "servelint"], example, env)


# -- next to SGLang -----------------------------------------------------------------------

def sglang_pins() -> dict[str, str]:
    """What SGLang 0.5.23's environment holds (tools/make-sglang-env.sh installs these two
    pinned lists, then sglang itself without dependencies): {normalized name: version}."""
    pins = requirement_lines(ROOT / "tools" / "sglang-requirements.txt")
    pins.update(requirement_lines(ROOT / "tools" / "oracle-model" / "requirements-full.txt"))
    pins["sglang"] = "0.5.23"
    return pins


@pytest.fixture(scope="module")
def resolution_next_to_sglang(dists, tmp_path_factory) -> list[dict]:
    """pip's dry-run report of installing the wheel with SGLang's pins as constraints: every
    package it would install, at the version the constraints allow."""
    _, wheel = dists
    base = tmp_path_factory.mktemp("sglang")
    constraints = base / "sglang-0.5.23.txt"
    constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(sglang_pins().items())),
                           encoding="utf-8")
    report = base / "report.json"
    proc = run([PYTHON, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
                "--report", str(report), "-c", str(constraints), str(wheel)], env=pip_env())
    assert proc.returncode == 0, ("servelint's dependencies cannot be installed at the versions "
                                  "SGLang 0.5.23's environment holds (widen the ranges in "
                                  f"pyproject.toml):\n{proc.stderr}")
    return json.loads(report.read_text(encoding="utf-8"))["install"]


def test_servelint_resolves_at_sglangs_pinned_versions(resolution_next_to_sglang):
    pins = sglang_pins()
    chosen = {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"]
              for i in resolution_next_to_sglang}
    shared = {n: v for n, v in chosen.items() if n in pins}
    # Not vacuous: servelint and SGLang share these (PyYAML 6.0.4 there, where servelint
    # pinned 6.0.3 before), and each stays at SGLang's version.
    assert {"pyyaml", "attrs", "typing-extensions"} <= shared.keys(), sorted(chosen)
    assert shared == {n: pins[n] for n in shared}


def installed_versions(python: Path) -> dict[str, str]:
    listed = json.loads(ok([str(python), "-m", "pip", "list", "--format", "json"],
                           env=pip_env()).stdout)
    return {canonicalize_name(p["name"]): p["version"] for p in listed}


def changes_on_install(python: Path, wheel: Path, tmp_path: Path) -> list[str]:
    """What `pip install <wheel>` into python's environment would up- or downgrade (a dry
    run: the environment is only read)."""
    report = tmp_path / f"report-{abs(hash(str(python)))}.json"
    ok([str(python), "-m", "pip", "install", "--dry-run", "--quiet", "--report", str(report),
        str(wheel)], env=pip_env())
    installed = installed_versions(python)
    changes = []
    for item in json.loads(report.read_text(encoding="utf-8"))["install"]:
        name, version = canonicalize_name(item["metadata"]["name"]), item["metadata"]["version"]
        if name in installed:
            changes.append(f"{name} {installed[name]} -> {version}")
    return changes


def test_installing_the_wheel_into_an_sglang_environment_changes_nothing_there(
        dists, resolution_next_to_sglang, tmp_path):
    """pip install --dry-run of the wheel into an environment holding SGLang 0.5.23's pinned
    packages: it only adds packages. The environment is a fresh one holding, at SGLang's
    versions, every SGLang package that servelint's dependencies include (the others cannot
    move); and, when `make sglang-env` has built it, the real .venv-sglang as well."""
    _, wheel = dists
    pins = sglang_pins()
    shared = sorted(n for n in (canonicalize_name(i["metadata"]["name"])
                                for i in resolution_next_to_sglang) if n in pins)
    py = new_venv(tmp_path / "sglang-like")
    ok([str(py), "-m", "pip", "install", "--quiet", "--no-deps", *(f"{n}=={pins[n]}" for n in shared)],
       env=pip_env())
    assert {n: installed_versions(py)[n] for n in shared} == {n: pins[n] for n in shared}
    environments = [py]
    real = ROOT / ".venv-sglang" / "bin" / "python"
    if real.is_file() and installed_versions(real).get("sglang") == "0.5.23":
        environments.append(real)
    for python in environments:
        changes = changes_on_install(python, wheel, tmp_path)
        assert not changes, (f"installing servelint into {python.parent.parent} would change "
                             f"{changes}: widen pyproject.toml's ranges")
