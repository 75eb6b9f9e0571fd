"""Every launcher shape servelint reads, written correctly."""
import os
import shlex
import subprocess
import sys

import sglang as sgl
from sglang.test.test_utils import DEFAULT_URL_FOR_TEST, popen_launch_server
from sglang.utils import launch_server_cmd

MODEL = os.environ.get("MODEL", "meta-llama/Llama-3.1-8B-Instruct")
extra = shlex.split(os.environ.get("EXTRA", ""))

cmd = [sys.executable, "-m", "sglang.launch_server", "--model-path", MODEL, "--tp-size", "2"]
cmd += ["--attention-backend", "flashinfer", "--mem-fraction-static", "0.85"]
if os.environ.get("METRICS"):
    cmd.append("--enable-metrics")
proc = subprocess.Popen(cmd + extra)

subprocess.run(f"python3 -m sglang.launch_server --model-path {MODEL} --port 30000", shell=True)
os.execvp("python3", ["python3", "-m", "sglang.launch_server", "--model-path", MODEL, *extra])

server, port = launch_server_cmd("""
python3 -m sglang.launch_server --model-path qwen/qwen2.5-0.5b-instruct \\
 --host 0.0.0.0 --log-level warning
""")

process = popen_launch_server(MODEL, DEFAULT_URL_FOR_TEST, timeout=600,
                              other_args=["--trust-remote-code", "--tp-size", "2"])

llm = sgl.Engine(model_path=MODEL, tp_size=2, mem_fraction_static=0.8,
                 attention_backend="flashinfer", enable_metrics=True, disable_radix_cache=False,
                 **os.environ.get("OPTS", {}))

router = ["python3", "-m", "sglang_router.launch_server", "--model-path", MODEL, "--dp-size", "2",
          "--router-policy", "cache_aware"]
