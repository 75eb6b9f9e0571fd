FROM lmsysorg/sglang:latest
RUN --mount=type=cache,target=/root/.cache/huggingface \
    python3 -m sglang.launch_server --model-path m --load-format dummy --skip-server-warmup --prot 1 & \
    sleep 60
RUN <<EOF
set -e
python3 -m sglang.launch_server --model-path m --kv-cache-dtype fp8 --port 30000 &
EOF
COPY <<EOF /start.sh
#!/bin/bash
exec python3 -m sglang.launch_server --model-path "$MODEL" --schedule-policy fifo "$@"
EOF
ENTRYPOINT ["bash", "-c", "python3 -m sglang.launch_server --model-path \"$MODEL\" --dp-size=two"]
