#!/usr/bin/env bash
# The docs work as written: every fenced block of README.md and docs/**.md
# is run, checked or compiled, as a reader would use it.
#
# usage: test_docs.sh SOURCE_DIR BUILD_DIR SHMR_CONTROL
#
# The rules, by the fence's tag (an opening fence without one of these
# tags fails the test, so that no command escapes it):
#
#   ```sh    commands, run by bash (-e -o pipefail: every command must
#            succeed; a command shown failing says so, e.g. `|| echo "exit
#            status $?"`).  Each block runs alone, in a fresh directory
#            that looks like the source checkout after a build (the
#            source's top-level entries and build/ as symbolic links to
#            this source and build), with this build's binaries on PATH,
#            libshmr installed (meson install --destdir, DESTDIR exported)
#            and found by pkg-config and the loader, the installed
#            shmr.conf as the configuration read without -c
#            ($SHMR_CONFIG), and a private run directory ($SHMR_RUN_DIR).  A line "#   TEXT" (a hash and
#            three spaces) is output the block must print: each TEXT must
#            appear, literally, in the block's output (stdout and stderr),
#            in that order.  Other comments are prose.  A failing command
#            or a missing output fails the test naming the page and line.
#   ```conf  a configuration: `shmr-control --check` must accept it.
#   ```c     a C file: compiled with -Wall -Werror against the installed
#            libshmr through pkg-config, as the worker guide says (without
#            main(): a shared object, as the appliance loads one).
#   ```text  output, diagrams, synopses: not run.
#   ```json  data: not run.
#
# A marker on the nearest non-blank line before a fence changes that:
#
#   <!-- docs-test: skip (WHY) -->   not run; counted and listed with WHY
#                                    (systemd, package installs, benchmarks)
#   <!-- docs-test: file NAME -->    the block is also written to NAME in
#                                    the directory of every ```sh block of
#                                    that page
#   <!-- docs-test: shmr-control [ARG...] -->
#                                    a ```sh block runs against a domain:
#                                    the test starts `shmr-control ARG...`
#                                    in the block's directory first (the
#                                    page says so in words), waits until it
#                                    is ready, and afterwards stops it with
#                                    SIGTERM: it must exit 0
#   <!-- docs-test: foreground -->   a ```sh block whose last command runs
#                                    shmr-control in the foreground: once
#                                    the domain answers `shmrctl status`
#                                    the test runs `shmrctl stop`, and the
#                                    block must then exit 0
#
# Background processes a block leaves behind are stopped after it (each
# block runs in a session of its own: SIGTERM, then SIGKILL).  Liveness bounds only: a block gets
# $DOCS_BLOCK_TIMEOUT seconds (120), a domain 60 to start and stop.
# DOCS_ONLY=TEXT runs only the pages whose path contains TEXT (when
# writing a page: DOCS_ONLY=use-cases meson test -C build docs).
set -uo pipefail
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd) control=$3
shmrctl=$build/control/shmrctl
block_timeout=${DOCS_BLOCK_TIMEOUT:-120}
tmp=$(mktemp -d /tmp/shmr-docs-XXXXXX)
# What a block leaves running (its session: workers it started in the
# background, a shmr-control of its own) gets SIGTERM, so that a
# shmr-control stops its domain's processes (they are not in its session),
# then SIGKILL after 10 s.
end_session() { # SESSION_FILE
    local sid i
    [ -e "$1" ] || return 0
    sid=$(cat "$1")
    rm -f "$1"
    kill -TERM -- "-$sid" 2>/dev/null || return 0
    for ((i = 0; i < 100; i++)); do
        kill -0 -- "-$sid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL -- "-$sid" 2>/dev/null
}
cleanup() {
    local p
    for p in "$tmp"/*/session; do end_session "$p"; done
    for p in "$tmp"/*/control.pid; do
        [ -e "$p" ] && stop_domain "$(dirname "$p")"
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
pass=0 fail=0 skipped=0
skips=()

failed() { # WHERE WHAT [LOG]
    echo "FAIL $1: $2"
    if [ -n "${3:-}" ] && [ -s "$3" ]; then sed 's/^/    | /' "$3" | tail -n 40; fi
    fail=$((fail + 1))
}

# The installed tree, as a reader has it after `meson install`.
export DESTDIR=$tmp/root
if ! meson install -C "$build" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
    failed "meson install" "the build does not install" "$tmp/install.log"
    exit 1
fi
pc=$(find "$DESTDIR" -name shmr.pc -print -quit)
[ -n "$pc" ] || { failed "meson install" "no shmr.pc installed"; exit 1; }
# pkg-config answers with the paths under DESTDIR (a copy of shmr.pc with
# its prefix moved there: PKG_CONFIG_SYSROOT_DIR would not move what
# --variable answers while DESTDIR is set).
mkdir -p "$tmp/pkgconfig"
sed "s|^prefix=|prefix=$DESTDIR|" "$pc" >"$tmp/pkgconfig/shmr.pc"
export PKG_CONFIG_PATH=$tmp/pkgconfig
export LD_LIBRARY_PATH=$(pkg-config --variable=libdir shmr)
[ -e "$LD_LIBRARY_PATH/libshmr.so" ] || { failed "meson install" "no libshmr.so in $LD_LIBRARY_PATH"; exit 1; }
export PATH=$build/control:$build/examples:$build/perf:$build/dataplane:$PATH
unset SHMR_DOMAIN SHMR_SOCKET SHMR_CONFIG
# shmr-control and shmrctl without -c read the installed configuration
# ($sysconfdir/shmr/shmr.conf), here the one of the DESTDIR tree, never
# this machine's.
conf=$(find "$DESTDIR" -path '*/etc/shmr/shmr.conf' -print -quit)
export SHMR_CONFIG=${conf:-$tmp/no-shmr.conf}

# Split every page into blocks: $tmp/blocks/N.TAG, and one line of
# "N<TAB>PAGE<TAB>LINE<TAB>TAG<TAB>MARKER" each in $tmp/blocks/index.
mkdir -p "$tmp/blocks"
for md in "$src"/README.md "$src"/docs/*.md "$src"/docs/*/*.md; do
    [ -e "$md" ] || continue
    page=${md#"$src"/}
    case $page in *${DOCS_ONLY:-}*) ;; *) continue;; esac
    awk -v dir="$tmp/blocks" -v page="$page" -v n="$(cat "$tmp/blocks/index" 2>/dev/null | wc -l)" '
        inb && /^```[ \t]*$/ { inb = 0; close(f); next }
        inb { print > f; next }
        /^```/ {
            tag = substr($0, 4); sub(/[ \t]+$/, "", tag)
            n++; f = dir "/" n "." (tag == "" ? "none" : tag); inb = 1
            printf "" > f
            printf "%d\t%s\t%d\t%s\t%s\n", n, page, NR, tag, marker >> (dir "/index")
            marker = ""; next
        }
        /^[ \t]*$/ { next }
        /^<!-- docs-test: .* -->$/ {
            marker = $0; sub(/^<!-- docs-test: /, "", marker); sub(/ -->$/, "", marker)
            mline = NR; next
        }
        marker != "" {
            printf "0\t%s\t%d\tstray\t%s\n", page, mline, marker >> (dir "/index")
            marker = ""
        }
        END { if (inb) printf "%d\t%s\t%d\tunclosed\t\n", n, page, NR >> (dir "/index") }
    ' "$md"
