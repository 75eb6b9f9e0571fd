"""Ask SGLang itself what it says about argument lists: the oracle servelint's
findings are checked against.

Run with the Python of the SGLang venv (tools/make-sglang-env.sh; the full stage
also needs tools/oracle-model/requirements-full.txt, see docs/oracle.md):

    .venv-sglang/bin/python tools/sglang_oracle.py [--stage parse|full] \
        [--gpu none|sm90|sm100] [--timeout 60] < cases.jsonl > verdicts.jsonl

Each input line is either a JSON list of argument strings (what follows the
entrypoint) or an object `{"argv": [...], "model": ..., "gpu": ...}`.

`--stage parse` runs SGLang's argument parser only (`prepare_server_args`, which
builds the parser exactly as `sglang serve` does and calls `parse_args`) and
prints `{"argv": [...], "verdict": "accepted" | "rejected", "error": str}`.

`--stage full` (the default) runs what SGLang runs before the server starts:
`prepare_server_args(argv)`, `resolve_once()`, `check_server_args()`, with a
tiny local model folder injected as `--model-path` and, unless a GPU is
pretended (`--gpu sm90|sm100`), `--device cpu`. Verdicts are `accepted`,
`rejected` or `environment` (see `classify`), with the exception, its first
line, and the innermost SGLang frame that raised it (`where`).

SGLang is imported once (per pretended GPU, in a long-lived worker process);
each case runs in a forked child so one case cannot leak state into the next.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import re
import select
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_ROOT = os.path.join(HERE, "oracle-model")
DEFAULT_MODEL = "llama-tiny"
DEFAULT_TIMEOUT = 60.0

# What `--gpu` pretends: eight identical devices of one kind.
GPU_PROFILES: dict[str, dict] = {
    "sm90": {
        "capability": (9, 0),
        "name": "NVIDIA H100 80GB HBM3",
        "total_mib": 81559,  # what nvidia-smi reports for an H100 80 GB
        "multi_processor_count": 132,
        "l2_cache_size": 50 * 1024 * 1024,
        "count": 8,
        "driver": "580.95.05",
    },
    "sm100": {
        "capability": (10, 0),
        "name": "NVIDIA B200",
        "total_mib": 183359,  # what nvidia-smi reports for a B200
        "multi_processor_count": 148,
        "l2_cache_size": 126 * 1024 * 1024,
        "count": 8,
        "driver": "580.95.05",
    },
}
GPU_CHOICES = ("none", *GPU_PROFILES)


# --------------------------------------------------------------------------
# Input: cases and the argv that is actually judged (no SGLang needed).
# --------------------------------------------------------------------------

MODEL_FLAGS = ("--model-path", "--model")
NO_MODEL = object()  # "model": null in a case: inject nothing


def parse_case(line: str, default_gpu: str = "none") -> dict:
    """One input line -> {"argv": [...], "model": name|None, "gpu": str}.

    A line is a JSON list of strings, or an object with "argv" and optional
    "model" (a folder name under tools/oracle-model, a path to a folder, or
    null for "inject no model") and "gpu" ("none", "sm90", "sm100").
    Raises ValueError on anything else.
    """
    data = json.loads(line)
    model: object = DEFAULT_MODEL
    gpu = default_gpu
    if isinstance(data, dict):
        if "argv" not in data:
            raise ValueError("case object has no 'argv'")
        argv = data["argv"]
        if "model" in data:
            model = NO_MODEL if data["model"] is None else data["model"]
            if model is not NO_MODEL and not isinstance(model, str):
                raise ValueError("'model' must be a string or null")
        if "gpu" in data:
            gpu = data["gpu"]
    else:
        argv = data
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ValueError("argv must be a list of strings")
    if gpu not in GPU_CHOICES:
        raise ValueError(f"'gpu' must be one of {', '.join(GPU_CHOICES)}")
    return {"argv": argv, "model": None if model is NO_MODEL else model, "gpu": gpu}


def model_folder(model: str | None) -> str | None:
    """The folder for a case's "model": a name under tools/oracle-model or a path."""
    if model is None:
        return None
    if os.sep in model or model.startswith("."):
        path = os.path.abspath(model)
    else:
        path = os.path.join(MODEL_ROOT, model)
    if not os.path.isfile(os.path.join(path, "config.json")):
        raise ValueError(f"model folder {path} has no config.json")
    return path


