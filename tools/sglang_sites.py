"""Every raise/assert site in SGLang 0.5.23's argument handling, with its message.

    python3 tools/sglang_sites.py /path/to/unpacked/wheel > tools/coverage/sites.json

(`pip download sglang==0.5.23 --no-deps` and unzip it; the argument is the folder that
holds the `sglang` package.) Reads server_args.py, arg_groups/ (hooks, fields, model
overrides) and argparse_actions.py with `ast` (nothing is imported or run) and lists, for
each `raise`/`assert`: file, line, enclosing function, exception, the message (f-string
fields shown as {expr}), the assert's test and the `if` conditions that guard it.
docs/sglang-coverage.md is built from this list and the classification in
tools/coverage/*.json (tools/coverage.py).
"""
import ast, json, os, sys
ROOT = sys.argv[1]
files = ["sglang/srt/server_args.py", "sglang/srt/arg_groups/argparse_actions.py"]
for d in ["sglang/srt/arg_groups", "sglang/srt/arg_groups/fields", "sglang/srt/arg_groups/model_overrides"]:
    for f in sorted(os.listdir(os.path.join(ROOT, d))):
        if f.endswith(".py"):
            p = f"{d}/{f}"
            if p not in files:
                files.append(p)

def msg_of(node, src):
    if node is None:
        return None
    if isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(str(v.value))
            else:
                out.append("{" + ast.get_source_segment(src, v.value) + "}")
        return "".join(out)
    if isinstance(node, ast.BinOp):
        return (msg_of(node.left, src) or "") + (msg_of(node.right, src) or "")
    return ast.get_source_segment(src, node)

rows = []
for rel in files:
    path = os.path.join(ROOT, rel)
    src = open(path).read()
    tree = ast.parse(src)
    parents = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            parents[c] = n
    for n in ast.walk(tree):
        if isinstance(n, (ast.Raise, ast.Assert)):
            fn = n
            while fn in parents and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fn = parents[fn]
            func = fn.name if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else "<module>"
            guard = n
            conds = []
            while guard in parents:
                p = parents[guard]
                if isinstance(p, ast.If) and guard in p.body:
                    conds.append(ast.get_source_segment(src, p.test))
                if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    break
                guard = p
            if isinstance(n, ast.Raise):
                exc = n.exc
                kind = "raise"
                cls = None
                if isinstance(exc, ast.Call):
                    cls = ast.get_source_segment(src, exc.func)
                elif exc is not None:
                    cls = ast.get_source_segment(src, exc)
                message = msg_of(exc, src) if isinstance(exc, ast.Call) else None
                test = None
            else:
                kind = "assert"; cls = "AssertionError"
                message = msg_of(n.msg, src) if n.msg is not None else None
                test = ast.get_source_segment(src, n.test)
            rows.append({"file": rel, "line": n.lineno, "end_line": n.end_lineno, "function": func, "kind": kind,
                         "exception": cls, "message": message, "assert_test": test,
                         "guards": list(reversed(conds))})
json.dump(rows, sys.stdout, indent=1)
