import os
import subprocess

model = os.environ["MODEL"]
tp = 4

os.system("python3 -m sglang.launch_server --model-path m --tp_size 2 --port 30000 &")

subprocess.run(
    f"python3 -m sglang.launch_server --model-path {model} --tp {tp} "
    f"--attention-backend flash_infer --host 0.0.0.0",
    shell=True,
)

LAUNCH = """python3 -m sglang.launch_server --model-path m \\
  --enable-metricz \\
  --port 30000
"""
subprocess.Popen(LAUNCH, shell=True)

subprocess.run(r"python3 -m sglang.launch_server --model-path C:\models\m --mem-fraction-static 0.8.5", shell=True)
subprocess.run("python3 -m sglang.launch_server --model-path 'Zürich/模型' --tp\t2 --grammar-backend xgrammer", shell=True)
subprocess.run(["bash", "-c", "python3 -m sglang.launch_server --model-path m --dp-size two"])
