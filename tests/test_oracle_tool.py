"""tools/sglang_oracle.py without SGLang: input handling, the argv it judges,
the verdict classification, `where`, the tiny model configs and the stand-ins
for CUDA kernel packages. (The tool itself runs in the SGLang venv; see
docs/oracle.md. None of this imports SGLang or torch.)"""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "sglang_oracle.py")
MODELS = os.path.join(ROOT, "tools", "oracle-model")


def _load():
    spec = importlib.util.spec_from_file_location("sglang_oracle", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oracle = _load()
LLAMA = os.path.join(MODELS, "llama-tiny")


# --- input lines ---------------------------------------------------------------


def test_plain_list_line():
    case = oracle.parse_case('["--tp-size", "2"]')
    assert case == {"argv": ["--tp-size", "2"], "model": "llama-tiny", "gpu": "none"}


def test_plain_list_takes_default_gpu():
    assert oracle.parse_case("[]", default_gpu="sm90")["gpu"] == "sm90"


def test_object_line_with_model_and_gpu():
    case = oracle.parse_case('{"argv": ["--tp-size", "8"], "model": "deepseek-tiny", "gpu": "sm100"}')
    assert case == {"argv": ["--tp-size", "8"], "model": "deepseek-tiny", "gpu": "sm100"}


def test_object_line_null_model_means_no_injection():
    assert oracle.parse_case('{"argv": [], "model": null}')["model"] is None


@pytest.mark.parametrize(
    "line",
    [
        '{"model": "llama-tiny"}',  # no argv
        '{"argv": "--tp-size 2"}',  # not a list
        '["--tp-size", 2]',  # not strings
        '{"argv": [], "gpu": "sm80"}',  # unknown GPU
        '{"argv": [], "model": 3}',
        "not json",
    ],
)
def test_bad_lines_are_value_errors(line):
    with pytest.raises(ValueError):
        oracle.parse_case(line)


def test_model_folders():
    assert oracle.model_folder("llama-tiny") == LLAMA
    assert oracle.model_folder(None) is None
    assert oracle.model_folder(LLAMA) == LLAMA  # a path works too
    with pytest.raises(ValueError, match="no config.json"):
        oracle.model_folder("no-such-model")


# --- the tiny configs ---------------------------------------------------------------


def _config(name):
    with open(os.path.join(MODELS, name, "config.json")) as f:
        return json.load(f)


def test_llama_tiny_config():
    cfg = _config("llama-tiny")
    assert cfg["architectures"] == ["LlamaForCausalLM"]
    assert (cfg["hidden_size"], cfg["num_hidden_layers"]) == (256, 4)
    assert (cfg["num_attention_heads"], cfg["num_key_value_heads"]) == (8, 8)
    assert (cfg["vocab_size"], cfg["max_position_embeddings"]) == (32000, 4096)
    assert cfg["torch_dtype"] == "bfloat16"
    assert os.listdir(os.path.join(MODELS, "llama-tiny")) == ["config.json"]


def test_deepseek_tiny_config_is_mla_moe():
    cfg = _config("deepseek-tiny")
    assert cfg["model_type"] == "deepseek_v3"
    assert cfg["architectures"] == ["DeepseekV3ForCausalLM"]
    assert cfg["n_routed_experts"] == 8
    for key in ("kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        assert cfg[key] > 0


def test_qwen3_moe_tiny_config():
    cfg = _config("qwen3-moe-tiny")
    assert cfg["model_type"] == "qwen3_moe"
    assert cfg["num_experts"] == 8 and cfg["num_experts_per_tok"] == 2


# --- the argv that is judged ------------------------------------------------------


def test_model_and_cpu_device_injected():
    assert oracle.prepare_argv(["--tp-size", "1"], LLAMA, "none") == [
        "--device", "cpu", "--model-path", LLAMA, "--tp-size", "1",
    ]


def test_no_cpu_device_when_a_gpu_is_pretended():
    assert oracle.prepare_argv([], LLAMA, "sm90") == ["--model-path", LLAMA]


@pytest.mark.parametrize("device", [["--device", "cuda"], ["--device=cuda"]])
def test_explicit_device_kept(device):
    assert oracle.prepare_argv(device, LLAMA, "none") == ["--model-path", LLAMA, *device]


def test_hub_model_replaced_in_place():
    argv = ["--model-path", "meta-llama/Llama-3.1-8B", "--tp", "2", "--model=org/x"]
    assert oracle.prepare_argv(argv, LLAMA, "sm90") == [
        "--model-path", LLAMA, "--tp", "2", f"--model={LLAMA}",
    ]


def test_local_model_folder_kept(tmp_path):
    argv = ["--model", str(tmp_path)]
    assert oracle.prepare_argv(argv, LLAMA, "sm90") == argv


def test_model_flag_without_value_left_for_argparse():
    argv = ["--tp-size", "2", "--model-path"]
    assert oracle.prepare_argv(argv, LLAMA, "sm90") == argv


def test_no_model_injection_when_model_is_none():
    assert oracle.prepare_argv(["--tp-size", "2"], None, "sm90") == ["--tp-size", "2"]


# --- classification -----------------------------------------------------------------


class CudaError(RuntimeError):  # named like torch.cuda.CudaError
    pass


def _httpx_error():
    cls = type("ConnectError", (Exception,), {"__module__": "httpx"})
    return cls("connection refused")


def _wrapped_import_error():
    try:
        try:
            raise ImportError("No module named 'flashinfer'")
        except ImportError as inner:
            raise RuntimeError("could not set up the attention backend") from inner
    except RuntimeError as exc:
        return exc


@pytest.mark.parametrize(
    "exc",
    [
        ImportError("torch_npu is required when run on npu device."),
        ModuleNotFoundError("No module named 'sgl_kernel'"),
        FileNotFoundError(2, "No such file or directory", "/models/x/config.json"),
        ConnectionError("couldn't connect to 'https://huggingface.co'"),
        OSError("We couldn't connect to 'https://huggingface.co' to load the files"),
        RuntimeError("Found no NVIDIA driver on your system."),
        RuntimeError("InfiniBand sysfs path not found: /sys/class/infiniband."),
        RuntimeError("Cannot re-initialize CUDA in forked subprocess."),
        RuntimeError("nvidia-smi not found. Ensure NVIDIA drivers are installed."),
        CudaError("unknown error"),
        _httpx_error(),
        _wrapped_import_error(),
    ],
    ids=repr,
)
def test_environment(exc):
    assert oracle.classify(exc) == "environment"


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("--prefill-only-disable-kv-cache is incompatible with --enable-hisparse"),
        ValueError("TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x)."),
        AssertionError(),
        TypeError("'>' not supported between instances of 'NoneType' and 'int'"),
        KeyError("attn_dp_size"),
        NotImplementedError("CUDA driver feature"),  # not a plain RuntimeError
        RuntimeError("--kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120."),
        RuntimeError("CUDA graph capture needs --cuda-graph-max-bs-decode > 0"),
        type("HFValidationError", (ValueError,), {"__module__": "huggingface_hub.errors"})("bad id"),
    ],
    ids=repr,
)
def test_rejected(exc):
    assert oracle.classify(exc) == "rejected"


