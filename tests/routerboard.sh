# shellcheck shell=bash
# The emulated board (scripts/board) as a router: two e1000 NICs, each on a
# host tap, with a LAN host network namespace behind one and a WAN host
# namespace behind the other, so that traffic between them is routed by
# the board's kernel. Shared by tests/firewall/board-router.sh and
# scripts/bench-forward. Sourced after tests/lib.sh.
#
#   WAN host  nbrt-wan-PID, veth nbrtwPID: 198.51.100.1/24, fd00:51::1/64;
#             a route to the LAN subnets via the board (a WAN neighbour that
#             aims at the LAN directly: the attacker's view, and what plain
#             routing without NAT needs)
#   board     eth0 = WAN 198.51.100.2/24, fd00:51::2/64
#             eth1 = LAN 192.168.1.1/24, fd00:1::1/64
#   LAN host  nbrt-lan-PID, veth nbrtlPID: 192.168.1.10/24, fd00:1::10/64,
#             default routes via the board
#
# RB_BOARD_NAME picks scripts/board's --board (default mipsel, the above;
# scripts/bench-forward --board). A built big-endian board (ppc, mips-be,
# sparc64) runs its own nasboot (tests/beboard.sh's BE_TARGET), has its
# user space built in the initramfs (BusyBox, iptables legacy, nft when
# built) and no modules (everything built in); its WAN NIC is an e1000
# and its LAN NIC the second model tests/beboard.sh names (sparc64: the
# Happy Meal, hme, which the kernel names eth1 after the e1000 anyway).
#
# QEMU runs in a namespace of its own (nbrt-brd-PID) holding both taps,
# each bridged to a veth whose other end is its host's link, so the two
# hosts share nothing but the board and each tap stays in the namespace
# QEMU opened it in.

RB_BOARD_NAME=${RB_BOARD_NAME:-mipsel}
RB_BOARD=$T_TOP/scripts/board
RB_HARNESS=("$RB_BOARD" --board "$RB_BOARD_NAME")
if [ "$RB_BOARD_NAME" = mipsel ]; then
	RB_BUILT=0
	RB_TARGET=$T_BOARD_TARGET # tests/lib.sh
else
	RB_BUILT=1
	NASBOOT_BE_BOARD=$RB_BOARD_NAME
	# shellcheck source=tests/beboard.sh
	. "$T_TOP/tests/beboard.sh"
	RB_TARGET=$BE_TARGET
fi
RB_BIN=${RB_BIN:-$T_DIST/nasboot-$RB_TARGET}
RB_LOAD=$T_TOP/tests/board/fwd-load.py
RB_PROFILE=${RB_PROFILE:-$T_TOP/tests/profiles/board-router.toml}
# The NIC model of both links (scripts/board run --nic; the board puts
# the second in PCI slot 20, on an interrupt line of its own).
RB_NIC=${RB_NIC:-e1000}
# RB_WAN_NIC, RB_LAN_NIC: each link's own (a built board's LAN defaults
# to its second model).
RB_WAN_NIC=${RB_WAN_NIC:-$RB_NIC}
if [ "$RB_BUILT" = 1 ]; then
	RB_LAN_NIC=${RB_LAN_NIC:-$BE_NIC2}
else
	RB_LAN_NIC=${RB_LAN_NIC:-$RB_NIC}
fi
# Debian's mipsel user space on the board: nft, iptables(-legacy)-restore,
# conntrack -L.
RB_DEBS=(nftables iptables conntrack netbase)
# Loaded at boot: routing and the flowtable fast path (Debian's malta
# kernel has them as modules; nf_flow_table_inet registers the inet
# flowtable type, nft_flow_offload the `flow add` expression).
RB_MODULES=(nf_flow_table nf_flow_table_inet nft_flow_offload)
# Included, loaded on demand (nft and iptables-restore ask the kernel,
# which runs the board's modprobe): NAT, conntrack, fw4's helpers,
# reject, limit (amanda's helper needs the kmp text search), the Bubba 2's x_tables matches.
RB_WITH_MODULES=(nft_ct nft_objref nft_nat nft_masq nft_chain_nat nft_redir nft_reject_inet nft_limit nft_log
	nf_log_syslog nft_fib_inet nf_conntrack_ftp nf_conntrack_tftp nf_conntrack_sip
	nf_conntrack_amanda nf_conntrack_h323 nf_conntrack_irc nf_conntrack_netbios_ns
	nf_conntrack_pptp nf_conntrack_sane nf_conntrack_snmp ts_kmp
	iptable_filter iptable_nat iptable_raw iptable_mangle xt_state xt_tcpudp xt_MASQUERADE ipt_REJECT
	xt_conntrack xt_limit xt_LOG xt_multiport xt_CT xt_TCPMSS ip6table_filter ip6table_raw
	ip6table_mangle ip6t_frag nf_conntrack_netlink)

