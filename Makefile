# `make demo` and `make test` work on a fresh machine with only python3, pip and gcc:
# they create .venv and install the package with its test dependencies first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m multibody demo

test: $(STAMP)
	$(PY) -m pytest -q -n 2

test-fast: $(STAMP)
	$(PY) -m pytest -q -n 2 -m "not slow"

bench: $(STAMP)
	$(PY) -m multibody bench

clean:
	rm -rf $(VENV) build src/*.egg-info
