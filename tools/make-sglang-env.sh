#!/usr/bin/env bash
# Create the dedicated virtualenv that tools/gen_catalog.py runs in.
#
#   tools/make-sglang-env.sh            # create .venv-sglang if missing, bring it up to date
#   tools/make-sglang-env.sh --fresh    # delete it first and rebuild from scratch
#
# The venv lives OUTSIDE the servelint package (default: <repo>/.venv-sglang,
# gitignored; override with SERVELINT_SGLANG_VENV=/path).  It holds SGLang
# 0.5.23 installed with --no-deps plus the pinned modules its parser import
# needs (tools/sglang-requirements.txt).  Re-running is safe: pip leaves
# already-satisfied pins alone.  Needs python3.11 (the sglang wheel is cp311).
set -euo pipefail

SGLANG_VERSION=0.5.23
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
venv="${SERVELINT_SGLANG_VENV:-$root/.venv-sglang}"
reqs="$here/sglang-requirements.txt"
python="${PYTHON:-python3}"

if [[ "${1:-}" == "--fresh" ]]; then
    rm -rf -- "$venv"
elif [[ $# -gt 0 ]]; then
    echo "usage: $0 [--fresh]" >&2
    exit 2
fi

pyver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [[ "$pyver" != "3.11" ]]; then
    echo "error: $python is Python $pyver; SGLang $SGLANG_VERSION's wheel needs 3.11" >&2
    exit 1
fi

if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi

pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install --quiet -r "$reqs"
# What SGLang's resolution pipeline imports on top (tools/sglang_oracle.py --stage full).
"${pip[@]}" install --quiet -r "$here/oracle-model/requirements-full.txt"
"${pip[@]}" install --quiet --no-deps "sglang==$SGLANG_VERSION"

# Smoke test: the parser module imports and SGLang has the expected version.
"$venv/bin/python" - "$SGLANG_VERSION" <<'EOF'
import sys
import sglang
import sglang.srt.server_args  # noqa: F401
assert sglang.__version__ == sys.argv[1], (sglang.__version__, sys.argv[1])
print(f"ok: sglang {sglang.__version__} importable in {sys.prefix}")
EOF
