#!/bin/bash
python3 -m sglang.launch_server --model-path m \
  --tp_size 2 \
  --attention-backend flash_infer \
  --port 30000
