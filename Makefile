# Latitude top-level build. `make test` is the README's test command; `make demo` the demo.
PYTHON ?= python3

.PHONY: all apps test test-rust test-python demo bench clean

all: apps

apps:
	@if [ -f apps/Makefile ]; then $(MAKE) -C apps; fi

clean:
	@if [ -f apps/Makefile ]; then $(MAKE) -C apps clean; fi
	rm -rf target
