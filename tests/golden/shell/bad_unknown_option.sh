#!/bin/bash
# Options SGLang 0.5.23 does not have.
python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \
  --tensor-paralel-size 2 \
  --enable-ep-moe \
  --model-mode flashinfer \
  --port 30000
