#!/usr/bin/env bash
# libshmr's ABI is its public headers: the installed libshmr.so exports
# exactly the functions the installed <shmr/*.h> declare (nothing more,
# nothing less), each under a SHMR_x.y version node no newer than the
# release; the daemons carry the internal code themselves (no libshmr).
#
# The declarations come from the compiler (gcc -aux-info lists every
# function a translation unit declares, with the file that declares it),
# the exports from nm -D, the version nodes from objdump -T.
#
# usage: test_symbols.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d /tmp/shmr-sym-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

meson install -C "$build" --destdir "$tmp/root" --no-rebuild >/dev/null
pc=$(find "$tmp/root" -name shmr.pc -print -quit)
[ -n "$pc" ] || { echo "shmr.pc was not installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
lib=$(readlink -f "$libdir/libshmr.so")
[ -f "$lib" ] || { echo "libshmr.so was not installed in $libdir"; exit 1; }
incdir=$(dirname "$(find "$tmp/root" -path '*/include/shmr/shmr.h' -print -quit)")
incdir=$(dirname "$incdir")
version=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --modversion shmr)

# What the installed headers declare: the functions (not static inline
# ones, not function-pointer members) that gcc records as declared in a
# file under include/shmr/.
headers=("$incdir"/shmr/*.h)
: >"$tmp/declared"
for h in "${headers[@]}"; do
    printf '#include <shmr/%s>\n' "$(basename "$h")" |
        gcc -std=gnu11 -fsyntax-only -aux-info "$tmp/aux" -I"$incdir" -x c -
    # "/* FILE:LINE:NC */ extern TYPE NAME (ARGS);": the name is the first
    # word before a parenthesis that is not a pointer's ("void (*f (int))").
    awk -v from="/* $incdir/shmr/" '
        index($0, from) != 1 { next }
        { sub(/^\/\*[^*]*\*\/ */, "") }
        /(^| )static / { next }
        match($0, /[A-Za-z_][A-Za-z0-9_]* \([^*]/) {
            print substr($0, RSTART, RLENGTH - 3)
        }' "$tmp/aux" >>"$tmp/declared"
done
sort -u -o "$tmp/declared" "$tmp/declared"
[ -s "$tmp/declared" ] || { echo "no function found in ${headers[*]}"; exit 1; }

# What libshmr.so exports: every defined dynamic symbol but the version
# nodes' own (type A), whatever its kind (a variable is an export too).
nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
    sort -u >"$tmp/exported"

while read -r s; do
    bad "libshmr exports $s, which no installed header declares"
done < <(comm -13 "$tmp/declared" "$tmp/exported")
while read -r s; do
    bad "$s is declared in the installed headers but libshmr does not export it"
done < <(comm -23 "$tmp/declared" "$tmp/exported")

# Every export has a version node SHMR_MAJOR.MINOR, none newer than this
# release (x.y of shmr.pc's Version): a new node per release.
IFS=. read -r major minor _ <<<"$version"
objdump -T "$lib" | awk '/\*UND\*|\*ABS\*/ { next } /^[0-9a-f]+ / { print $(NF-1), $NF }' | sort -k2 >"$tmp/nodes"
while read -r node sym; do
    if [[ $node =~ ^SHMR_([0-9]+)\.([0-9]+)$ ]]; then
        n_major=${BASH_REMATCH[1]} n_minor=${BASH_REMATCH[2]}
        if ((n_major > major || (n_major == major && n_minor > minor))); then
            bad "$sym is under $node, newer than the release $version"
        fi
    else
        bad "$sym has no SHMR_x.y version node (objdump -T says '$node')"
    fi
done <"$tmp/nodes"
[ "$(wc -l <"$tmp/nodes")" -eq "$(wc -l <"$tmp/exported")" ] ||
    bad "objdump -T lists $(wc -l <"$tmp/nodes") exports, nm -D $(wc -l <"$tmp/exported")"

# The daemons link the internal code statically: none needs libshmr.
for b in shmr-control shmr-dataplane shmrctl; do
    exe=$(find "$tmp/root" -type f -name "$b" -print -quit)
    [ -n "$exe" ] || { bad "$b was not installed"; continue; }
    ! readelf -d "$exe" | grep -q 'NEEDED.*libshmr' ||
        bad "$b links libshmr.so (the internal code must be linked statically)"
done

n=$(wc -l <"$tmp/declared")
if [ "$fail" -ne 0 ]; then
    echo "exported: $(tr '\n' ' ' <"$tmp/exported")"
    echo "declared: $(tr '\n' ' ' <"$tmp/declared")"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "libshmr $version exports exactly the $n functions of ${#headers[@]} installed headers"
echo "1 passed, 0 failed"
