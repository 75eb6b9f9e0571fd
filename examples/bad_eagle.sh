#!/bin/bash
# Speculative decoding with EAGLE, copied from a README of an older release.
python -m sglang.launch_server --model meta-llama/Llama-2-7b-chat-hf \
  --speculative-algo EAGLE \
  --speculative-draft-model-path lmsys/sglang-EAGLE-llama2-chat-7B \
  --speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 16 \
  --mem-fraction-static 0.7 \
  --cuda-graph-max-bs 8 \
  --trust-remote-code true \
  --tp-size 1 \
  --log-level warning \
  --tp-size 2
