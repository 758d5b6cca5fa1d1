# shellcheck shell=bash
# Network namespaces laid out like a board, for tests, benchmarks and the
# demo. Sourced, not run.
#
#   netns_board_up P     creates three namespaces:
#     ${P}box  the board: eth0 (WAN) and eth1 (LAN), left unconfigured
#              (nasboot configures them), loopback up
#     ${P}wan  a WAN host: eth0 = 198.51.100.1/24, fd00:51::1/64 (peer of box eth0)
#     ${P}lan  a LAN host: eth0 = 192.168.10.2/24, fd00:10::2/64 (peer of box eth1)
#   netns_board_down P   removes them (and their veths)
#   netns_box_extra P    the box's links other than lo, eth0 and eth1
#                        (fallback tunnels a kernel adds to every new
#                        namespace, say), space-separated; empty if none
#
# The board's own addresses in the shipped test profiles are
# 198.51.100.2/24 on eth0 and 192.168.10.1/24 on eth1. Only documentation
# and private test ranges are used, and only inside these namespaces.

NETNS_WAN_HOST=198.51.100.1
NETNS_WAN_BOX=198.51.100.2
NETNS_LAN_HOST=192.168.10.2
NETNS_LAN_BOX=192.168.10.1
export NETNS_WAN_HOST NETNS_WAN_BOX NETNS_LAN_HOST NETNS_LAN_BOX

netns_board_down() {
	local p=$1 ns
	for ns in "${p}box" "${p}wan" "${p}lan"; do
		ip netns del "$ns" 2>/dev/null || true
	done
}

netns_box_extra() {
	ip -n "${1}box" -o link show | awk -F': ' '$2 !~ /^(lo|eth0@.*|eth1@.*)$/ { printf "%s ", $2 }'
}

netns_board_up() {
	local p=$1
	netns_board_down "$p"
	ip netns add "${p}box"
	ip netns add "${p}wan"
	ip netns add "${p}lan"
	ip link add "${p}w0" type veth peer name "${p}w1"
	ip link add "${p}l0" type veth peer name "${p}l1"
	ip link set "${p}w0" netns "${p}box" name eth0
	ip link set "${p}l0" netns "${p}box" name eth1
	ip link set "${p}w1" netns "${p}wan" name eth0
	ip link set "${p}l1" netns "${p}lan" name eth0
	ip -n "${p}box" link set lo up
	ip -n "${p}wan" link set lo up
	ip -n "${p}lan" link set lo up
	ip -n "${p}wan" addr add "$NETNS_WAN_HOST/24" dev eth0
	ip -n "${p}wan" addr add fd00:51::1/64 dev eth0 nodad
	ip -n "${p}wan" link set eth0 up
	ip -n "${p}lan" addr add "$NETNS_LAN_HOST/24" dev eth0
	ip -n "${p}lan" addr add fd00:10::2/64 dev eth0 nodad
	ip -n "${p}lan" link set eth0 up
	ip -n "${p}wan" route add default via "$NETNS_WAN_BOX"
	ip -n "${p}lan" route add default via "$NETNS_LAN_BOX"
}
