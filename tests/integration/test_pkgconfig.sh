#!/usr/bin/env bash
# A third-party worker and client build against the *installed* library with
# nothing but `cc file.c $(pkg-config --cflags --libs shmr)`, and work
# against a running appliance.
#
# usage: test_pkgconfig.sh BUILD_DIR SOURCE_DIR SHMR_CONTROL
set -euo pipefail
build=$1 src=$2 control=$3
tmp=$(mktemp -d /tmp/shmr-pkg-XXXXXX)
ctl_pid=""
cleanup() {
    [ -n "$ctl_pid" ] && kill -TERM "$ctl_pid" 2>/dev/null && wait "$ctl_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

meson install -C "$build" --destdir "$tmp/root" --no-rebuild >/dev/null
pc=$(find "$tmp/root" -name shmr.pc -print -quit)
[ -n "$pc" ] || { echo "shmr.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$tmp/root
libdir=$(dirname "$(dirname "$pc")")
[ -f "$tmp/root/usr/local/include/shmr/shmr.h" ] || [ -n "$(find "$tmp/root" -path '*/include/shmr/shmr.h')" ]
# The installed headers must not need the appliance's private ones.
[ -z "$(find "$tmp/root" -name layout.h)" ] || { echo "private header installed"; exit 1; }

cc -Wall -Werror "$src/examples/echo_worker.c" $(pkg-config --cflags --libs shmr) -o "$tmp/my-worker"
cc -Wall -Werror "$src/examples/client.c" $(pkg-config --cflags --libs shmr) -o "$tmp/my-client"
export LD_LIBRARY_PATH=$libdir

cat > "$tmp/app.conf" <<CONF
domain = "pkg$$";
routers = ( { name = "events"; behaviour = "type";
  types = ( { type = 1; route = "payments"; } );
  routes = ( { name = "payments"; program = "$tmp/my-worker"; } ); } );
CONF
mkfifo "$tmp/ready"
"$control" -c "$tmp/app.conf" --run-dir "$tmp" --ready-fd 4 4>"$tmp/ready" &
ctl_pid=$!
[ "$(head -c1 "$tmp/ready")" = R ] || { echo "appliance did not start"; exit 1; }
out=$(SHMR_RUN_DIR=$tmp "$tmp/my-client" --domain "pkg$$" --router events --count 100 --type 1)
echo "$out"
[ "$out" = 'sent 100 messages of type 1; call answered "payments:hello"' ]
echo "1 passed, 0 failed"
