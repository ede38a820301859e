# Two entry points: `make run` (HPL suite on this machine, then its report) and `make test`.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: install run test clean-venv

install:
	bash scripts/install.sh

run: install
	$(VENV)/bin/scalebench run --report

# The tests also start a throwaway Slurm cluster: they need the Slurm packages too.
test:
	bash scripts/install.sh scripts/debian-packages-slurm.txt
	$(PY) -m pytest -ra tests

clean-venv:
	rm -rf $(VENV)