RB_WAN_HOST=198.51.100.1
RB_WAN_ADDR=198.51.100.2
RB_LAN_ADDR=192.168.1.1
RB_LAN_HOST=192.168.1.10

# rb_setup NAME: scratch dir $work (removed on exit unless kept), the three
# namespaces and the two taps, and the board's cache.
rb_setup() {
	if [ ! -x "$RB_BIN" ]; then
		echo "no binary at $RB_BIN (run scripts/build $RB_TARGET)" >&2
		exit 1
	fi
	work=$(mktemp -d "/tmp/nasboot-rb-$1.XXXXXX")
	log=$work/serial.log
	rb_brd=nbrt-brd-$$
	rb_lan=nbrt-lan-$$
	rb_wan=nbrt-wan-$$
	rb_ltap=nbrtl$$
	rb_wtap=nbrtw$$
	rb_pid=''
	rb_bg=()
	trap rb_cleanup EXIT
	"${RB_HARNESS[@]}" fetch >/dev/null
	# Downloads happen here: the board runs in a namespace with no route out.
	[ "$RB_BUILT" = 1 ] || "${RB_HARNESS[@]}" debs "${RB_DEBS[@]}" >/dev/null
	local ns
	for ns in "$rb_brd" "$rb_lan" "$rb_wan"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	local side tap host br
	for side in w l; do
		tap=nbrt${side}t$$
		br=nbrt${side}b$$
		host=$rb_wan
		[ "$side" = l ] && host=$rb_lan
		ip netns exec "$rb_brd" ip tuntap add dev "$tap" mode tap
		ip -n "$rb_brd" link add "$br" type bridge stp_state 0 forward_delay 0
		ip -n "$rb_brd" link add "nbrt${side}v$$" type veth peer name "nbrt$side$$" netns "$host"
		ip -n "$rb_brd" link set "$tap" master "$br"
		ip -n "$rb_brd" link set "nbrt${side}v$$" master "$br"
		ip -n "$rb_brd" link set "$tap" up
		ip -n "$rb_brd" link set "nbrt${side}v$$" up
		ip -n "$rb_brd" link set "$br" up
	done
}

rb_cleanup() {
	local p
	for p in "${rb_bg[@]}"; do kill "$p" 2>/dev/null || true; done
	if [ -n "$rb_pid" ]; then
		rb_stop
		wait "$rb_pid" 2>/dev/null || true
	fi
	[ "${T_FAIL:-0}" = 0 ] || rb_keep
	ip netns del "$rb_lan" 2>/dev/null || true
	ip netns del "$rb_wan" 2>/dev/null || true
	ip netns del "$rb_brd" 2>/dev/null || true
	rm -rf "$work"
}

