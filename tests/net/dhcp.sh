#!/usr/bin/env bash
# method = "dhcp" on real interfaces: nasboot finds udhcpc on PATH (here
# BusyBox's), starts it with an argv (no shell) and the WAN host's BusyBox
# udhcpd hands out a lease; a re-apply sees the live client through its
# pidfile and starts no second one. Needs root. Host binary only: the
# DHCP path is fork/exec through the runner, the same on every target.
#
# The box runs in a private mount namespace with a tmpfs on /run, so the
# client's pidfile never lands in the machine's own /run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=scripts/lib/netns.sh
. "$T_TOP/scripts/lib/netns.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "dhcp.sh: needs root (network namespaces)" >&2
	exit 1
fi
t_need iproute2 busybox-static util-linux

read -ra nb <<<"$(nasboot_for host)"
if [ ! -x "${nb[-1]}" ]; then
	t_fail "host: no binary at ${nb[-1]} (run scripts/build)"
	t_done
fi

P=tdh
work=$(mktemp -d /tmp/nasboot-dhcp.XXXXXX)
server=""
cleanup() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	netns_board_down "$P"
	rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin"
ln -s "$(command -v busybox)" "$work/bin/udhcpc"
cat >"$work/udhcpd.conf" <<CONF
start 198.51.100.100
end 198.51.100.110
interface eth0
lease_file $work/leases
pidfile $work/udhcpd.pid
option subnet 255.255.255.0
option router $NETNS_WAN_HOST
CONF
: >"$work/leases"
cat >"$work/dhcp.toml" <<'TOML'
[board]
name = "netns-dhcp"
[firewall]
profile = "off"
[[interface]]
name = "eth0"
role = "wan"
method = "dhcp"
TOML

netns_board_up "$P"
ip netns exec "${P}wan" busybox udhcpd -f "$work/udhcpd.conf" >"$work/udhcpd.log" 2>&1 &
server=$!

export T_WORK=$work
# One private mount namespace for both applies: apply, re-plan, re-apply,
# then stop the client it started (by its pidfile).
set +e
# shellcheck disable=SC2016 # expanded by the inner sh
ip netns exec "${P}box" unshare -m sh -c '
	mount -t tmpfs tmpfs /run || exit 9
	PATH="$1:$PATH"
	shift
	"$@" plan -c "$0" >"$T_WORK/plan1.out" 2>&1
	"$@" apply -c "$0" >"$T_WORK/apply1.out" 2>&1
	echo "$?" >"$T_WORK/apply1.rc"
	cat /run/udhcpc.eth0.pid >"$T_WORK/pid" 2>/dev/null
	pid=$(cat "$T_WORK/pid")
	tr "\0" " " <"/proc/$pid/cmdline" >"$T_WORK/cmdline" 2>/dev/null
	"$@" plan -c "$0" >"$T_WORK/plan2.out" 2>&1
	"$@" -v apply -c "$0" >"$T_WORK/apply2.out" 2>&1
	echo "$?" >"$T_WORK/apply2.rc"
	pgrep -c -x udhcpc >"$T_WORK/count" || true
	kill "$pid"
' "$work/dhcp.toml" "$work/bin" "${nb[@]}"
st=$?
set -e
t_eq "the box shell ran" 0 "$st"

t_eq "apply exits 0" 0 "$(cat "$work/apply1.rc" 2>/dev/null)"
t_has "the plan starts the client" "eth0: start DHCP: $work/bin/udhcpc -i eth0 -b -p /run/udhcpc.eth0.pid" "$(cat "$work/plan1.out")"
t_has "udhcpc runs with the argv nasboot gave it" "udhcpc -i eth0 -b -p /run/udhcpc.eth0.pid" "$(cat "$work/cmdline" 2>/dev/null)"
t_has "the server acknowledged a lease" "sending ACK" "$(cat "$work/udhcpd.log")"
t_eq "re-plan: no links action" "" "$(grep -E '^ +[0-9]+\. +links ' "$work/plan2.out" || true)"
t_eq "re-apply exits 0" 0 "$(cat "$work/apply2.rc" 2>/dev/null)"
t_eq "re-apply: no links action" "" "$(grep ' links: ' "$work/apply2.out" || true)"
t_has "re-apply ran (verbose log)" "applied " "$(cat "$work/apply2.out")"
t_eq "one client only" 1 "$(cat "$work/count" 2>/dev/null)"

t_done