def _flag_value(argv: list[str], flags: tuple[str, ...]) -> list[tuple[int, str | None]]:
    """Occurrences of `flags` in argv: (index of the flag token, its value or None)."""
    found = []
    for i, tok in enumerate(argv):
        if tok == "--":
            break
        for flag in flags:
            if tok == flag:
                nxt = argv[i + 1] if i + 1 < len(argv) else None
                found.append((i, nxt if nxt is not None and not nxt.startswith("-") else None))
            elif tok.startswith(flag + "="):
                found.append((i, tok[len(flag) + 1 :]))
    return found


def prepare_argv(argv: list[str], model_dir: str | None, gpu: str) -> list[str]:
    """The argv the full stage judges.

    - Model: if the model argv names (--model-path/--model; the last one
      wins, as in argparse) is a local folder, it is kept. Otherwise every
      model value is replaced by `model_dir` (in place), or `--model-path
      model_dir` is put first when argv names none. A flag without a value is
      left for argparse to reject.
    - Device: `--device cpu` is put first when no GPU is pretended and argv
      has no --device.
    """
    out = list(argv)
    if model_dir is not None:
        found = _flag_value(out, MODEL_FLAGS)
        if not found:
            out = ["--model-path", model_dir, *out]
        elif not (found[-1][1] is not None and os.path.isdir(found[-1][1])):
            for i, value in found:
                if value is None:
                    continue
                if out[i].startswith("--") and "=" in out[i]:
                    out[i] = out[i].split("=", 1)[0] + "=" + model_dir
                else:
                    out[i + 1] = model_dir
    if gpu == "none" and not _flag_value(out, ("--device",)):
        out = ["--device", "cpu", *out]
    return out


# --------------------------------------------------------------------------
# Classification (no SGLang needed: works on any exception object).
# --------------------------------------------------------------------------

# Exception types that always mean "the machine, not the flags".
ENVIRONMENT_TYPES = (ImportError, OSError)  # ModuleNotFoundError, FileNotFoundError,
# ConnectionError, TimeoutError, PermissionError, huggingface_hub's
# OfflineModeIsEnabled / LocalEntryNotFoundError / HfHubHTTPError are all these.
ENVIRONMENT_TYPE_NAMES = {
    "CudaError",  # torch.cuda.CudaError
    "DeferredCudaCallError",  # torch.cuda lazy-init failure
    "AcceleratorError",  # torch >= 2.8 device errors
    "OutOfMemoryError",  # torch.cuda.OutOfMemoryError
    "NVMLError",  # pynvml
}
# Modules whose exceptions are transport/hub failures (httpx.HTTPError is not an OSError).
ENVIRONMENT_MODULE_PREFIXES = ("httpx", "httpcore", "requests", "urllib3", "huggingface_hub")
# A RuntimeError (or SystemError) is "environment" when its message says so.
ENVIRONMENT_MESSAGE = re.compile(
    r"|".join(
        [
            r"\bdrivers?\b",  # "Found no NVIDIA driver", "InfiniBand drivers"
            r"infiniband|\bIB devices?\b|/sys/class/",
            r"nvidia-smi|rocm-smi|hl-smi|\bnvml\b",
            r"cannot re-initiali[sz]e cuda",
            r"cuda (is )?not available|no cuda gpus|cuda error|cuda_error|cudaerror",
            r"cuda (driver|runtime)|not compiled with cuda|cuda initiali[sz]ation",
            r"torch_npu|npu device|hardware not available",
            r"no module named|is not installed|pip install",
        ]
    ),
    re.IGNORECASE,
)


