#!/bin/bash
python3 -m sglang.launch_server --model-path m --tp-size --port 30000
python3 -m sglang.launch_server --model-path m --cuda-graph-bs-decode --port 30000
python3 -m sglang.launch_server --model-path m --served-model-name
