#!/usr/bin/env bash
# A decode node for DeepSeek-R1 with prefill/decode disaggregation, written from an
# older recipe. servelint finds what SGLang 0.5.23 would stop on, all at once.
set -euo pipefail

python3 -m sglang.launch_server \
  --model-path deepseek-ai/DeepSeek-R1 \
  --trust-remote-code \
  --disaggregation-mode decode \
  --tp 16 --dp-size 16 --enable-dp-attention \
  # DeepEP for the MoE all-to-all
  --moe-a2a-backend deepep \
  --cuda-graph-max-bs 128 \
  --mem_fraction_static 0.85 \
  --attention-backend flash_mla \
  --enable-ep-moe \
  --port 30000
