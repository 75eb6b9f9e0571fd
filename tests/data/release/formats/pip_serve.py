"""Install a pinned SGLang, then launch it."""
import subprocess

REQUIREMENTS = ["sglang[all]==0.4.6.post1", "sglang-router==0.1.6"]


def serve() -> None:
    subprocess.run(["pip", "install", *REQUIREMENTS], check=True)
    subprocess.Popen(["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"])
