"""SL020 broken-continuation: options on a line the shell runs as its own command.

Reported by the shell extractor, which sees the lines around a launch; this module
holds its documentation."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Severity

CHECK = register(Check(
    code="SL020", name="broken-continuation", severity=Severity.ERROR,
    title="Launch options cut off from their command",
    what="Reports a line of options right after a launch that the shell does not pass to it: "
         "the line before it has no trailing backslash, has spaces after the backslash, or a "
         "comment line sits inside the continued command.",
    why="The launch starts without those options (often silently with defaults), and the shell "
        "then tries to run `--port` as a command. A comment line between continued lines is "
        "the most common cause: it ends the command.",
    example=("python -m sglang.launch_server --model-path m \\\n"
             "  # tensor parallelism\n"
             "  --tp-size 2"),
    instead=("# tensor parallelism\n"
             "python -m sglang.launch_server --model-path m \\\n"
             "  --tp-size 2"),
    fix_safety="Adding a missing backslash or removing spaces after one is safe. Removing a "
               "comment line is offered, not applied by fix-all.",
    scope="host",
))
