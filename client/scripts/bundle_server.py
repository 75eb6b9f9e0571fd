#!/usr/bin/env python3
"""Bundle the servelint server and its runtime dependencies, once per VS Code target.

    python client/scripts/bundle_server.py fetch [TARGET...]   # network: wheels into client/.wheelhouse/<target>
    python client/scripts/bundle_server.py bundle [--target T] [--dest DIR]
                                                  # offline: wheelhouse -> DIR/libs (default: this machine's target into bundled/)
    python client/scripts/bundle_server.py package [TARGET...] # offline: one .vsix per target (vsce package --target)

Targets are VS Code's (`vsce package --target`): linux-x64, linux-arm64, darwin-x64,
darwin-arm64, win32-x64, plus `universal` (no --target).

`fetch` downloads binary wheels of the server's dependencies for every supported CPython
(3.10 to 3.14) of each target's platform (`pip download --platform <tags> --only-binary=:all:
--python-version 3.X --implementation cp`). The versions are the exact pins of
constraints.txt at the repository root when it exists, else the pins of pyproject.toml's
[project] dependencies. A target whose wheelhouse was fetched for the same requirements is
not fetched again (client/.wheelhouse/<target>/fetched.json records them).

`bundle` installs a target's wheels with pip from its wheelhouse only (--no-index),
resolving for the oldest supported Python so that the backports 3.10 needs are there, then
adds the compiled extension modules of the other Python versions next to them (tree-sitter
and PyYAML publish one wheel per CPython version; their modules are named
`_binding.cpython-312-x86_64-linux-gnu.so`, `_binding.cp312-win_amd64.pyd` etc., so they
coexist in one folder), and copies servelint itself from server/servelint. The result runs
on any CPython 3.10-3.14 of that platform. The `universal` bundle holds pure-Python code
only: servelint and the dependencies that publish a pure wheel; PyYAML, tree-sitter and
tree-sitter-bash (ENVIRONMENT_DEPENDENCIES) are then imported from the interpreter's own
environment (docs/vscode.md).

`package` bundles each target into a temporary folder together with the files
.vscodeignore lets into the package, and runs `vsce package [--target T]` there (packaging
from the repository root would make vsce walk every virtual environment), writing
servelint-<target>-<version>.vsix, and servelint-<version>.vsix for the universal one.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / "client" / ".wheelhouse"
BUNDLED = ROOT / "bundled"
CONSTRAINTS = ROOT / "constraints.txt"
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]
# Conditional dependencies pip does not see when resolving for another Python version
# (markers are evaluated for the running interpreter): cattrs needs it before 3.11. The
# version is constraints.txt's when it pins one.
BACKPORTS = {"exceptiongroup": "1.3.2"}
# The dependencies made of compiled code (normalized name: name on PyPI): the universal
# package does not bundle them, the interpreter's environment must provide them.
ENVIRONMENT_DEPENDENCIES = {"pyyaml": "PyYAML", "tree_sitter": "tree-sitter", "tree_sitter_bash": "tree-sitter-bash"}
EXTENSION_SUFFIXES = (".so", ".pyd")
UNIVERSAL = "universal"


@dataclass(frozen=True)
class Target:
    name: str
    # pip's --platform values (each repeated as an option); macOS tags are expanded by pip
    # to every older macOS and to universal2, the manylinux2014 ones to manylinux2010/1.
    platforms: tuple[str, ...]


TARGETS = {
    t.name: t
    for t in (
        Target("linux-x64", ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")),
        Target("linux-arm64", ("manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64")),
        Target("darwin-x64", ("macosx_11_0_x86_64",)),
        Target("darwin-arm64", ("macosx_11_0_arm64",)),
        Target("win32-x64", ("win_amd64",)),
        Target(UNIVERSAL, ("any",)),
    )
}
PLATFORM_TARGETS = [name for name in TARGETS if name != UNIVERSAL]


def host_target() -> str:
    """This machine's VS Code target, or universal when servelint has no package for it."""
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform)
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    name = f"{system}-{arch}"
    return name if name in TARGETS else UNIVERSAL


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if not match:
        raise SystemExit(f"cannot read the name of requirement {requirement!r}")
    return normalize(match.group(1))


