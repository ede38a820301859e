# `make run` (HPL suite on this machine, then its report) and `make test` on the embedded default (Debian
# packages and .venv); `make install` is the site install: .venv only, no root, no system packages.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: install wheelhouse run test test-loaded lab clean-venv
TESTS ?= tests
# Two workers: the Slurm lab tier mostly waits on its daemons while the other tests run beside it.
TEST_WORKERS ?= 2

# PYTHON=/path/to/python3.X picks the interpreter; WHEELHOUSE=DIR installs from DIR alone (offline).
install:
	bash scripts/install-venv.sh

# Wheels for an offline `make install WHEELHOUSE=DIR`: every supported Python on x86_64 and aarch64, or
# PYTHONS="3.11 3.12" PLATFORMS=aarch64. Needs the package registry.
wheelhouse:
	$(or $(PYTHON),python3) scripts/wheelhouse.py $(or $(WHEELHOUSE),wheelhouse) \
	    $(PYTHONS:%=--python %) $(PLATFORMS:%=--platform %)

# Application weak-scaling cases add little at 1-2 ranks: make run keeps the strong-scaling curves.
run:
	bash scripts/install.sh
	$(VENV)/bin/scalebench run --report -- -x '%scaling=weak'

# The tests also start a throwaway Slurm cluster and open the HTML report in a headless browser.
# TESTS=path... runs those alone (e.g. the screening lab: tests/integration/test_slurm_screening*.py).
test:
	bash scripts/install.sh scripts/debian-packages-slurm.txt scripts/debian-packages-report.txt
	$(PY) -m pytest -ra -n $(TEST_WORKERS) --dist loadgroup $(TESTS)

# make test with a CPU hog pinned to one core for the whole run (scripts/with-cpu-hog.sh kills it
# afterwards, even on failure): the suite must hold on a loaded machine, as a colleague's 2-core one is.
test-loaded:
	bash scripts/with-cpu-hog.sh $(MAKE) test TESTS="$(TESTS)"

# Emulated interconnects (root): HPL efficiency vs node count on a fast and a slow shaped link.
lab:
	bash scripts/install.sh scripts/debian-packages-slurm.txt
	$(VENV)/bin/python -m scalebench_lab.lab --profiles 10GbE,100Mb --nodes 2

clean-venv:
	rm -rf $(VENV)
