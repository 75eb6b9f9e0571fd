"""docs/architecture.md points at files that exist: every `path` it names (a file with a
suffix, or a folder ending in /) is found in the repository, at the root, under
server/servelint/ (module paths) or under client/."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASES = [ROOT, ROOT / "server", ROOT / "server" / "servelint", ROOT / "client", ROOT / "docs"]
REF = re.compile(r"`([A-Za-z0-9_.\-/*]+(?:\.(?:py|md|json|ts|mjs|yaml|toml|sh)|/))`")


def references(text: str) -> set[str]:
    return {m.group(1) for m in REF.finditer(text) if "*" not in m.group(1)
            and not m.group(1).startswith(("--", "."))}


def exists(ref: str) -> bool:
    return any((base / ref).exists() for base in BASES)


def test_every_file_the_architecture_names_exists():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    refs = references(text)
    assert len(refs) > 20  # the pattern does find the references
    assert sorted(r for r in refs if not exists(r)) == []


def test_the_check_sees_a_missing_file():
    assert not exists("lsp/no_such_module.py")
    assert references("see `lsp/server.py` and `extract/`") == {"lsp/server.py", "extract/"}
