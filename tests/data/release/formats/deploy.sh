#!/usr/bin/env bash
# Serve one model four ways: each launch names its own SGLang release.
set -euo pipefail

IMAGE="lmsysorg/sglang:v0.4.9.post2-cu126"

docker run --gpus all --shm-size 32g -p 30000:30000 \
    -v ~/.cache/huggingface:/root/.cache/huggingface \
    --ipc=host \
    "$IMAGE" \
    python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --port 30000

podman run -it --rm docker.io/lmsysorg/sglang:v0.5.3rc0-cu126 \
    bash -c "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct"

srun -l --container-image=lmsysorg/sglang:nightly-dev-cu13-20260416-a4cf2ea1 \
    --container-mounts=/models:/models \
    python3 -m sglang.launch_server --model-path /models/qwen

apptainer exec --nv docker://lmsysorg/sglang:v0.4.6-cu124 \
    python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct

# pip install sglang==0.3.0   (a comment, not a pin)
pip install "sglang[all]==0.4.6.post1"
python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --port 30001
