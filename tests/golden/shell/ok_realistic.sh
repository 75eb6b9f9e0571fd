#!/usr/bin/env bash
# A launch script of the kind teams keep next to their deployments.
set -euo pipefail

MODEL=${MODEL:-meta-llama/Llama-3.1-8B-Instruct}
TP=${TP:-2}
PORT=${PORT:-30000}
EXTRA_ARGS=(--enable-metrics --log-level info)

start_server() {
  CUDA_VISIBLE_DEVICES=0,1 nohup python3 -m sglang.launch_server \
    --model-path "$MODEL" \
    --tp-size "$TP" \
    --host 0.0.0.0 --port "$PORT" \
    --mem-fraction-static 0.85 \
    --attention-backend flashinfer \
    --chunked-prefill-size 8192 \
    --context-length 32k \
    --max-total-tokens 1Mi \
    --cuda-graph-backend-decode full \
    --cuda-graph-config '{"decode": {"max_bs": 64}}' \
    --trust-remote-code \
    --no-enable-tf32-matmul \
    --sampling-backend flashinfer \
    "${EXTRA_ARGS[@]}" > server.log 2>&1 &
}

if [[ "${1:-}" == "docker" ]]; then
  docker run --gpus all --shm-size 32g -p 30000:30000 \
    -v ~/.cache/huggingface:/root/.cache/huggingface \
    --env "HF_TOKEN=$HF_TOKEN" --ipc=host lmsysorg/sglang:latest \
    python3 -m sglang.launch_server --model-path "$MODEL" --host 0.0.0.0 --port 30000
else
  start_server
fi

# Router in front of two data-parallel replicas.
python -m sglang_router.launch_server --model-path "$MODEL" --dp-size 2 --router-policy cache_aware

# Everything after the script's own arguments is passed through.
exec numactl --cpunodebind=0 --membind=0 python3 -m sglang.launch_server --model-path "$MODEL" "$@"

bash -c "python3 -m sglang.launch_server --model-path $MODEL --tp-size 2 --port 30001"
srun --ntasks=2 --nodes=2 python3 -m sglang.launch_server --model-path "$MODEL" \
  --tp-size 16 --nnodes 2 --node-rank "$SLURM_NODEID" --dist-init-addr "$HEAD:5000"
sglang serve "$MODEL" --tp-size 2 --model-type auto
python3 -m sglang.launch_server --help
python3 -m sglang.launch_server --model-path m --lora-paths lora0=/p/a lora1=/p/b --max-loras-per-batch 2
python3 -m sglang.launch_server --model-path m --json-model-override-args '{"rope_scaling": {"type": "yarn"}}'
