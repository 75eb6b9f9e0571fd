# syntax=docker/dockerfile:1
FROM lmsysorg/sglang:v0.5.23-cu129

ENV MODEL=meta-llama/Llama-3.1-8B-Instruct \
    SGLANG_ENABLE_JIT_DEEPGEMM=0

# Docker drops comment lines inside a continued instruction, so this still works
CMD python3 -m sglang.launch_server --model-path "$MODEL" \
    # tensor parallelism over two GPUs
    --tp_size 2 \
    --attention-backend flash_infer \
    --trust-remote-code=true \
    --host 0.0.0.0
    --port 30000
