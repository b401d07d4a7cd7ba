#!/usr/bin/env bash
# shmrouter's front door: set up this machine, build, then run the demo or
# the test suite.  Debian 12, as root (it installs packages).
#
#   ./shmr.sh demo [--duration SEC] [--chaos]
#                                     appliance + demo load + shmrctl top;
#                                     --chaos: kill -9 a worker every 3 s
#                                     and tally the load (lost 0)
#   ./shmr.sh test                    the whole test suite
#   ./shmr.sh sanitize                the suite again under ASan and UBSan
#   ./shmr.sh tsan                    lane and RCU table threads under TSan
#   ./shmr.sh fuzz [SECONDS]          each libFuzzer target for SECONDS (30)
#
# Exit status: 0 success; 1 a step failed; 2 bad arguments.
set -euo pipefail
cd "$(dirname "$0")"
root=$PWD

packages=(meson ninja-build pkg-config gcc g++ libc6-dev libdpdk-dev
          liburcu-dev libhwloc-dev libcmocka-dev libconfig-dev procps
          libsystemd-dev systemd bash-completion scdoc groff-base
          libjson-c-dev gnuplot-nox dpdk dpdk-dev python3-prometheus-client
          libmicrohttpd-dev curl libncurses-dev tmux
          libiceoryx-binding-c-dev iceoryx)
# Only for `fuzz`: Debian's clang, and libFuzzer's runtime, which is only
# a Recommends of clang's: named, so an apt that skips Recommends has it.
fuzz_packages=(clang libclang-rt-14-dev)

say() { printf 'shmr: %s\n' "$*" >&2; }
usage() {
    echo "usage: $0 demo [--duration SEC] [--chaos] | test | sanitize | tsan | fuzz [SECONDS]" >&2
    exit 2
}

