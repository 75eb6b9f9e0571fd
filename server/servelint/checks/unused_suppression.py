"""SL094 unused-suppression: a `servelint: disable` comment that silences nothing.

Reported by the suppression pass (servelint/suppress.py) after every other finding of the
document is known; this module holds its documentation."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Severity

CHECK = register(Check(
    code="SL094", name="unused-suppression", severity=Severity.WARNING,
    title="Suppression comment that silences nothing",
    what="Reports each code of a `servelint: disable=CODE` comment that silenced no finding of "
         "the launch right below it, and each code of a `servelint: disable-file=CODE` comment "
         "that silenced nothing in the file. The code is shown faded (tagged unnecessary). A "
         "`disable` comment that is not right above a launch (a blank line or the end of the "
         "file follows it) silences nothing and is reported too. A code "
         "that the settings do not enable (`select`, `ignore`, `--select`, `--ignore`) is never "
         "reported: whether it is needed cannot be told. Not reported when suppressions are "
         "turned off (`servelint check --no-suppressions`).",
    why="A suppression outlives the problem it was written for: once the launch is fixed, the "
        "comment keeps hiding that code from every later edit of the launch. Removing the "
        "stale ones keeps suppressions meaningful.",
    example=("# servelint: disable=SL004 -- we write --tp on purpose\n"
             "python -m sglang.launch_server --model-path m --tp-size 2"),
    instead=("# servelint: disable=SL004 -- we write --tp on purpose\n"
             "python -m sglang.launch_server --model-path m --tp 2"),
    fix_safety="Safe when the comment is stale: removes the code from the comment, or the whole "
               "comment line when it was the comment's only code (fix-all and `--fix` apply it). "
               "When the comment is misplaced (it applies to no launch, and a code it names is "
               "reported on the launch right below), the fixes are unsafe: \"Move this "
               "suppression above line N\" (preferred) and the removal; the silenced finding's "
               "own fixes become unsafe too, so fix-all never undoes a suppression.",
    scope="suppression",
))