def project_requirements() -> list[str]:
    """The [project] dependencies of pyproject.toml, without their environment markers:
    pip evaluates markers for the running interpreter, not for --python-version, and the
    bundle must hold what every supported version needs (a backport such as tomli is
    harmless on the versions that do not import it)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
        deps = list(tomllib.loads(text)["project"]["dependencies"])
    except ImportError:  # Python 3.10: the list is simple enough to read directly
        block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.DOTALL | re.MULTILINE)
        if not block:
            raise SystemExit("pyproject.toml: no [project] dependencies")
        deps = re.findall(r'"([^"]+)"', block.group(1))
    return [d.split(";")[0].strip() for d in deps]


def constraint_pins() -> dict[str, str]:
    """constraints.txt's `name==version` lines (markers dropped, for the reason above), by
    normalized name; empty when there is no constraints.txt."""
    if not CONSTRAINTS.is_file():
        return {}
    pins: dict[str, str] = {}
    for number, raw in enumerate(CONSTRAINTS.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([^\s,]+)", line)
        if not match:
            raise SystemExit(f"{CONSTRAINTS.name}:{number}: {raw.strip()!r} is not an exact pin (name==version)")
        name = normalize(match.group(1))
        if name in pins and pins[name] != match.group(2):
            raise SystemExit(f"{CONSTRAINTS.name}:{number}: {match.group(1)} is pinned twice "
                             f"({pins[name]} and {match.group(2)}); the bundle needs one version")
        pins[name] = match.group(2)
    return pins


def requirements(target: str) -> list[str]:
    """What pip installs for a target: the project's dependencies and the backports, each
    pinned exactly (constraints.txt, else pyproject.toml's own pins); the universal target
    leaves out the compiled ones."""
    pins = constraint_pins()
    out = []
    for req in project_requirements() + [f"{name}=={version}" for name, version in BACKPORTS.items()]:
        name = requirement_name(req)
        if target == UNIVERSAL and name in ENVIRONMENT_DEPENDENCIES:
            continue
        out.append(f"{name}=={pins[name]}" if name in pins else req)
    return out


def constraints_args(folder: Path) -> list[str]:
    """`-c <file>` with constraints.txt's pins without markers (also the dependencies of
    dependencies: attrs, cattrs, typing_extensions), written into folder; none without
    constraints.txt."""
    pins = constraint_pins()
    if not pins:
        return []
    path = folder / "constraints-nomarkers.txt"
    path.write_text("".join(f"{name}=={version}\n" for name, version in sorted(pins.items())), encoding="utf-8")
    return ["-c", str(path)]


def pip_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]


def run(cmd: list[str], quiet: bool = False) -> subprocess.CompletedProcess[str]:
    if not quiet:
        print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=False, text=True, capture_output=quiet)


def platform_args(target: str) -> list[str]:
    return [arg for tag in TARGETS[target].platforms for arg in ("--platform", tag)]


def fetch_key(target: str) -> str:
    data = json.dumps([TARGETS[target].platforms, PYTHONS, requirements(target), sorted(constraint_pins().items())])
    return hashlib.sha256(data.encode()).hexdigest()


def fetch_target(target: str) -> str:
    """Downloads a target's wheels for every supported Python; returns a report line.
    Raises SystemExit with pip's output when a download fails."""
    dest = WHEELHOUSE / target
    record = dest / "fetched.json"
    key = fetch_key(target)
    if record.is_file() and json.loads(record.read_text(encoding="utf-8")).get("key") == key:
        return f"{target}: up to date ({len(list(dest.glob('*.whl')))} wheels)"
    dest.mkdir(parents=True, exist_ok=True)
    record.unlink(missing_ok=True)
    reqs = requirements(target)
    for version in PYTHONS:
        cmd = pip_command("download", "--quiet", "--only-binary=:all:", *platform_args(target),
                          "--python-version", version, "--implementation", "cp", "--dest", str(dest),
                          *constraints_args(dest), *reqs)
        done = run(cmd, quiet=True)
        if done.returncode != 0:
            hint = ""
            if target == UNIVERSAL:
                hint = ("\nThe universal package bundles only dependencies with a pure-Python wheel: add a "
                        "compiled one to ENVIRONMENT_DEPENDENCIES in client/scripts/bundle_server.py.")
            raise SystemExit(f"fetching the {target} wheels for CPython {version} failed:\n+ {' '.join(cmd)}\n"
                             f"{done.stdout}{done.stderr}{hint}")
    record.write_text(json.dumps({"key": key, "requirements": reqs, "platforms": TARGETS[target].platforms,
                                  "pythons": PYTHONS}, indent=2) + "\n", encoding="utf-8")
    return f"{target}: {len(list(dest.glob('*.whl')))} wheels in {dest.relative_to(ROOT)}"


