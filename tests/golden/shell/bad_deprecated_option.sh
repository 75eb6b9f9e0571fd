#!/bin/bash
python3 -m sglang.launch_server --model-path m \
  --disable-cuda-graph \
  --dp-size 2 --enable-dp-attention \
  --monokernel-backend amd \
  --enable-flashinfer-allreduce-fusion
