"""Each VS Code extension package holds the server's compiled modules of its own platform,
for every supported CPython, and the universal package holds none.

Reads the .vsix files `make client` builds (client/scripts/bundle_server.py package):
servelint-<target>-<version>.vsix for linux-x64, linux-arm64, darwin-x64, darwin-arm64 and
win32-x64, and servelint-<version>.vsix (universal). For each compiled module it reads the
binary's own header (ELF machine, Mach-O CPU type, PE machine), its file name's Python tag,
and the tags of the wheels the bundle was made of (bundled/manifest.json, the dist-info
WHEEL files)."""

from __future__ import annotations

import json
import re
import struct
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERSION = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["version"]
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]
LIBS = "extension/bundled/libs/"
# The distributions with compiled code a platform package must bundle, and their modules.
COMPILED = {"tree_sitter": "tree_sitter/_binding", "tree_sitter_bash": "tree_sitter_bash/_binding",
            "pyyaml": "yaml/_yaml"}


class Platform:
    def __init__(self, wheel_platform: str, module_suffix: str, binary: str):
        # a regular expression every platform tag of the target's wheels matches
        self.wheel_platform = re.compile(wheel_platform)
        # a module file name's tail after the module name: group 1 the CPython version, or abi3
        self.module_suffix = re.compile(module_suffix)
        self.binary = binary


PLATFORMS = {
    "linux-x64": Platform(r"manylinux(2014|_2_\d+)_x86_64",
                          r"\.(?:cpython-3(\d+)-x86_64-linux-gnu|(abi3))\.so", "elf-x86_64"),
    "linux-arm64": Platform(r"manylinux(2014|_2_\d+)_aarch64",
                            r"\.(?:cpython-3(\d+)-aarch64-linux-gnu|(abi3))\.so", "elf-aarch64"),
    "darwin-x64": Platform(r"macosx_\d+_\d+_(x86_64|universal2|intel)",
                           r"\.(?:cpython-3(\d+)-darwin|(abi3))\.so", "macho-x86_64"),
    "darwin-arm64": Platform(r"macosx_\d+_\d+_(arm64|universal2)",
                             r"\.(?:cpython-3(\d+)-darwin|(abi3))\.so", "macho-arm64"),
    "win32-x64": Platform(r"win_amd64", r"(?:\.cp3(\d+)-win_amd64|())\.pyd", "pe-amd64"),
}


def vsix_path(target: str) -> Path:
    name = f"servelint-{VERSION}.vsix" if target == "universal" else f"servelint-{target}-{VERSION}.vsix"
    path = ROOT / name
    assert path.is_file(), f"{name} is missing: run `make client`, which builds every package before pytest runs"
    return path


def open_vsix(target: str) -> zipfile.ZipFile:
    return zipfile.ZipFile(vsix_path(target))


def target_platform(zf: zipfile.ZipFile) -> str | None:
    identity = re.search(r"<Identity\b[^>]*>", zf.read("extension.vsixmanifest").decode())
    assert identity, "extension.vsixmanifest has no Identity"
    declared = re.search(r'\bTargetPlatform="([^"]*)"', identity.group(0))
    return declared.group(1) if declared else None


def bundle_manifest(zf: zipfile.ZipFile) -> dict:
    return json.loads(zf.read("extension/bundled/manifest.json"))


def compiled_modules(zf: zipfile.ZipFile) -> list[str]:
    return [n for n in zf.namelist() if n.startswith(LIBS) and n.endswith((".so", ".pyd", ".dylib", ".dll"))]


def wheel_platform_tags(wheel: str) -> list[str]:
    return wheel[:-4].split("-")[-1].split(".")


