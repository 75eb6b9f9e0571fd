#!/bin/bash
python3 -m sglang.launch_server --model-path m \
  --attention-backend flash_infer \
  --dtype fp16 \
  --kv-cache-dtype=FP8_E4M3 \
  --grammar-backend xgrammer
