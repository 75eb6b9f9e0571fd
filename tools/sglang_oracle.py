"""Ask SGLang itself what it says about argument lists: the oracle servelint's
findings are checked against.

Run with the Python of the SGLang venv (tools/make-sglang-env.sh):

    .venv-sglang/bin/python tools/sglang_oracle.py < cases.jsonl > verdicts.jsonl

Each input line is a JSON list of argument strings (what follows the entrypoint).
Each output line is `{"argv": [...], "verdict": "accepted" | "rejected", "error": str}`.

This stage runs SGLang's argument parser only (`prepare_server_args`, which builds
the parser exactly as `sglang serve` does and calls `parse_args`): it answers for
everything argparse decides. SGLang is imported once; each case runs in a forked
child so one case cannot leak state into the next.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys


def judge(argv: list[str]) -> dict:
    from sglang.srt.server_args import prepare_server_args

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            prepare_server_args(list(argv))
    except SystemExit as exc:
        if exc.code in (0, None):  # --help / --version print and exit cleanly
            return {"argv": argv, "verdict": "accepted", "error": None}
        text = err.getvalue().strip().splitlines()
        msg = text[-1] if text else f"exit {exc.code}"
        return {"argv": argv, "verdict": "rejected", "error": msg}
    except Exception as exc:  # SGLang raised outside argparse (e.g. LoRAPathAction)
        return {"argv": argv, "verdict": "rejected", "error": f"{type(exc).__name__}: {exc}"}
    return {"argv": argv, "verdict": "accepted", "error": None}


def main() -> int:
    for key in list(os.environ):
        if key.startswith(("SGLANG_", "SGL_")):
            del os.environ[key]
    import sglang.srt.server_args  # noqa: F401  (import once, before forking)

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        argv = json.loads(line)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            out = json.dumps(judge(argv)).encode()
            os.write(w, out)
            os._exit(0)
        os.close(w)
        chunks = []
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(r)
        os.waitpid(pid, 0)
        data = b"".join(chunks)
        result = json.loads(data) if data else {"argv": argv, "verdict": "crashed", "error": None}
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