def classify(exc: BaseException) -> str:
    """"environment" or "rejected" for an exception SGLang's validation raised.

    environment: ImportError/ModuleNotFoundError; OSError and subclasses
    (file not found, network, hub); torch device errors (CudaError,
    DeferredCudaCallError, AcceleratorError, OutOfMemoryError, NVMLError);
    httpx/requests/urllib3/huggingface_hub errors that are not ValueErrors;
    RuntimeError/SystemError whose message names a driver, InfiniBand, NVML or
    nvidia-smi, CUDA being unavailable/uninitialisable, NPU, or a missing
    package -- or whose direct cause (`raise ... from`) is environment.
    Everything else (ValueError, AssertionError, TypeError, KeyError,
    NotImplementedError, other RuntimeErrors, ...) is "rejected".
    """
    if isinstance(exc, ENVIRONMENT_TYPES):
        return "environment"
    for klass in type(exc).__mro__:
        if klass.__name__ in ENVIRONMENT_TYPE_NAMES:
            return "environment"
    module = type(exc).__module__ or ""
    if module.startswith(ENVIRONMENT_MODULE_PREFIXES) and not isinstance(exc, ValueError):
        return "environment"
    if isinstance(exc, (RuntimeError, SystemError)) and not isinstance(
        exc, (NotImplementedError, RecursionError)
    ):
        if ENVIRONMENT_MESSAGE.search(str(exc)):
            return "environment"
        cause = exc.__cause__
        if cause is not None and cause is not exc and classify(cause) == "environment":
            return "environment"
    return "rejected"


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _raising_line(tb) -> str:
    """Source text of the line that raised (the innermost traceback frame)."""
    import linecache

    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return ""
    return linecache.getline(last.tb_frame.f_code.co_filename, last.tb_lineno).strip()


def describe(exc: BaseException) -> tuple[str, str]:
    """("<Type>: <first line>", "<Type>: <full message>").

    A message-less exception (a bare `assert`) is described by the source line
    that raised it, e.g. "AssertionError: assert cfg.tp_size % cfg.attn_dp_size == 0".
    """
    name = type(exc).__name__
    msg = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        msg = repr(exc.args[0])
    if not msg.strip():
        msg = _raising_line(exc.__traceback__)
    return (f"{name}: {first_line(msg)}".rstrip(": "), f"{name}: {msg}".rstrip(": "))


def sglang_where(tb, root: str | None) -> str | None:
    """file:line of the innermost traceback frame inside the sglang package.

    `root` is the folder that holds the `sglang` package; the result is
    relative to it, e.g. "sglang/srt/arg_groups/validation_hook.py:123".
    """
    if root is None:
        return None
    prefix = os.path.join(root, "sglang") + os.sep
    where = None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(prefix):
            where = f"{os.path.relpath(filename, root)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


# --------------------------------------------------------------------------
# Pretending a GPU (runs in the worker, before SGLang is imported).
# --------------------------------------------------------------------------


class _FakeDeviceProperties:
    def __init__(self, profile: dict):
        self.name = profile["name"]
        self.major, self.minor = profile["capability"]
        self.total_memory = profile["total_mib"] * 1024 * 1024
        self.multi_processor_count = profile["multi_processor_count"]
        self.L2_cache_size = profile["l2_cache_size"]
        self.max_threads_per_multi_processor = 2048
        self.regs_per_multiprocessor = 65536
        self.warp_size = 32
        self.is_integrated = False
        self.is_multi_gpu_board = False
        self.gcnArchName = ""
        self.uuid = "GPU-00000000-0000-0000-0000-000000000000"

    def __repr__(self):
        return f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor})"


