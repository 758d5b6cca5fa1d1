# shellcheck shell=bash
# The emulated board (scripts/board) with its LAN on a tap device in a
# network namespace that holds the LAN hosts 192.168.77.1/24 and
# 192.168.78.1/24; the board is 192.168.77.2. Shared by tests/nfs/board.sh,
# tests/net/board-e1000.sh and scripts/bench-nfs. Sourced after
# tests/lib.sh; set the LB_* settings (defaults: the NFS server) before
# calling lb_setup.

LB_TARGET=$T_BOARD_TARGET # tests/lib.sh
LB_BIN=$T_DIST/nasboot-$LB_TARGET
LB_BOARD=$T_TOP/scripts/board
LB_PROFILE=${LB_PROFILE:-$T_TOP/tests/profiles/board-nfs.toml}
# NICs in order (eth0, eth1): the default is eth0 = WAN with no link
# partner, eth1 = LAN on the tap.
LB_NICS=(e1000:none e1000:tap:tap0)
# Debian's mipsel user space the guest needs, and the kernel modules.
LB_DEBS=(nfs-kernel-server nfs-common rpcbind nftables iptables netbase)
LB_MODULES=(nfsd)
LB_WITH_MODULES=(nft_limit nft_log nf_log_syslog nft_ct iptable_filter iptable_nat
	xt_state xt_tcpudp xt_MASQUERADE ipt_REJECT ip6table_filter xt_limit xt_LOG xt_multiport xt_CT
	iptable_raw ip6table_raw xt_conntrack ip6t_frag)

# lb_setup NAME: scratch dir $work (removed on exit unless kept), the
# namespace $lb_ns with its tap, and the board's cache.
lb_setup() {
	if [ ! -x "$LB_BIN" ]; then
		echo "no binary at $LB_BIN (run scripts/build $LB_TARGET)" >&2
		exit 1
	fi
	work=$(mktemp -d "/tmp/nasboot-lb-$1.XXXXXX")
	log=$work/serial.log
	lb_ns=lb-$1-$$
	lb_pid=''
	trap lb_cleanup EXIT
	"$LB_BOARD" fetch >/dev/null
	# Downloads happen here: the board itself runs in a namespace with no route out.
	[ ${#LB_DEBS[@]} = 0 ] || "$LB_BOARD" debs "${LB_DEBS[@]}" >/dev/null
	ip netns add "$lb_ns"
	ip -n "$lb_ns" link set lo up
	ip netns exec "$lb_ns" ip tuntap add dev tap0 mode tap
	ip -n "$lb_ns" addr add 192.168.77.1/24 dev tap0
	ip -n "$lb_ns" addr add 192.168.78.1/24 dev tap0
	ip -n "$lb_ns" link set tap0 up
}

lb_cleanup() {
	if [ -n "$lb_pid" ]; then
		lb_stop
		wait "$lb_pid" 2>/dev/null || true
	fi
	[ "${T_FAIL:-0}" = 0 ] || lb_keep
	ip netns del "$lb_ns" 2>/dev/null || true
	rm -rf "$work"
}

# lb_keep: copy the serial log to target/board-tests/ (a failed run).
lb_keep() {
	local keep=$T_TOP/target/board-tests/${work##*/}
	mkdir -p "${keep%/*}"
	cp "$log" "$keep.log"
	cp "$work/harness.out" "$keep.harness" 2>/dev/null || true
	echo "serial log kept: $keep.log" >&2
}

# lb_boot SCRIPT TIMEOUT [RUN-ARGS...]: boot the board in the background.
lb_boot() {
	local script=$1 timeout=$2 d m
	shift 2
	local -a args=(--bin "$LB_BIN" --profile "$LB_PROFILE" --script "$script"
		--timeout "$timeout" --log "$log")
	for d in "${LB_NICS[@]}"; do args+=(--nic "$d"); done
	for d in "${LB_DEBS[@]}"; do args+=(--deb "$d"); done
	for m in "${LB_MODULES[@]}"; do args+=(--module "$m"); done
	for m in "${LB_WITH_MODULES[@]}"; do args+=(--with-module "$m"); done
	: >"$log"
	ip netns exec "$lb_ns" "$LB_BOARD" run "${args[@]}" "$@" >"$work/harness.out" 2>&1 &
	lb_pid=$!
}

# lb_wait_for ERE SECONDS: wait until the serial log matches.
lb_wait_for() {
	local i
	for ((i = 0; i < $2 * 2; i++)); do
		grep -Eq -- "$1" "$log" 2>/dev/null && return 0
		kill -0 "$lb_pid" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

lb_wait_ready() { lb_wait_for 'guest: nfs ready' "$1"; }

# lb_client CMD...: run a client command in the LAN namespace.
lb_client() { ip netns exec "$lb_ns" "$@"; }

# lb_release: let the guest script go on (it waits in `nc -l -p 7000`);
# if the guest cannot be reached, stop the board instead.
lb_release() {
	local i
	for i in 1 2 3 4 5; do
		lb_client bash -c 'exec 3<>/dev/tcp/192.168.77.2/7000 && echo go >&3' 2>/dev/null && return 0
		sleep 1
	done
	echo "board unreachable on 192.168.77.2:7000: stopping it" >&2
	lb_stop
}

lb_stop() {
	if [ -n "$lb_pid" ] && kill -0 "$lb_pid" 2>/dev/null; then
		pkill -f -- "-serial file:$log" 2>/dev/null || kill "$lb_pid" 2>/dev/null || true
	fi
}

# lb_finish: wait for the board to power off; sets lb_rc (scripts/board's
# exit status: 0 poweroff with the guest script passing).
lb_finish() {
	set +e
	wait "$lb_pid"
	# shellcheck disable=SC2034 # read by the suites
	lb_rc=$?
	set -e
	lb_pid=''
}

# lb_log_has DESC ERE
lb_log_has() {
	if grep -Eq -- "$2" "$log"; then t_ok "$1"; else t_fail "$1: /$2/ not in the serial log"; fi
}