done

# Files the pages name (<!-- docs-test: file NAME -->), by page.
declare -A page_files
while IFS=$'\t' read -r n page line tag marker; do
    [ "$tag" = stray ] && continue
    case $marker in
    "file "*)
        name=${marker#file }
        case $name in */*|.*|"") failed "$page:$line" "file marker: a plain name, not \"$name\""; continue;; esac
        page_files[$page]+="$n.$tag:$name "
        ;;
    esac
done <"$tmp/blocks/index"

# The domain a block runs against: started here, ready through --ready-fd.
start_domain() { # DIR ARGS...
    local dir=$1; shift
    mkfifo "$dir/ready"
    (cd "$dir" && exec setsid "$control" "$@" --ready-fd 4 4>"$dir/ready" \
        >"$dir/control.log" 2>&1 </dev/null) &
    echo $! >"$dir/control.pid"
    local r
    r=$(timeout 60 head -c1 "$dir/ready" 2>/dev/null)
    [ "$r" = R ]
}
stop_domain() { # DIR: SIGTERM, then it must exit 0
    local dir=$1 pid rc i
    pid=$(cat "$dir/control.pid")
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 600; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid"; rc=$?
    rm -f "$dir/control.pid"
    return "$rc"
}
# The socket of the one domain in DIR/run that answers `status`.
answering_socket() { # DIR
    local s
    for s in "$1"/run/*.sock; do
        [ -S "$s" ] && "$shmrctl" -s "$s" --wait 0 status >/dev/null 2>&1 &&
            { echo "$s"; return 0; }
    done
    return 1
}

run_sh() { # N PAGE LINE MARKER
    local n=$1 page=$2 line=$3 marker=$4 where="$2:$3"
    local dir=$tmp/sh-$n entry f name rc sock
    mkdir -p "$dir/run"
    for entry in "$src"/* ; do
        case ${entry##*/} in build|build-*) continue;; esac
        ln -s "$entry" "$dir/${entry##*/}"
    done
    ln -s "$build" "$dir/build"
    for f in ${page_files[$page]:-}; do
        cp "$tmp/blocks/${f%%:*}" "$dir/${f#*:}"
    done
    # Line numbers of the page: the block's first line is LINE + 1.
    {
        echo "set -eE -o pipefail"
        echo "echo \$\$ >'$dir/session'"
        echo "trap 'echo \"docs-test: $page:\$((LINENO - 3 + $line)): exit status \$?\" >&2' ERR"
        cat "$tmp/blocks/$n.sh"
    } >"$dir/block.sh"
    export SHMR_RUN_DIR=$dir/run
    case $marker in
    "shmr-control"|"shmr-control "*)
        # shellcheck disable=SC2086  # the marker's words are the arguments
        if ! start_domain "$dir" ${marker#shmr-control}; then
            failed "$where" "the domain (${marker}) did not start" "$dir/control.log"
            return
        fi
        ;;
    esac
    (cd "$dir" && exec timeout -k 5 "$block_timeout" setsid bash "$dir/block.sh" \
        >"$dir/out" 2>&1 </dev/null) &
    local bpid=$!
    if [ "$marker" = foreground ]; then
        local i
        for ((i = 0; i < 600; i++)); do
            sock=$(answering_socket "$dir") && break
            kill -0 "$bpid" 2>/dev/null || break
            sleep 0.1
        done
        if [ -z "${sock:-}" ]; then
            end_session "$dir/session"
            wait "$bpid"
            failed "$where" "no domain came up in the foreground" "$dir/out"
            return
        fi
        "$shmrctl" -s "$sock" stop >>"$dir/stop.log" 2>&1 ||
            failed "$where" "shmrctl stop failed" "$dir/stop.log"
    fi
    wait "$bpid"; rc=$?
    end_session "$dir/session"
    if [ -e "$dir/control.pid" ] && ! stop_domain "$dir"; then
        failed "$where" "the domain (${marker}) did not stop cleanly" "$dir/control.log"
        return
    fi
    unset SHMR_RUN_DIR
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        failed "$where" "still running after ${block_timeout}s" "$dir/out"
        return
    elif [ "$rc" -ne 0 ]; then
        failed "$where" "exit status $rc" "$dir/out"
        return
    fi
    # The output the page shows, in order.
    local at=0 want wline k
    while IFS=$'\t' read -r wline want; do
        k=$(tail -n "+$((at + 1))" "$dir/out" | grep -n -F -m1 -- "$want" | cut -d: -f1)
        if [ -z "$k" ]; then
            failed "$page:$((line + wline))" "output not seen: $want" "$dir/out"
            return
        fi
        at=$((at + k))
    done < <(awk '/^#   / { printf "%d\t%s\n", NR, substr($0, 5) }' "$tmp/blocks/$n.sh")
    pass=$((pass + 1))
}

