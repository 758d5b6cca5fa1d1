#!/bin/bash
# A router, against real traffic in network namespaces on the host kernel
# (root): nasboot creates the LAN bridge itself (rtnetlink), forwards the
# LAN to the WAN with masquerade, routes IPv6 without NAT, and forwards one
# port. For each binary (the host one, and the big-endian ones under
# qemu-user that tests/lib.sh's `netns` list names and target/dist has)
# and each backend (nftables, iptables-restore):
#
#   - the host binary runs with no nft on its PATH (t_path_without_nft) and
#     loads the nftables rule set itself, through netlink, as `apply -v`
#     and `status` say; a binary under qemu-user, whose nf_tables netlink
#     socket the kernel refuses, loads it with nft, and they say that;
#   - `apply` creates br-lan over eth1 and eth2 (its ports, both up) and a
#     re-plan has no link step left. Under qemu-user (7.2) a big-endian
#     guest cannot create links: qemu passes nested rtnetlink attributes
#     (IFLA_LINKINFO) through unswapped, and the kernel answers
#     EOPNOTSUPP. For those binaries the host binary makes the bridge and
#     the guest's `plan` must find it as the profile says (its translated
#     RTM_GETLINK dump) before its `apply` loads the rules; link creation
#     by big-endian binaries is for the big-endian boards' kernels;
#   - a LAN host reaches a WAN host, which sees the board's WAN address;
#     over IPv6 it sees the LAN host's own address (no NAT);
#   - the WAN host cannot open TCP to either LAN host (IPv4 with a route
#     to the LAN through the board, IPv6 routed) nor to the board; an
#     nmap ACK scan from the WAN finds the LAN host's ports filtered; UDP
#     from source ports 53 and 123 (a spoofed "DNS reply") reaches no LAN
#     host;
#   - the forwarded port reaches the second LAN host from the WAN, and from
#     the first LAN host at the WAN address (NAT reflection: the target
#     sees the board's LAN address, so its replies come back through the
#     board); nothing is forwarded to it over IPv6;
#   - a SYN leaving on the WAN has its MSS clamped to the WAN's MTU (1400):
#     the WAN host sees an MSS of 1360, not the LAN host's 1460;
#   - `status` counts the tracked connections;
#   - the host kernel has no nf_flow_table: nftables gets the rule set
#     without the flowtable, said in the log, and the box still forwards;
#     with iptables the plan notes that it has none;
#   - `firewall apply` before the bridge exists loads the router's rules
#     without the flowtable (which the kernel would refuse over a missing
#     device) and says so; the apply that makes it tries the flowtable;
#   - a profile without the bridge removes it (nasboot created it), and a
#     bridge made by hand is never removed;
#   - the host kernel has no 802.1Q: a VLAN gives a partial failure (exit
#     3) naming it and the kernel's reason, and the rest applies: the
#     firewall loaded, the board still closed to the WAN.
#
# The flowtable itself, offloaded flows and VLANs are tested on the
# emulated board (tests/firewall/board-router.sh), whose kernel has them.
#
# Usage: tests/firewall/router.sh [TARGET...]
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib.sh
. "$TOP/tests/lib.sh"
# shellcheck source=tests/firewall/lib.sh
. "$TOP/tests/firewall/lib.sh"

P=nbrr
WORK=$(mktemp -d /tmp/nasboot-router.XXXXXX)
down() {
	fw_stop_listeners
	local ns
	for ns in box wan lan lan2; do
		ip netns del "$P$ns" 2>/dev/null || true
	done
}
cleanup() {
	down
	rm -rf "$WORK"
}
trap cleanup EXIT

fw_packages
t_need nmap qemu-user
# After the installs, so that the PATH without nft has what they add.
NONFT=$(t_path_without_nft "$WORK/nonft")

mapfile -t TARGETS < <(t_present_targets netns "$@")

