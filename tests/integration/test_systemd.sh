#!/bin/sh
# systemd-analyze verify on the installed shmr-control unit, with its
# ExecStart pointed at this build's binary (the installed one may not
# exist yet).  Exit 77 (skipped) where systemd-analyze does not exist.
# Usage: test_systemd.sh UNIT SHMR_CONTROL
set -eu
unit=$1
control=$2
command -v systemd-analyze >/dev/null 2>&1 || exit 77
dir=$(mktemp -d /tmp/shmr-unit-XXXXXX)
trap 'rm -rf "$dir"' EXIT
sed "s|^ExecStart=[^ ]*|ExecStart=$control|" "$unit" > "$dir/shmr-control.service"
grep -q '^KillMode=process$' "$dir/shmr-control.service"
grep -q '^Restart=on-failure$' "$dir/shmr-control.service"
if ! out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify \
		"$dir/shmr-control.service" 2>&1); then
	echo "$out"
	exit 1
fi
# Warnings about the host's own units are not ours.
if echo "$out" | grep 'shmr-control.service' | grep -v -i 'documentation'; then
	exit 1
fi
exit 0
