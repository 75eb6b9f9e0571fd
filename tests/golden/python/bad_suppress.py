"""Suppression comments sit above the statement that builds the launch."""
import subprocess

from sglang.utils import launch_server_cmd

# servelint: disable=SL002 -- kept for the old image
server, port = launch_server_cmd(
    "python3 -m sglang.launch_server --model-path m --tp_size 2",
)

subprocess.run(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"])

# servelint: disable=SL999 -- no such code
subprocess.run(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"])
