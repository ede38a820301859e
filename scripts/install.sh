#!/usr/bin/env bash
# Idempotent installer shared by `make run` and `make test`:
#   1. Debian packages from scripts/debian-packages.txt (apt-get when root, else name what is missing);
#   2. .venv with the pinned requirements and scalebench installed editable;
#   3. build/bin/xhpl for the embedded default (scripts/build-xhpl.sh; SCALEBENCH_SKIP_XHPL=1 skips it).
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

venv="$repo/.venv"
stamp="$venv/.scalebench-installed"
want_stamp="$(cat "$repo/requirements.txt" "$repo/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want_stamp" || ! -x "$venv/bin/scalebench" ]]; then
    python="${PYTHON:-python3}"
    [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$repo/requirements.txt"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$repo"
    echo "$want_stamp" > "$stamp"
    echo "scalebench install: .venv ready"
fi

# A site runs its own HPL build (the stack's hpl_binary); the embedded default builds one from Debian.
if [[ -n "${SCALEBENCH_SKIP_XHPL:-}" ]]; then
    :
elif ! command -v apt-get > /dev/null; then
    echo "scalebench install: no apt-get (not Debian): build/bin/xhpl for the embedded default not built"
else
    bash "$repo/scripts/build-xhpl.sh"
fi