def binary_kind(data: bytes) -> set[str]:
    """What a compiled module is built for, read from its header: {'elf-x86_64'},
    {'macho-arm64'}, {'macho-x86_64', 'macho-arm64'} for a universal2 Mach-O, ..."""
    if data[:4] == b"\x7fELF":
        assert data[4] == 2, "a 32-bit ELF"
        endian = "<" if data[5] == 1 else ">"
        machine = struct.unpack(endian + "H", data[18:20])[0]
        return {{62: "elf-x86_64", 183: "elf-aarch64"}.get(machine, f"elf-{machine}")}
    macho = {0x01000007: "macho-x86_64", 0x0100000C: "macho-arm64"}
    if data[:4] == b"\xcf\xfa\xed\xfe":  # 64-bit Mach-O, little-endian
        cpu = struct.unpack("<I", data[4:8])[0]
        return {macho.get(cpu, f"macho-{cpu:#x}")}
    if data[:4] == b"\xca\xfe\xba\xbe":  # fat (universal) Mach-O: big-endian arch list
        count = struct.unpack(">I", data[4:8])[0]
        return {macho.get(struct.unpack(">I", data[8 + 20 * i: 12 + 20 * i])[0], "macho-?") for i in range(count)}
    if data[:2] == b"MZ":
        pe = struct.unpack("<I", data[0x3C:0x40])[0]
        assert data[pe:pe + 4] == b"PE\0\0", "an MZ file without a PE header"
        machine = struct.unpack("<H", data[pe + 4:pe + 6])[0]
        return {{0x8664: "pe-amd64", 0xAA64: "pe-arm64", 0x14C: "pe-i386"}.get(machine, f"pe-{machine:#x}")}
    return {f"unknown ({data[:4].hex()})"}


@pytest.mark.parametrize("target", list(PLATFORMS))
def test_platform_package_declares_its_target(target):
    with open_vsix(target) as zf:
        declared = target_platform(zf)
        assert declared == target, f"{vsix_path(target).name} declares TargetPlatform {declared}"
        manifest = bundle_manifest(zf)
        assert manifest["target"] == target, f"{vsix_path(target).name} bundles {manifest['target']}'s libraries"
        assert manifest["environmentDependencies"] == []


@pytest.mark.parametrize("target", list(PLATFORMS))
def test_platform_package_modules_are_built_for_its_platform(target):
    expected = PLATFORMS[target]
    with open_vsix(target) as zf:
        modules = compiled_modules(zf)
        assert modules, f"{target}: no compiled module in the package"
        wrong = {}
        for name in modules:
            kinds = binary_kind(zf.read(name))
            if expected.binary not in kinds:
                wrong[name] = sorted(kinds)
            tail = name[len(LIBS):].split("/")[-1]
            assert re.fullmatch(r"\w+" + expected.module_suffix.pattern, tail), f"{target}: {name} is not named as a {target} module"
        assert not wrong, f"{target}: modules built for another platform: {wrong}"


@pytest.mark.parametrize("target", list(PLATFORMS))
def test_platform_package_covers_every_cpython(target):
    """Each compiled module exists for CPython 3.10, 3.11, 3.12, 3.13 and 3.14: one file per
    version, or one stable-ABI (abi3) file from a wheel for 3.10 or older."""
    expected = PLATFORMS[target]
    with open_vsix(target) as zf:
        manifest = bundle_manifest(zf)
        modules = compiled_modules(zf)
        for dist, stem in COMPILED.items():
            versions: set[str] = set()
            abi3 = False
            for name in modules:
                rest = name[len(LIBS):]
                if not rest.startswith(stem + "."):
                    continue
                match = expected.module_suffix.fullmatch(rest[len(stem):])
                assert match, f"{target}: {name} is not named as a {target} module"
                if match.group(1):
                    versions.add(f"3.{match.group(1)}")
                else:
                    abi3 = True
            wheels = [w for w in manifest["wheels"] if re.sub(r"[-_.]+", "_", w.split("-")[0]).lower() == dist]
            if abi3:
                assert any(re.search(r"-cp3(\d+)-abi3-", w) and int(re.search(r"-cp3(\d+)-abi3-", w).group(1)) <= 10
                           for w in wheels), f"{target}: {stem}'s abi3 module is not from a wheel for CPython 3.10+: {wheels}"
            else:
                assert versions == set(PYTHONS), (
                    f"{target}: {stem} has modules for CPython {sorted(versions)}, not for each of "
                    f"3.10-3.14 (wheels {wheels})")
                tags = {re.search(r"-(cp3\d+)-cp3\d+-", w).group(1) for w in wheels if re.search(r"-(cp3\d+)-cp3\d+-", w)}
                assert tags == {"cp" + v.replace(".", "") for v in PYTHONS}, f"{target}: {dist}'s wheels are for {sorted(tags)}"
        assert manifest["pythons"] == PYTHONS


