#!/usr/bin/env bash
# The docs test can fail: run on selftest/ (one page of broken blocks, and
# three good ones), it must fail, name each broken block by its page and
# line, list the skip with its reason, and pass the good blocks.
#
# usage: test_docs_selftest.sh TEST_DOCS SELFTEST_DIR BUILD_DIR SHMR_CONTROL
set -uo pipefail
test_docs=$1 fixture=$2 build=$3 control=$4
out=$(bash "$test_docs" "$fixture" "$build" "$control" 2>&1)
rc=$?
echo "$out"
bad=0
if [ "$rc" -eq 0 ]; then
    echo "SELFTEST: the docs test passed a page of broken blocks"
    bad=1
fi
while IFS= read -r want; do
    grep -q -x -F -- "$want" <<<"$out" || { echo "SELFTEST: missing line: $want"; bad=1; }
done <<'WANT'
FAIL docs/broken.md:13: a fence without a tag: ```sh (run), conf, c, or text (not run)
FAIL docs/broken.md:17: exit status 1
    | docs-test: docs/broken.md:19: exit status 1
FAIL docs/broken.md:26: output not seen: call answered "payments:hello"
FAIL docs/broken.md:40: a skip needs its reason: <!-- docs-test: skip (WHY) -->
FAIL docs/broken.md:49: the marker "skip (a marker away from its block)" is not right before a block
skipped docs/broken.md:35: (the reason is printed)
3 passed, 6 failed, 1 skipped
WANT
grep -q '^FAIL docs/broken.md:29: shmr-control: .*behaviour' <<<"$out" ||
    { echo "SELFTEST: the bad configuration at line 29 was not named"; bad=1; }
if grep -q 'not reached' <<<"$out"; then
    echo "SELFTEST: a block ran on after a failing command"; bad=1
fi
exit "$bad"
