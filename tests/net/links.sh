#!/usr/bin/env bash
# NICs on real kernel interfaces: a board in network namespaces
# (scripts/lib/netns.sh), configured by `nasboot apply` and read back with
# `ip -j`, `ethtool` and /proc/sys as witnesses. Needs root.
#
#   tests/net/links.sh            host, powerpc, mips, sparc64
#   NASBOOT_TARGETS="host" tests/net/links.sh
#
# Per target: apply the box profile (link, addresses, routes, IPv6,
# sysctls, and on the host offloads), assert every knob, ping the LAN and
# WAN hosts over IPv4 and IPv6, re-apply (plan says "nothing to do", the
# apply changes nothing: no carrier change, same link counters), then the
# error paths: a missing interface and an MTU above the driver's maximum
# (exit 3, named), a knob veth lacks (a note, exit 0), the carrier
# timeout. Then, host binary only: the apply lock (while the suite holds
# /run/nasboot/apply.lock with util-linux flock, as another nasboot would,
# `plan` answers and an `apply` waits, says so and changes nothing; once
# released, it applies); and 120 more links than the profile names, whose
# RTM_GETLINK dump spans several datagrams of the receive buffer, all read
# by `apply` and `status`.
#
# What veth answers: ETHTOOL_GFEATURES/SFEATURES work (some checksum
# features are fixed); GRINGPARAM, GCOALESCE and GPAUSEPARAM answer
# EOPNOTSUPP (a note, not a failure); GLINKSETTINGS answers but
# SLINKSETTINGS is EOPNOTSUPP, so a `speed` on a veth is warned about at
# every apply. A VXLAN bound to a lower link gives the MTU ceiling
# (EINVAL above it).
#
# qemu-user (7.2) limits, found here and tested on the host only:
# - SIOCETHTOOL is not translated (ENOSYS): probed per target; the foreign
#   run checks that nasboot reports it (note at plan, exit 3 at apply
#   naming interface and knob, no crash);
# - SIOCGIFTXQLEN/SIOCSIFTXQLEN are translated as if ifr_qlen were a short
#   (the kernel's is an int): on big-endian guests 1000 reads as 65536000
#   and sets fail with EINVAL. Real big-endian kernels are right; the
#   foreign big-endian runs leave txqueuelen out. nasboot reads a link's
#   state from the RTM_GETLINK dump, which qemu converts right, so their
#   status shows the real 1000;
# - generic netlink is not translated either, nor the watchdog ioctls
#   (ENOSYS). The mipsel binary drives a real driver on the emulated board
#   instead (tests/net/board-e1000.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=scripts/lib/netns.sh
. "$T_TOP/scripts/lib/netns.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "links.sh: needs root (network namespaces)" >&2
	exit 1
fi
t_need iproute2 ethtool jq iputils-ping qemu-user

targets=$(t_targets netns)
P=tnl
work=$(mktemp -d /tmp/nasboot-net.XXXXXX)
cleanup() {
	netns_board_down "$P"
	rm -rf "$work"
}
trap cleanup EXIT

# The box: the link, address and route part shared by every target.
cat >"$work/base.toml" <<'TOML'
[board]
name = "netns-nic"
[firewall]
profile = "off"

[[interface]]
name = "eth0"
role = "wan"
address = ["198.51.100.2/24", "fd00:51::2/64"]
gateway = "198.51.100.1"
gateway6 = "fd00:51::1"
mtu = 1400
txqueuelen = 500
accept_ra = 0
sysctl = { "ipv4.rp_filter" = 1 }

