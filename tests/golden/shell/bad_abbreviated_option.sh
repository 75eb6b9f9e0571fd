#!/bin/bash
python3 -m sglang.launch_server --model-path m \
  --tp 4 \
  --speculative-algo EAGLE --speculative-draft-model-path d \
  --mem-frac=0.8
