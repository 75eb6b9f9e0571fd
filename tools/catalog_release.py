"""Build the flag catalog of any SGLang release from its wheel, without torch.

    .venv/bin/python tools/catalog_release.py 0.4.6 0.5.3 0.5.23 \
        [--out-dir build/catalogs] [--cache /tmp/servelint-catalog-release]

For each release:

1. ``pip download --no-deps sglang==X`` into ``<cache>/wheels`` (kept, so a
   second run is offline) and unpack the wheel's ``sglang/`` package into a
   temporary folder;
2. in a **subprocess** of its own (``python -S``, so no site-packages; every
   ``SGLANG_*``/``SGL_*`` variable removed from its environment), install an
   import hook that answers every import outside the standard library with a
   permissive stub module, except ``sglang`` itself (the unpacked wheel) and
   ``msgspec`` and ``packaging``, which must be real (0.5.20+ builds
   ``ServerArgs`` fields with msgspec; version checks use packaging). Those two
   are installed, pinned as in tools/sglang-requirements.txt, into
   ``<cache>/deps`` with ``pip install --target`` the first time;
3. build the parser as SGLang does and write the catalog with
   ``tools/gen_catalog.py``'s own ``build_catalog``/``render`` (same records,
   same format, same schema) to ``<out-dir>/sglang-X.json``.

The default output folder, ``build/catalogs``, is gitignored: these catalogs
are not shipped yet. ``--check FILE`` compares the catalog of the single
release given with FILE, option by option and field by field, and exits 1 on
any difference.

Stubs make importing work, not behaviour: a stub is false, empty, zero and
callable (called with one function it returns it, so stub decorators keep
the function). A value that SGLang computes from a third-party module at
parser-build time would show up as a stub in the catalog; ``--check`` against
0.5.23 is what proves there is none there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "servelint-catalog-release"
DEFAULT_OUT = ROOT / "build" / "catalogs"
REAL_MODULES = ("msgspec", "packaging")
REQUIREMENTS = TOOLS / "sglang-requirements.txt"


# --------------------------------------------------------------------------
# Parent side: download, unpack, run one child per release.

def _pins() -> list[str]:
    """msgspec/packaging pinned as in tools/sglang-requirements.txt."""
    pins = {}
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s#;]+)", line)
        if m and m.group(1).lower() in REAL_MODULES:
            pins[m.group(1).lower()] = f"{m.group(1)}=={m.group(2)}"
    return [pins.get(name, name) for name in REAL_MODULES]


def ensure_deps(cache: Path) -> Path:
    deps = cache / "deps"
    if all((deps / name).is_dir() for name in REAL_MODULES):
        return deps
    deps.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--target", str(deps), *_pins()], check=True)
    return deps


def download(version: str, cache: Path) -> Path:
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)

    def find() -> Path | None:
        for path in sorted(wheels.glob("sglang-*.whl")):
            if path.name.split("-")[1] == version:
                return path
        return None

    wheel = find()
    if wheel is None:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        f"sglang=={version}", "-d", str(wheels)], check=True)
        wheel = find()
    if wheel is None:
        raise SystemExit(f"no wheel for sglang=={version} in {wheels}")
    return wheel


def generate(version: str, cache: Path) -> str:
    """The catalog text of one release (raises RuntimeError with the child's stderr)."""
    wheel = download(version, cache)
    deps = ensure_deps(cache)
    with tempfile.TemporaryDirectory(prefix=f"sglang-{version}-") as tmp:
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(tmp, [n for n in zf.namelist() if n.startswith("sglang/")])
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SGLANG_", "SGL_", "PYTHON"))}
        proc = subprocess.run(
            [sys.executable, "-S", str(Path(__file__).resolve()), "--child",
             tmp, str(deps)],
            env=env, cwd=tmp, capture_output=True, text=True, encoding="utf-8",
            check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or f"exit {proc.returncode}")
    return proc.stdout


def diff(expected: dict, actual: dict) -> list[str]:
    out = []
    for key in expected.keys() | actual.keys():
        if key != "options" and expected.get(key) != actual.get(key):
            out.append(f"{key}: {expected.get(key)!r} != {actual.get(key)!r}")
    exp = {o["dest"] + " " + o["names"][0]: o for o in expected["options"]}
    act = {o["dest"] + " " + o["names"][0]: o for o in actual["options"]}
    for k in exp.keys() - act.keys():
        out.append(f"missing: {k}")
    for k in act.keys() - exp.keys():
        out.append(f"extra: {k}")
    for k in exp.keys() & act.keys():
        for field in exp[k].keys() | act[k].keys():
            if exp[k].get(field) != act[k].get(field):
                out.append(f"{k}.{field}: {exp[k].get(field)!r} != {act[k].get(field)!r}")
    if not out and [o["names"] for o in expected["options"]] != [
            o["names"] for o in actual["options"]]:
        out.append("option order differs")
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="+", metavar="VERSION")
    ap.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--check", metavar="FILE", type=Path,
                    help="compare the (single) release's catalog with FILE, field for field")
    args = ap.parse_args(argv)
    if args.check and len(args.versions) != 1:
        ap.error("--check takes exactly one VERSION")

    failed = 0
    for version in args.versions:
        try:
            text = generate(version, args.cache)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            failed += 1
            last = str(exc).strip().splitlines()[-1:] or [""]
            print(f"sglang {version}: FAILED: {last[0]}", file=sys.stderr)
            continue
        catalog = json.loads(text)
        stubbed = sorted({o["names"][0] for o in catalog["options"]
                          if "stub." in json.dumps(o, ensure_ascii=False)})
        if stubbed:
            print(f"sglang {version}: WARNING: stub values in {', '.join(stubbed)}",
                  file=sys.stderr)
        if args.check:
            expected = json.loads(args.check.read_text(encoding="utf-8"))
            problems = diff(expected, catalog)
            same_text = text == args.check.read_text(encoding="utf-8")
            for line in problems:
                print(line)
            print(f"sglang {version}: {len(problems)} differences from {args.check}"
                  f" (byte-identical: {same_text})", file=sys.stderr)
            failed += bool(problems)
            continue
        args.out_dir.mkdir(parents=True, exist_ok=True)
        out = args.out_dir / f"sglang-{catalog['version']}.json"
        out.write_text(text, encoding="utf-8", newline="\n")
        print(f"sglang {version}: {len(catalog['options'])} options -> {out}",
              file=sys.stderr)
    return 1 if failed else 0