# rb_keep: copy the serial log to target/board-tests/ (a failed run).
rb_keep() {
	local keep=$T_TOP/target/board-tests/${work##*/}
	mkdir -p "${keep%/*}"
	cp "$log" "$keep.log" 2>/dev/null || true
	cp "$work/harness.out" "$keep.harness" 2>/dev/null || true
	echo "serial log kept: $keep.log" >&2
}

# rb_boot SCRIPT TIMEOUT [RUN-ARGS...]: boot the board in the background
# and address the hosts.
rb_boot() {
	local script=$1 timeout=$2 d m
	shift 2
	local -a args=(--bin "$RB_BIN" --profile "$RB_PROFILE" --script "$script"
		--timeout "$timeout" --log "$log"
		--nic "$RB_WAN_NIC:tap:nbrtwt$$" --nic "$RB_LAN_NIC:tap:nbrtlt$$")
	if [ "$RB_BUILT" = 0 ]; then
		for d in "${RB_DEBS[@]}"; do args+=(--deb "$d"); done
		for m in "${RB_MODULES[@]}"; do args+=(--module "$m"); done
		for m in "${RB_WITH_MODULES[@]}"; do args+=(--with-module "$m"); done
	fi
	: >"$log"
	ip netns exec "$rb_brd" "${RB_HARNESS[@]}" run "${args[@]}" "$@" >"$work/harness.out" 2>&1 &
	rb_pid=$!
	ip -n "$rb_wan" addr add "$RB_WAN_HOST/24" dev "$rb_wtap"
	ip -n "$rb_wan" addr add fd00:51::1/64 dev "$rb_wtap" nodad
	ip -n "$rb_wan" link set "$rb_wtap" up
	ip -n "$rb_wan" route add 192.168.1.0/24 via "$RB_WAN_ADDR"
	ip -n "$rb_wan" route add fd00:1::/64 via fd00:51::2
	ip -n "$rb_lan" addr add "$RB_LAN_HOST/24" dev "$rb_ltap"
	ip -n "$rb_lan" addr add fd00:1::10/64 dev "$rb_ltap" nodad
	ip -n "$rb_lan" link set "$rb_ltap" up
	ip -n "$rb_lan" route add default via "$RB_LAN_ADDR"
	ip -n "$rb_lan" route add default via fd00:1::1
}

# rb_wait_for ERE SECONDS: wait until the serial log matches.
rb_wait_for() {
	local i
	for ((i = 0; i < $2 * 2; i++)); do
		grep -Eq -- "$1" "$log" 2>/dev/null && return 0
		kill -0 "$rb_pid" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

# rb_lan_host CMD... / rb_wan_host CMD...: run in that host's namespace.
rb_lan_host() { ip netns exec "$rb_lan" "$@"; }
rb_wan_host() { ip netns exec "$rb_wan" "$@"; }

# rb_serve NS ARGS...: a background fwd-load.py server in namespace NS,
# killed on exit.
rb_serve() {
	local ns=$1
	shift
	ip netns exec "$ns" /usr/bin/python3 "$RB_LOAD" "$@" &
	rb_bg+=($!)
}

# rb_load_lan ARGS... / rb_load_wan ARGS...: fwd-load.py on that host.
rb_load_lan() { rb_lan_host /usr/bin/python3 "$RB_LOAD" "$@"; }
rb_load_wan() { rb_wan_host /usr/bin/python3 "$RB_LOAD" "$@"; }

# rb_ctl CMD: one command to the guest's control loop (nc -l -p 7000 on
# the board, reached from the LAN host); prints the answer.
rb_ctl() {
	local reply='' i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		# shellcheck disable=SC2016 # $1, $2 and $r belong to the inner bash
		if reply=$(rb_lan_host bash -c 'exec 3<>"/dev/tcp/$2/7000" && echo "$1" >&3 && read -r -t 120 r <&3 && echo "$r"' _ "$1" "$RB_LAN_ADDR" 2>/dev/null) && [ -n "$reply" ]; then
			break
		fi
		sleep 0.5
	done
	echo "$reply"
}

rb_stop() {
	if [ -n "$rb_pid" ] && kill -0 "$rb_pid" 2>/dev/null; then
		pkill -f -- "-serial file:$log" 2>/dev/null || kill "$rb_pid" 2>/dev/null || true
	fi
}

# rb_finish: wait for the board to power off; sets rb_rc (scripts/board's
# exit status: 0 poweroff with the guest script passing).
rb_finish() {
	set +e
	wait "$rb_pid"
	# shellcheck disable=SC2034 # read by the suites
	rb_rc=$?
	set -e
	rb_pid=''
}

# rb_log_has DESC ERE
rb_log_has() {
	if grep -Eq -- "$2" "$log"; then t_ok "$1"; else t_fail "$1: /$2/ not in the serial log"; fi
}
