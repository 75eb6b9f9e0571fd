"""servelint's cache folder: files that spare a cold start work it did before (the rule
index, servelint/rules; the decoded catalog pack, servelint/catalog). Each user of it keys
its files by everything they are computed from and checks them when read: a missing,
stale or corrupt file, or a folder that cannot be written, only costs the work again."""

from __future__ import annotations

import os
import sys

CACHE_ENV = "SERVELINT_CACHE_DIR"  # a folder; empty: no cache file is read or written
_CACHE_KEEP = 24  # rule-index files kept in the cache folder (oldest removed first)


def cache_dir() -> str | None:
    """The folder of servelint's cache files: $SERVELINT_CACHE_DIR (empty: none), else the
    platform's user cache folder."""
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return env or None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    if not os.path.isabs(base):
        return None  # no home folder to put it in: never a folder relative to the cwd
    return os.path.join(base, "servelint")


def read_cache(name: str) -> bytes | None:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, name), "rb") as fh:
            return fh.read()
    except OSError:
        return None


def write_cache(name: str, data: bytes, prefix: str | None = None) -> bool:
    """Write a cache file atomically (a temporary file renamed over it); False, and
    nothing else, when the folder cannot be written. With `prefix`, the oldest files
    starting with it are removed beyond _CACHE_KEEP."""
    folder = cache_dir()
    if folder is None:
        return False
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        os.makedirs(folder, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, os.path.join(folder, name))
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    if prefix:
        try:
            old = sorted((e.stat().st_mtime_ns, e.path) for e in os.scandir(folder)
                         if e.name.startswith(prefix) and e.is_file())
            for _, path in old[:-_CACHE_KEEP]:
                os.unlink(path)
        except OSError:
            pass
    return True
