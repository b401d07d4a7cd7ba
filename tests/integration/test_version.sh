#!/usr/bin/env bash
# Every installed program answers --version with one line "PROGRAM VERSION"
# (the version in meson.build), on stdout, exit 0, and lists --version in
# its --help (exit 0).  The programs are those `meson install` puts in a
# bin or sbin directory, run from there against the installed libshmr: a
# program added later without --version fails here.
#
# PROGRAM...: programs of the build that are not installed (the test
# worker), checked for --version only.
#
# usage: test_version.sh BUILD_DIR VERSION [PROGRAM...]
set -euo pipefail
build=$1 version=$2
shift 2
tmp=$(mktemp -d /tmp/shmr-version-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

meson install -C "$build" --destdir "$tmp/root" --no-rebuild >/dev/null
lib=$(find "$tmp/root" -name 'libshmr.so.*' -print -quit)
[ -n "$lib" ] || { echo "FAIL: libshmr was not installed"; exit 1; }
export LD_LIBRARY_PATH=$(dirname "$lib")
mapfile -t progs < <(find "$tmp/root" -type f -perm -u+x \
    \( -path '*/bin/*' -o -path '*/sbin/*' \) | sort)

fails=0 n=0 names=" "
for prog in "${progs[@]}"; do
    name=$(basename "$prog")
    names+="$name "
    n=$((n + 1))
    rc=0
    out=$(timeout 10 "$prog" --version 2>"$tmp/err") || rc=$?
    if [ "$rc" -ne 0 ] || [ "$out" != "$name $version" ] || [ -s "$tmp/err" ]; then
        echo "FAIL: $name --version: exit $rc, stdout '$out', stderr '$(head -c 200 "$tmp/err")'"
        fails=$((fails + 1))
        continue
    fi
    rc=0
    help=$(timeout 10 "$prog" --help 2>/dev/null) || rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q -- '--version' <<<"$help"; then
        echo "FAIL: $name --help: exit $rc, or --version not listed"
        fails=$((fails + 1))
        continue
    fi
    echo "ok: $out"
done
for prog in "$@"; do
    out=$(timeout 10 "$prog" --version) || { echo "FAIL: $prog --version: exit $?"; fails=$((fails + 1)); continue; }
    [ "$out" = "$(basename "$prog") $version" ] || { echo "FAIL: $prog --version: '$out'"; fails=$((fails + 1)); continue; }
    echo "ok: $out (not installed)"
done
# The daemons and tools the issue names must be among them.
for want in shmr-control shmr-dataplane shmrctl shmr-perf; do
    [[ $names == *" $want "* ]] || { echo "FAIL: $want was not installed"; fails=$((fails + 1)); }
done
echo "$n programs, $fails failed"
[ "$fails" -eq 0 ]
