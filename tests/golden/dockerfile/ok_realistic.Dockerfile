# escape=\
FROM lmsysorg/sglang:v0.5.23-cu129 AS server
ARG MODEL=meta-llama/Llama-3.1-8B-Instruct
ENV HF_HOME=/data/hf SGLANG_USE_MODELSCOPE=false
EXPOSE 30000
RUN python3 -c "import sglang; print(sglang.__version__)"
HEALTHCHECK --interval=30s CMD curl -f http://localhost:30000/health || exit 1
ENTRYPOINT ["python3", "-m", "sglang.launch_server", "--host", "0.0.0.0", "--port", "30000"]
CMD ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", \
     # the two GPUs of a g6.12xlarge
     "--tp-size", "2", \
     "--mem-fraction-static", "0.85", \
     "--model-loader-extra-config", "{\"enable_multithread_load\": true}"]

FROM lmsysorg/sglang:v0.5.23-cu129 AS router
CMD python3 -m sglang_router.launch_server --model-path "$MODEL" \
    # one replica per GPU
    --dp-size 2 \
    --router-policy cache_aware

FROM server AS bare
ENTRYPOINT ["python3", "-m", "sglang.launch_server"]