while IFS=$'\t' read -r n page line tag marker; do
    where="$page:$line"
    if [ "$tag" = stray ]; then
        failed "$where" "the marker \"$marker\" is not right before a block"; continue
    fi
    case $marker in
    "skip ("*")")
        skipped=$((skipped + 1)); skips+=("$where: ${marker#skip }"); continue;;
    skip*)
        failed "$where" "a skip needs its reason: <!-- docs-test: skip (WHY) -->"; continue;;
    ""|"file "*|foreground|shmr-control|"shmr-control "*) ;;
    *)
        failed "$where" "unknown marker \"$marker\""; continue;;
    esac
    case $marker in foreground|shmr-control*)
        [ "$tag" = sh ] || { failed "$where" "\"$marker\" is for \`\`\`sh blocks"; continue; };;
    esac
    f=$tmp/blocks/$n.$tag
    case $tag in
    sh)
        run_sh "$n" "$page" "$line" "$marker";;
    conf)
        if out=$("$control" --check -c "$f" 2>&1); then
            pass=$((pass + 1))
        else
            failed "$where" "$out"
        fi;;
    c)
        # A block without main() is a shared object the appliance loads (a
        # routing behaviour or admin handlers): built as the guide says.
        cp "$f" "$f.c"
        kind=()
        grep -q 'main(' "$f" || kind=(-shared -fPIC)
        if out=$(cc -std=gnu11 -Wall -Werror "${kind[@]}" "$f.c" $(pkg-config --cflags --libs shmr) -o "$f.out" 2>&1); then
            pass=$((pass + 1))
        else
            failed "$where" "$out"
        fi;;
    text|json) ;;
    "")
        failed "$where" "a fence without a tag: \`\`\`sh (run), conf, c, or text (not run)";;
    unclosed)
        failed "$where" "a block is not closed";;
    *)
        failed "$where" "fence tag \"$tag\" is none of sh, conf, c, text, json";;
    esac
done <"$tmp/blocks/index"

for s in "${skips[@]}"; do echo "skipped $s"; done
[ $((pass + fail)) -gt 0 ] || { echo "no examples found"; exit 1; }
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
