#!/bin/sh
# The installed systemd files, as `meson install` puts them (into a
# DESTDIR here):
#   - shmr-control.service and the shmr-control@.service template (an
#     instance of it, shmr-control@app.service) pass `systemd-analyze
#     verify`, with ExecStart= pointed at the installed binary under the
#     DESTDIR (the real path does not exist before a real install);
#   - they are Type=notify units whose restart keeps the domain
#     (KillMode=process, Restart=on-failure, the run directory kept), with
#     the limits DPDK needs, the template running NAME.conf;
#   - the sysusers.d file creates the `shmr` group (systemd-sysusers
#     --dry-run on an empty root);
#   - the configuration is installed as $sysconfdir/shmr/shmr.conf, the
#     path shmr-control reads without -c and the unit names.
# The units' man: links are checked too once the man pages are installed
# (man pages are another part's); until then --man=no.
# Usage: test_systemd.sh BUILD_DIR
set -eu
build=$1
for tool in systemd-analyze systemd-sysusers; do
	command -v "$tool" >/dev/null 2>&1 || { echo "no $tool"; exit 1; }
done
tmp=$(mktemp -d /tmp/shmr-unit-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

meson install -C "$build" --destdir "$tmp/root" --no-rebuild >/dev/null
unit=$(find "$tmp/root" -name shmr-control.service -print -quit)
tmpl=$(find "$tmp/root" -name 'shmr-control@.service' -print -quit)
users=$(find "$tmp/root" -path '*/sysusers.d/shmr.conf' -print -quit)
[ -n "$unit" ] || fail "shmr-control.service was not installed"
[ -n "$tmpl" ] || fail "shmr-control@.service was not installed"
[ -n "$users" ] || fail "sysusers.d/shmr.conf was not installed"
case $(dirname "$unit") in */lib/systemd/system) ;; *) fail "unit in $unit";; esac

# The configuration is installed where shmr-control looks without -c
# (its --help names the compiled-in path), and where the unit points.
conf=$(find "$tmp/root" -path '*/shmr/shmr.conf' ! -path '*/sysusers.d/*' -print -quit)
[ -n "$conf" ] || fail "no shmr/shmr.conf installed"
conf_path=${conf#"$tmp/root"}
control=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
"$tmp/root$control" --help | grep -qF " $conf_path," ||
	fail "shmr-control's default configuration is not $conf_path"
grep -q "^ExecStart=.* -c $conf_path " "$unit" || fail "the unit does not run $conf_path"
"$tmp/root$control" --check -c "$conf" >/dev/null || fail "the installed $conf_path is refused"

mkdir "$tmp/units"
for u in "$unit" "$tmpl"; do
	exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$u")
	[ -x "$tmp/root$exe" ] || fail "$(basename "$u"): ExecStart $exe is not what was installed"
	sed "s|^ExecStart=$exe|ExecStart=$tmp/root$exe|" "$u" > "$tmp/units/$(basename "$u")"
done
ln -s shmr-control@.service "$tmp/units/shmr-control@app.service"

for u in "$tmp/units/shmr-control.service" "$tmp/units/shmr-control@.service"; do
	for line in Type=notify NotifyAccess=main KillMode=process \
		Restart=on-failure RuntimeDirectory=shmr \
		RuntimeDirectoryPreserve=yes LimitMEMLOCK=infinity; do
		grep -qx "$line" "$u" || fail "$(basename "$u"): no $line"
	done
done
grep -q '^ExecStart=.* -c [^ ]*/shmr/%i\.conf --run-dir /run/shmr$' \
	"$tmp/units/shmr-control@.service" || fail "the template does not run %i.conf"
grep -q '^ExecStart=.* -c [^ ]*/shmr/shmr\.conf --run-dir /run/shmr$' \
	"$tmp/units/shmr-control.service" || fail "the unit does not run shmr.conf"

man=no
if [ -n "$(find "$tmp/root" -name 'shmr-control.8*' -print -quit)" ]; then
	man=yes
	MANPATH=$(dirname "$(dirname "$(find "$tmp/root" -name 'shmr-control.8*' -print -quit)")")
	export MANPATH
fi
for u in shmr-control.service shmr-control@app.service; do
	if ! out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify \
			--man=$man "$tmp/units/$u" 2>&1); then
		echo "$out"
		fail "systemd-analyze verify $u"
	fi
	# Any word about our units is a defect (parse warnings keep the
	# exit status 0); the host's own units are not ours.
	if echo "$out" | grep 'shmr-control'; then
		fail "systemd-analyze verify $u warned"
	fi
done

mkdir -p "$tmp/sysroot/etc"
out=$(systemd-sysusers --dry-run --root="$tmp/sysroot" "$users" 2>&1) ||
	fail "systemd-sysusers: $out"
echo "$out" | grep -q "Creating group 'shmr'" || fail "no shmr group: $out"
echo "ok: units verified (man=$man), shmr group"
