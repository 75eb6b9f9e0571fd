"""Rule examples with prefixes that settle what SGLang's verdict depends on, as the tests
run them (docs/rule-packs.md: examples.dependent)."""

import json
from pathlib import Path


def settled_example(example: str, tmp_path: Path) -> tuple[str | None, str]:
    """A dependent example's `[gpu=..]`, `[env=NAME=value]`, `[model=Architecture]` and
    `[model-type=config model_type]` prefixes (any order) turned into the GPU setting and a
    launch line: the variable as a prefix assignment, the model as a local folder with that
    config.json."""
    gpu, prefix, model = None, "", None
    rest = example
    while rest.startswith("["):
        tag, _, rest = rest[1:].partition("] ")
        key, _, value = tag.partition("=")
        if key == "gpu":
            gpu = value
        elif key == "env":
            prefix += value + " "
        elif key == "model":
            model = {"architectures": [value]}
        elif key == "model-type":
            model = {"model_type": value}
        else:
            raise AssertionError(f"unknown example prefix [{tag}]")
    path = "m"
    if model:
        folder = tmp_path / next(iter(model.values()))[0] if "architectures" in model else \
            tmp_path / model["model_type"]
        folder.mkdir(exist_ok=True)
        (folder / "config.json").write_text(json.dumps(model))
        path = str(folder)
    return gpu, f"{prefix}python3 -m sglang.launch_server --model-path {path} {rest}\n"


def has_prefix(example: str) -> bool:
    return example.startswith("[")
