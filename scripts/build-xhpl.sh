#!/usr/bin/env bash
# Builds build/bin/xhpl for the embedded default. Debian has no xhpl package; its hpcc source
# package carries HPL 2.0 (hpcc-<version>/hpl), which this script fetches with apt-get, changes
# back into stock xhpl behaviour and compiles with mpicc (OpenMPI) against Debian's OpenBLAS.
# Nothing of HPL is kept in the repository: the source stays in build/ (git-ignored).
# A second run with nothing changed returns at once (stamp over this script, the driver, the tarball).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$repo/build"
cache="$build/hpcc-source"
xhpl="$build/bin/xhpl"
stamp="$build/xhpl.stamp"
driver="$repo/scripts/xhpl-driver.c"
log="$build/build-xhpl.log"
fetch_log="$build/fetch-hpcc.log"
# shellcheck source=scripts/hpcc-source.sh
source "$repo/scripts/hpcc-source.sh"

# HPL's own Make.<arch> choices: CBLAS interface (OpenBLAS ships cblas_*), -O3 -funroll-loops.
# No -march=native: the time is in OpenBLAS's DGEMM/DTRSM, which picks its kernels for the CPU at
# run time, so a generic x86-64 xhpl loses nothing and still runs where build/ is copied or shared.
defs=(-DHPL_CALL_CBLAS)
opt=(-O3 -fomit-frame-pointer -funroll-loops)
libs=(-lopenblas -lm)

# fail MESSAGE [LOG]: one line; with a LOG, its first error line and where it is.
fail() {
    local message="scalebench build-xhpl: $1"
    if [[ -n "${2:-}" ]]; then
        local reason
        reason="$(grep -m1 -iE '^E:|error|cannot|unable|not found' "$2" || true)"
        message+="${reason:+: $reason} (log: ${2#"$repo/"})"
    fi
    echo "$message" >&2
    exit 1
}

stamp_key() {
    cat "${BASH_SOURCE[0]}" "$driver" <(sha256sum < "$tarball") | sha256sum | cut -d' ' -f1
}

mkdir -p "$build/bin"
tarball="$(verified_tarball "$cache" || true)"
if [[ -n "$tarball" && -x "$xhpl" && -f "$stamp" ]]; then
    [[ "$(cat "$stamp")" == "$(stamp_key)" ]] && exit 0
fi

command -v mpicc > /dev/null || fail "mpicc not found (Debian package libopenmpi-dev)"
# Built beside its destination, so the final mv is an atomic rename.
work="$(mktemp -d "$build/.build-xhpl.XXXXXX")"
fetch=""
trap 'rm -rf "$work" ${fetch:+"$fetch"}' EXIT