setup() {
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
            missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing ${missing[*]}"
        if [ "$(id -u)" -ne 0 ]; then
            say "need root to install packages (or install them yourself)"
            exit 1
        fi
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    # Hugepages back the domain when the kernel allows; 4 KiB pages otherwise.
    if [ -w /proc/sys/vm/nr_hugepages ] && [ "$(cat /proc/sys/vm/nr_hugepages)" = 0 ]; then
        echo 64 > /proc/sys/vm/nr_hugepages 2>/dev/null || true
    fi
    local dir=$1; shift
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$@" >/dev/null
    elif [ $# -gt 0 ]; then
        meson configure "$dir" "$@" >/dev/null
    fi
    local log="$dir/build.log"
    if ! ninja -C "$dir" >"$log" 2>&1; then
        grep -E 'error|FAILED' -A4 "$log" | head -40 >&2
        say "build in $dir failed; the whole log is $log"
        exit 1
    fi
}

demo() {
    local duration=0 chaos=0
    while [ $# -gt 0 ]; do
        case $1 in
            --duration) [ $# -ge 2 ] || usage; duration=$2; shift 2 ;;
            --chaos) chaos=1; shift ;;
            *) usage ;;
        esac
    done
    [[ $duration =~ ^[0-9]+$ ]] || usage
    # SHMR_BUILD: another build folder than build/ (the demo's test).
    local b=${SHMR_BUILD:-build}
    setup "$b"
    export PATH="$root/$b/examples:$root/$b/perf:$PATH"
    [[ $b == /* ]] && export PATH="$b/examples:$b/perf:$PATH"
    local run_dir=${SHMR_RUN_DIR:-/run/shmr}
    [ -n "${SHMR_RUN_DIR:-}" ] || [ -w /run ] || run_dir=${XDG_RUNTIME_DIR:-/tmp}/shmr
    export SHMR_RUN_DIR=$run_dir
    local ctl=("$b/control/shmrctl" -d shmr-demo)
    local ready; ready=$(mktemp -u /tmp/shmr-ready.XXXXXX); mkfifo "$ready"
    "$b/control/shmr-control" -c config/default.conf --run-dir "$run_dir" --ready-fd 4 4>"$ready" &
    local control=$!
    local load="" top="" killer="" rc=0
    stop() {
        trap - INT TERM
        [ -n "$killer" ] && kill -TERM "$killer" 2>/dev/null && wait "$killer" 2>/dev/null || true
        [ -n "$top" ] && kill -TERM "$top" 2>/dev/null && wait "$top" 2>/dev/null || true
        # The load prints its figures (and --chaos's tally) as it ends.
        if [ -n "$load" ]; then
            kill -TERM "$load" 2>/dev/null || true
            wait "$load" 2>/dev/null || rc=1
        fi
        kill -TERM "$control" 2>/dev/null && wait "$control" 2>/dev/null || true
        rm -f "$ready"
    }
    trap 'stop; exit 0' INT TERM
    if [ "$(head -c1 "$ready")" != R ]; then
        say "shmr-control did not start"; stop; exit 1
    fi
    say "appliance up: domain shmr-demo, router events (routes payments, shipments, reports)"
    local dur=() tally=()
    [ "$duration" -gt 0 ] && dur=(--duration "$duration")
    local routes=(payments shipments reports)
    if [ "$chaos" = 1 ]; then
        # Workers that acknowledge each send, so the load can tally what
        # arrived (shmr-echo-worker --ack).
        local r
        for r in "${routes[@]}"; do
            "${ctl[@]}" replace events "$r" shmr-echo-worker --tag "$r" --ack >/dev/null
        done
        # Each new worker answers a call once it is attached: then the
        # load starts (sends before that only pile up in the inboxes).
        local t
        for t in 1 2 3; do
            until shmr-example-client --domain shmr-demo --type "$t" --count 0 >/dev/null 2>&1; do
                sleep 0.1
            done
        done
        tally=(--tally --rate 20000)
        say "chaos: a worker is killed with kill -9 every 3 s; the load tallies what its workers acknowledged"
    fi
    "$b/perf/shmr-perf" load --domain shmr-demo --router events --types 1,2,3 "${tally[@]}" "${dur[@]}" &
    load=$!
    if [ "$chaos" = 1 ]; then
        (
            trap 'exit 0' TERM
            i=0
            while sleep 3; do
                r=${routes[i % 3]}; i=$((i + 1))
                pid=$("${ctl[@]}" route events "$r" | awk 'NR == 2 { print $3 }' || true)
                [ "${pid:-0}" -gt 0 ] || continue
                kill -9 "$pid" 2>/dev/null || continue
                # On a terminal top owns the screen: the count is enough.
                [ -t 1 ] || say "chaos: kill -9 $r (pid $pid)"
            done
        ) &
        killer=$!
    fi
    # In the background and waited for, so SIGTERM to this script runs the
    # trap at once; its stdin the terminal's (a background job's is
    # /dev/null), so that q quits it.
    exec 3<&0
    "${ctl[@]}" top events --interval 1 "${dur[@]}" <&3 &
    top=$!
    wait "$top" || true
    top=""
    stop
    exit "$rc"
}

# meson test, then its tally as one plain line: "suite: N passed, M failed".
mtest() {
    local out rc
    out=$(mktemp)
    set +e
    meson test "$@" | tee "$out"
    rc=${PIPESTATUS[0]}
    set -e
    awk '/^Ok:/ {p += $2} /^Expected Fail:/ {p += $3}
         /^Fail:/ || /^Timeout:/ {f += $2} /^Unexpected Pass:/ {f += $3}
         END {printf "%s: %d passed, %d failed\n", "suite", p, f}' "$out"
    rm -f "$out"
    return "$rc"
}

run_tests() {
    [ $# -eq 0 ] || usage
    setup build -Dwerror=true
    mtest -C build --print-errorlogs --num-processes 1
}

# The stress suite included: the scribbler (tests/stress/test_scribble.c)
# runs the daemons under ASan against a worker that writes garbage into
# its lanes; that worker catches the faults of its own writes to the
# read-only part with a SIGSEGV handler, which ASan must let it install.
# Each test's timeout (a liveness bound) is 4 times its own here: under
# ASan, inspect_size (a thousand clients) took 338 s on 2026-12-05's
# 2-core host, against 26 to 31 s built plain.
run_sanitized() {
    [ $# -eq 0 ] || usage
    setup build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false
    ASAN_OPTIONS=detect_leaks=1:allow_user_segv_handler=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        mtest -C build-asan --print-errorlogs --num-processes 1 --timeout-multiplier 4 --no-suite perf-smoke --no-suite install
}

run_tsan() {
    [ $# -eq 0 ] || usage
    setup build-tsan -Dwerror=true -Dtsan=true -Db_sanitize=thread
    mtest -C build-tsan --print-errorlogs --num-processes 1
}

# Each libFuzzer target of tests/fuzz for SECONDS, from its seed corpus.
# New inputs go to a scratch copy of the corpus, not the tree; a crash
# leaves its input in a scratch folder, named here, to be copied into
# tests/fuzz/corpus/<target>/ (the suite's fuzz_replay_<target> replays
# it from then on).  Prints "suite: N passed, M failed" over the targets.
run_fuzz() {
    local seconds=30
    [ $# -le 1 ] || usage
    [ $# -eq 0 ] || seconds=$1
    [[ $seconds =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || usage
    packages+=("${fuzz_packages[@]}")
    CC=clang setup build-fuzz -Dwerror=true -Dfuzz=true \
        -Db_sanitize=address,undefined -Db_lundef=false
    local scratch; scratch=$(mktemp -d /tmp/shmr-fuzz.XXXXXX)
    local t passed=0 failed=0 rc
    for t in config request dlq classify; do
        mkdir -p "$scratch/$t/corpus" "$scratch/$t/crash"
        cp tests/fuzz/corpus/"$t"/* "$scratch/$t/corpus/"
        say "fuzz $t for ${seconds}s"
        set +e
        LSAN_OPTIONS=suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            build-fuzz/tests/fuzz/fuzz_"$t" "$scratch/$t/corpus" \
            -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
            -artifact_prefix="$scratch/$t/crash/" \
            >"$scratch/$t/log" 2>&1
        rc=$?
        set -e
        if [ "$rc" -eq 0 ]; then
            local runs
            runs=$(awk '/^stat::number_of_executed_units:/ {print $2}' "$scratch/$t/log")
            say "fuzz $t: $runs runs, no crash"
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            tail -40 "$scratch/$t/log" >&2
            local f
            for f in "$scratch/$t"/crash/*; do
                [ -e "$f" ] || continue
                say "fuzz $t: crash input $f"
                say "  copy it into tests/fuzz/corpus/$t/ once fixed (the suite replays it)"
            done
            say "fuzz $t failed (rc $rc); its log is $scratch/$t/log"
        fi
    done
    printf '%s: %d passed, %d failed\n' suite "$passed" "$failed"
    [ "$failed" -eq 0 ] && rm -rf "$scratch"
    [ "$failed" -eq 0 ]
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
    demo) demo "$@" ;;
    test) run_tests "$@" ;;
    sanitize) run_sanitized "$@" ;;
    tsan) run_tsan "$@" ;;
    fuzz) run_fuzz "$@" ;;
    *) usage ;;
esac
