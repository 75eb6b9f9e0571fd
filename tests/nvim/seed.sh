#!/bin/bash
MODEL=${MODEL:-BAAI/bge-large-en-v1.5}
python3 -m sglang.launch_server --model-path "$MODEL" --is-embedding \
  --chunked-prefill-size=-1 --disable-radix-cache \
  --prefill-only-disable-kv-cache \
  --enable-hisparse \
  --port 30000
echo "server started"
