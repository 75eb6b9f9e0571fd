from sglang.utils import launch_server_cmd, wait_for_server

server_process, port = launch_server_cmd(
    """
python3 -m sglang.launch_server --model-path qwen/qwen2.5-0.5b-instruct \
    --host 0.0.0.0 --port 30000 --log-level warning \
    --cuda-graph-max-bs 8 \
    --lora-paths lora0=algoprog/fact-generation-llama-3.1-8b-instruct-lora
    --max-loras-per-batch 1 --enable-lora
"""
)
wait_for_server(f"http://localhost:{port}")

SGLANG_ENABLE_SPEC_V2 = "1"
proc, port2 = launch_server_cmd(
    "SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path m --speculative-algo EAGLE",
    port=31000,
)
