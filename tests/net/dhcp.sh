#!/usr/bin/env bash
# method = "dhcp" on real interfaces: nasboot finds udhcpc on PATH (here
# BusyBox's) and starts it with an argv (no shell), in a session of its
# own with its output to /dev/null, and does not wait for it: with no DHCP
# server on the WAN the apply returns at once (waiting for udhcpc -b would
# hold it up for the client's whole discovery). The WAN host's BusyBox udhcpd, started only then,
# hands the running client a lease; a re-apply sees the live client
# through its pidfile and starts no second one. Needs root. Host binary
# only: the DHCP path is posix_spawn through the runner, the same on
# every target.
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
: >"$work/udhcpd.log"

export T_WORK=$work
# One private mount namespace for both applies: apply with no server,
# wait for the go, the lease, re-plan, re-apply, then stop the client it
# started (by its pidfile).
# shellcheck disable=SC2016 # expanded by the inner sh
ip netns exec "${P}box" unshare -m sh -c '
	mount -t tmpfs tmpfs /run || exit 9
	PATH="$1:$PATH"
	shift
	"$@" plan -c "$0" >"$T_WORK/plan1.out" 2>&1
	t0=$(date +%s%N)
	"$@" apply -c "$0" >"$T_WORK/apply1.out" 2>&1
	rc=$?
	echo "$((($(date +%s%N) - t0) / 1000000))" >"$T_WORK/apply1.ms"
	i=0
	while [ ! -s /run/udhcpc.eth0.pid ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	cat /run/udhcpc.eth0.pid >"$T_WORK/pid" 2>/dev/null
	pid=$(cat "$T_WORK/pid")
	tr "\0" " " <"/proc/$pid/cmdline" >"$T_WORK/cmdline" 2>/dev/null
	awk "{ print \$6 }" "/proc/$pid/stat" >"$T_WORK/sid" 2>/dev/null
	readlink "/proc/$pid/fd/1" >"$T_WORK/stdout" 2>/dev/null
	echo "$rc" >"$T_WORK/apply1.rc"
	i=0
	while [ ! -e "$T_WORK/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	i=0
	while ! grep -q "sending ACK" "$T_WORK/udhcpd.log" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	"$@" plan -c "$0" >"$T_WORK/plan2.out" 2>&1
	"$@" -v apply -c "$0" >"$T_WORK/apply2.out" 2>&1
	echo "$?" >"$T_WORK/apply2.rc"
	pgrep -c -x udhcpc >"$T_WORK/count" || true
	kill "$pid"
	# udhcpc removes its pidfile as it exits: wait for that, or it could
	# remove the one written below.
	i=0
	while [ -e "/proc/$pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	# A client that died under `nasboot run`, which does not reap it: a
	# zombie whose pid the pidfile names (here the child of a shell that
	# exec`d sleep, so nothing reaps it; the child lives for 1 s so that
	# it outlives the exec, where the shell could still reap it). Not
	# running: plan starts one.
	sh -c "sleep 1 & echo \$! >/run/udhcpc.eth0.pid; exec sleep 10" &
	i=0
	while ! grep -q ") Z " "/proc/$(cat /run/udhcpc.eth0.pid 2>/dev/null)/stat" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	sed "s/.*) //; s/ .*//" "/proc/$(cat /run/udhcpc.eth0.pid)/stat" >"$T_WORK/zombie" 2>/dev/null
	"$@" plan -c "$0" >"$T_WORK/plan3.out" 2>&1
	kill $! 2>/dev/null
' "$work/dhcp.toml" "$work/bin" "${nb[@]}" &
box=$!
# The server only once the first apply has returned.
i=0
while [ ! -e "$work/apply1.rc" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
ip netns exec "${P}wan" busybox udhcpd -f "$work/udhcpd.conf" >"$work/udhcpd.log" 2>&1 &
server=$!
touch "$work/go"
set +e
wait "$box"
st=$?
set -e
t_eq "the box shell ran" 0 "$st"

t_eq "apply exits 0" 0 "$(cat "$work/apply1.rc" 2>/dev/null)"
ms=$(cat "$work/apply1.ms" 2>/dev/null || echo 99999)
t_check "apply with no DHCP server returns without waiting for a lease (${ms} ms)" [ "$ms" -lt 2000 ]
t_has "the plan starts the client" "eth0: start DHCP: $work/bin/udhcpc -i eth0 -f -p /run/udhcpc.eth0.pid" "$(cat "$work/plan1.out")"
t_has "udhcpc runs with the argv nasboot gave it" "udhcpc -i eth0 -f -p /run/udhcpc.eth0.pid" "$(cat "$work/cmdline" 2>/dev/null)"
t_eq "udhcpc leads a session of its own" "$(cat "$work/pid" 2>/dev/null)" "$(cat "$work/sid" 2>/dev/null)"
t_eq "udhcpc's output goes to /dev/null" /dev/null "$(cat "$work/stdout" 2>/dev/null)"
t_has "the server, started after the apply, acknowledged the running client's lease" "sending ACK" "$(cat "$work/udhcpd.log")"
t_eq "re-plan: no links action" "" "$(grep -E '^ +[0-9]+\. +links ' "$work/plan2.out" || true)"
t_eq "re-apply exits 0" 0 "$(cat "$work/apply2.rc" 2>/dev/null)"
t_eq "re-apply: no links action" "" "$(grep ' links: ' "$work/apply2.out" || true)"
t_has "re-apply ran (verbose log)" "applied " "$(cat "$work/apply2.out")"
t_eq "one client only" 1 "$(cat "$work/count" 2>/dev/null)"
t_eq "the pidfile then names a zombie" Z "$(cat "$work/zombie" 2>/dev/null)"
t_has "a zombie client is not running: plan starts one" "eth0: start DHCP: " "$(cat "$work/plan3.out")"

t_done
