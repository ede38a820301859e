# Two entry points: `make run` (HPL suite on this machine, then its report) and `make test`.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: install run test lab clean-venv

install:
	bash scripts/install.sh

# Application weak-scaling cases add little at 1-2 ranks: make run keeps the strong-scaling curves.
run: install
	$(VENV)/bin/scalebench run --report -- -x '%scaling=weak'

# The tests also start a throwaway Slurm cluster and open the HTML report in a headless browser.
test:
	bash scripts/install.sh scripts/debian-packages-slurm.txt scripts/debian-packages-report.txt
	$(PY) -m pytest -ra tests

# Emulated interconnects (root): HPL efficiency vs node count on a fast and a slow shaped link.
lab: install
	bash scripts/install.sh scripts/debian-packages-slurm.txt
	$(VENV)/bin/python -m scalebench_lab.lab --profiles 10GbE,100Mb --nodes 2

clean-venv:
	rm -rf $(VENV)
