# servelint: `make demo` and `make test` work on a fresh machine (Python 3.10+, pip, and
# for the editor test Neovim, which `make test` installs with apt-get when it is missing).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.servelint-installed
TEST_STAMP := $(VENV)/.servelint-test-installed

.PHONY: demo test test-python test-nvim install install-test bench docs check-generated clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	@touch $@

$(TEST_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
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

## Every test suite.
test: $(TEST_STAMP) nvim
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/run.py

## Regenerate the rule pages from the code and records.
docs: $(STAMP)
	$(PY) tools/gen_docs.py

clean:
	rm -rf $(VENV) build dist *.egg-info server/*.egg-info