@pytest.mark.parametrize("target", list(PLATFORMS))
def test_platform_package_wheels_carry_its_platform_tags(target):
    expected = PLATFORMS[target]
    with open_vsix(target) as zf:
        manifest = bundle_manifest(zf)
        assert manifest["wheels"], f"{target}: bundled/manifest.json lists no wheel"
        for wheel in manifest["wheels"]:
            for tag in wheel_platform_tags(wheel):
                assert tag == "any" or expected.wheel_platform.fullmatch(tag), f"{target}: {wheel} is for {tag}"
        compiled = [w for w in manifest["wheels"] if not w.endswith("-any.whl")]
        assert {re.sub(r"[-_.]+", "_", w.split("-")[0]).lower() for w in compiled} == set(COMPILED), compiled
        # What pip recorded when it installed them (dist-info WHEEL) agrees.
        for name in zf.namelist():
            if name.startswith(LIBS) and name.endswith(".dist-info/WHEEL"):
                for tag in re.findall(r"^Tag: \S+-\S+-(\S+)$", zf.read(name).decode(), re.MULTILINE):
                    assert tag == "any" or expected.wheel_platform.fullmatch(tag), f"{target}: {name} says {tag}"


def test_universal_package_holds_no_compiled_module():
    with open_vsix("universal") as zf:
        assert target_platform(zf) is None, "the universal package declares no target platform"
        manifest = bundle_manifest(zf)
        assert manifest["target"] == "universal"
        assert compiled_modules(zf) == []
        assert [n for n in zf.namelist() if n.endswith((".so", ".pyd", ".dylib", ".dll"))] == []
        # The compiled dependencies come from the interpreter's environment, not the package.
        assert manifest["environmentDependencies"] == ["PyYAML", "tree-sitter", "tree-sitter-bash"]
        for folder in ("yaml", "_yaml", "tree_sitter", "tree_sitter_bash"):
            assert not [n for n in zf.namelist() if n.startswith(f"{LIBS}{folder}/")], f"bundles {folder}"
        for wheel in manifest["wheels"]:
            assert wheel.endswith("-none-any.whl"), f"{wheel} is not a pure-Python wheel"
        infos = [n for n in zf.namelist() if n.startswith(LIBS) and n.endswith(".dist-info/WHEEL")]
        assert infos, "no dist-info in the universal bundle"
        for name in infos:
            text = zf.read(name).decode()
            assert "Root-Is-Purelib: true" in text, f"{name} is not pure Python"
            assert all(t.endswith("-none-any") for t in re.findall(r"^Tag: (\S+)$", text, re.MULTILINE)), name
        assert f"{LIBS}servelint/__main__.py" in zf.namelist()
        assert f"{LIBS}pygls/__init__.py" in zf.namelist()


def test_every_package_bundles_the_same_servelint():
    """The packages differ only in their compiled modules: the same servelint files in each."""
    listings = {}
    for target in [*PLATFORMS, "universal"]:
        with open_vsix(target) as zf:
            listings[target] = {i.filename: i.CRC for i in zf.infolist() if i.filename.startswith(LIBS + "servelint/")}
    reference = listings["linux-x64"]
    assert len(reference) > 50
    for target, listing in listings.items():
        assert listing == reference, f"{target}'s bundled servelint differs from linux-x64's"
