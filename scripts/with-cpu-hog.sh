#!/usr/bin/env bash
# Runs a command beside a CPU hog: one busy loop pinned to one core (HOG_CPU, default the last one) at
# normal priority, for the command's whole duration, killed afterwards whatever the command did (exit,
# failure, Ctrl-C). `make test-loaded` runs the test suite so: a 2-core machine with other work beside
# the tests is where a screening that trusts one measurement drains healthy nodes.
#
#   scripts/with-cpu-hog.sh COMMAND [ARGS...]      # exits with COMMAND's status
set -euo pipefail

(($#)) || { echo "usage: scripts/with-cpu-hog.sh COMMAND [ARGS...]" >&2; exit 2; }
cpu="${HOG_CPU:-$(($(nproc) - 1))}"
command -v taskset > /dev/null || { echo "scalebench with-cpu-hog: taskset not found (util-linux)" >&2; exit 2; }

taskset -c "$cpu" sh -c 'while :; do :; done' &
hog=$!
trap 'kill "$hog" 2> /dev/null || true; wait "$hog" 2> /dev/null || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo "scalebench with-cpu-hog: a busy loop on CPU $cpu (pid $hog) beside: $*" >&2
status=0
"$@" || status=$?
exit "$status"
