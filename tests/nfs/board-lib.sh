# shellcheck shell=bash
# Shared by tests/nfs/board.sh and scripts/bench-nfs: the emulated board
# (scripts/board) as an NFS server. Its eth0 is the WAN (no link partner),
# its eth1 the LAN: a tap device in a network namespace holding the client
# addresses 192.168.77.1/24 (exported) and 192.168.78.1/24 (not exported).
# Sourced after tests/lib.sh.

NFSB_TARGET=mipsel-unknown-linux-gnu
NFSB_BIN=$T_DIST/nasboot-$NFSB_TARGET
NFSB_BOARD=$T_TOP/scripts/board
NFSB_PROFILE=${NFSB_PROFILE:-$T_TOP/tests/profiles/board-nfs.toml}
# Debian's mipsel user space the guest needs, and the kernel modules.
NFSB_DEBS=(nfs-kernel-server rpcbind nftables iptables netbase)
NFSB_MODULES=(nfsd)
NFSB_WITH_MODULES=(nft_limit nft_log nf_log_syslog nft_ct iptable_filter iptable_nat
	xt_state xt_tcpudp xt_MASQUERADE ipt_REJECT)

# nfsb_setup NAME: scratch dir $work (removed on exit unless kept), the
# namespace $nfsb_ns with its tap, and the board's cache.
nfsb_setup() {
	if [ ! -x "$NFSB_BIN" ]; then
		echo "no binary at $NFSB_BIN (run scripts/build $NFSB_TARGET)" >&2
		exit 1
	fi
	work=$(mktemp -d "/tmp/nasboot-nfsb-$1.XXXXXX")
	log=$work/serial.log
	nfsb_ns=nfsb-$1-$$
	nfsb_pid=''
	trap nfsb_cleanup EXIT
	"$NFSB_BOARD" fetch >/dev/null
	# Downloads happen here: the board itself runs in a namespace with no route out.
	"$NFSB_BOARD" debs "${NFSB_DEBS[@]}" >/dev/null
	ip netns add "$nfsb_ns"
	ip -n "$nfsb_ns" link set lo up
	ip netns exec "$nfsb_ns" ip tuntap add dev tap0 mode tap
	ip -n "$nfsb_ns" addr add 192.168.77.1/24 dev tap0
	ip -n "$nfsb_ns" addr add 192.168.78.1/24 dev tap0
	ip -n "$nfsb_ns" link set tap0 up
}

nfsb_cleanup() {
	if [ -n "$nfsb_pid" ]; then
		nfsb_stop
		wait "$nfsb_pid" 2>/dev/null || true
	fi
	[ "${T_FAIL:-0}" = 0 ] || nfsb_keep
	ip netns del "$nfsb_ns" 2>/dev/null || true
	rm -rf "$work"
}

# nfsb_keep: copy the serial log to target/nfs-tests/ (a failed run).
nfsb_keep() {
	mkdir -p "$T_TOP/target/nfs-tests"
	cp "$log" "$T_TOP/target/nfs-tests/${work##*/}.log"
	cp "$work/harness.out" "$T_TOP/target/nfs-tests/${work##*/}.harness" 2>/dev/null || true
	echo "serial log kept: $T_TOP/target/nfs-tests/${work##*/}.log" >&2
}

# nfsb_boot SCRIPT TIMEOUT [RUN-ARGS...]: boot the board in the background.
nfsb_boot() {
	local script=$1 timeout=$2 d m
	shift 2
	local -a args=(--bin "$NFSB_BIN" --profile "$NFSB_PROFILE" --script "$script"
		--nic e1000:none --nic e1000:tap:tap0 --timeout "$timeout" --log "$log")
	for d in "${NFSB_DEBS[@]}"; do args+=(--deb "$d"); done
	for m in "${NFSB_MODULES[@]}"; do args+=(--module "$m"); done
	for m in "${NFSB_WITH_MODULES[@]}"; do args+=(--with-module "$m"); done
	: >"$log"
	ip netns exec "$nfsb_ns" "$NFSB_BOARD" run "${args[@]}" "$@" >"$work/harness.out" 2>&1 &
	nfsb_pid=$!
}

# nfsb_wait_for ERE SECONDS: wait until the serial log matches.
nfsb_wait_for() {
	local i
	for ((i = 0; i < $2 * 2; i++)); do
		grep -Eq -- "$1" "$log" 2>/dev/null && return 0
		kill -0 "$nfsb_pid" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

nfsb_wait_ready() { nfsb_wait_for 'guest: nfs ready' "$1"; }

# nfsb_client CMD...: run a client command in the LAN namespace.
nfsb_client() { ip netns exec "$nfsb_ns" "$@"; }

# nfsb_release: let the guest script go on (it waits in `nc -l -p 7000`);
# if the guest cannot be reached, stop the board instead.
nfsb_release() {
	local i
	for i in 1 2 3 4 5; do
		nfsb_client bash -c 'exec 3<>/dev/tcp/192.168.77.2/7000 && echo go >&3' 2>/dev/null && return 0
		sleep 1
	done
	echo "board unreachable on 192.168.77.2:7000: stopping it" >&2
	nfsb_stop
}

nfsb_stop() {
	if [ -n "$nfsb_pid" ] && kill -0 "$nfsb_pid" 2>/dev/null; then
		pkill -f -- "-serial file:$log" 2>/dev/null || kill "$nfsb_pid" 2>/dev/null || true
	fi
}

# nfsb_finish: wait for the board to power off; sets nfsb_rc (scripts/board's
# exit status: 0 poweroff with the guest script passing).
nfsb_finish() {
	set +e
	wait "$nfsb_pid"
	# shellcheck disable=SC2034 # read by the suites
	nfsb_rc=$?
	set -e
	nfsb_pid=''
}

# nfsb_log_has DESC ERE
nfsb_log_has() {
	if grep -Eq -- "$2" "$log"; then t_ok "$1"; else t_fail "$1: /$2/ not in the serial log"; fi
}
