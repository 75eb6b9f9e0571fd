"""SL093 config-unsupported-option: an option SGLang refuses to read from a config file."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Severity

CHECK = register(Check(
    code="SL093", name="config-unsupported-option", severity=Severity.ERROR,
    title="Option that a config file cannot set",
    what="Reports a key of a `--config` file that SGLang refuses: options whose parser action "
         "is not a plain value or switch (`--no-`-able BooleanOptionalAction switches, "
         "deprecated switches, `--lora-paths`).",
    why="SGLang stops with `Unsupported config option` before it starts.",
    example=("# server.yaml\n"
             "model-path: m\n"
             "enable-tf32-matmul: true"),
    instead=("# server.yaml\n"
             "model-path: m\n"
             "# and on the command line: --config server.yaml --enable-tf32-matmul"),
    fix_safety="No automatic fix: the option has to move to the command line.",
    scope="host",
    lang="yaml",
))