def patch_torch_cuda(profile: dict) -> None:
    """Make torch.cuda answer like `profile` without touching a driver.

    Only the query functions are replaced: anything that would really use a
    device (allocation, streams, set_device, synchronize) still goes to the
    driver, fails, and the case is reported as `environment`.
    """
    import torch

    props = _FakeDeviceProperties(profile)
    total = props.total_memory
    cuda = torch.cuda
    cuda.is_available = lambda: True
    cuda.device_count = lambda: profile["count"]
    cuda.get_device_capability = lambda device=None: tuple(profile["capability"])
    cuda.get_device_name = lambda device=None: profile["name"]
    cuda.get_device_properties = lambda device=None: props
    cuda.mem_get_info = lambda device=None: (total - 512 * 1024 * 1024, total)
    cuda.current_device = lambda: 0
    cuda.is_bf16_supported = lambda *a, **k: True
    cuda.get_arch_list = lambda: ["sm_80", "sm_90", "sm_100", "sm_120"]


def patch_sglang_probes(profile: dict) -> dict:
    """Replace SGLang's probes that ask the machine outside torch.cuda.

    Called after `sglang.srt.utils.common` is imported and before the rest
    of SGLang is, so later `from ... import name` pick up the replacements;
    `replace_everywhere` then fixes modules imported earlier.
    """
    from sglang.srt.utils import common

    major, minor = profile["capability"]
    replacements = {
        # nvidia-smi --query-gpu=memory.total (MiB, min over devices)
        "get_nvgpu_memory_capacity": lambda: float(profile["total_mib"]),
        # nvidia-smi --query-gpu=driver_version
        "get_nvidia_driver_version_str": functools.lru_cache(maxsize=1)(lambda: profile["driver"]),
        # nvidia-smi --query-gpu=compute_cap
        "get_device_sm_nvidia_smi": lambda: (major, minor),
        # NVML (pynvml is not installed here; a GPU host may have it)
        "_get_device_sm_via_nvml": lambda: major * 10 + minor,
        # flashinfer is a dependency of every CUDA install of SGLang
        "is_flashinfer_available": functools.lru_cache(maxsize=1)(lambda: True),
        # GB200/GB300 fabric: not an 8x H100/B200 box
        "is_mnnvl_fabric_device": functools.lru_cache(maxsize=1)(lambda: False),
    }
    originals = {}
    for name, new in replacements.items():
        if hasattr(common, name):
            originals[name] = getattr(common, name)
            setattr(common, name, new)
    # lru-cached probes computed before the patch (none should have been,
    # since torch.cuda was patched first) are recomputed on next use.
    for value in vars(common).values():
        clear = getattr(value, "cache_clear", None)
        if callable(clear) and getattr(value, "__module__", None) == common.__name__:
            with contextlib.suppress(Exception):
                clear()
    return {orig: getattr(common, name) for name, orig in originals.items()}


# CUDA kernel packages a CUDA install of SGLang 0.5.23 depends on (versions as
# pinned by its wheel). Their native libraries need libcuda (the driver), so
# they cannot be imported on a machine without one even when installed; SGLang
# imports them at module level as soon as it believes it runs on CUDA. With
# --gpu they are replaced by inert stand-ins, *only when the real import is
# missing or fails*. Resolution only imports names from them; it does not run
# kernels.
STUB_PACKAGES: dict[str, str] = {
    "sgl_kernel": "0.4.10",  # sglang-kernel
    "flashinfer": "0.7.2",  # flashinfer_python
    "deep_gemm": "0.2.3.post2",  # sgl-deep-gemm
    "deep_ep": "0.1.2.post1",  # sgl-deep-ep
    "flash_mla": "1.0.0",  # sgl-flash-mla
    "flash_attn": "4.0.0b18",  # flash-attn-4
    "quack": "0.6.5",  # quack-kernels
    "tilelang": "0.1.12",
    "humming": "0.1.12",  # humming-kernels
    "cutlass": "4.8.0",  # nvidia-cutlass-dsl
    "nvshmem": "0.1.0",  # nvshmem4py-cu13
    "torch_memory_saver": "0.0.9",
}


