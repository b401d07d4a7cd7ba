#!/usr/bin/env bash
# ./shmr.sh demo --chaos as a newcomer runs it, piped (CI has no
# terminal): shmrctl top's table once a second with every route, a worker
# killed with kill -9 every 3 s and restarted, and the load's own tally
# at the end: every message sent was received, lost 0; exit status 0.
#
# usage: test_demo.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$(cd "$2" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/shmr-demo-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

set +e
SHMR_BUILD=$build SHMR_RUN_DIR=$tmp/run timeout 120 \
    "$src/shmr.sh" demo --duration 10 --chaos >"$tmp/out" 2>&1
rc=$?
set -e
cat "$tmp/out"
[ "$rc" = 0 ] || fail "demo --chaos: exit status $rc"
grep -q '^ROUTER/ROUTE ' "$tmp/out" || fail "no shmrctl top table"
for r in events '  payments' '  shipments' '  reports'; do
    grep -q "^$r " "$tmp/out" || fail "top's table lacks '$r'"
done
grep -q '^LCORE ' "$tmp/out" || fail "top's table lacks the lcores"
grep -q 'chaos: kill -9 ' "$tmp/out" || fail "no worker was killed"
# The control plane restarted what was killed: RESTARTS above 0.
awk '$1 == "events" && $5 > 0 { found = 1 } END { exit !found }' "$tmp/out" ||
    fail "no restart counted"
line=$(grep 'shmr-perf load: tally: ' "$tmp/out") || fail "no tally"
read -r sent received lost < <(echo "$line" |
    sed 's/.*sent \([0-9]*\) received \([0-9]*\) redelivered [0-9]* lost \([0-9]*\)$/\1 \2 \3/')
[ "$sent" -gt 0 ] && [ "$received" = "$sent" ] && [ "$lost" = 0 ] ||
    fail "tally: $line"
echo "ok: demo --chaos: $line"
