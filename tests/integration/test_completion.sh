#!/usr/bin/env bash
# shmrctl's bash completion as bash-completion runs it, from where
# `meson install` puts it: `shmrctl <TAB>` offers every verb that
# `shmrctl --help` lists; against a running domain, `routes <TAB>` its
# routers and `route ROUTER <TAB>` that router's routes (a name with ':'
# included);
# with no domain there, nothing, at once.
#
# usage: test_completion.sh BUILD_DIR SHMR_CONTROL SHMRCTL
set -euo pipefail
build=$1 control=$2 shmrctl=$3
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/shmr-compl-XXXXXX)
# The appliance, once started, is stopped (SIGTERM: it stops its own).
trap '[ -z "${ctl:-}" ] || { kill -TERM "$ctl"; wait "$ctl"; }; rm -rf "$tmp"' EXIT

bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || fail "bash-completion is not installed ($bc)"
meson install -C "$build" --destdir "$tmp/root" --no-rebuild >/dev/null
script=$(find "$tmp/root" -path '*/bash-completion/completions/shmrctl' -print -quit)
[ -n "$script" ] || fail "no completion installed under share/bash-completion/completions"

# The answers for the line "$*" (the cursor at its end), one per line.
complete_line() {
    bash -c '
        source "$1" >/dev/null 2>&1
        source "$2"
        line=$3
        read -ra COMP_WORDS <<< "$line"
        [[ $line == *" " ]] && COMP_WORDS+=("")
        COMP_WORDS[0]=$4
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="$4 ${line#* }" COMP_POINT=${#COMP_LINE}
        _shmrctl
        printf "%s\n" "${COMPREPLY[@]}"
    ' sh "$bc" "$script" "$*" "$shmrctl"
}

# Every verb shmrctl --help lists (its two-space indented lines).
verbs=$("$shmrctl" --help | grep -E '^  [a-z]' | awk '{ print $1 }' |
    tr '|' '\n' | sort -u)
[ "$(echo "$verbs" | wc -l)" -ge 15 ] || fail "usage line not understood: $verbs"
got=$(complete_line "shmrctl " | sort -u)
for v in $verbs; do
    echo "$got" | grep -qx "$v" || fail "shmrctl <TAB> lacks $v (got: $got)"
done
got=$(complete_line "shmrctl ro" | sort | tr '\n' ' ')
[ "$got" = "route routee routees routes " ] || fail "shmrctl ro<TAB>: '$got'"

# A running domain.
dom=compl$$
cat > "$tmp/app.conf" <<CONF
domain = "$dom";
routers = (
  { name = "events"; behaviour = "hash"; hash = [ "shard:0", "b" ];
    routes = ( { name = "shard:0"; program = "shmr-test-worker"; },
               { name = "b"; program = "shmr-test-worker"; } ); },
  { name = "orders"; behaviour = "hash"; hash = [ "o" ];
    routes = ( { name = "o"; program = "shmr-test-worker"; } ); } );
CONF
mkfifo "$tmp/ready"
"$control" -c "$tmp/app.conf" --run-dir "$tmp" --ready-fd 4 --quiet 4>"$tmp/ready" &
ctl=$!
[ "$(head -c1 "$tmp/ready")" = R ] || fail "appliance did not start"

got=$(complete_line "shmrctl -s $tmp/$dom.sock routes " | sort | tr '\n' ' ')
[ "$got" = "events orders " ] || fail "routes <TAB>: '$got'"
got=$(SHMR_RUN_DIR=$tmp complete_line "shmrctl -d $dom inspect " | sort | tr '\n' ' ')
[ "$got" = "events orders " ] || fail "-d inspect <TAB>: '$got'"
got=$(complete_line "shmrctl -s $tmp/$dom.sock route events " | sort | tr '\n' ' ')
[ "$got" = "b shard:0 " ] || fail "route events <TAB>: '$got'"
# After a ':' readline inserts only what follows it.
got=$(complete_line "shmrctl -s $tmp/$dom.sock disable events shard:")
[ "$got" = "0" ] || fail "disable events shard:<TAB>: '$got'"
got=$(complete_line "shmrctl -s $tmp/$dom.sock routee add orders " | sort | tr '\n' ' ')
[ "$got" = "o " ] || fail "routee add orders <TAB>: '$got'"

# --json where a read verb takes it.
got=$(complete_line "shmrctl -s $tmp/$dom.sock routes events --")
[ "$got" = "--json" ] || fail "routes events --<TAB>: '$got'"
got=$(complete_line "shmrctl -s $tmp/$dom.sock dlq list events --")
[ "$got" = "--json" ] || fail "dlq list events --<TAB>: '$got'"

# No domain: nothing, without waiting for one.
start=$(date +%s)
got=$(complete_line "shmrctl -s $tmp/nosuch.sock routes ")
[ -z "$got" ] || fail "no domain, yet: '$got'"
# Liveness bound only (shmrctl is asked with --wait 0).
[ $(($(date +%s) - start)) -lt 10 ] || fail "completion waited for a domain"
echo "ok: verbs, routers, routes"
