# Two entry points: `make run` (HPL suite on this machine, then its report) and `make test`.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: install run test clean-venv

install:
	bash scripts/install.sh

run: install
	$(VENV)/bin/scalebench run --report

test: install
	$(PY) -m pytest -ra tests

clean-venv:
	rm -rf $(VENV)
