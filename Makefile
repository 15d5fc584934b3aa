# Two commands for a fresh machine:  `make demo` (the main job) and `make test` (the tests).
# Both create .venv and install the package on first use.
PY ?= python3
ARGS ?=
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/pageindex: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev]"
	touch $(BIN)/pageindex

.PHONY: install demo test lint
install: $(BIN)/pageindex

demo: install
	$(BIN)/pageindex bench run $(ARGS)

test: install
	$(BIN)/python -m pytest -n 2

lint: install
	$(BIN)/ruff check .
