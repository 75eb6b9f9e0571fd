FROM lmsysorg/sglang:latest AS base
RUN pip install --no-cache-dir sglang-router

FROM base
ENTRYPOINT ["python3", "-m", "sglang.launch_server"]
CMD ["--model-path", "Qwen/Qwen2.5-7B-Instruct", \
     "--tp", "2", \
     "--enable-metricz", \
     "--mem-fraction-static", "0.8", \
     "--mem-fraction-static", "0.85", \
     "--disable-cuda-graph", \
     "--grammar-backend", "xgrammer"]
HEALTHCHECK CMD curl -f http://localhost:30000/health || exit 1
