"""SL095 bad-suppression: a `servelint:` comment that servelint cannot use.

Reported by the suppression pass (servelint/suppress.py); this module holds its
documentation."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Severity

CHECK = register(Check(
    code="SL095", name="bad-suppression", severity=Severity.WARNING,
    title="Suppression comment servelint cannot use",
    what="Reports a comment that starts with `servelint:` but does not work: a code servelint "
         "does not have (codes are exact, like `SL002`, or `all`; a code prefix such as `SL0` "
         "is not accepted), a directive other than `disable=` and `disable-file=`, no code at "
         "all, a `disable` comment on the line right after a line continued with a backslash "
         "(it is part of that command, so it cannot be above the next one), and in Markdown "
         "text an HTML comment other than `<!-- servelint: disable-file=... -->`.",
    why="A suppression that does not apply leaves the finding it was written for on screen, or "
        "worse, looks like it silences something it does not. A typo in a code is the usual "
        "cause.",
    example=("# servelint: disable=SL04 -- typo for SL004\n"
             "python -m sglang.launch_server --model-path m --tp 2"),
    instead=("# servelint: disable=SL004 -- we write --tp on purpose\n"
             "python -m sglang.launch_server --model-path m --tp 2"),
    fix_safety="No automatic fix: which code was meant is for the author to say.",
    scope="suppression",
))
