import sglang as sgl


def main():
    llm = sgl.Engine(
        model_path="Qwen/Qwen2.5-7B-Instruct",
        tp_size=2,
        tp=2,
        attention_backend="flash_infer",
        disable_cuda_graph=True,
        mem_fraction_static="0.8x",
        enable_metricz=True,
        trust_remote_code=False,
    )
    return llm.generate("Hello", {"max_new_tokens": 8})


engine = sgl.Engine(model_path="m", chunked_prefill_size=-1, max_running_requests=ten)
