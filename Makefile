# Latitude top-level build. `make test` is the README's test command (it installs what it
# needs first); `make demo` runs the demo.
PYTHON ?= python3
export OMPI_ALLOW_RUN_AS_ROOT ?= 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM ?= 1

.PHONY: all setup apps lint test test-rust test-python demo bench clean

all: apps

setup:
	scripts/setup

apps:
	@if [ -f apps/Makefile ]; then $(MAKE) -C apps; fi

test: setup lint apps test-rust test-python

# Formatting and lints gate every test run (rustfmt.toml and [tool.ruff] hold the settings).
lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

test-rust:
	cargo test --workspace --quiet

test-python:
	$(PYTHON) -m pytest -q

demo: setup
	latitude demo

bench:
	$(PYTHON) bench/engine_vs_lp.py

clean:
	@if [ -f apps/Makefile ]; then $(MAKE) -C apps clean; fi
	rm -rf target