# The board: eth0 to the WAN host, eth1 and eth2 to two LAN hosts; the
# board's own links are left unconfigured (nasboot configures them).
up() {
	down
	local ns
	for ns in box wan lan lan2; do
		ip netns add "$P$ns"
		ip -n "$P$ns" link set lo up
	done
	ip link add "${P}w0" type veth peer name "${P}w1"
	ip link set "${P}w0" netns "${P}box" name eth0
	ip link set "${P}w1" netns "${P}wan" name eth0
	ip link add "${P}a0" type veth peer name "${P}a1"
	ip link set "${P}a0" netns "${P}box" name eth1
	ip link set "${P}a1" netns "${P}lan" name eth0
	ip link add "${P}b0" type veth peer name "${P}b1"
	ip link set "${P}b0" netns "${P}box" name eth2
	ip link set "${P}b1" netns "${P}lan2" name eth0
	ip -n "${P}wan" addr add 198.51.100.1/24 dev eth0
	ip -n "${P}wan" addr add fd00:51::1/64 dev eth0 nodad
	ip -n "${P}wan" link set eth0 up
	# An attacker's routes: the LAN's private networks through the board.
	ip -n "${P}wan" route add 192.168.1.0/24 via 198.51.100.2
	ip -n "${P}wan" route add fd00:1::/64 via fd00:51::2
	local host=10
	for ns in lan lan2; do
		ip -n "$P$ns" addr add "192.168.1.$host/24" dev eth0
		ip -n "$P$ns" addr add "fd00:1::$host/64" dev eth0 nodad
		ip -n "$P$ns" link set eth0 up
		ip -n "$P$ns" route add default via 192.168.1.1
		ip -n "$P$ns" route add default via fd00:1::1
		host=20
	done
}

PROFILE='[board]
name = "netns-router"
[[interface]]
name = "eth0"
role = "wan"
mtu = 1400
address = ["198.51.100.2/24", "fd00:51::2/64"]
gateway = "198.51.100.1"
[[interface]]
name = "br-lan"
kind = "bridge"
ports = ["eth1", "eth2"]
role = "lan"
address = ["192.168.1.1/24", "fd00:1::1/64"]
[firewall]
forward = true
[[firewall.port_forward]]
proto = "tcp"
wan_port = 2222
to = "192.168.1.20:22"
'

box() { ip netns exec "${P}box" "$@"; }
# boxnb ARGS...: the nasboot under test (NB) in the box, with its PATH (NBPATH).
boxnb() { box env PATH="$NBPATH" "${NB[@]}" "$@"; }
wan() { ip netns exec "${P}wan" "$@"; }

# connects NS HOST PORT [TCP4|TCP6]: a TCP connection opens.
connects() {
	ip netns exec "$1" socat -u OPEN:/dev/null "${4:-TCP4}:$2:$3,connect-timeout=2" 2>/dev/null
}
fails() { ! "$@" >/dev/null 2>&1; }
quiet() { "$@" >/dev/null 2>&1; }
# said NS HOST PORT [TCP4|TCP6]: what a listener there answers.
said() {
	ip netns exec "$1" socat -u "${4:-TCP4}:$2:$3,connect-timeout=2" - 2>/dev/null || true
}

