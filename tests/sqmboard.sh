# shellcheck shell=bash
# The emulated board (scripts/board: QEMU malta, Debian's mipsel kernel)
# running tests/board/sqm-bottleneck.sh: a LAN host, a router, a bloated
# modem and a WAN host in network namespaces inside the board, no host
# NICs. Shared by tests/net/board-sqm.sh and scripts/bench-sqm. Sourced
# after tests/lib.sh.
#
# sqm_boot PARAMS LOG TIMEOUT [RUN-ARGS...]: one boot with the guest
# parameters file PARAMS (tests/board/sqm-bottleneck.sh's SQM_* and
# MODEM_* variables); sets sqm_rc (scripts/board's exit status: 0 when
# the guest script passed), sqm_rt (yes: QEMU ran SCHED_RR) and
# sqm_other: the share (%) of the host's CPU time beside QEMU's one vCPU
# that other processes, or the hypervisor (steal), took during the boot. The board's clock is the host's (no
# -icount), so when QEMU waits for a host CPU the guest's latencies
# measure the host's scheduler, not the queue. So QEMU runs under
# SCHED_RR priority 1 (`chrt -r 1`; the kernel's RT throttling still
# leaves others 5% of each CPU), which holds the figures on a host that
# builds beside it; sqm_rt says whether it did (SQM_RT=0: never).

SQM_BOARD=$T_TOP/scripts/board
SQM_BIN=${SQM_BIN:-$T_DIST/nasboot-$T_BOARD_TARGET}
SQM_PROFILE=${SQM_PROFILE:-$T_TOP/tests/profiles/sqm-rtr.toml}
# Debian's mipsel user space on the board: iproute2's ip and tc (its
# q_atm.so needs libatm1), iperf3, ethtool (the veths' offloads off).
# ping is BusyBox's.
SQM_DEBS=(iproute2 libatm1 iperf3 ethtool)
# fq_codel is built into Debian's malta kernel; ifb makes no devices of
# its own (nasboot and the anchor make ifb4eth1).
SQM_MODULES=(sch_cake sch_htb sch_tbf sch_ingress cls_u32 act_mirred 'ifb numifbs=0' veth)

# sqm_fetch: the kernel, the modules and the packages, cached.
sqm_fetch() {
	if [ ! -x "$SQM_BIN" ]; then
		echo "no binary at $SQM_BIN (run scripts/build $T_BOARD_TARGET)" >&2
		exit 1
	fi
	"$SQM_BOARD" fetch >/dev/null
	"$SQM_BOARD" debs "${SQM_DEBS[@]}" >/dev/null
}

# sqm_host_busy: the host's busy and total jiffies over all CPUs (steal
# counts as busy: another guest had the CPU).
sqm_host_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat; }

# shellcheck disable=SC2034 # sqm_rc, sqm_other: read by the callers
sqm_boot() {
	local params=$1 log=$2 timeout=$3 d m p c q hb0 ht0 hb1 ht1 bpid qcpu=0
	shift 3
	local -a args=(--bin "$SQM_BIN" --script "$T_TOP/tests/board/sqm-bottleneck.sh"
		--file "$T_TOP/tests/board/sqm-anchor.sh:/etc/sqm/sqm-anchor.sh"
		--file "$SQM_PROFILE:/etc/sqm-rtr.toml" --file "$params:/etc/sqm/params"
		--timeout "$timeout" --log "$log")
	for d in "${SQM_DEBS[@]}"; do args+=(--deb "$d"); done
	for m in "${SQM_MODULES[@]}"; do args+=(--module "$m"); done
	local -a pre=()
	sqm_rt=no
	if [ "${SQM_RT:-1}" = 1 ] && chrt -r 1 true 2>/dev/null; then
		pre=(chrt -r 1)
		sqm_rt=yes
	fi
	read -r hb0 ht0 < <(sqm_host_busy)
	${pre[@]+"${pre[@]}"} "$SQM_BOARD" run "${args[@]}" "$@" >"$log.harness" 2>&1 &
	bpid=$!
	# QEMU's own CPU time (utime + stime), read while it runs: the harness
	# runs it under timeout(1), whose command line names the log too.
	while kill -0 "$bpid" 2>/dev/null; do
		q=''
		for p in $(pgrep -f -- "file:$log" || true); do
			case $(cat "/proc/$p/comm" 2>/dev/null) in qemu-system*) q=$p ;; esac
		done
		if [ -n "$q" ]; then
			c=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$q/stat" 2>/dev/null) || c=''
			[ -z "$c" ] || qcpu=$c
		fi
		sleep 1
	done
	sqm_rc=0
	wait "$bpid" || sqm_rc=$?
	read -r hb1 ht1 < <(sqm_host_busy)
	sqm_other=$(awk -v b=$((hb1 - hb0)) -v t=$((ht1 - ht0)) -v q="$qcpu" -v n="$(nproc)" \
		'BEGIN { free = t * (n - 1) / n; o = b - q; if (o < 0) o = 0; printf "%d\n", (free > 0) ? 100 * o / free : 100 }')
	echo "host: $(nproc) CPUs; beside QEMU (${qcpu} jiffies, SCHED_RR: $sqm_rt), others took ${sqm_other}% of the CPU time left"
}

# sqm_lines LOG: the guest's result lines, tc's statistics left out.
sqm_lines() { grep -a '^sqm' "$1" | grep -av ' tc: ' | tr -d '\r'; }

# sqm_key KEY: the profile's [interface.sqm] value of KEY.
sqm_key() { awk -v k="$1" '/^\[/ { in_sqm = ($0 == "[interface.sqm]") } in_sqm && $1 == k { v = $3; gsub(/"/, "", v); print v }' "$SQM_PROFILE"; }
