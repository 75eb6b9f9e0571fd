#!/usr/bin/env python3
"""Bundle the servelint server and its pinned runtime dependencies into bundled/libs.

    python client/scripts/bundle_server.py fetch    # network: wheels into client/.wheelhouse
    python client/scripts/bundle_server.py bundle   # offline: client/.wheelhouse -> bundled/libs

`fetch` downloads binary wheels of the pinned dependencies (pyproject.toml) for every
supported CPython (3.10 to 3.14) of this platform. `bundle` installs them with pip from that
wheelhouse only (--no-index), resolving for the oldest supported Python so that the
backports 3.10 needs are there, then adds the compiled extension modules of the other
Python versions next to it (tree-sitter and PyYAML publish one wheel per CPython version;
their modules are named `_binding.cpython-312-x86_64-linux-gnu.so` etc., so they coexist in
one folder), and copies servelint itself from server/servelint. The result runs on any
CPython 3.10-3.14 of the platform it was built on (see docs/vscode.md).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / "client" / ".wheelhouse"
LIBS = ROOT / "bundled" / "libs"
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]
# Conditional dependencies pip does not see when resolving for another Python version
# (markers are evaluated for the running interpreter): cattrs needs it before 3.11.
BACKPORTS = ["exceptiongroup==1.3.2"]
EXTENSION_SUFFIXES = (".so", ".pyd")


def pinned_requirements() -> list[str]:
    """The [project] dependencies of pyproject.toml (exact pins), without their environment
    markers: pip evaluates markers for the running interpreter, not for --python-version,
    and the bundle must hold what every supported version needs (a backport such as tomli
    is harmless on the versions that do not import it)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
        deps = list(tomllib.loads(text)["project"]["dependencies"])
    except ImportError:  # Python 3.10: the list is simple enough to read directly
        block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.S | re.M)
        if not block:
            raise SystemExit("pyproject.toml: no [project] dependencies")
        deps = re.findall(r'"([^"]+)"', block.group(1))
    return [d.split(";")[0].strip() for d in deps]


def pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def fetch() -> None:
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    reqs = pinned_requirements() + BACKPORTS
    for version in PYTHONS:
        pip("download", "--quiet", "--only-binary=:all:", "--python-version", version,
            "--implementation", "cp", "--dest", str(WHEELHOUSE), *reqs)
    print(f"wheelhouse: {len(list(WHEELHOUSE.glob('*.whl')))} wheels in {WHEELHOUSE}")


def cpython_tag(wheel: str) -> str | None:
    """'cp312' for a per-version CPython wheel, None for py3/abi3 wheels."""
    parts = wheel[:-4].split("-")
    if len(parts) < 5:
        return None
    python, abi = parts[-3], parts[-2]
    return python if python.startswith("cp") and abi == python else None


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def per_version_distributions() -> set[str]:
    """Installed distributions whose wheel was built for one CPython version (cpXY-cpXY)."""
    found = set()
    for wheel_file in LIBS.glob("*.dist-info/WHEEL"):
        tags = re.findall(r"^Tag: (\S+)", wheel_file.read_text(encoding="utf-8"), re.M)
        if any(cpython_tag(f"x-0-{t}.whl") for t in tags):
            found.add(normalize(wheel_file.parent.name.split("-")[0]))
    return found


def bundle() -> None:
    wheels = sorted(WHEELHOUSE.glob("*.whl")) if WHEELHOUSE.is_dir() else []
    if not wheels:
        raise SystemExit(f"no wheels in {WHEELHOUSE}: run `{Path(sys.argv[0]).name} fetch` first "
                         "(make client does)")
    if LIBS.exists():
        shutil.rmtree(LIBS)
    LIBS.mkdir(parents=True)
    oldest = PYTHONS[0]
    # Resolve and install for the oldest supported CPython: it needs the most packages.
    pip("install", "--quiet", "--no-index", "--find-links", str(WHEELHOUSE), "--only-binary=:all:",
        "--no-compile", "--python-version", oldest, "--implementation", "cp",
        "--target", str(LIBS), *pinned_requirements(), *BACKPORTS)
    # The compiled modules of the other CPython versions, next to the installed ones.
    # Only for distributions installed from a per-version wheel themselves: a pure wheel
    # (tomli's py3-none-any) must not get another wheel's compiled modules (mypyc builds
    # need a helper module outside the package; the pure code is complete on its own).
    per_version = per_version_distributions()
    for wheel in wheels:
        tag = cpython_tag(wheel.name)
        if tag is None or tag == "cp" + oldest.replace(".", ""):
            continue
        if normalize(wheel.name.split("-")[0]) not in per_version:
            continue
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if name.endswith(EXTENSION_SUFFIXES) and ".dist-info/" not in name:
                    package_dir = LIBS / name.split("/")[0]
                    if not package_dir.is_dir():
                        continue  # a package the bundle did not install (not a pinned one)
                    (LIBS / name).parent.mkdir(parents=True, exist_ok=True)
                    (LIBS / name).write_bytes(zf.read(name))
    # servelint itself, from the source tree (no build, no network).
    shutil.copytree(ROOT / "server" / "servelint", LIBS / "servelint",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    for junk in list(LIBS.rglob("__pycache__")):
        shutil.rmtree(junk)
    for junk in ("bin",):
        shutil.rmtree(LIBS / junk, ignore_errors=True)
    modules = sorted(str(p.relative_to(LIBS)) for p in LIBS.rglob("*") if p.name.endswith(EXTENSION_SUFFIXES))
    versions = sorted({m for p in modules for m in re.findall(r"cpython-3(\d+)", p)}, key=int)
    manifest = {
        "platform": sysconfig.get_platform(),
        "machine": platform.machine(),
        "pythons": [f"3.{v}" for v in versions] or PYTHONS,
        "requirements": pinned_requirements() + BACKPORTS,
        "extensionModules": modules,
    }
    (LIBS.parent / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    files = sum(1 for p in LIBS.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in LIBS.rglob("*") if p.is_file())
    print(f"bundled/libs: {files} files, {size / 1e6:.1f} MB, CPython {', '.join(manifest['pythons'])} "
          f"on {manifest['platform']}")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in ("fetch", "bundle"):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print(f"usage: {argv[0]} fetch|bundle", file=sys.stderr)
        return 2
    fetch() if argv[1] == "fetch" else bundle()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
