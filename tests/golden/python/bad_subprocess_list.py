"""Start one SGLang server per GPU pair."""
import subprocess
import sys

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def start(rank: int) -> subprocess.Popen:
    cmd = [
        sys.executable, "-m", "sglang.launch_server",
        "--model-path", MODEL,
        "--tp_size", "2",
        "--attention-backend", "flash_infer",
        "--port", str(30000 + rank),
        "--trust-remote-code", "true",
        "--mem-fraction-static", "0.8",
        "--mem-fraction-static", "0.85",
    ]
    cmd += ["--enable-metricz"]
    if rank == 0:
        cmd.append("--dtype=bf16")
    return subprocess.Popen(cmd)


subprocess.run(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "two",
                "--disable-radix-cache=true"], check=True)