def fetch(targets: list[str]) -> None:
    # Network-bound: a few targets at a time (each target's Pythons one after the other,
    # as they share a folder).
    with ThreadPoolExecutor(max_workers=3) as pool:
        for line in pool.map(fetch_target, targets):
            print("wheelhouse", line, flush=True)


def wheel_tags(wheel: str) -> tuple[str, str, str, str, str]:
    """(distribution, version, python, abi, platform) of a wheel file name."""
    parts = wheel[:-4].split("-")
    if len(parts) < 5:
        raise SystemExit(f"{wheel}: not a wheel file name")
    return normalize(parts[0]), parts[1], parts[-3], parts[-2], parts[-1]


def cpython_tag(wheel: str) -> str | None:
    """'cp312' for a per-version CPython wheel (cp312-cp312), None for py3/abi3 wheels."""
    _, _, python, abi, _ = wheel_tags(wheel)
    return python if python.startswith("cp") and abi == python else None


def installed(libs: Path) -> dict[str, tuple[str, list[str]]]:
    """Distributions pip installed into libs: normalized name -> (version, wheel tags)."""
    found = {}
    for info in libs.glob("*.dist-info"):
        name, version = info.name[: -len(".dist-info")].rsplit("-", 1)
        wheel = info / "WHEEL"
        tags = re.findall(r"^Tag: (\S+)", wheel.read_text(encoding="utf-8"), re.MULTILINE) if wheel.is_file() else []
        found[normalize(name)] = (version, tags)
    return found


def expand_tags(wheel: str) -> set[str]:
    """The tags a wheel file name stands for ('cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64'
    stands for two)."""
    _, _, python, abi, plat = wheel_tags(wheel)
    return {f"{p}-{a}-{t}" for p in python.split(".") for a in abi.split(".") for t in plat.split(".")}


def installed_wheels(libs: Path, wheels: list[Path]) -> list[str]:
    """The wheel files pip installed into libs: same distribution, version and tags."""
    used = []
    for name, (version, tags) in sorted(installed(libs).items()):
        match = [w.name for w in wheels if wheel_tags(w.name)[:2] == (name, version) and expand_tags(w.name) == set(tags)]
        if len(match) != 1:
            raise SystemExit(f"cannot tell which wheel of {name} {version} pip installed (tags {tags}): {match}")
        used.append(match[0])
    return used


