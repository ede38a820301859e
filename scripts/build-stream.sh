#!/usr/bin/env bash
# Builds build/bin/stream for the embedded default: hpcc's STREAM (STREAM/stream.c of the hpcc source
# package that build-xhpl.sh fetched into build/hpcc-source/), compiled unchanged with mpicc -fopenmp
# against scripts/stream-hpcc.h and the main of scripts/stream-driver.c. Nothing is fetched: without
# that source it stops, naming it. Nothing of hpcc is kept in the repository: the binary stays in build/
# (git-ignored). A second run with nothing changed returns at once (stamp over these files, the tarball).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$repo/build"
cache="$build/hpcc-source"
stream="$build/bin/stream"
stamp="$build/stream.stamp"
log="$build/build-stream.log"
sources=("${BASH_SOURCE[0]}" "$repo/scripts/stream-driver.c" "$repo/scripts/stream-hpcc.h")
# shellcheck source=scripts/hpcc-source.sh
source "$repo/scripts/hpcc-source.sh"

# -fopenmp: the threads of one rank share a node's memory controllers. No -march=native: the kernels
# are memory-bound and the binary must run where build/ is copied or shared.
opt=(-O3 -fopenmp)

fail() {
    echo "scalebench build-stream: $1" >&2
    exit 1
}

tarball="$(verified_tarball "$cache")" ||
    fail "no verified hpcc source in ${cache#"$repo/"} (scripts/build-xhpl.sh fetches it)"
key="$(cat "${sources[@]}" <(sha256sum < "$tarball") | sha256sum | cut -d' ' -f1)"
[[ -x "$stream" && -f "$stamp" && "$(cat "$stamp")" == "$key" ]] && exit 0

command -v mpicc > /dev/null || fail "mpicc not found (Debian package libopenmpi-dev)"
mkdir -p "$build/bin"
work="$(mktemp -d "$build/.build-stream.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work" --wildcards '*/STREAM/stream.c' > "$log" 2>&1 ||
    fail "cannot unpack STREAM/stream.c from $(basename "$tarball") (log: ${log#"$repo/"})"
source_c="$(compgen -G "$work/*/STREAM/stream.c")" || fail "no STREAM/stream.c in $(basename "$tarball")"
# The shim is hpcc.h for stream.c's #include <hpcc.h>.
mkdir "$work/include" && cp "$repo/scripts/stream-hpcc.h" "$work/include/hpcc.h"
mpicc "${opt[@]}" -I"$work/include" -o "$work/stream" "$source_c" "$repo/scripts/stream-driver.c" -lm >> "$log" 2>&1 ||
    fail "cannot compile STREAM: $(grep -m1 -i 'error' "$log" || tail -n1 "$log") (log: ${log#"$repo/"})"
mv -f "$work/stream" "$stream"
echo "$key" > "$stamp"
echo "scalebench build-stream: build/bin/stream from $(basename "$tarball")"