def test_describe_first_line_and_detail():
    error, detail = oracle.describe(OSError("line one\nline two"))
    assert error == "OSError: line one"
    assert detail == "OSError: line one\nline two"


def test_describe_bare_assert_uses_its_source_line(tmp_path):
    # Compiled from a file so that pytest's assertion rewriting leaves it bare.
    src = tmp_path / "hook.py"
    src.write_text("def check(tp, dp):\n    assert tp % dp == 0\n")
    namespace = {}
    exec(compile(src.read_text(), str(src), "exec"), namespace)
    try:
        namespace["check"](2, 3)
    except AssertionError as exc:
        error, _ = oracle.describe(exc)
    assert error == "AssertionError: assert tp % dp == 0"


def test_where_is_the_innermost_sglang_frame(tmp_path):
    # A fake installed sglang package: hook -> helper (outside sglang) raises.
    pkg = tmp_path / "sglang" / "srt"
    pkg.mkdir(parents=True)
    hook = pkg / "hook.py"
    hook.write_text(
        textwrap.dedent(
            """\
            def check(helper):
                x = 1
                helper()
            """
        )
    )
    namespace = {}
    exec(compile(hook.read_text(), str(hook), "exec"), namespace)

    def helper():
        raise ValueError("bad")

    try:
        namespace["check"](helper)
    except ValueError as exc:
        tb = exc.__traceback__
    assert oracle.sglang_where(tb, str(tmp_path)) == os.path.join("sglang", "srt", "hook.py") + ":3"
    assert oracle.sglang_where(tb, None) is None


# --- CUDA kernel stand-ins (in a subprocess: they change sys.meta_path) ------------


def test_kernel_stand_ins():
    code = textwrap.dedent(
        f"""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("o", {TOOL!r})
        o = importlib.util.module_from_spec(spec); spec.loader.exec_module(o)
        o.install_kernel_stubs()
        import flashinfer
        from sgl_kernel import int8_scaled_mm
        from flashinfer.jit.core import JitSpec
        assert flashinfer.__version__ == "0.7.2"
        assert importlib.util.find_spec("deep_gemm") is not None

        class Mine(JitSpec):            # subclassing a stand-in works
            def __init__(self, v):
                self.v = v
        assert Mine(3).v == 3           # and makes real instances

        @int8_scaled_mm                  # a stand-in decorator keeps the function
        def f():
            return 7
        assert f() == 7
        assert int8_scaled_mm(1, 2) is not None
        try:
            import no_such_package_here
        except ImportError:
            pass
        else:
            raise SystemExit("unrelated imports must still fail")
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# --- the command line, where it needs no SGLang ------------------------------------


def test_invalid_lines_answered_without_sglang():
    lines = '{"argv": [], "gpu": "sm80"}\n{"argv": [], "model": "nope"}\n'
    out = subprocess.run(
        [sys.executable, TOOL], input=lines, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    verdicts = [json.loads(line) for line in out.stdout.splitlines()]
    assert [v["verdict"] for v in verdicts] == ["invalid-input", "invalid-input"]
    assert "line 2" in verdicts[1]["error"]
    assert "2 cases in" in out.stderr


def test_full_stage_without_sglang_says_which_python():
    # The test venv never has SGLang (it lives in .venv-sglang); this checks the message
    # a user gets when running the tool with the wrong Python.
    assert importlib.util.find_spec("sglang") is None, "SGLang must not be in the test venv"
    out = subprocess.run(
        [sys.executable, TOOL, "--stage", "full"],
        input='["--tp-size", "1"]\n',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "SGLang venv" in out.stderr
