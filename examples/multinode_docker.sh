#!/bin/bash
# Two nodes, one container each. The node rank comes from the scheduler.
NODE_RANK=${SLURM_NODEID:?}
docker run --gpus all --shm-size 32g --network host --ipc=host \
  -v /models:/models lmsysorg/sglang:latest \
  bash -c "python3 -m sglang.launch_server --model-path /models/Llama-3.1-405B-FP8 \
    --tp-size 16 --nnodes 2 --node-rank $NODE_RANK --dist-init-addr 10.0.0.1:5000 \
    --disable-cuda-graph --port 30000"