def add_other_pythons(libs: Path, wheels: list[Path], oldest: str) -> list[str]:
    """Adds the compiled modules of the other CPython versions' wheels of each distribution
    installed from a per-version wheel (same version), next to the installed ones. A pure
    wheel (tomli's py3-none-any) gets no other wheel's compiled modules: mypyc builds need
    helper modules the pure code does not have, and the pure code is complete on its own.
    Returns the wheels used."""
    used = []
    dists = installed(libs)
    per_version = {name: version for name, (version, tags) in dists.items()
                   if any(cpython_tag(f"x-0-{t}.whl") for t in tags)}
    for wheel in wheels:
        name, version, *_ = wheel_tags(wheel.name)
        tag = cpython_tag(wheel.name)
        if tag is None or tag == "cp" + oldest.replace(".", "") or per_version.get(name) != version:
            continue
        used.append(wheel.name)
        with zipfile.ZipFile(wheel) as zf:
            for member in zf.namelist():
                if member.endswith(EXTENSION_SUFFIXES) and ".dist-info/" not in member and ".data/" not in member:
                    (libs / member).parent.mkdir(parents=True, exist_ok=True)
                    (libs / member).write_bytes(zf.read(member))
    return used


def bundle(target: str, dest: Path, servelint: Path = ROOT / "server" / "servelint") -> Path:
    """Installs the target's bundle into dest/libs and writes dest/manifest.json; servelint
    is copied from `servelint` (the source tree's by default)."""
    source = WHEELHOUSE / target
    wheels = sorted(source.glob("*.whl")) if source.is_dir() else []
    if not wheels:
        raise SystemExit(f"no wheels in {source}: run `{Path(sys.argv[0]).name} fetch {target}` first "
                         "(make client does)")
    libs = dest / "libs"
    if libs.exists():
        shutil.rmtree(libs)
    libs.mkdir(parents=True)
    oldest = PYTHONS[0]
    with tempfile.TemporaryDirectory() as tmp:
        # Resolve and install for the oldest supported CPython: it needs the most packages.
        cmd = pip_command("install", "--quiet", "--no-index", "--find-links", str(source), "--only-binary=:all:",
                          "--no-compile", "--python-version", oldest, "--implementation", "cp",
                          *platform_args(target), "--target", str(libs), *constraints_args(Path(tmp)),
                          *requirements(target))
        if run(cmd).returncode != 0:
            raise SystemExit(f"installing the {target} bundle from {source} failed (see pip's message above); "
                             f"`{Path(sys.argv[0]).name} fetch {target}` fetches its wheels again")
    wheels_used = installed_wheels(libs, wheels)
    if target != UNIVERSAL:
        wheels_used += add_other_pythons(libs, wheels, oldest)
    # servelint itself, from the source tree (no build, no network).
    shutil.copytree(servelint, libs / "servelint",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    for junk in list(libs.rglob("__pycache__")):
        shutil.rmtree(junk)
    shutil.rmtree(libs / "bin", ignore_errors=True)
    modules = sorted(p.relative_to(libs).as_posix() for p in libs.rglob("*") if p.name.endswith(EXTENSION_SUFFIXES))
    if target == UNIVERSAL and modules:
        raise SystemExit(f"the universal bundle holds compiled modules: {', '.join(modules)}")
    versions = sorted({m for p in modules for m in re.findall(r"(?:cpython-3|cp3)(\d+)", p)}, key=int)
    manifest = {
        "target": target,
        "platform": target,
        "platformTags": list(TARGETS[target].platforms),
        # The CPython versions the bundle runs on: those with a compiled module (abi3
        # modules serve all of them), every supported one for pure code.
        "pythons": [f"3.{v}" for v in versions] or PYTHONS,
        "requirements": [f"{name}=={version}" for name, (version, _) in sorted(installed(libs).items())],
        "environmentDependencies": list(ENVIRONMENT_DEPENDENCIES.values()) if target == UNIVERSAL else [],
        # The wheel files the bundle was made of (their tags say platform and CPython).
        "wheels": wheels_used,
        "extensionModules": modules,
    }
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    files = sum(1 for p in libs.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in libs.rglob("*") if p.is_file())
    print(f"{dest.name}/libs ({target}): {files} files, {size / 1e6:.1f} MB, CPython {', '.join(manifest['pythons'])}",
          flush=True)
    return dest


def package_version() -> str:
    return str(json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["version"])


def vsix_name(target: str) -> str:
    version = package_version()
    return f"servelint-{version}.vsix" if target == UNIVERSAL else f"servelint-{target}-{version}.vsix"


def packaged_files() -> list[Path]:
    """The repository files .vscodeignore lets in (its `!pattern` lines), except the
    bundle, which each target brings itself."""
    patterns = [line[1:].strip() for line in (ROOT / ".vscodeignore").read_text(encoding="utf-8").splitlines()
                if line.startswith("!") and not line[1:].strip().startswith("bundled/")]
    files = []
    for pattern in patterns:
        matches = [p for p in ROOT.glob(pattern) if p.is_file()] if any(c in pattern for c in "*?[") else (
            [ROOT / pattern] if (ROOT / pattern).is_file() else [])
        if not matches:
            raise SystemExit(f".vscodeignore lets in {pattern}, which does not exist: build it first "
                             "(npm run package compiles dist/extension.js)")
        files.extend(matches)
    return files


def package(targets: list[str]) -> None:
    vsce = ROOT / "node_modules" / ".bin" / ("vsce.cmd" if os.name == "nt" else "vsce")
    if not vsce.exists():
        raise SystemExit(f"{vsce} is missing: run `npm ci --ignore-scripts` (make client does)")
    with tempfile.TemporaryDirectory(prefix="servelint-vsix-") as tmp:
        # One copy of what every package holds, taken once: the packages of one run hold
        # the same servelint and client even while the working tree changes.
        common = Path(tmp) / "common"
        for f in packaged_files():
            (common / f.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, common / f.relative_to(ROOT))
        shutil.copy2(ROOT / ".vscodeignore", common / ".vscodeignore")
        servelint = Path(tmp) / "servelint"
        shutil.copytree(ROOT / "server" / "servelint", servelint,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        # Two at a time: pip and vsce each keep one core busy for a few seconds.
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda t: package_target(vsce, t, common, servelint, Path(tmp) / t), targets))