# Source package: a private deb-src list, index and apt.conf in a temporary directory, so the
# system's apt configuration and state are only read. The mirror is the system's own Debian mirror
# when apt knows it. --tar-only --dsc-only: the build needs the orig tarball alone, and a mirror may
# already have dropped the listed revision's .debian.tar.xz.
if [[ -z "$tarball" ]]; then
    command -v apt-get > /dev/null || fail "cannot fetch the hpcc source package: no apt-get (not Debian)"
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
    [[ -n "$codename" ]] || fail "cannot fetch the hpcc source package: no VERSION_CODENAME in /etc/os-release"
    mirror="$(apt-get indextargets --format '$(REPO_URI)' "Origin: Debian" "Codename: $codename" \
                  "Identifier: Packages" "Component: main" 2> /dev/null | head -n1 || true)"
    # In the system's temporary directory, open to apt's _apt download user (the repository may not
    # be, e.g. under /root); as root, apt downloads as _apt where _apt can write.
    fetch="$(mktemp -d)" && chmod 755 "$fetch"
    mkdir -p "$fetch/sources" "$fetch/lists/partial" "$fetch/download"
    [[ "$(id -u)" == 0 ]] && chown _apt "$fetch/download" 2> /dev/null || true
    echo "deb-src ${mirror:-http://deb.debian.org/debian/} $codename main" > "$fetch/sources/hpcc.list"
    # Hooks of the system's apt.conf.d (cache cleaning, PackageKit) are for its own updates.
    printf '#clear APT::Update::Post-Invoke;\n#clear APT::Update::Post-Invoke-Success;\n' > "$fetch/apt.conf"
    apt=(apt-get -q -c "$fetch/apt.conf" -o Dir::Etc::SourceList=/dev/null
         -o Dir::Etc::SourceParts="$fetch/sources" -o Dir::State::Lists="$fetch/lists"
         -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
    "${apt[@]}" update --error-on=any > "$fetch_log" 2>&1 ||
        fail "cannot fetch the hpcc source package" "$fetch_log"
    (cd "$fetch/download" && "${apt[@]}" source --download-only --tar-only --dsc-only hpcc) >> "$fetch_log" 2>&1 ||
        fail "cannot fetch the hpcc source package" "$fetch_log"
    rm -rf "$cache" && mkdir -p "$cache" && cp "$fetch/download"/hpcc_* "$cache"/
    tarball="$(verified_tarball "$cache")" || fail "the hpcc orig tarball does not match the SHA-256 its .dsc lists"
fi

# edit FILE SED: one change to hpcc's HPL; a change that applies nowhere means a different source.
edit() {
    cp "$1" "$work/before"
    sed -i -e "$2" "$1"
    ! cmp -s "$1" "$work/before" || fail "cannot change ${1#"$work/"}: '$2' matches nothing"
}

tar -xzf "$tarball" -C "$work" --wildcards '*/hpl/*' > "$log" 2>&1 || fail "cannot unpack $(basename "$tarball")" "$log"
hpl="$(compgen -G "$work/*/hpl")" || fail "no hpl directory in $(basename "$tarball")"
# Stock HPL reads HPL.dat and honours its output file/device lines; hpcc's copy reads hpccinf.txt
# and always appends to hpccoutf.txt. A missing input file stops the run, as in stock HPL.
edit "$hpl/testing/ptest/HPL_pdinfo.c" 's/^#define INFILE "hpccinf.txt"/#define INFILE "HPL.dat"/'
edit "$hpl/testing/ptest/HPL_pdinfo.c" '/^ *fid = 8; \/\* always write to a file \*\//d'
edit "$hpl/testing/ptest/HPL_pdinfo.c" '/^ *strcpy( file, "hpccoutf.txt" );/d'
edit "$hpl/testing/ptest/HPL_pdinfo.c" 's|error = 1; /\* goto label_error; \*/|error = 1; goto label_error;|'
# HPL 2.1 and later date each solve after its result row ("HPL_pdgesv() start time <ctime>"): the
# core phase Green500 measures power over (scalebench.parse.hpl_windows). HPL 2.0 does not; these
# are 2.3's lines.
edit "$hpl/testing/ptest/HPL_pdtest.c" 's|^#include "hpl.h"$|&\n#include <time.h>\nstatic time_t HPL_solve_time[2];|'
edit "$hpl/testing/ptest/HPL_pdtest.c" 's|^   HPL_pdgesv( GRID, ALGO, &mat );$|   time( \&HPL_solve_time[0] );\n&\n   time( \&HPL_solve_time[1] );|'
edit "$hpl/testing/ptest/HPL_pdtest.c" 's|^             N, NB, nprow, npcol, wtime\[0\], Gflops );$|&\n      if( wtime[0] > HPL_rzero ) {\n         HPL_fprintf( TEST->outfp, "HPL_pdgesv() start time %s\\n", ctime( \&HPL_solve_time[0] ) );\n         HPL_fprintf( TEST->outfp, "HPL_pdgesv() end time   %s\\n", ctime( \&HPL_solve_time[1] ) );\n      }|'
# MPI-1 names that OpenMPI 4 no longer declares.
edit "$hpl/src/comm/HPL_packL.c" 's/MPI_Address(/MPI_Get_address(/g'
edit "$hpl/src/comm/HPL_packL.c" 's/MPI_Type_struct(/MPI_Type_create_struct(/g'

# Objects land in one directory: HPL's file names are unique across its source tree.
mkdir "$work/obj"
(
    cd "$work/obj"
    # HPL_dlamch measures the floating-point arithmetic; HPL's makefiles build it unoptimised.
    mpicc "${defs[@]}" -I"$hpl/include" -O0 -c "$hpl/src/auxil/HPL_dlamch.c" &&
    find "$hpl/src" "$hpl/testing" -name '*.c' ! -name HPL_dlamch.c -print0 |
        xargs -0 -n 16 -P "$(nproc)" mpicc "${defs[@]}" -I"$hpl/include" "${opt[@]}" -c &&
    ar rcs "$work/libhpl.a" ./*.o
) >> "$log" 2>&1 || fail "cannot compile HPL" "$log"
mpicc "${defs[@]}" -I"$hpl/include" "${opt[@]}" -o "$work/xhpl" "$driver" "$work/libhpl.a" "${libs[@]}" >> "$log" 2>&1 ||
    fail "cannot link xhpl" "$log"

mv -f "$work/xhpl" "$xhpl"
stamp_key > "$stamp"
echo "scalebench build-xhpl: build/bin/xhpl from $(basename "$tarball")"
