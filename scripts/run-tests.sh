#!/usr/bin/env bash
# The test suite as two tiers side by side: the Slurm lab files (marker slurm_lab), one after another,
# since their clusters and the runs timed in them take turns, and everything else. The lab tier mostly
# waits on its daemons, so the two finish in about the time of the longer. The lab tier's output is
# printed when both have ended; the exit status is the first failing tier's (no tests selected is no
# failure: TESTS may name files of one tier only).
#
#   scripts/run-tests.sh PYTHON [PATH...]      # paths default to tests
set -uo pipefail

(($#)) || { echo "usage: scripts/run-tests.sh PYTHON [PATH...]" >&2; exit 2; }
python="$1"; shift
(($#)) || set -- tests
lab_log="$(mktemp "${TMPDIR:-/tmp}/scalebench-lab-tier.XXXXXX")"

"$python" -m pytest -ra -m slurm_lab "$@" > "$lab_log" 2>&1 &
lab=$!
trap 'kill -INT "$lab" 2> /dev/null; wait "$lab" 2> /dev/null; cat "$lab_log"; rm -f "$lab_log"; exit 130' INT
trap 'kill -TERM "$lab" 2> /dev/null; wait "$lab" 2> /dev/null; cat "$lab_log"; rm -f "$lab_log"; exit 143' TERM

"$python" -m pytest -ra -m "not slurm_lab" "$@"
rest=$?
wait "$lab"
lab_status=$?
echo "=== the Slurm lab tier (pytest -m slurm_lab) ==="
cat "$lab_log"
rm -f "$lab_log"

for status in "$rest" "$lab_status"; do
    [[ $status -eq 0 || $status -eq 5 ]] || exit "$status"
done
[[ $rest -eq 5 && $lab_status -eq 5 ]] && { echo "scalebench run-tests: no test selected in $*" >&2; exit 5; }
exit 0
