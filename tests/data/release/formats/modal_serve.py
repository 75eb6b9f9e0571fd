"""Serve on Modal from the SGLang image."""
import subprocess

import modal

image = modal.Image.from_registry("lmsysorg/sglang:v0.5.9-cu129-amd64-runtime").entrypoint([])
app = modal.App("serve", image=image)


@app.function(gpu="H100")
def serve():
    subprocess.Popen(["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"])
