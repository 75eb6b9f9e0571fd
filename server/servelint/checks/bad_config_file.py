"""SL091 bad-config-file: a `--config` file SGLang cannot read."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Severity

CHECK = register(Check(
    code="SL091", name="bad-config-file", severity=Severity.ERROR,
    title="Config file SGLang cannot read",
    what="Reports a `--config` file that SGLang refuses before it looks at any option: not "
         "valid YAML, not a mapping at its top level, not a `.yaml`/`.yml` file, or not found "
         "where the launch says it is.",
    why="SGLang stops with this message before parsing the command line, so none of the "
        "launch's other problems are even reported by SGLang until it is fixed.",
    example=("# server.yaml\n"
             "- tp-size: 2\n"
             "- port: 30000"),
    instead=("# server.yaml\n"
             "tp-size: 2\n"
             "port: 30000"),
    fix_safety="No automatic fix.",
    scope="host",
    lang="yaml",
))
