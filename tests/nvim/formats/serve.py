"""Start an SGLang server for the benchmark and wait until it answers."""

import subprocess
import sys
import time
import urllib.request

PORT = 30000


def start(model: str) -> subprocess.Popen:
    return subprocess.Popen(["python3", "-m", "sglang.launch_server", "--model-path", model, "--tp_size", "2"])


def wait_ready(timeout: float = 600.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://localhost:{PORT}/health", timeout=2)
            return
        except OSError:
            time.sleep(2)
    raise TimeoutError("server did not come up")


if __name__ == "__main__":
    proc = start(sys.argv[1] if len(sys.argv) > 1 else "meta-llama/Llama-3.1-8B-Instruct")
    wait_ready()
    print("ready, pid", proc.pid)
