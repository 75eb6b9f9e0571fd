#!/bin/bash
python3 -m sglang.launch_server --model-path m \
  --tp-size 4 \
  --mem-fraction-static 0.8 \
  --port 30000 \
  --tensor-parallel-size 8 \
  --port=30001
