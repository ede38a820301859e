# Sourced by the scripts that build from Debian's hpcc source package (build-xhpl.sh fetches it into
# build/hpcc-source/; build-stream.sh only reads it).

# verified_tarball DIR: the orig tarball cached in DIR if its SHA-256 is the one the .dsc lists (apt
# checked the .dsc against the signed Sources index when it fetched it); status 1 otherwise.
verified_tarball() {
    local dsc sum name
    dsc="$(compgen -G "$1/hpcc_*.dsc" | head -n1)" || return 1
    read -r sum name < <(awk '/^Checksums-Sha256:/ { f = 1; next } /^[^ ]/ { f = 0 }
                              f && $3 ~ /\.orig\.tar\./ { print $1, $3; exit }' "$dsc") || return 1
    [[ -f "$1/$name" && "$(sha256sum < "$1/$name")" == "$sum  -" ]] || return 1
    echo "$1/$name"
}