[[interface]]
name = "eth1"
role = "lan"
address = ["192.168.10.1/24", "192.168.10.5/24", "fd00:10::1/64"]
mtu = 1450
txqueuelen = 2000
mac = "02:00:00:00:10:01"
route = [{ to = "10.8.0.0/16", via = "192.168.10.2", metric = 20 }]
TOML
# The same with offloads (veth can switch these).
{
	cat "$work/base.toml"
	cat <<'TOML'
[interface.ethtool]
tso = false
sg = true
gro = true
TOML
} >"$work/full.toml"
# A knob veth lacks: a note, not a failure.
cat >"$work/lacking.toml" <<'TOML'
[board]
name = "netns-nic"
[firewall]
profile = "off"
[[interface]]
name = "eth0"
[interface.ethtool]
rx_ring = 4096
rx_usecs = 50
TOML
# An interface with a dot in its name (created by the test).
cat >"$work/vlan.toml" <<'TOML'
[board]
name = "netns-nic"
[firewall]
profile = "off"
[[interface]]
name = "eth1.10"
address = ["10.10.0.1/24"]
accept_ra = 0
sysctl = { "ipv4.rp_filter" = 1 }
TOML
# A missing interface: exit 3 naming it; the others are still configured.
cat >"$work/missing.toml" <<'TOML'
[board]
name = "netns-nic"
[firewall]
profile = "off"
[[interface]]
name = "eth9"
mtu = 1400
[[interface]]
name = "eth0"
mtu = 1300
TOML
# An MTU above the driver's maximum: a VXLAN bound to a lower link takes at
# most that link's MTU less its headers (vxlan_change_mtu: EINVAL).
cat >"$work/bigmtu.toml" <<'TOML'
[board]
name = "netns-nic"
[firewall]
profile = "off"
[[interface]]
name = "vl5"
mtu = 9000
txqueuelen = 77
TOML
# Waiting for carrier: bounded, and named when it does not come.
cat >"$work/carrier.toml" <<'TOML'
[board]
name = "netns-nic"
[firewall]
profile = "off"
[[interface]]
name = "eth0"
carrier_timeout = 2
TOML

box() { ip netns exec "${P}box" "$@"; }
jlink() { box ip -j -d link show dev "$1" | jq -r ".[0].$2"; }
has_addr() { box ip -j addr show dev "$1" | jq -e --arg a "$2" --argjson p "$3" 'any(.[0].addr_info[]; .local == $a and .prefixlen == $p)' >/dev/null; }
quiet() { "$@" >/dev/null 2>&1; }
# The links-phase lines of a plan or status (other phases, such as the
# firewall's "off" rule set, are not this suite's business).
links_lines() { printf '%s\n' "$1" | grep -E '^ +([0-9]+\. +)?links ' || true; }
carrier_changes() { box cat "/sys/class/net/$1/carrier_changes"; }
feature() { box ethtool -k "$1" | awk -v k="$2:" '$1 == k { print $2 }'; }

