#!/bin/bash
python3 -m sglang.launch_server --tp-size 2 --port 30000
sglang serve --tp-size 2
