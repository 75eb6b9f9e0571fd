"""SL003 ambiguous-option: an abbreviation that matches several options."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.fixes import fix, rename_option
from servelint.model import Finding, Severity
from servelint.successors import retired


def run(parsed, ctx):
    launch = parsed.launch
    for p in parsed.problems:
        if p.kind != "ambiguous":
            continue
        if p.written.startswith("--") and retired(p.written, parsed.catalog) is not None:
            continue  # an option of an earlier release: SL009 names its successor
        shown = p.token.text if p.token.text is not None else p.written
        cands = p.candidates
        listed = ", ".join(cands) if len(cands) <= 8 else (
            ", ".join(cands[:8]) + f" and {len(cands) - 8} more")
        # A handful of quick fixes: the candidates closest to what was written.
        ranked = sorted(cands, key=len)[:5]
        fixes = []
        for cand in ranked:
            fixes += fix(f"Use {cand}", rename_option(launch, p.token, p.written, p.span, cand),
                         safe=False)
        yield Finding(
            CHECK.code, CHECK.severity,
            f"ambiguous option: {shown} could match {listed}",
            p.span or p.token.span, fixes=fixes)


CHECK = register(Check(
    code="SL003", name="ambiguous-option", severity=Severity.ERROR,
    title="Abbreviation matches several options",
    what="Reports an option that is not an exact SGLang option but the start of several, "
         "listing every option it could mean. An option string that an earlier release had "
         "as an option of its own (`--cuda-graph-max-bs`, `--disable-flashinfer`) is reported "
         "by SL009 (removed-option) instead, with its successor.",
    why="argparse accepts a unique prefix of an option, and refuses one that is the prefix of "
        "more than one. A launch that worked can break when a release adds an option with a "
        "longer name. When the short string was an option of its own in an earlier release "
        "(`--cuda-graph-max-bs` became ambiguous in 0.5.20, once only "
        "`--cuda-graph-max-bs-decode` and `--cuda-graph-max-bs-prefill` were left), SL009 "
        "reports it with its successor instead.",
    example="python -m sglang.launch_server --model-path m --attention triton",
    instead="python -m sglang.launch_server --model-path m --attention-backend triton",
    fix_safety="One quick fix per candidate; which option was meant is the author's choice, so "
               "fix-all applies none of them.",
    run=run,
))
