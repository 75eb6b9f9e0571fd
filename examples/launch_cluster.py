"""Launch one SGLang server per node of a small cluster, and an offline engine for tests.

`servelint check examples/launch_cluster.py` reads every launch below: the argv list and what
is added to it, the shell string, the notebook helper, the test helper and Engine(...).
"""
import os
import subprocess
import sys

import sglang as sgl
from sglang.utils import launch_server_cmd

MODEL = os.environ.get("MODEL", "meta-llama/Llama-3.1-70B-Instruct")
NODES = ["10.0.0.1", "10.0.0.2"]


def launch_node(rank: int) -> subprocess.Popen:
    cmd = [
        sys.executable, "-m", "sglang.launch_server",
        "--model-path", MODEL,
        "--tp_size", "16",  # SL002: SGLang spells it --tp-size
        "--dist-init-addr", f"{NODES[0]}:5000",
        "--nnodes", str(len(NODES)),
        "--node-rank", str(rank),
        "--attention-backend", "flash_infer",  # SL007: it is 'flashinfer'
    ]
    if rank == 0:
        cmd += ["--host", "0.0.0.0", "--port", "30000"]
    return subprocess.Popen(cmd)


def launch_debug() -> None:
    # A shell string: the shell splits it; {MODEL} is unknown to servelint.
    subprocess.run(
        f"python3 -m sglang.launch_server --model-path {MODEL} --tp 8 --cuda-graph-max-bs 8",
        shell=True, check=True)


def launch_notebook_style():
    # launch_server_cmd appends --port <free port>: the --port written here is ignored.
    return launch_server_cmd("""
python3 -m sglang.launch_server --model-path qwen/qwen2.5-0.5b-instruct \\
  --port 30000 --log-level warning
""")


def offline_engine():
    # Engine keywords are ServerArgs fields: tp_size is right here, tp is not a field.
    return sgl.Engine(model_path=MODEL, tp_size=8, tp=8, mem_fraction_static=0.85,
                      disable_cuda_graph=True)


if __name__ == "__main__":
    procs = [launch_node(r) for r in range(len(NODES))]
    for p in procs:
        p.wait()