# Wait (at most 5 s) until no address is tentative (IPv6 DAD done).
dad_done() {
	local _
	for _ in $(seq 50); do
		if ! box ip -6 addr show tentative | grep -q inet6; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# run NAME ARGS...: run nasboot in the box; sets rc, out, err.
run() {
	set +e
	out=$(box "${nb[@]}" "$@" 2>"$work/err")
	rc=$?
	set -e
	err=$(cat "$work/err")
}

for t in $targets; do
	read -ra nb <<<"$(nasboot_for "$t")"
	if [ ! -x "${nb[-1]}" ]; then
		t_fail "$t: no binary at ${nb[-1]} (run scripts/build)"
		continue
	fi
	netns_board_up "$P"
	qlen=1
	case $t in
	powerpc-* | mips-* | sparc-* | sparc64-*)
		qlen=0
		for f in base full bigmtu; do
			sed '/^txqueuelen/d' "$work/$f.toml" >"$work/$f-$t.toml"
		done
		;;
	*)
		for f in base full bigmtu; do
			cp "$work/$f.toml" "$work/$f-$t.toml"
		done
		;;
	esac

	# Does this target's ioctl path reach the driver? Probe with a plan
	# of an offload-only profile: veth answers ETHTOOL_GFEATURES.
	profile=$work/full-$t.toml
	run plan -c "$profile"
	ethtool_ok=1
	case $err$out in
	*"SIOCETHTOOL is not available"* | *"Function not implemented"*)
		ethtool_ok=0
		profile=$work/base-$t.toml
		t_ok "$t: qemu-user does not translate SIOCETHTOOL; reported by nasboot: $(printf '%s' "$out" | grep -m1 SIOCETHTOOL)"
		;;
	esac

	run plan -c "$profile"
	t_eq "$t: plan exits 0" 0 "$rc"
	t_has "$t: plan shows the MTU difference" "eth0: mtu 1500 -> 1400" "$out"
	t_has "$t: plan shows the MAC change" "eth1: mac " "$out"
	before_mtu=$(jlink eth0 mtu)
	t_eq "$t: plan changed nothing" 1500 "$before_mtu"

	run apply -c "$profile"
	t_eq "$t: apply exits 0 (stderr: $err)" 0 "$rc"

	t_eq "$t: eth0 mtu" 1400 "$(jlink eth0 mtu)"
	if [ "$qlen" = 1 ]; then
		t_eq "$t: eth0 txqueuelen" 500 "$(jlink eth0 txqlen)"
		t_eq "$t: eth1 txqueuelen" 2000 "$(jlink eth1 txqlen)"
	fi
	t_eq "$t: eth1 mtu" 1450 "$(jlink eth1 mtu)"
	t_eq "$t: eth1 mac" 02:00:00:00:10:01 "$(jlink eth1 address)"
	t_eq "$t: eth0 up" UP "$(jlink eth0 operstate)"
	t_eq "$t: eth1 up" UP "$(jlink eth1 operstate)"
	t_eq "$t: eth1 promisc off" 0 "$(jlink eth1 promiscuity)"
	t_check "$t: eth0 198.51.100.2/24" has_addr eth0 198.51.100.2 24
	t_check "$t: eth0 fd00:51::2/64" has_addr eth0 fd00:51::2 64
	t_check "$t: eth1 192.168.10.1/24" has_addr eth1 192.168.10.1 24
	t_check "$t: eth1 second address 192.168.10.5/24" has_addr eth1 192.168.10.5 24
	t_check "$t: eth1 fd00:10::1/64" has_addr eth1 fd00:10::1 64
	t_eq "$t: eth1 broadcast" 192.168.10.255 "$(box ip -j addr show dev eth1 | jq -r '.[0].addr_info[] | select(.local == "192.168.10.1") | .broadcast')"
	t_eq "$t: default route" "198.51.100.1 eth0" "$(box ip -j route show default | jq -r '.[0] | "\(.gateway) \(.dev)"')"
	t_eq "$t: IPv6 default route" "fd00:51::1 eth0" "$(box ip -j -6 route show default | jq -r '.[0] | "\(.gateway) \(.dev)"')"
	t_eq "$t: static route" "192.168.10.2 eth1 20" "$(box ip -j route show 10.8.0.0/16 | jq -r '.[0] | "\(.gateway) \(.dev) \(.metric)"')"
	t_eq "$t: accept_ra" 0 "$(box cat /proc/sys/net/ipv6/conf/eth0/accept_ra)"
	t_eq "$t: rp_filter" 1 "$(box cat /proc/sys/net/ipv4/conf/eth0/rp_filter)"
	if [ "$ethtool_ok" = 1 ]; then
		# The [interface.ethtool] table belongs to eth1 (the last [[interface]]).
		t_eq "$t: eth1 tso off" off "$(feature eth1 tcp-segmentation-offload)"
		t_eq "$t: eth1 sg on" on "$(feature eth1 scatter-gather)"
		t_eq "$t: eth1 gro on" on "$(feature eth1 generic-receive-offload)"
		t_eq "$t: eth0 gro untouched (veth default off)" off "$(feature eth0 generic-receive-offload)"
	fi

	t_check "$t: ping LAN host" quiet box ping -c1 -W2 "$NETNS_LAN_HOST"
	t_check "$t: ping WAN host" quiet box ping -c1 -W2 "$NETNS_WAN_HOST"
	t_check "$t: IPv6 DAD done" dad_done
	t_check "$t: ping6 LAN host" quiet box ping -6 -c1 -W2 fd00:10::2
	t_check "$t: ping6 WAN host" quiet box ping -6 -c1 -W2 fd00:51::1
	t_check "$t: LAN host reaches the box on its second address" quiet ip netns exec "${P}lan" ping -c1 -W2 192.168.10.5

	# Re-apply: nothing to do, no link bounce, and rtnetlink announces no
	# link, address or route change while it runs (ip monitor as witness).
	cc0=$(carrier_changes eth0)
	cc1=$(carrier_changes eth1)
	i0=$(jlink eth0 ifindex)
	run plan -c "$profile"
	t_eq "$t: re-plan has no links action" "" "$(links_lines "$out")"
	# Not through box(): $! must be ip monitor itself (ip netns exec execs),
	# or the kill would leave it running.
	ip netns exec "${P}box" ip monitor link address route >"$work/monitor" 2>&1 &
	mon=$!
	sleep 0.5
	run -v apply -c "$profile"
	sleep 0.5
	kill "$mon"
	wait "$mon" 2>/dev/null || true
	t_eq "$t: re-apply exits 0" 0 "$rc"
	t_has "$t: re-apply ran (verbose log)" "applied " "$out"
	t_eq "$t: re-apply applied no links action" "" "$(printf '%s\n' "$err" | grep ' links: ' || true)"
	t_eq "$t: eth0 carrier not bounced" "$cc0" "$(carrier_changes eth0)"
	t_eq "$t: eth1 carrier not bounced" "$cc1" "$(carrier_changes eth1)"
	t_eq "$t: eth0 same link" "$i0" "$(jlink eth0 ifindex)"
	t_eq "$t: no rtnetlink change during the re-apply" "" "$(cat "$work/monitor")"

	run status -c "$profile"
	if [ "$qlen" = 1 ]; then
		t_has "$t: status shows link states" "eth1: up carrier mtu 1450 txqueuelen 2000 mac 02:00:00:00:10:01" "$out"
	else
		t_has "$t: status shows link states (the dump's txqueuelen, not qemu-user's 1000<<16 by ioctl)" "eth1: up carrier mtu 1450 txqueuelen 1000 mac 02:00:00:00:10:01" "$out"
	fi
	t_eq "$t: status: no links change pending" "" "$(links_lines "$out")"

	# Error paths.
	run apply -c "$work/missing.toml"
	t_eq "$t: missing interface exits 3" 3 "$rc"
	t_has "$t: missing interface named" "nasboot: eth9: no such interface" "$err"
	t_eq "$t: the other interface still applied" 1300 "$(jlink eth0 mtu)"

	if box ip link add vl5 type vxlan id 5 dev eth1 dstport 4789 2>/dev/null; then
		run apply -c "$work/bigmtu-$t.toml"
		t_eq "$t: MTU above the driver max exits 3" 3 "$rc"
		t_has "$t: MTU error names interface and knob" "nasboot: vl5 mtu: the kernel refused 9000" "$err"
		if [ "$qlen" = 1 ]; then
			t_eq "$t: the rest of vl5 still applied" 77 "$(jlink vl5 txqlen)"
		fi
	else
		t_fail "$t: cannot create a VXLAN for the MTU test"
	fi

	if [ "$ethtool_ok" = 1 ]; then
		run apply -c "$work/lacking.toml"
		t_eq "$t: knobs veth lacks: exit 0" 0 "$rc"
		t_has "$t: ring note" "eth0 ring: not supported by the driver (" "$err"
		t_has "$t: coalesce note" "eth0 coalesce: not supported by the driver" "$err"
	else
		run apply -c "$work/full-$t.toml"
		t_eq "$t: ethtool under qemu-user: exit 3 (partial)" 3 "$rc"
		t_has "$t: ethtool under qemu-user: noted at plan" "nasboot: note: eth1 tso: SIOCETHTOOL is not available here (Function not implemented (ENOSYS))" "$err"
		t_has "$t: ethtool under qemu-user: named at apply" "nasboot: eth1 tso: SIOCETHTOOL is not available (Function not implemented (ENOSYS))" "$err"
	fi

	# No cable (the peer is down): the wait ends at the timeout, exit 3.
	ip -n "${P}wan" link set eth0 down
	box ip link set eth0 down
	t0=$SECONDS
	run apply -c "$work/carrier.toml"
	t_eq "$t: no carrier exits 3" 3 "$rc"
	t_has "$t: no carrier named" "nasboot: eth0 carrier: no carrier after 2 s" "$err"
	t_check "$t: the carrier wait is bounded" test $((SECONDS - t0)) -le 6
	ip -n "${P}wan" link set eth0 up
	box ip link set eth0 down
	run apply -c "$work/carrier.toml"
	t_eq "$t: carrier comes: exit 0" 0 "$rc"
	t_eq "$t: carrier up" UP "$(jlink eth0 operstate)"

	# A dotted name, as OpenWrt's VLANs have (eth0.2): its per-interface
	# sysctls live under /proc/sys/net/*/conf/eth1.10/, keys written the
	# sysctl(8) way. (A veth named like a VLAN: this kernel has no 8021q.)
	box ip link add eth1.10 type veth peer name vpeer10
	run plan -c "$work/vlan.toml"
	t_has "$t: VLAN sysctl key in sysctl(8) form" "eth1.10: net.ipv4.conf.eth1/10.rp_filter 0 -> 1" "$out"
	run apply -c "$work/vlan.toml"
	t_eq "$t: VLAN apply exits 0 (stderr: $err)" 0 "$rc"
	t_eq "$t: VLAN rp_filter" 1 "$(box cat /proc/sys/net/ipv4/conf/eth1.10/rp_filter)"
	t_eq "$t: VLAN accept_ra" 0 "$(box cat /proc/sys/net/ipv6/conf/eth1.10/accept_ra)"
	t_check "$t: VLAN 10.10.0.1/24" has_addr eth1.10 10.10.0.1 24
	netns_board_down "$P"
