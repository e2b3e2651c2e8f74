# Latitude top-level build. `make test` is the README's test command (it installs what it
# needs first); `make demo` runs the demo.
PYTHON ?= python3
export OMPI_ALLOW_RUN_AS_ROOT ?= 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM ?= 1

.PHONY: all setup apps test test-rust test-python demo bench clean

all: apps

setup:
	scripts/setup

apps:
	@if [ -f apps/Makefile ]; then $(MAKE) -C apps; fi

test: setup apps test-rust test-python

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
