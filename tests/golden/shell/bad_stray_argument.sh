#!/bin/bash
python3 -m sglang.launch_server --model-path m \
  --trust-remote-code true \
  --enable-metrics false \
  --port 30000 30001
python3 -m sglang.launch_server --model-path m \
  --enable-cache-report \  # report cache hits
  --port 30000
