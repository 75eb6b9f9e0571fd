"""SL011 missing-model-path: a launch that names no model."""

from __future__ import annotations

from servelint.checks import Check, register
from servelint.model import Finding, Severity


def run(parsed, ctx):
    cat = parsed.catalog
    opt = cat.by_dest.get("model_path")
    if opt is None or parsed.uncertain or parsed.help or parsed.launch.kind == "config":
        return  # a --config file need not name the model: the command line may
    if parsed.uses_of("model_path") or parsed.uses_of("config"):
        return
    names = "/".join(n for n in opt.names)
    yield Finding(CHECK.code, CHECK.severity,
                  f"the following arguments are required: {names}",
                  parsed.launch.entry.span)


CHECK = register(Check(
    code="SL011", name="missing-model-path", severity=Severity.ERROR,
    title="No model path",
    what="Reports a launch that does not say which model to serve (`--model-path`, its alias "
         "`--model`, or a `--config` file that may set it).",
    why="SGLang cannot start without a model and stops at argument parsing.",
    example="python -m sglang.launch_server --tp-size 2",
    instead="python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --tp-size 2",
    fix_safety="No automatic fix.",
    run=run,
))