def package_target(vsce: Path, target: str, common: Path, servelint: Path, stage: Path) -> None:
    shutil.copytree(common, stage)
    bundle(target, stage / "bundled", servelint)
    out = ROOT / vsix_name(target)
    cmd = [str(vsce), "package", "--no-dependencies", "--allow-package-all-secrets", "--out", str(out)]
    if target != UNIVERSAL:
        cmd += ["--target", target]
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, check=False, cwd=stage, text=True, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"vsce package for {target} failed:\n{done.stdout}{done.stderr}")
    summary = [line for line in done.stdout.splitlines() if "DONE" in line or "WARNING" in line]
    print("\n".join(summary) or done.stdout, flush=True)
    shutil.rmtree(stage)


def parse_targets(names: list[str], default: list[str]) -> list[str]:
    for name in names:
        if name not in TARGETS:
            close = [t for t in TARGETS if fnmatch.fnmatch(t, f"*{name}*")]
            raise SystemExit(f"unknown target {name!r}; the targets are {', '.join(TARGETS)}"
                             + (f" (did you mean {close[0]}?)" if close else ""))
    return names or default


def main(argv: list[str]) -> int:
    usage = f"usage: {Path(argv[0]).name} fetch [TARGET...] | bundle [--target T] [--dest DIR] | package [TARGET...]"
    if len(argv) < 2 or argv[1] not in ("fetch", "bundle", "package"):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print(usage, file=sys.stderr)
        return 2
    command, rest = argv[1], argv[2:]
    if command == "fetch":
        fetch(parse_targets(rest, list(TARGETS)))
    elif command == "package":
        # This machine's target last: the one a developer installs is the newest file.
        host = host_target()
        package(parse_targets(rest, [t for t in TARGETS if t != host] + [host]))
    else:
        target, dest = host_target(), BUNDLED
        while rest:
            option = rest.pop(0)
            if option in ("--target", "--dest") and rest:
                value = rest.pop(0)
                if option == "--target":
                    target = parse_targets([value], [])[0]
                else:
                    dest = Path(value).resolve()
            else:
                print(usage, file=sys.stderr)
                return 2
        bundle(target, dest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
