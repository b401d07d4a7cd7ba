#!/usr/bin/env bash
# The docs' examples are real: every ```conf block in docs/*.md passes
# `shmr-control --check`, and every ```c block compiles and links against
# libshmr the way the worker guide says (pkg-config, here the uninstalled
# library of this build).
#
# usage: test_docs.sh SOURCE_DIR BUILD_DIR SHMR_CONTROL
set -euo pipefail
src=$1 build=$2 control=$3
tmp=$(mktemp -d /tmp/shmr-docs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export PKG_CONFIG_PATH=$build/meson-uninstalled
pass=0 fail=0

for md in "$src"/docs/*.md "$src"/README.md; do
    base=$(basename "$md" .md)
    awk -v dir="$tmp" -v base="$base" '
        /^```(conf|c)$/ { lang = substr($0, 4); n++; f = dir "/" base "-" n "." lang; inb = 1; next }
        /^```/ && inb   { inb = 0; close(f); next }
        inb             { print > f }
    ' "$md"
done

for f in "$tmp"/*.conf; do
    [ -e "$f" ] || continue
    if out=$("$control" --check -c "$f" 2>&1); then
        pass=$((pass + 1))
    else
        echo "FAIL $(basename "$f"): $out"; fail=$((fail + 1))
    fi
done
for f in "$tmp"/*.c; do
    [ -e "$f" ] || continue
    if out=$(cc -std=gnu11 -Wall -Werror "$f" $(pkg-config --cflags --libs shmr) -o "${f%.c}" 2>&1); then
        pass=$((pass + 1))
    else
        echo "FAIL $(basename "$f"): $out"; fail=$((fail + 1))
    fi
done
[ $((pass + fail)) -gt 0 ] || { echo "no examples found"; exit 1; }
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
