"""Reading a linted file asks for about its size, not for the 5 MiB cap (issue 16 point 5:
a buffer of the cap per file was a fifth of a run over a thousand small files), and still
reads a file that grew after its size was taken, up to the cap."""

import os

import pytest

from servelint import files
from servelint.files import TooLarge, read_bytes, read_text

CAP = 5 * 1024 * 1024
TEXT = "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp_size 2\n" * 40


class _Reads:
    """os.fdopen's file, with the size of every read asked for kept."""

    def __init__(self, fh, asked):
        self._fh, self._asked = fh, asked

    def read(self, n=-1):
        self._asked.append(n)
        return self._fh.read(n)

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._fh.__exit__(*exc)


@pytest.fixture
def asked(monkeypatch):
    sizes: list[int] = []
    real = os.fdopen
    monkeypatch.setattr(files.os, "fdopen", lambda *a, **k: _Reads(real(*a, **k), sizes))
    return sizes


def test_a_small_file_is_read_with_small_reads(tmp_path, asked):
    path = tmp_path / "run.sh"
    path.write_text(TEXT)
    assert read_text(str(path), True, CAP) == TEXT
    assert asked and max(asked) <= 4096  # the first 4 KiB (its format), then the rest
    asked.clear()
    cfg = tmp_path / ".servelint.toml"
    cfg.write_text("ignore = []\n")
    assert read_bytes(str(cfg), 1 << 20) == b"ignore = []\n"
    assert asked and max(asked) <= 13


def _stat_says(monkeypatch, size):
    """os.stat as if the file were `size` bytes (it grew or shrank after the stat)."""
    real = os.stat

    class Shown:
        def __init__(self, st):
            self._st = st

        def __getattr__(self, name):
            return size if name == "st_size" else getattr(self._st, name)

    monkeypatch.setattr(files.os, "stat", lambda p, *a, **k: Shown(real(p, *a, **k)))


@pytest.mark.parametrize("said", [0, 10, 4096, 4097, len(TEXT) - 1, len(TEXT), len(TEXT) + 50])
def test_a_file_that_changed_size_after_the_stat_is_read_whole(tmp_path, monkeypatch, said):
    path = tmp_path / "run.sh"
    path.write_text(TEXT)
    _stat_says(monkeypatch, said)
    assert read_text(str(path), True, CAP) == TEXT
    assert read_bytes(str(path), CAP) == TEXT.encode()


@pytest.mark.parametrize("said", [0, 10, 99, 100])
def test_the_cap_holds_whatever_the_stat_said(tmp_path, monkeypatch, said):
    """A file that grew past the cap after a stat within it is refused all the same."""
    path = tmp_path / "run.sh"
    path.write_text("x" * 150)
    _stat_says(monkeypatch, said)
    with pytest.raises(TooLarge):
        read_text(str(path), True, 100)
    with pytest.raises(TooLarge):
        read_bytes(str(path), 100)
    path.write_text("x" * 100)
    assert read_text(str(path), True, 100) == "x" * 100
    assert read_bytes(str(path), 100) == b"x" * 100


def test_file_uri_is_pathlibs():
    """lazy.file_uri writes the URI pathlib writes, for the paths `servelint check` meets."""
    from pathlib import Path

    from servelint.lazy import file_uri
    names = ["run.sh", "a b/ç é.sh", "100%/x#y?z.sh", "~user/.hidden", "tab\there", "日本/語.py",
             "emoji 😀.sh", "quote'\"s", "semi;colon,comma=eq&amp+plus", "back\\slash",
             "bytes\udcff\udc80.sh", "[brackets]{braces}|pipe^caret`tick", "-_.~"]
    for name in names:
        for base in ("/", "/tmp/", "//share/", "/a//b/./c/../"):
            path = os.path.abspath(base + name)
            assert file_uri(path) == Path(path).as_uri(), path
