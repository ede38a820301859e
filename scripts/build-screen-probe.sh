#!/usr/bin/env bash
# Builds the screening probe (scripts/screen-probe.c, ScreeningCheck) with an MPI's compiler wrapper
# against a CBLAS, as build-xhpl.sh builds xhpl: nothing is fetched, and the binary stays in build/
# (git-ignored). A second run with nothing changed returns at once.
#
#   scripts/build-screen-probe.sh                       # build/bin/screen-probe: mpicc, Debian's OpenBLAS
#   MPICC=/path/to/mpicc BLAS_LIBS="-lopenblas" OUT=/path/to/screen-probe scripts/build-screen-probe.sh
#
# The second form builds it for a site's stack (its MPI and BLAS: -lmkl_rt, -lblis, -lsci_cray, ...);
# the stack's `screen_binary` then names OUT.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source="$repo/scripts/screen-probe.c"
mpicc="${MPICC:-mpicc}"
blas_libs="${BLAS_LIBS:--lopenblas}"
out="${OUT:-$repo/build/bin/screen-probe}"
stamp="$out.stamp"
log="$(dirname "$out")/build-screen-probe.log"

fail() {
    echo "scalebench build-screen-probe: $1" >&2
    exit 1
}

command -v "$mpicc" > /dev/null || fail "$mpicc not found (Debian package libopenmpi-dev, or MPICC=...)"
mkdir -p "$(dirname "$out")"
key="$(cat "$source" "${BASH_SOURCE[0]}" <(echo "$mpicc $blas_libs") | sha256sum | cut -d' ' -f1)"
[[ -x "$out" && -f "$stamp" && "$(cat "$stamp")" == "$key" ]] && exit 0

# -O2 without -march=native: DGEMM's time is in the BLAS, which picks its kernel at run time, and the
# triad loop must run where build/ is shared.
# shellcheck disable=SC2086  # BLAS_LIBS is a list of linker words
"$mpicc" -O2 -o "$out.tmp" "$source" $blas_libs -lm > "$log" 2>&1 ||
    fail "cannot compile $source: $(grep -m1 -i 'error' "$log" || tail -n1 "$log") (log: $log)"
mv -f "$out.tmp" "$out"
echo "$key" > "$stamp"
echo "scalebench build-screen-probe: ${out#"$repo/"}"
