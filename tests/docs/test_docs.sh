#!/usr/bin/env bash
# The docs' examples are real: every ```conf block in docs/*.md passes
# `shmr-control --check`, and every ```c block compiles and links against
# libshmr the way the worker guide says (pkg-config, here the uninstalled
# library of this build); a block without main() as a shared object.
#
# usage: test_docs.sh SOURCE_DIR BUILD_DIR SHMR_CONTROL
set -euo pipefail
src=$1 build=$2 control=$3
tmp=$(mktemp -d /tmp/shmr-docs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export PKG_CONFIG_PATH=$build/meson-uninstalled
pass=0 fail=0

for md in "$src"/docs/*.md "$src"/docs/*/*.md "$src"/README.md; do
    base=$(basename "$(dirname "$md")")-$(basename "$md" .md)
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
    # A block without main() is a shared object the appliance loads (a
    # routing behaviour or admin handlers): built as the guide says.
    kind=()
    grep -q 'main(' "$f" || kind=(-shared -fPIC)
    if out=$(cc -std=gnu11 -Wall -Werror "${kind[@]}" "$f" $(pkg-config --cflags --libs shmr) -o "${f%.c}" 2>&1); then
        pass=$((pass + 1))
    else
        echo "FAIL $(basename "$f"): $out"; fail=$((fail + 1))
    fi
done
[ $((pass + fail)) -gt 0 ] || { echo "no examples found"; exit 1; }
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
