#!/bin/bash
python3 -m sglang.launch_server --model-path m \
  # tensor parallelism across the node
  --tp-size 8 \
  --port 30000

python3 -m sglang.launch_server --model-path m \
  --mem-fraction-static 0.8
  --port 30001

python3 -m sglang.launch_server --model-path m \ 
  --port 30002