traffic() {
	local nb=$1 out
	# Each listener answers with who it is and whom it sees.
	fw_listen "${P}wan" TCP4-LISTEN:8000,fork,reuseaddr "SYSTEM:echo wan \$SOCAT_PEERADDR"
	fw_listen "${P}wan" TCP6-LISTEN:8000,fork,reuseaddr,ipv6only=1 "SYSTEM:echo wan6 \$SOCAT_PEERADDR"
	fw_listen "${P}wan" TCP4-LISTEN:8001,fork,reuseaddr 'SYSTEM:sleep 3'
	for ns in lan lan2; do
		fw_listen "$P$ns" TCP4-LISTEN:22,fork,reuseaddr "SYSTEM:echo $ns \$SOCAT_PEERADDR"
		fw_listen "$P$ns" TCP6-LISTEN:22,fork,reuseaddr,ipv6only=1 "SYSTEM:echo $ns"
		fw_listen "$P$ns" -u UDP4-RECVFROM:5353,fork "OPEN:$WORK/udp-$ns,creat,append"
	done
	fw_listen "${P}box" TCP4-LISTEN:22,fork,reuseaddr 'SYSTEM:echo box'
	sleep 0.5
	t_eq "$nb: a LAN host reaches the WAN, which sees the board's WAN address" "wan 198.51.100.2" "$(said "${P}lan" 198.51.100.1 8000)"
	t_eq "$nb: IPv6 is routed without NAT" "wan6 [fd00:0001:0000:0000:0000:0000:0000:0010]" "$(said "${P}lan" '[fd00:51::1]' 8000 TCP6)"
	t_check "$nb: the WAN cannot open TCP to a LAN host" fails connects "${P}wan" 192.168.1.10 22
	t_check "$nb: the WAN cannot open TCP to a LAN host over IPv6" fails connects "${P}wan" '[fd00:1::10]' 22 TCP6
	t_check "$nb: the WAN cannot open TCP to the board" fails connects "${P}wan" 198.51.100.2 22
	t_check "$nb: the WAN cannot open TCP to the board over IPv6" fails connects "${P}wan" '[fd00:51::2]' 22 TCP6
	t_eq "$nb: the forwarded port reaches the second LAN host from the WAN" "lan2 198.51.100.1" "$(said "${P}wan" 198.51.100.2 2222)"
	t_check "$nb: the forwarded port opens nothing over IPv6" fails connects "${P}wan" '[fd00:1::20]' 2222 TCP6
	t_eq "$nb: a LAN host reaches the forwarded port at the WAN address (reflection)" "lan2 192.168.1.1" "$(said "${P}lan" 198.51.100.2 2222)"
	# Spoofed "replies": UDP from port 53, and an ACK scan, from the WAN.
	wan socat -u - UDP4-SENDTO:192.168.1.10:5353,sourceport=53 <<<"spoofed" 2>/dev/null || true
	wan socat -u - UDP4-SENDTO:192.168.1.20:5353,sourceport=123 <<<"spoofed" 2>/dev/null || true
	sleep 0.5
	t_eq "$nb: UDP from WAN source ports 53 and 123 reaches no LAN host" "" "$(cat "$WORK"/udp-* 2>/dev/null)"
	local scan
	scan=$(wan nmap -n -Pn -sA -p 22,5353 --max-retries 1 --host-timeout 20s 192.168.1.10 2>&1)
	t_eq "$nb: an ACK scan from the WAN finds the LAN host's ports filtered" 2 "$(grep -Ec '^[0-9]+/tcp +filtered' <<<"$scan")"
	# MSS: held open 3 s by the WAN listener, read there.
	ip netns exec "${P}lan" socat -u EXEC:"sleep 3" TCP4:198.51.100.1:8001 &
	local held=$!
	sleep 0.7
	# ss's mss is the peer's MSS less the timestamp option (12 bytes):
	# 1348 when clamped to 1360, 1448 when not.
	local mss
	mss=$(wan ss -tin '( sport = :8001 )' | grep -o ' mss:[0-9]*' | cut -d: -f2)
	t_check "$nb: the LAN host's SYN is clamped to the WAN's MTU 1400 (ss mss ${mss:-none})" test "${mss:-9999}" -le 1348
	kill "$held" 2>/dev/null || true
	wait "$held" 2>/dev/null || true
	out=$(boxnb --root "$ROOT" status 2>&1)
	t_has "$nb: status counts the router's connections" "tracked connection(s), 0 offloaded" "$out"
	if [ "$BACKEND" = nftables ]; then
		t_has "$nb: status: nftables loaded $VIA" "nftables $VIA" "$out"
	fi
	t_has "$nb: status: the rules loaded, nothing pending" "nasboot's rules loaded
in sync with the profile" "$out"
	fw_stop_listeners
	rm -f "$WORK"/udp-*
}

run_case() {
	local target=$1 backend=$2 nb="$1/$2" out rc
	read -ra NB <<<"$(nasboot_for "$target")"
	NB[0]=$(command -v "${NB[0]}")
	# nasboot's PATH: none with nft for the host binary (it loads nftables
	# itself), the suite's under qemu-user (nft loads).
	NBPATH=$PATH
	[ "$target" = host ] && NBPATH=$NONFT
	VIA=$(t_native_or_tool "$target")
	BACKEND=$backend
	ROOT=$WORK/root-$target-$backend
	rm -rf "$ROOT"
	fw_root "$ROOT" "${PROFILE/forward = true/forward = true
backend = \"$backend\"}"
	up
	if [ "$target" != host ]; then
		# qemu-user passes nested rtnetlink attributes (IFLA_LINKINFO)
		# through unswapped, so a big-endian guest cannot create links
		# under it (the kernel reads the kind as garbage: EOPNOTSUPP); the
		# host binary makes the bridge, and the guest's apply must find it
		# as the profile says (its RTM_GETLINK dump, translated) and do the
		# rest. Big-endian kernels create them: the board suites.
		local -a HOSTNB
		read -ra HOSTNB <<<"$(nasboot_for host)"
		box env PATH="$NONFT" "${HOSTNB[@]}" --root "$ROOT" apply >/dev/null 2>&1 || true
		box nft delete table inet nasboot 2>/dev/null || true
		box sysctl -qw net.ipv4.ip_forward=0
	fi
	# -v: apply logs each step as it takes it, the firewall's loader named.
	out=$(boxnb --root "$ROOT" -v apply 2>&1) && rc=0 || rc=$?
	t_eq "$nb: apply exits 0 ($out)" 0 "$rc"
	if [ "$target" != host ]; then
		t_check "$nb: the bridge made by the host binary needs no netdev step" fails grep -q 'netdev' <<<"$(boxnb --root "$ROOT" plan 2>&1)"
	fi
	t_has "$nb: br-lan is a bridge nasboot made" "alias nasboot" "$(box ip -d link show br-lan 2>&1)"
	t_eq "$nb: eth1 and eth2 are its ports, up" "eth1 eth2 " "$(box ip -o link show master br-lan up | awk -F'[:@]' '{ printf "%s ", substr($2, 2) }')"
	if [ "$backend" = nftables ]; then
		t_has "$nb: the rule set is loaded $VIA" "$VIA" "$out"
		t_has "$nb: no nf_flow_table here: loaded without the flowtable, and said so" "loaded the rule set without the flowtable" "$out"
	else
		t_has "$nb: iptables: no flowtable, and the plan says so" "iptables has no flowtable" "$out"
	fi
	# IPv6 addresses are usable once duplicate address detection is done.
	local i
	for i in $(seq 30); do
		[ -z "$(box ip -6 addr show tentative)" ] && break
		sleep 0.2
	done
	t_eq "$nb: forwarding on once the rules are in" 1 "$(box sysctl -n net.ipv4.ip_forward)"
	out=$(boxnb --root "$ROOT" plan 2>&1)
	t_check "$nb: a re-plan has no link step left" fails grep -Eq '^ *[0-9]+\. (netdev|links) ' <<<"$out"
	traffic "$nb"
}

