"""SL092 config-equals-ignored: `--config=FILE`, which SGLang accepts and never reads."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Severity

CHECK = register(Check(
    code="SL092", name="config-equals-ignored", severity=Severity.WARNING,
    title="Config file that SGLang silently ignores",
    what="Reports `--config=FILE`. SGLang merges a config file only when the exact word "
         "`--config` is followed by the path; `--config=FILE` is accepted by the parser and "
         "then ignored.",
    why="Every option in the file is silently dropped: the server starts with its defaults "
        "(or fails for a missing `--model-path` when the file was supposed to name the model).",
    example="python -m sglang.launch_server --config=server.yaml",
    instead="python -m sglang.launch_server --config server.yaml",
    fix_safety="Safe: the two-word form is what the author meant.",
    scope="host",
))