# --------------------------------------------------------------------------
# Child side (python -S): stub every third-party import, build the catalog.

def child(pkg_dir: str, deps_dir: str) -> int:
    import importlib.abc
    import importlib.machinery
    import types

    sys.path[:0] = [pkg_dir, deps_dir]
    sys.path.insert(0, str(TOOLS))
    import gen_catalog  # stdlib only; imported before the hook is installed

    real = set(REAL_MODULES) | {"sglang"}
    # Attributes that SGLang probes with hasattr() to detect a platform
    # (is_npu, is_musa): a CUDA/CPU torch has none of them.
    ABSENT = {"torch.npu", "torch.musa"}
    # A stubbed module's __version__: its pin in tools/sglang-requirements.txt
    # (the 0.5.23 environment: torch 2.14.1), else 0.0.0.
    VERSIONS = {}
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s#;]+)", line)
        if m:
            VERSIONS[m.group(1).lower().replace("-", "_")] = m.group(2)
    # Dunders that Python, typing, dataclasses, copy, pickle or inspect probe
    # for: a stub must not pretend to have them. Any other attribute, dunder
    # or not, is a stub (`__func__` too: 0.5.11-0.5.13 patch transformers with
    # `PretrainedConfig.from_dict.__func__` at import).
    PROTOCOL = set(dir(type)) | set(dir(types.ModuleType)) | set(dir(types.FunctionType)) | {
        "__wrapped__", "__signature__", "__origin__", "__args__", "__parameters__",
        "__mro_entries__", "__set_name__", "__get__", "__set__", "__delete__",
        "__fspath__", "__dataclass_fields__", "__dataclass_params__",
        "__self__", "__isabstractmethod__", "__abstractmethods__", "__slots__",
        "__path__", "__file__", "__spec__", "__loader__", "__all__", "__supertype__",
        "__await__", "__aiter__", "__length_hint__", "__copy__", "__deepcopy__",
        "__getnewargs__", "__getnewargs_ex__", "__array__", "__class_getitem__",
        "__post_init__", "__match_args__", "__objclass__", "__text_signature__",
        "__index__", "__int__", "__float__", "__bool__", "__len__", "__iter__",
        "__next__", "__call__", "__enter__", "__exit__", "__aenter__", "__aexit__",
    }
    stdlib = set(sys.stdlib_module_names)

    import abc
    import functools

    class StubMeta(abc.ABCMeta):
        """Every stub is a class: usable as a base, a type hint, a callable."""

        def __getattr__(cls, name):
            if name in PROTOCOL or f"{cls.__qualname__}.{name}" in ABSENT:
                raise AttributeError(name)
            return _stub(f"{cls.__qualname__}.{name}")

        def __call__(cls, *args, **kwargs):
            if not cls.__dict__.get("_stub"):
                return super().__call__(*args, **kwargs)
            if len(args) == 1 and not kwargs and isinstance(
                    args[0], (types.FunctionType, types.MethodType, staticmethod,
                              classmethod, functools.partial)):
                return args[0]  # used as a function decorator
            return _stub(f"{cls.__qualname__}()")

        def __getitem__(cls, key):
            return cls

        def __setitem__(cls, key, value):
            pass

        __delitem__ = __setitem__

        def register(cls, *args, **kwargs):  # AutoConfig.register(name, Config)
            return args[-1] if args else cls

        def __iter__(cls):
            return iter(())

        def __len__(cls):
            return 0

        def __bool__(cls):
            return False

        def __contains__(cls, item):
            return False

        def __int__(cls):
            return 0

        __index__ = __int__

        def __float__(cls):
            return 0.0

        def __or__(cls, other):
            return cls

        __ror__ = __or__
        __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __or__
        __truediv__ = __floordiv__ = __mod__ = __pow__ = __and__ = __or__

        def __lt__(cls, other):
            return False

        __le__ = __gt__ = __ge__ = __lt__

        def __enter__(cls):
            return cls

        def __exit__(cls, *exc):
            return False

    def _stub(name: str) -> type:
        return StubMeta(name.rsplit(".", 1)[-1], (), {
            "_stub": True, "__qualname__": name, "__module__": "stub",
            # class P(TypedDictStub, total=False)
            "__init_subclass__": classmethod(lambda cls, **kwargs: None),
        })

    class StubModule(types.ModuleType):
        def __getattr__(self, name):
            if name == "__version__":  # torch_release = parse(torch.__version__)
                return VERSIONS.get(self.__name__, "0.0.0")
            if name in PROTOCOL or f"{self.__name__}.{name}" in ABSENT:
                raise AttributeError(name)
            value = _stub(f"{self.__name__}.{name}")
            setattr(self, name, value)
            return value

    class StubLoader(importlib.abc.Loader):
        def create_module(self, spec):
            module = StubModule(spec.name)
            module.__path__ = []
            module.__all__ = []
            return module

        def exec_module(self, module):
            pass

    class StubFinder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            top = fullname.partition(".")[0]
            if top in real or top in stdlib:
                return None
            # Only an import gets a stub; importlib.util.find_spec("flashinfer")
            # (SGLang's "is it installed?" probe) is told no, as in a venv
            # that holds only what building the parser needs.
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_name != "_find_and_load_unlocked":
                frame = frame.f_back
            if frame is None:
                return None
            return importlib.machinery.ModuleSpec(fullname, StubLoader(),
                                                  is_package=True)

    # getattr(torch, device) / hasattr(torch.ops, lib_name) with a name that
    # came from a stub: the attribute does not exist (getattr gives a stub).
    import builtins

    real_getattr, real_hasattr = builtins.getattr, builtins.hasattr

    def stub_getattr(obj, name, *default):
        if isinstance(name, StubMeta):
            return default[0] if default else _stub(f"getattr({name.__qualname__})")
        return real_getattr(obj, name, *default)

    def stub_hasattr(obj, name):
        return False if isinstance(name, StubMeta) else real_hasattr(obj, name)

    builtins.getattr, builtins.hasattr = stub_getattr, stub_hasattr

    # json.dumps({"callable": dill.dumps(cls).hex()}) at import time (0.5.14):
    # a stub serialises as its name. (A stub that reached the catalog would
    # still show: gen_catalog turns it into a repr, "<class 'stub.…'>".)
    import json

    real_default = json.JSONEncoder.default

    def stub_default(self, o):
        return o.__qualname__ if isinstance(o, StubMeta) else real_default(self, o)

    json.JSONEncoder.default = stub_default
    sys.meta_path.insert(0, StubFinder())
    out, sys.stdout = sys.stdout, sys.stderr  # SGLang's prints stay off the catalog
    try:
        catalog = gen_catalog.build_catalog()
    finally:
        sys.stdout = out
    sys.stdout.write(gen_catalog.render(catalog))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        sys.exit(child(sys.argv[2], sys.argv[3]))
    sys.exit(main())
