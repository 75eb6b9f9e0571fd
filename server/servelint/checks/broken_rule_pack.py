"""SL090 broken-rule-pack: a rule pack servelint cannot use (reported on the pack file)."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Severity

CHECK = register(Check(
    code="SL090", name="broken-rule-pack", severity=Severity.ERROR,
    title="Rule pack servelint cannot use",
    what="Reports, in a rule pack file (`.servelint/rules/*.yaml`, or a pack named in the "
         "`rulePacks` setting), each record that servelint cannot use: invalid JSON or YAML, a "
         "field of the wrong type, a condition that does not parse, an option that SGLang does "
         "not have, an exampleFix no condition can be derived from.",
    why="A broken record is skipped, never fatal: every valid record of the pack still "
        "applies. This finding says which record was skipped and why, at the record.",
    example=("- id: my-rule\n"
             "  errorMessage: --foo conflicts with --bar\n"
             "  condition: {all: [{present: --foo}, {present: --bar}]}"),
    instead=("- id: my-rule\n"
             "  errorMessage: --enable-lora conflicts with --enable-hisparse\n"
             "  condition: {all: [{present: --enable-lora}, {present: --enable-hisparse}]}"),
    fix_safety="No automatic fix.",
    scope="host",
    lang="yaml",
))
