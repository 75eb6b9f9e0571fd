#!/bin/bash
# The embedding tier: options in server-config.yaml, overrides here.
python3 -m sglang.launch_server --config server-config.yaml \
  --port 30011 \
  --enable-hisparse
