#!/usr/bin/env bash
# Idempotent installer of the embedded default, shared by `make run`, `make test` and `make lab`:
#   1. Debian packages from scripts/debian-packages.txt and the lists given as arguments (apt-get when
#      root, else name what is missing and exit 1);
#   2. the site install, scripts/install-venv.sh (.venv with the pinned requirements and scalebench
#      editable), with its exit codes;
#   3. build/bin/xhpl for the embedded default (scripts/build-xhpl.sh; SCALEBENCH_SKIP_XHPL=1 skips it),
#      build/bin/stream from the same source (scripts/build-stream.sh) and build/bin/screen-probe for
#      ScreeningCheck (scripts/build-screen-probe.sh).
# A second run with nothing to do finishes in about a second.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package_files=("$repo/scripts/debian-packages.txt" "$@")

wanted=()
for list in "${package_files[@]}"; do
    while read -r pkg _; do
        [[ -z "$pkg" || "$pkg" == \#* ]] && continue
        wanted+=("$pkg")
    done < "$list"
done

missing=()
for pkg in "${wanted[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]})); then
    if [[ "$(id -u)" != 0 ]]; then
        echo "scalebench install: missing Debian packages: ${missing[*]}" >&2
        echo "  install them as root: apt-get install -y --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
    echo "scalebench install: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Package lists may be absent or stale on a fresh machine: refresh only when needed.
    if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
        apt-get update -q
        apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
fi

bash "$repo/scripts/install-venv.sh"

# A site runs its own HPL build (the stack's hpl_binary); the embedded default builds one from Debian.
if [[ -n "${SCALEBENCH_SKIP_XHPL:-}" ]]; then
    :
elif ! command -v apt-get > /dev/null; then
    echo "scalebench install: no apt-get (not Debian): build/bin/xhpl and build/bin/stream for the embedded default not built"
else
    bash "$repo/scripts/build-xhpl.sh"
    bash "$repo/scripts/build-stream.sh"  # hpcc's STREAM, from the source build-xhpl.sh fetched
fi
# The screening probe needs only mpicc and a CBLAS: nothing to fetch.
if command -v mpicc > /dev/null; then
    bash "$repo/scripts/build-screen-probe.sh"
else
    echo "scalebench install: no mpicc: build/bin/screen-probe for ScreeningCheck not built"
fi
