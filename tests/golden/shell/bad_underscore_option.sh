#!/bin/bash
python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct \
  --tp_size 2 \
  --mem_fraction_static=0.8 \
  --trust_remote_code
