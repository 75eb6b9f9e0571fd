"""Finding and reading the files servelint lints, for the command line and the language
server alike (both import this module; it imports neither)."""

from __future__ import annotations

import os
from typing import Iterator, Sequence

SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
             ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs"}


def _is_venv(path: str) -> bool:
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))


def iter_files(paths: list[str], errors: list[str]) -> Iterator[str]:
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                                 and not _is_venv(os.path.join(root, d)))
                for f in sorted(files):
                    yield os.path.join(root, f)
        elif os.path.exists(p):
            yield p
        else:
            errors.append(f"{p}: no such file or directory")


def iter_workspace_files(root: str) -> Iterator[str]:
    """Every file under a workspace folder that `servelint.server.lintWorkspace` looks at:
    as `check` walks a folder, and hidden folders and `.venv*` skipped too, except
    `.github` (workflows) and `.servelint` (rule packs). Symbolic links to folders are not
    followed."""
    for base, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".venv")
                         and (not d.startswith(".") or d in WORKSPACE_HIDDEN_OK)
                         and not _is_venv(os.path.join(base, d)))
        for f in sorted(files):
            yield os.path.join(base, f)


WORKSPACE_HIDDEN_OK = {".github", ".servelint"}


def read_text(path: str, explicit: bool, max_bytes: int,
              rule_packs: Sequence[str] = ()) -> str | None:
    """A file's text for linting: None when it is not `explicit`ly named and servelint
    reads no format from it, or when it is binary; TooLarge beyond `max_bytes`; OSError
    with the path in its message when it cannot be read. Invalid UTF-8 is replaced."""
    from servelint.engine import detect_format
    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            raise TooLarge(size)
        with open(path, "rb") as fh:
            head = fh.read(4096)
            if not explicit and detect_format(path, None, head.decode("utf-8", "replace"),
                                            rule_packs) is None:
                return None
            if b"\0" in head:
                return None
            data = head + fh.read()
    except OSError as exc:
        raise OSError(f"{path}: {exc.strerror or exc}") from exc
    return data.decode("utf-8", errors="replace")


class TooLarge(Exception):
    """A file larger than the maxFileBytes setting (args: its size)."""
