"""The package's layers point one way: the entry points (`cli`, `__main__`) may import
anything; the language server (`servelint.lsp`) imports the core but never the command
line; the core imports neither. Read from the source with `ast`, lazy imports included."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "servelint"


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in out if m == "servelint" or m.startswith("servelint.")}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_no_module_but_the_entry_points_imports_the_command_line():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        if name in ("servelint.cli", "servelint.__main__"):
            continue
        bad = [m for m in imports(path) if m == "servelint.cli" or m.startswith("servelint.cli.")]
        if bad:
            offenders.append((name, bad))
    assert offenders == []


def test_the_core_does_not_import_the_language_server():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        if name.startswith("servelint.lsp") or name in ("servelint.cli", "servelint.__main__"):
            continue
        bad = [m for m in imports(path) if m.startswith("servelint.lsp")]
        if bad:
            offenders.append((name, bad))
    assert offenders == []


def test_the_walk_finds_the_modules():
    names = {module_name(p) for p in PACKAGE.rglob("*.py")}
    assert {"servelint.cli", "servelint.files", "servelint.lsp.server", "servelint.engine"} <= names
    assert "servelint.files" in imports(PACKAGE / "lsp" / "server.py")


def test_one_suggestion_function():
    """Every "did you mean" goes through servelint.suggest (difflib is imported there only)."""
    users = sorted(module_name(p) for p in PACKAGE.rglob("*.py")
                   if "difflib" in p.read_text(encoding="utf-8") and p.name != "suggest.py")
    assert users == []


def test_checks_own_their_codes():
    """A check's code is written in its own module only; everyone else makes the
    check's findings through `CHECK.finding(...)` (its code and severity)."""
    import re
    code = re.compile(r"""["']SL0\d\d["']""")
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name == "checks":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if code.search(line):
                offenders.append(f"{module_name(path)}:{n}: {line.strip()}")
    assert offenders == []


def module_imports(path: Path) -> set[str]:
    """The servelint modules a module imports when it is loaded (module level only: an
    import inside a function runs later and cannot make a loading circle)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("servelint")}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep, path + [dep])
                if found:
                    return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_no_import_circles():
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        graph[name] = {m for m in module_imports(path) if m != name}
    known = set(graph)
    graph = {m: {d for d in deps if d in known} for m, deps in graph.items()}
    assert find_cycle(graph) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
