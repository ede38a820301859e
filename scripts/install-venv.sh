#!/usr/bin/env bash
# The site install (`make install`): .venv/ with the pinned requirements.txt and scalebench (editable),
# and nothing else. No root, no system package manager, any Linux with a supported Python.
#   PYTHON=/path/to/python3.X   the interpreter (default python3): CPython 3.11 or newer
#   WHEELHOUSE=DIR              install from DIR alone (pip --no-index), a directory from `make wheelhouse`
# Exit codes: 0 .venv ready; 1 pip failed (its message above); 2 WHEELHOUSE is not a directory;
# 3 a missing prerequisite, in one line saying what provides it on this distribution.
# A second run with nothing to do finishes in about a second.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
stamp="$venv/.scalebench-installed"
python="${PYTHON:-python3}"
wheelhouse="${WHEELHOUSE:-}"
min_minor=11  # ReFrame 4.10 needs 3.10; the pinned numpy, matplotlib, pillow, ... need 3.11

say() { echo "scalebench install: $*" >&2; }

# The command that provides Python 3.$1 (with its venv module) on this distribution family.
provider() {
    local ids=""
    [[ -r /etc/os-release ]] && ids="$(. /etc/os-release && echo "${ID:-} ${ID_LIKE:-}")"
    case " $ids " in
        *" debian "* | *" ubuntu "*) echo "apt install python3.$1 python3.$1-venv (as root)" ;;
        *" rhel "* | *" fedora "* | *" centos "*) echo "dnf install python3.$1 python3.$1-pip (as root)" ;;
        *" suse "* | *" sles "* | *" opensuse "*) echo "zypper install python3$1 python3$1-pip (as root)" ;;
        *) echo "install CPython 3.$1 or newer, or load a module that provides it" ;;
    esac
}

if [[ -n "$wheelhouse" && ! -d "$wheelhouse" ]]; then
    say "WHEELHOUSE=$wheelhouse is not a directory:" \
        "make wheelhouse WHEELHOUSE=$wheelhouse on a connected machine, then copy it here"
    exit 2
fi

# "3 11 1": major and minor version, and whether venv and ensurepip are there (Debian ships them apart).
probe='import sys, importlib.util as u; print(*sys.version_info[:2], int(all(u.find_spec(m) for m in ("venv", "ensurepip"))))'
read_python() {
    major="" minor="" has_venv=""
    read -r major minor has_venv < <("$1" -c "$probe" 2>/dev/null || true) || true
}

# One line and exit 3 unless $python can make a venv of a supported version.
require_python() {
    read_python "$python"
    if [[ -z "$minor" ]]; then
        say "no Python at '$python': $(provider $min_minor), then make install PYTHON=python3.$min_minor"
        exit 3
    fi
    if ((major != 3 || minor < min_minor)); then
        say "$python is Python $major.$minor, scalebench needs 3.$min_minor or newer:" \
            "$(provider $min_minor), then make install PYTHON=python3.$min_minor"
        exit 3
    fi
    if ((!has_venv)); then
        say "$python (Python $major.$minor) has no venv/ensurepip module: $(provider "$minor")"
        exit 3
    fi
}

want_stamp="$(cat "$repo/requirements.txt" "$repo/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" ]]; then
    wanted=""
    [[ -n "${PYTHON:-}" ]] && require_python && wanted="$major.$minor"
    read_python "$venv/bin/python"
    if [[ -n "$wanted" && "$wanted" != "$major.$minor" ]]; then
        say ".venv has Python $major.$minor, not $python's $wanted: make clean-venv, then make install PYTHON=$python"
        exit 3
    fi
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want_stamp" && -x "$venv/bin/scalebench" ]]; then
        exit 0
    fi
else
    require_python
    # A half-made venv would be taken as made by the next run.
    "$python" -m venv "$venv" || { rm -rf "$venv"; exit 1; }
fi

pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
[[ -n "$wheelhouse" ]] && pip+=(--no-index --find-links "$wheelhouse")
if ! "${pip[@]}" -r "$repo/requirements.txt"; then
    if [[ -n "$wheelhouse" ]]; then
        target="PYTHONS=3.$minor PLATFORMS=$(uname -m)"
        say "installing from $wheelhouse failed; it needs make wheelhouse $target, on a connected machine"
    fi
    exit 1
fi
"${pip[@]}" --no-deps --no-build-isolation -e "$repo" || exit 1
echo "$want_stamp" > "$stamp"
echo "scalebench install: .venv ready (Python $major.$minor)"
