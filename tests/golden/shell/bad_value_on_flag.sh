#!/bin/bash
python3 -m sglang.launch_server --model-path m \
  --trust-remote-code=true \
  --enable-metrics=false \
  --enable-tf32-matmul=no
