"""The served model, when the launch names a local folder servelint can read.

SGLang refuses some launches only for some models (two-batch overlap without an all-to-all
backend needs attention DP except for two model families). A rule says so with a `model`
test; it is settled here when `--model-path` is a local folder (absolute, or relative to
the linted file's folder) holding a `config.json`: its `architectures[0]` and `model_type`.
Only that one JSON file is read, only if it is a regular file under 2 MB; nothing is run.
Anything else (a hub id, a variable, a folder that is not there) leaves the model unknown.
"""

from __future__ import annotations

import json
import os
import stat

MAX_BYTES = 2 * 1024 * 1024
_CACHE: dict[str, tuple[tuple[int, int], dict[str, str] | None]] = {}


def model_of(parsed, doc_path: str | None) -> dict[str, str] | None:
    """{"architecture": ..., "type": ...} (either may be missing) or None when unknown."""
    path = config_path_of(parsed, doc_path)
    return read_config(path) if path is not None else None


def config_path_of(parsed, doc_path: str | None) -> str | None:
    """The config.json `model_of` would read for this launch (None: the model is not a
    local folder), so a cache can tell whether the file changed."""
    opt = parsed.catalog.lookup("--model-path")
    use = parsed.last_use(opt.dest) if opt is not None else None
    if use is None or len(use.values) != 1 or use.values[0].text is None:
        return None
    folder = use.values[0].text
    if not folder or "$" in folder or "://" in folder:
        return None
    if not os.path.isabs(folder):
        if not doc_path or not os.path.isabs(doc_path):
            return None
        folder = os.path.join(os.path.dirname(doc_path), folder)
    return os.path.join(folder, "config.json")


def read_config(path: str) -> dict[str, str] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
        return None  # a FIFO, a device, a huge file: not read
    key = (st.st_mtime_ns, st.st_size)
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    info: dict[str, str] | None = None
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.loads(fh.read(MAX_BYTES + 1))
        if isinstance(data, dict):
            info = {}
            archs = data.get("architectures")
            if isinstance(archs, list) and archs and isinstance(archs[0], str):
                info["architecture"] = archs[0]
            if isinstance(data.get("model_type"), str):
                info["type"] = data["model_type"]
            info = info or None
    except (OSError, ValueError, UnicodeDecodeError):
        info = None
    if len(_CACHE) > 256:
        _CACHE.clear()
    _CACHE[path] = (key, info)
    return info
