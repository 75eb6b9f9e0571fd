#!/bin/bash
python3 -m sglang.launch_server --model-path m \
  --tp-size two \
  --mem-fraction-static 0,8 \
  --context-length 32K \
  --max-total-tokens 1.5Ki \
  --cuda-graph-backend-decode tc_piecewise \
  --cuda-graph-config '{"decode": {"max_bs": 8, "size": 2}}' \
  --cuda-graph-bs-decode 1 2 four
