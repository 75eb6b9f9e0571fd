# servelint: `make demo` and `make test` work on a fresh machine (Python 3.10+, pip, and
# for the editor test Neovim, which `make test` installs with apt-get when it is missing).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.servelint-installed
TEST_STAMP := $(VENV)/.servelint-test-installed
NPM_STAMP := node_modules/.servelint-npm-installed
WHEEL_STAMP := client/.wheelhouse/.fetched

.PHONY: demo test install install-test bench docs catalogs conformance sglang-env nvim clean node client wheelhouse vscode-e2e fuzz

# An editable install writes no bytecode; compile it once, as a regular pip install does,
# so the language server does not recompile its modules at every start.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e .
	$(PY) tools/build_packs.py
	@$(PY) -m compileall -q server/servelint >/dev/null
	@touch $@

$(TEST_STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	$(PY) tools/build_packs.py
	@$(PY) -m compileall -q server/servelint >/dev/null
	@touch $(STAMP) $@

install: $(STAMP)
install-test: $(TEST_STAMP)

## Lint the shipped examples and print what servelint finds (the examples have problems on purpose).
demo: $(STAMP)
	@$(VENV)/bin/servelint check examples/ ; status=$$?; \
	  if [ $$status -eq 2 ]; then exit 2; fi; \
	  echo "(servelint exited with $$status: 1 means it found errors, as the bad_* examples intend)"

nvim:
	@command -v nvim >/dev/null 2>&1 || { \
	  echo "installing neovim for the editor end-to-end test"; \
	  (apt-get update -qq && apt-get install -y -qq neovim) >/dev/null; }

node:
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
	  echo "installing nodejs and npm for the VS Code extension"; \
	  (apt-get update -qq && apt-get install -y -qq nodejs npm) >/dev/null; }

# --ignore-scripts: no install script of any package runs (esbuild works without its
# postinstall; vsce's optional keytar is only needed for publishing).
$(NPM_STAMP): package.json package-lock.json | node
	npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

# Wheels of the server's pinned dependencies (constraints.txt) for every supported CPython
# and every VS Code target (network: linux-x64, linux-arm64, darwin-x64, darwin-arm64,
# win32-x64, and the pure-Python ones of the universal package) into
# client/.wheelhouse/<target>, so that bundling and packaging run offline. A target already
# fetched for the same pins is not fetched again.
$(WHEEL_STAMP): pyproject.toml $(wildcard constraints.txt) client/scripts/bundle_server.py | $(TEST_STAMP)
	$(PY) client/scripts/bundle_server.py fetch
	@touch $@

wheelhouse: $(WHEEL_STAMP)

## The VS Code extension: type check and bundle, bundle the server for this machine, node
## tests (unit, protocol, the bundle check and its fallback, against .venv and the bundled
## server), one package per VS Code target (servelint-<target>-0.1.0.vsix, and
## servelint-0.1.0.vsix, universal), check their contents and, with
## tests/test_vsix_targets.py (also in make test's pytest), their platforms.
client: $(TEST_STAMP) $(NPM_STAMP) $(WHEEL_STAMP)
	npm run --silent compile
	SERVELINT_PYTHON=$(abspath $(PY)) npm run --silent bundle-server
	SERVELINT_PYTHON=$(abspath $(PY)) npm test
	SERVELINT_PYTHON=$(abspath $(PY)) npm run package
	npm run --silent check-vsix
	$(PY) -m pytest -q tests/test_vsix_targets.py

## The packaged extension in real VS Code: code-server 4.100.3 (VS Code 1.100.3) driven by
## Debian's chromium (docs/vscode-e2e.md). setup.sh installs both into client/e2e/.cache
## (npm registry and apt-get only; a stamp makes a second run instant); screenshots go to
## client/e2e/out/.
VSCODE_E2E = client/e2e/setup.sh && node --test --test-concurrency=1 client/e2e/vscode.test.mjs

vscode-e2e: client
	$(VSCODE_E2E)

## Every test suite: the type check, pytest, then VS Code itself (on the .vsix `client`
## built and checked above).
test: $(TEST_STAMP) nvim client
	$(PY) -m mypy
	$(PY) -m pytest -q
	$(VSCODE_E2E)

## The attack suite's long fuzzing run (issue 17): mutated documents of every format for ten
## minutes, every fix and the fix-all applied and re-parsed; prints its counts, exits 1 on a
## failure (tests/test_attack.py runs a fast subset in `make test`; other seeds and lengths:
## .venv/bin/python tools/fuzz.py --help).
fuzz: $(STAMP)
	@$(PY) -m compileall -q server/servelint >/dev/null
	$(PY) tools/fuzz.py --seed 17 --seconds 600

bench: $(STAMP)
	@$(PY) -m compileall -q server/servelint >/dev/null
	$(PY) bench/run.py

## Regenerate the rule pages and the SGLang coverage page from the code and data.
docs: $(STAMP)
	$(PY) tools/gen_docs.py
	$(PY) tools/sglang_coverage.py

## Every release's flag catalog from its wheel (PyPI), packed into the shipped file, then
## what is generated from the pack: successors, release notes, the releases each rule is
## verified for (then the rule cache and pages) (docs/catalog.md). Each step
## has a --check mode the tests run. A new release: make catalogs RELEASES="... 0.5.24".
RELEASES = $(shell $(PY) -c "from servelint.catalog import known_versions; print(*known_versions())")
catalogs: $(STAMP)
	$(PY) tools/catalog_release.py $(RELEASES)
	$(PY) tools/pack_catalogs.py
	$(PY) tools/gen_successors.py
	$(PY) tools/gen_release_notes.py
	$(PY) tools/verify_rules.py
	$(PY) tools/build_packs.py
	$(PY) tools/gen_docs.py

## SGLang 0.5.23 in its own venv (.venv-sglang, about 6 GB): what conformance runs against.
sglang-env:
	tools/make-sglang-env.sh

## Ask SGLang's own validator about every rule example and golden launch, and record the
## verdicts in tests/data/conformance/verdicts.jsonl (tests/test_conformance.py checks them).
conformance: $(STAMP) sglang-env
	$(PY) tools/conformance.py

clean:
	rm -rf $(VENV) build dist *.egg-info server/*.egg-info node_modules bundled client/out client/.wheelhouse servelint-*.vsix client/e2e/.cache client/e2e/out

## servelint next to bash-language-server (+ ShellCheck), yaml-language-server, `ruff server`,
## ShellCheck and `ruff check` in one run, on the committed HEAD (bench/peers.py installs the
## peers into bench/.peers/, never globally); then the README's Speed table from its results.
.PHONY: bench-peers
bench-peers: $(STAMP)
	$(PY) bench/peers.py --head
	$(PY) bench/readme_table.py
