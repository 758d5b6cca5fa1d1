# shellcheck shell=bash
# Helpers for the firewall suites and scripts/bench-firewall. Sourced after
# tests/lib.sh and scripts/lib/netns.sh.
#
#   fw_packages                 install what the suites use (idempotent)
#   fw_board_up P               netns_board_up, then the box's addresses set
#                               with `ip` (the suites do not depend on
#                               nasboot configuring links), and a far
#                               network behind the WAN host with MTU 1280
#                               (${P}far, 203.0.113.0/24) for path MTU tests
#   fw_board_down P
#   fw_root DIR PROFILE_TEXT    a --root with the profile in etc/, /proc
#                               linked to the real one (kernel release,
#                               IPv6, ip_tables_names) and its own run/
#   fw_legacy_path DIR          a PATH directory whose iptables-restore and
#                               friends are the legacy (x_tables) ones
#   fw_listen NS ADDR_ARGS...   start a socat listener in NS; its pid is
#                               appended to FW_PIDS
#   fw_stop_listeners
#   fw_listening NS SPEC...     wait until NS has the listeners fw_listen
#                               started: SPEC tcp:PORT, tcp6:PORT, udp:PORT
#                               or udp6:PORT (a listening TCP or bound UDP
#                               socket, IPv4 or IPv6; a dual-stack one is
#                               both)
#   fw_bg_check DESC CMD...     t_check's check, started in the background;
#   fw_bg_done                  ... reported, in the order started, once
#                               each has ended

FW_PIDS=()

fw_packages() {
	t_need iproute2 nftables iptables conntrack socat iputils-ping iperf3 ethtool
}

fw_board_up() {
	local p=$1
	netns_board_up "$p"
	ip -n "${p}box" addr add "$NETNS_WAN_BOX/24" dev eth0
	ip -n "${p}box" addr add fd00:51::2/64 dev eth0 nodad
	ip -n "${p}box" addr add "$NETNS_LAN_BOX/24" dev eth1
	ip -n "${p}box" addr add fd00:10::1/64 dev eth1 nodad
	ip -n "${p}box" link set eth0 up
	ip -n "${p}box" link set eth1 up
	ip -n "${p}box" route add default via "$NETNS_WAN_HOST"
	# The far network: box -> WAN host (router) -> far, the last hop with MTU 1280.
	ip netns add "${p}far"
	ip link add "${p}f0" type veth peer name "${p}f1"
	ip link set "${p}f0" netns "${p}wan" name far0
	ip link set "${p}f1" netns "${p}far" name eth0
	ip -n "${p}wan" addr add 203.0.113.254/24 dev far0
	ip -n "${p}wan" link set far0 mtu 1280 up
	ip -n "${p}far" link set lo up
	ip -n "${p}far" link set eth0 mtu 1280 up
	local i
	for i in 1 2 3 4 5 6 7 8; do
		ip -n "${p}far" addr add "203.0.113.$i/24" dev eth0
	done
	ip -n "${p}far" route add default via 203.0.113.254
	ip netns exec "${p}wan" sysctl -qw net.ipv4.ip_forward=1
}

fw_board_down() {
	local p=$1
	fw_stop_listeners
	ip netns del "${p}far" 2>/dev/null || true
	netns_board_down "$p"
}

fw_root() {
	local dir=$1 text=$2
	mkdir -p "$dir/etc" "$dir/run"
	printf '%s' "$text" >"$dir/etc/nasboot.toml"
	ln -sfn /proc "$dir/proc"
}

fw_legacy_path() {
	local dir=$1 t
	mkdir -p "$dir"
	for t in iptables-restore ip6tables-restore iptables-save ip6tables-save; do
		ln -sfn "/usr/sbin/${t%%-*}-legacy-${t#*-}" "$dir/$t"
	done
}

fw_listen() {
	local ns=$1
	shift
	ip netns exec "$ns" socat "$@" &
	FW_PIDS+=("$!")
}

fw_stop_listeners() {
	local pid
	for pid in "${FW_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${FW_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	FW_PIDS=()
}

# A probe that must fail (a dropped SYN, a ping that must go unanswered)
# waits out its whole bound (socat's connect-timeout, ping's -W): run
# one after the other they were most of the suites' time. fw_bg_check
# starts one and fw_bg_done reports them all, each bounded as before, the
# bounds overlapping instead of adding up.
FW_BG_PIDS=()
FW_BG_DESC=()
fw_bg_check() {
	local desc=$1
	shift
	"$@" &
	FW_BG_PIDS+=("$!")
	FW_BG_DESC+=("$desc")
}
fw_bg_done() {
	local i
	for i in "${!FW_BG_PIDS[@]}"; do
		if wait "${FW_BG_PIDS[$i]}"; then t_ok "${FW_BG_DESC[$i]}"; else t_fail "${FW_BG_DESC[$i]}"; fi
	done
	FW_BG_PIDS=()
	FW_BG_DESC=()
}

# fw_listening NS SPEC...: the listeners just started are there, asked
# of the namespace's sockets (ss) every 50 ms, instead of a fixed sleep
# that a loaded host can outlast. After 5 s it says which are missing and
# returns 0: the probes that need them fail and say what they missed.
fw_listening() {
	local ns=$1 end=$((SECONDS + 5))
	shift
	while [ "$SECONDS" -le "$end" ]; do
		ip netns exec "$ns" ss -Hlntu 2>/dev/null | awk -v want="$*" '
			{
				n = split($5, a, ":")
				if ($5 !~ /^\[/) have[$1 ":" a[n]] = 1 # IPv4, or "*" (dual-stack)
				if ($5 !~ /^[0-9]/) have[$1 "6:" a[n]] = 1
			}
			END { k = split(want, w, " "); for (j = 1; j <= k; j++) if (!(w[j] in have)) exit 1 }' && return 0
		sleep 0.05
	done
	echo "fw_listening: $ns: not all of [$*] listening after 5 s" >&2
}