for target in "${TARGETS[@]}"; do
	for backend in nftables iptables; do
		run_case "$target" "$backend"
	done
done

# `firewall apply` before `apply` made the bridge (early in a boot, or a
# hotplug event first): the kernel refuses a flowtable over a device it
# does not have, so the router's rule set goes without it and says so,
# rather than the LAN-only fallback; the apply that makes the bridge then
# tries the flowtable (this host's kernel refuses it: without, said so).
# The host binary, with no nft.
read -ra NB <<<"$(nasboot_for host)"
NBPATH=$NONFT
ROOT=$WORK/root-early
up
fw_root "$ROOT" "$PROFILE"
out=$(boxnb --root "$ROOT" firewall apply 2>&1) && rc=0 || rc=$?
t_eq "early: firewall apply before br-lan exists exits 0 ($out)" 0 "$rc"
t_has "early: it says the flowtable waits for br-lan" "br-lan is not there yet, so forwarding goes without the flowtable" "$out"
rules=$(box nft list ruleset 2>&1)
t_has "early: the router's rule set is loaded (masquerade), not the LAN-only fallback" "masquerade" "$rules"
t_check "early: ... without a flowtable" fails grep -q flowtable <<<"$rules"
t_eq "early: forwarding on" 1 "$(box sysctl -n net.ipv4.ip_forward)"
out=$(boxnb --root "$ROOT" apply 2>&1) && rc=0 || rc=$?
t_eq "early: the apply that makes br-lan exits 0 ($out)" 0 "$rc"
t_has "early: ... and tries the flowtable over it" "loaded the rule set without the flowtable" "$out"

# Removal: the bridge leaves the profile; one made by hand stays. The host
# binary, with no nft.
read -ra NB <<<"$(nasboot_for host)"
NBPATH=$NONFT
ROOT=$WORK/root-remove
up
fw_root "$ROOT" "$PROFILE"
boxnb --root "$ROOT" apply >/dev/null 2>&1 || true
box ip link add br-hand type bridge
fw_root "$ROOT" '[board]
name = "netns-router"
[firewall]
profile = "off"
'
out=$(boxnb --root "$ROOT" apply 2>&1) && rc=0 || rc=$?
t_eq "remove: apply exits 0 ($out)" 0 "$rc"
t_check "remove: the bridge nasboot made is gone" fails box ip link show br-lan
t_check "remove: its ports are released" fails grep -q master <<<"$(box ip -o link show eth1)"
t_check "remove: a bridge made by hand stays" quiet box ip link show br-hand

# A kernel without 802.1Q (this host's): a partial failure naming the VLAN.
up
fw_root "$ROOT" "${PROFILE/name = \"eth0\"
role = \"wan\"/name = \"eth0.2\"
kind = \"vlan\"
link = \"eth0\"
id = 2
role = \"wan\"}"
out=$(boxnb --root "$ROOT" apply 2>&1) && rc=0 || rc=$?
t_eq "no 8021q: apply exits 3 (partial)" 3 "$rc"
t_has "no 8021q: the VLAN and the kernel's reason are named" "eth0.2: cannot create the vlan 2 on eth0" "$out"
t_has "no 8021q: the firewall is still loaded" "chain forward" "$(box nft list table inet nasboot 2>&1)"
t_check "no 8021q: the WAN cannot open TCP to the board" fails connects "${P}wan" 198.51.100.2 22

t_done
