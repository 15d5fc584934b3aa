# Two commands for a fresh machine:  `make demo` (the main job) and `make test` (the tests).
# Both create .venv and install the package on first use. `make test-real` runs the real-server
# tier: llama-cpp-python's server with a tiny model on loopback (its environment is built once,
# about 20 minutes on 2 cores, into a venv cached under the user cache dir).
PY ?= python3
ARGS ?=
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/pageindex: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev]"
	touch $(BIN)/pageindex

.PHONY: install demo test test-real test-lowest lint
install: $(BIN)/pageindex

demo: install
	$(BIN)/pageindex bench run $(ARGS)

test: install
	$(BIN)/python -m pytest -n 2

test-real: install
	bash tests/real/setup_server_env.sh >/dev/null
	bash tests/real/setup_litellm_env.sh >/dev/null
	PAGEINDEX_REAL_TIER=1 $(BIN)/python -m pytest tests/real -p no:xdist -p no:cacheprovider --timeout 1800 -v

# The suite again on the oldest releases pyproject.toml allows (uv's lowest-direct resolution) in a
# venv of its own, made afresh each time: the dependency floors are claims, and this checks them. uv
# reads the system's certificates (as pip does here: a proxy's own CA), not only its built-in ones.
test-lowest: install
	$(BIN)/pip install -q uv
	rm -rf .venv-lowest
	$(BIN)/uv venv -q --python $(BIN)/python .venv-lowest
	UV_SYSTEM_CERTS=1 UV_NATIVE_TLS=1 $(BIN)/uv pip install -q --python .venv-lowest/bin/python \
		--resolution lowest-direct -e ".[dev]"
	.venv-lowest/bin/python -m pytest -n 2

lint: install
	$(BIN)/ruff check .
