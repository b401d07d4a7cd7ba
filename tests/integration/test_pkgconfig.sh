#!/usr/bin/env bash
# A third-party worker and client build against the *installed* library with
# nothing but `cc file.c $(pkg-config --cflags --libs shmr)`, and work
# against a running appliance: a C worker and client (examples/), a C++
# worker (installed_worker.cc) and a C program (installed_probe.c) that
# both check shmr_version() against their header and attach, and a worker
# linked statically (`cc -static ... $(pkg-config --static ...)`: shmr.pc's
# Libs.private and libshmr.a).  Nothing points into the source or build
# tree: the flags pkg-config gives name only the install.
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

# shmr.pc names the install's prefix, never the source or build tree
# (read without the sysroot, which pkg-config puts before every path).
flags=$(env -u PKG_CONFIG_SYSROOT_DIR pkg-config --cflags --libs --static shmr)
for tree in "$(realpath "$src")" "$(realpath "$build")"; do
    [[ " $flags " != *"$tree"* ]] || { echo "shmr.pc points into $tree: $flags"; exit 1; }
done

it=$src/tests/integration
cc -Wall -Werror "$src/examples/echo_worker.c" $(pkg-config --cflags --libs shmr) -o "$tmp/my-worker"
cc -Wall -Werror "$src/examples/client.c" $(pkg-config --cflags --libs shmr) -o "$tmp/my-client"
cc -std=c11 -Wall -Wextra -Werror "$it/installed_probe.c" $(pkg-config --cflags --libs shmr) -o "$tmp/my-probe"
c++ -std=c++11 -Wall -Wextra -Werror "$it/installed_worker.cc" $(pkg-config --cflags --libs shmr) -o "$tmp/my-cxx-worker"
# DPDK's static EAL warns that getpwuid() and dlopen() need glibc's
# shared libraries at run time: the linker's warnings, not ours.
cc -static -Wall -Werror "$src/examples/echo_worker.c" $(pkg-config --static --cflags --libs shmr) \
    -o "$tmp/my-static-worker" 2>"$tmp/static.log" || { cat "$tmp/static.log"; exit 1; }
export LD_LIBRARY_PATH=$libdir
for exe in my-worker my-client my-probe my-cxx-worker; do
    so=$(ldd "$tmp/$exe" | awk '$1 ~ /^libshmr\.so/ { print $3 }')
    [[ $so == "$tmp/root"/* ]] || { echo "$exe runs with libshmr from '$so', not the install"; exit 1; }
done
! readelf -d "$tmp/my-static-worker" | grep -q NEEDED || { echo "my-static-worker is not static"; exit 1; }

cat > "$tmp/app.conf" <<CONF
domain = "pkg$$";
routers = ( { name = "events"; behaviour = "type";
  types = ( { type = 1; route = "payments"; }, { type = 2; route = "cxx"; },
            { type = 3; route = "static"; } );
  routes = ( { name = "payments"; program = "$tmp/my-worker"; },
             { name = "cxx"; program = "$tmp/my-cxx-worker"; },
             { name = "static"; program = "$tmp/my-static-worker"; } ); } );
CONF
mkfifo "$tmp/ready"
"$control" -c "$tmp/app.conf" --run-dir "$tmp" --ready-fd 4 4>"$tmp/ready" &
ctl_pid=$!
[ "$(head -c1 "$tmp/ready")" = R ] || { echo "appliance did not start"; exit 1; }
version=$(pkg-config --modversion shmr)
check() { # TYPE ANSWER
    local out
    out=$(SHMR_RUN_DIR=$tmp "$tmp/my-client" --domain "pkg$$" --router events --count 100 --type "$1")
    echo "$out"
    [ "$out" = "sent 100 messages of type $1; call answered \"$2\"" ]
}
check 1 "payments:hello"
check 2 "cxx@$version:hello"
check 3 "static:hello"
out=$(SHMR_RUN_DIR=$tmp "$tmp/my-probe" "pkg$$")
echo "$out"
[ "$(head -n1 <<<"$out")" = "libshmr $version, built against $version" ]
[[ $(tail -n1 <<<"$out") == "attached to pkg$$: "*"-byte payloads" ]]
echo "1 passed, 0 failed"