done

# A link dump that takes many datagrams (host binary): 120 more links
# than the profile names, some 1.5 KB of RTM_NEWLINK each, come back in
# about ten datagrams of the 16 KiB receive buffer (src/seam/real/mod.rs,
# RECV_BUF); a datagram cut short would fail the read. Both the apply
# and the status read every link and the profile's two by name.
read -ra nb <<<"$(nasboot_for host)"
netns_board_up "$P"
for i in $(seq 60); do
	box ip link add "xa$i" type veth peer name "xb$i"
done
run apply -c "$work/base.toml"
t_eq "122 links: apply exits 0 (stderr: $err)" 0 "$rc"
t_eq "122 links: ... and has applied (eth0 mtu)" 1400 "$(jlink eth0 mtu)"
run status -c "$work/base.toml"
t_eq "122 links: status exits 0 (stderr: $err)" 0 "$rc"
t_has "122 links: ... and finds the profile in force" "in sync with the profile" "$out"
netns_board_down "$P"

# The apply lock (APPLY_LOCK in src/paths.rs), host binary: an apply
# started while another process holds the lock waits for it, then
# applies; plan does not wait. This shell holds the lock as another
# nasboot would: flock(2) on the same file (util-linux flock).
read -ra nb <<<"$(nasboot_for host)"
netns_board_up "$P"
mkdir -p /run/nasboot
exec 9>>/run/nasboot/apply.lock
flock 9
box "${nb[@]}" apply -c "$work/base.toml" 9>&- >"$work/lock.out" 2>"$work/lock.err" &
waiter=$!
run plan -c "$work/base.toml"
t_eq "lock held: plan does not wait for it (stderr: $err)" 0 "$rc"
sleep 1
t_check "lock held: the apply waits" kill -0 "$waiter"
t_eq "lock held: ... and has changed nothing yet (eth0 mtu)" 1500 "$(jlink eth0 mtu)"
t_has "lock held: ... and says why" "/run/nasboot/apply.lock: another nasboot is changing the board; waiting for it" "$(cat "$work/lock.err")"
flock -u 9
exec 9>&-
rc=0
wait "$waiter" || rc=$?
t_eq "lock released: the apply exits 0 ($(cat "$work/lock.err"))" 0 "$rc"
t_eq "lock released: ... and has applied (eth0 mtu)" 1400 "$(jlink eth0 mtu)"

t_done
