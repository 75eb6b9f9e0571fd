#!/bin/bash
python3 -m sglang.launch_server --model-path meta-llama/Llama-2-7b-chat-hf \
  --speculative-algorithm EAGLE --speculative-draft-model-path lmsys/sglang-EAGLE-llama2-chat-7B \
  --cuda-graph-max-bs 8 \
  --enable 1