class _StubMeta(type):
    """Metaclass of stand-ins: any attribute, call, index or subclass works."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{cls.__qualname__}.{name}", cls.__module__)

    def __call__(cls, *args, **kwargs):
        if cls.__dict__.get("_oracle_stub"):
            # Used as a decorator (@stub or @stub(...)): keep the function.
            if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _StubMeta):
                return args[0]
            return _placeholder(f"{cls.__qualname__}()", cls.__module__)
        return super().__call__(*args, **kwargs)  # a real subclass of a stand-in

    def __getitem__(cls, item):
        return cls

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0


def _placeholder(qualname: str, module: str):
    return _StubMeta(qualname.rsplit(".", 1)[-1], (), {"_oracle_stub": True, "__qualname__": qualname, "__module__": module})


def install_kernel_stubs() -> None:
    """Append a finder that stands in for STUB_PACKAGES that cannot be imported."""
    import importlib.abc
    import importlib.machinery
    import types

    class StubModule(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)
            return _placeholder(f"{self.__name__}.{name}", self.__name__)

    class Loader(importlib.abc.Loader):
        def create_module(self, spec):
            module = StubModule(spec.name)
            module.__path__ = []  # a package: submodules are stand-ins too
            module.__version__ = STUB_PACKAGES[spec.name.split(".")[0]]
            module.__oracle_stub__ = True
            return module

        def exec_module(self, module):
            pass

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname.split(".")[0] not in STUB_PACKAGES:
                return None
            return importlib.machinery.ModuleSpec(fullname, Loader(), is_package=True)

    finder = Finder()
    # Last, so an importable real package wins; a real one that fails to load
    # (no libcuda) is replaced by a stand-in below.
    sys.meta_path.append(finder)
    for name in STUB_PACKAGES:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001  (installed but unloadable without a driver)
            for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
                del sys.modules[key]
            spec = finder.find_spec(name)
            module = spec.loader.create_module(spec)
            module.__spec__ = spec
            sys.modules[name] = module


def replace_everywhere(mapping: dict) -> int:
    """In every loaded sglang module, rebind names bound to a replaced function."""
    count = 0
    by_id = {id(k): v for k, v in mapping.items()}
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not mod_name.startswith("sglang"):
            continue
        try:
            items = list(vars(mod).items())
        except TypeError:
            continue
        for key, value in items:
            new = by_id.get(id(value))
            if new is not None and new is not value:
                setattr(mod, key, new)
                count += 1
    return count


# --------------------------------------------------------------------------
# Judging one case (in a forked child).
# --------------------------------------------------------------------------


def judge(argv: list[str]) -> dict:
    """--stage parse: unchanged behaviour, one verdict from argparse alone."""
    from sglang.srt.server_args import prepare_server_args

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            prepare_server_args(list(argv))
    except SystemExit as exc:
        if exc.code in (0, None):  # --help / --version print and exit cleanly
            return {"argv": argv, "verdict": "accepted", "error": None}
        text = err.getvalue().strip().splitlines()
        msg = text[-1] if text else f"exit {exc.code}"
        return {"argv": argv, "verdict": "rejected", "error": msg}
    except Exception as exc:  # SGLang raised outside argparse (e.g. LoRAPathAction)
        return {"argv": argv, "verdict": "rejected", "error": f"{type(exc).__name__}: {exc}"}
    return {"argv": argv, "verdict": "accepted", "error": None}


def _sglang_root() -> str | None:
    mod = sys.modules.get("sglang")
    if mod is None or not getattr(mod, "__file__", None):
        return None
    return os.path.dirname(os.path.dirname(os.path.abspath(mod.__file__)))


def judge_full(argv_judged: list[str], keep_log: bool = False) -> dict:
    """--stage full: parse, resolve, check; the verdict and where it came from."""
    from sglang.srt.server_args import prepare_server_args

    err = io.StringIO()
    step = "parse"
    result: dict = {"verdict": "accepted", "error": None, "detail": None, "where": None}
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            server_args = prepare_server_args(list(argv_judged))
            step = "resolve"
            server_args.resolve_once()
            step = "check"
            server_args.check_server_args()
    except SystemExit as exc:
        if step == "parse" and exc.code in (0, None):  # --help / --version
            pass
        elif step == "parse":
            text = err.getvalue().strip()
            lines = [ln for ln in text.splitlines() if ln.strip()]
            msg = lines[-1] if lines else f"exit {exc.code}"
            result.update(
                verdict="rejected",
                error=f"argparse: {msg}",
                detail=f"argparse: {msg}",
                where=sglang_where(exc.__traceback__, _sglang_root()),
            )
        else:
            result.update(
                verdict="rejected",
                error=f"SystemExit: {exc.code}",
                detail=f"SystemExit: {exc.code}",
                where=sglang_where(exc.__traceback__, _sglang_root()),
            )
    except BaseException as exc:  # noqa: BLE001  (KeyboardInterrupt too: a child)
        error, detail = describe(exc)
        result.update(
            verdict=classify(exc),
            error=error,
            detail=detail,
            where=sglang_where(exc.__traceback__, _sglang_root()),
        )
    if result["verdict"] != "accepted":
        result["step"] = step
    if keep_log:
        result["log"] = err.getvalue()
    return result


# --------------------------------------------------------------------------
# Processes: a worker per pretended GPU imports SGLang once and forks a child
# per case; the main process reads input and writes verdicts in order.
# --------------------------------------------------------------------------


def _clean_environment() -> None:
    for key in list(os.environ):
        if key.startswith(("SGLANG_", "SGL_")):
            del os.environ[key]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"killed by {name}"
    if os.WIFEXITED(status):
        return f"exit status {os.WEXITSTATUS(status)}"
    return f"status {status}"


def run_child(argv_judged: list[str], timeout: float, keep_log: bool) -> dict:
    """Fork, judge in the child, collect its JSON; a hang or crash is `environment`."""
    r, w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            os.setpgid(0, 0)  # so a timeout kills what the case started too
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            if not keep_log:
                os.dup2(devnull, 2)
            result = judge_full(argv_judged, keep_log)
            _write_all(w, json.dumps(result).encode())
        except BaseException:  # noqa: BLE001
            code = 3
        finally:
            os._exit(code)
    os.close(w)
    chunks: list[bytes] = []
    timed_out = False
    deadline = start + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([r], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    if timed_out:
        for target in (-pid, pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(target, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    seconds = round(time.monotonic() - start, 3)
    data = b"".join(chunks)
    if timed_out:
        msg = f"Timeout: no verdict within {timeout:g} s"
        return {"verdict": "environment", "error": msg, "detail": msg, "where": None, "seconds": seconds}
    try:
        result = json.loads(data)
    except ValueError:
        msg = f"ChildCrashed: the judging process died ({_describe_status(status)})"
        return {"verdict": "environment", "error": msg, "detail": msg, "where": None, "seconds": seconds}
    result["seconds"] = seconds
    return result


# Imported in the worker before forking, so children only import what a case
# needs beyond these.
WARM_MODULES = (
    "sglang.srt.server_args",
    "sglang.srt.arg_groups.pipeline",
    "sglang.srt.arg_groups.validation_hook",
    "sglang.srt.configs.model_config",
    "sglang.srt.platforms",
    "transformers",
    "transformers.models.llama.configuration_llama",
    "transformers.models.deepseek_v3.configuration_deepseek_v3",
    "transformers.models.qwen3_moe.configuration_qwen3_moe",
)


def _warm_imports() -> list[str]:
    import importlib
    import pkgutil

    failed = []
    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    # Every resolution hook and model override module.
    try:
        import sglang.srt.arg_groups as groups

        for info in pkgutil.walk_packages(groups.__path__, groups.__name__ + "."):
            with contextlib.suppress(Exception):
                importlib.import_module(info.name)
    except Exception as exc:  # noqa: BLE001
        failed.append(f"sglang.srt.arg_groups: {type(exc).__name__}: {exc}")
    # The platform object is resolved lazily; resolve it before forking.
    with contextlib.suppress(Exception):
        from sglang.srt.platforms import current_platform

        _ = current_platform.device_name
    return failed


def worker_main(gpu: str, req_fd: int, resp_fd: int, timeout: float, keep_log: bool) -> None:
    """Long-lived process for one `--gpu` value: patch, import, then serve cases."""
    req = os.fdopen(req_fd, "r")
    resp = os.fdopen(resp_fd, "w")
    start = time.monotonic()
    try:
        # Stay quiet on the shared stderr while importing (import-time warnings
        # about AWQ/GGUF/pynvml are not about any case).
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            if gpu != "none":
                profile = GPU_PROFILES[gpu]
                patch_torch_cuda(profile)
                install_kernel_stubs()
                mapping = patch_sglang_probes(profile)
            import sglang.srt.server_args  # noqa: F401
            import sglang.srt.arg_groups.pipeline  # noqa: F401  (needs transformers)

            failed = _warm_imports()
            if gpu != "none":
                replace_everywhere(mapping)
        import torch

        if torch.cuda.is_initialized():  # would poison every fork
            failed.append("torch.cuda was initialised while importing SGLang")
        hello = {"ready": True, "import_seconds": round(time.monotonic() - start, 2), "warnings": failed}
    except BaseException as exc:  # noqa: BLE001
        hello = {"ready": False, "error": f"{type(exc).__name__}: {exc}"}
    resp.write(json.dumps(hello) + "\n")
    resp.flush()
    if not hello["ready"]:
        return
    for line in req:
        request = json.loads(line)
        result = run_child(request["argv_judged"], timeout, keep_log)
        resp.write(json.dumps(result) + "\n")
        resp.flush()


class Worker:
    # Parent-side pipe ends of every live worker: a worker forked later must
    # not hold them, or an earlier worker never sees end-of-input.
    _parent_fds: set[int] = set()

    def __init__(self, gpu: str, timeout: float, keep_log: bool):
        self.gpu = gpu
        self.timeout = timeout
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(req_w)
            os.close(resp_r)
            for fd in Worker._parent_fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            code = 0
            try:
                worker_main(gpu, req_r, resp_w, timeout, keep_log)
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        os.close(req_r)
        os.close(resp_w)
        self.pid = pid
        self.req = os.fdopen(req_w, "w")
        self.resp_fd = resp_r
        Worker._parent_fds.update((req_w, resp_r))
        self.buffer = b""
        hello = self._read_line(600.0)
        if hello is None:
            raise RuntimeError(f"the --gpu {gpu} worker died while importing SGLang")
        hello = json.loads(hello)
        if not hello.get("ready"):
            self.close()
            hint = ""
            if "No module named 'sglang'" in str(hello.get("error")):
                hint = "; run this with the Python of the SGLang venv (tools/make-sglang-env.sh)"
            elif "No module named" in str(hello.get("error")):
                hint = (
                    "; the full stage needs more than the parser: "
                    "<venv>/bin/python -m pip install -r tools/oracle-model/requirements-full.txt"
                )
            raise RuntimeError(f"the --gpu {gpu} worker could not import SGLang: {hello.get('error')}{hint}")
        self.import_seconds = hello["import_seconds"]
        for warning in hello.get("warnings", []):
            print(f"sglang_oracle: warning (--gpu {gpu}): {warning}", file=sys.stderr)

    def _read_line(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self.resp_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.resp_fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def judge(self, argv_judged: list[str]) -> dict | None:
        try:
            self.req.write(json.dumps({"argv_judged": argv_judged}) + "\n")
            self.req.flush()
        except BrokenPipeError:
            return None
        line = self._read_line(self.timeout + 30.0)
        return json.loads(line) if line is not None else None

    def close(self) -> None:
        Worker._parent_fds.difference_update((self.req.fileno(), self.resp_fd))
        with contextlib.suppress(Exception):
            self.req.close()
        with contextlib.suppress(Exception):
            os.close(self.resp_fd)
        with contextlib.suppress(ChildProcessError):
            for _ in range(50):
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    return
                time.sleep(0.1)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)


def main_full(args) -> int:
    # Hub look-ups cannot succeed here; fail them at once instead of retrying.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    workers: dict[str, Worker] = {}
    start = time.monotonic()
    count = 0
    counts: dict[str, int] = {}
    try:
        for lineno, line in enumerate(sys.stdin, 1):
            line = line.strip()
            if not line:
                continue
            count += 1
            try:
                case = parse_case(line, args.gpu)
                model_dir = model_folder(case["model"])
            except ValueError as exc:
                out = {"input": line, "verdict": "invalid-input", "error": f"line {lineno}: {exc}"}
                counts["invalid-input"] = counts.get("invalid-input", 0) + 1
                print(json.dumps(out), flush=True)
                continue
            argv_judged = prepare_argv(case["argv"], model_dir, case["gpu"])
            worker = workers.get(case["gpu"])
            if worker is None:
                try:
                    worker = workers[case["gpu"]] = Worker(case["gpu"], args.timeout, args.log)
                except RuntimeError as exc:
                    print(f"sglang_oracle: {exc}", file=sys.stderr)
                    return 2
            result = worker.judge(argv_judged)
            if result is None:  # the worker itself died or hung: start a new one next time
                worker.close()
                del workers[case["gpu"]]
                msg = "WorkerDied: the oracle worker stopped answering"
                result = {"verdict": "environment", "error": msg, "detail": msg, "where": None}
            out = {
                "argv": case["argv"],
                "argv_judged": argv_judged,
                "model": case["model"],
                "gpu": case["gpu"],
                **result,
            }
            counts[out["verdict"]] = counts.get(out["verdict"], 0) + 1
            print(json.dumps(out), flush=True)
    finally:
        for worker in workers.values():
            worker.close()
    total = time.monotonic() - start
    imports = sum(w.import_seconds for w in workers.values())
    per = f"{(total - imports) / count:.2f} s/case after imports" if count else "no cases"
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(
        f"sglang_oracle: {count} cases in {total:.1f} s (SGLang import {imports:.1f} s, {per}); {summary}",
        file=sys.stderr,
    )
    return 0


def main_parse() -> int:
    start = time.monotonic()
    count = 0
    import sglang.srt.server_args  # noqa: F401  (import once, before forking)

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        count += 1
        data = json.loads(line)
        argv = data["argv"] if isinstance(data, dict) else data
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            out = json.dumps(judge(argv)).encode()
            os.write(w, out)
            os._exit(0)
        os.close(w)
        chunks = []
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(r)
        os.waitpid(pid, 0)
        data = b"".join(chunks)
        result = json.loads(data) if data else {"argv": argv, "verdict": "crashed", "error": None}
        print(json.dumps(result), flush=True)
    print(f"sglang_oracle: {count} cases in {time.monotonic() - start:.1f} s", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stage", choices=("parse", "full"), default="full")
    parser.add_argument(
        "--gpu",
        choices=GPU_CHOICES,
        default="none",
        help="pretend 8 GPUs of this kind (full stage); a case's \"gpu\" key overrides it",
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per case (full stage)"
    )
    parser.add_argument(
        "--log", action="store_true", help="add SGLang's captured log to each verdict (full stage)"
    )
    args = parser.parse_args(argv)
    _clean_environment()
    if args.stage == "parse":
        return main_parse()
    return main_full(args)


if __name__ == "__main__":
    sys.exit(main())
