#!/usr/bin/env bash
# SQM on the emulated MIPS 24K board (scripts/board: QEMU malta, Debian's
# mipsel kernel with sch_cake, act_mirred, cls_u32, sch_ingress and ifb as
# modules): tests/board/sqm-bottleneck.sh builds a LAN host, a router, a
# bloated 10/5 Mbit/s modem and a WAN host in network namespaces inside
# the board, and measures ping RTT idle and under one upload and one
# download at once (iperf3), per case: no shaping, the anchor
# (tests/board/sqm-anchor.sh: sqm-scripts' piece_of_cake as tc calls)
# and `nasboot apply` of tests/profiles/sqm-rtr.toml in the router. The
# bloat must be real (none: p95 under load more than 50 ms above idle),
# and nasboot's shaping must take it away (p95 under load within 10 ms
# of idle) while keeping 80% of the shaped rate each way; the anchor's
# figures are shown beside it. Then nasboot's second apply changes
# nothing, the profile without [interface.sqm] removes the qdiscs and the
# IFB, qdisc = "fq_codel" makes HTB with fq_codel, and cake comes back. Needs root (QEMU; no host namespaces).
# About 2 minutes once the packages are cached.
#
# The latency bounds hold only while QEMU gets a host CPU when it wants
# one: tests/sqmboard.sh runs it under SCHED_RR. Where it cannot, and the
# host's other processes (or its hypervisor) take more than
# SQM_HOST_BUSY_MAX percent of the CPUs left beside QEMU's during the
# run (default 25), a latency or throughput check that fails is reported
# as a GAP (never as a pass): the host's scheduler, not the queue, was
# measured.
#
# The rates: at 2 Mbit/s one 1,514-byte packet takes 6 ms to send, so a
# ping behind one in each direction misses a 10 ms bound whatever the
# shaper; at 10/5 Mbit/s the board's CPU is busy but not saturated under
# load, with room for the shaper. An iperf3 client still running 30 s
# after its test should have ended is stuck in iperf3's results exchange:
# it is killed, the servers restarted and the case measured once more; a
# second stall leaves the case without figures, and its checks fail.
# The comparison with the anchor over many runs is scripts/bench-sqm's
# (docs/bench/sqm.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"

# shellcheck source=tests/sqmboard.sh
. "$here/../sqmboard.sh"
HOST_BUSY_MAX=${SQM_HOST_BUSY_MAX:-25}

work=$(mktemp -d /tmp/nasboot-board-sqm.XXXXXX)
log=$work/serial.log
keep() {
	local k=$T_TOP/target/board-tests/${work##*/}
	mkdir -p "${k%/*}"
	cp "$log" "$k.log" 2>/dev/null || true
	echo "serial log kept: $k.log" >&2
}
trap '[ "$T_FAIL" = 0 ] || keep; rm -rf "$work"' EXIT

sqm_fetch
printf '%s\n' 'SQM_CASES="none anchor nasboot"' SQM_SECS=12 SQM_PINGS=40 SQM_CHECKS=1 >"$work/params"
# 600 s: about 2 minutes, and room for a stalled iperf3 case measured again.
sqm_boot "$work/params" "$log" 600
# Contention counts only where QEMU ran without SCHED_RR.
other=0
[ "$sqm_rt" = yes ] || other=$sqm_other
t_eq "board powered off, guest script ran" 0 "$sqm_rc"
sqm_lines "$log" >"$work/sqm"
grep -E '^sqm-result|^sqm: FAIL' "$work/sqm" || true

field() { awk -v c="$1" -v k="$2" '$1 == "sqm-result" && $2 == "case=" c { for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$work/sqm"; }
up_rate=$(sqm_key egress_kbit)
down_rate=$(sqm_key ingress_kbit)

# latency DESC CASE OP MS: load p95 minus idle p95 compared with MS.
latency() {
	local desc=$1 c=$2 op=$3 ms=$4 idle load added
	idle=$(field "$c" idle_p95_ms)
	load=$(field "$c" load_p95_ms)
	if [ -z "$idle" ] || [ -z "$load" ] || [ "$(field "$c" load_n)" -lt 30 ] || [ "$(field "$c" idle_n)" -lt 30 ]; then
		t_fail "$desc: no result for $c (idle [$idle] load [$load])"
		return
	fi
	added=$(awk -v a="$load" -v b="$idle" 'BEGIN { printf "%.2f", a - b }')
	if awk -v a="$added" -v m="$ms" -v op="$op" 'BEGIN { exit !((op == "gt") ? a > m : a <= m) }'; then
		t_ok "$desc: $c p95 $idle ms idle, $load ms loaded (+$added)"
	elif [ "$other" -gt "$HOST_BUSY_MAX" ]; then
		echo "GAP $desc: $c p95 $idle ms idle, $load ms loaded (+$added), but the host's other work took ${other}% of its spare CPU: not checked"
	else
		t_fail "$desc: $c p95 $idle ms idle, $load ms loaded (+$added ms)"
	fi
}
# kept DESC CASE KEY RATE: at least 80% of the shaped RATE.
kept() {
	local got
	got=$(field "$2" "$3")
	if [ -n "$got" ] && [ "$got" -ge $(($4 * 80 / 100)) ]; then
		t_ok "$1: $got of $4 kbit/s"
	elif [ -n "$got" ] && [ "$other" -gt "$HOST_BUSY_MAX" ]; then
		echo "GAP $1: $got of $4 kbit/s, but the host's other work took ${other}% of its spare CPU: not checked"
	else
		t_fail "$1: [$got] of $4 kbit/s (80% needed)"
	fi
}

latency "the modem's buffer bloats: p95 under load more than 50 ms above idle" none gt 50
c=nasboot
latency "$c: p95 under load within 10 ms of idle" "$c" le 10
kept "$c: upload keeps 80% of the shaped rate" "$c" up_kbit "$up_rate"
kept "$c: download keeps 80% of the shaped rate" "$c" down_kbit "$down_rate"
# The anchor is the yardstick, not the product: its figures are shown
# (scripts/bench-sqm compares them over several runs), not checked; one
# late echo among 40 moves a p95 by 10 ms.
echo "anchor (shown, not checked): $(grep '^sqm-result case=anchor' "$work/sqm" | cut -d' ' -f3-)"

has() { if grep -Eq -- "$2" "$work/sqm"; then t_ok "$1"; else t_fail "$1: /$2/ not in the guest's output"; fi; }
hasnt() { if grep -Eq -- "$2" "$work/sqm"; then t_fail "$1: /$2/ in the guest's output"; else t_ok "$1"; fi; }
has "nasboot's apply shaped both ways" "^sqm: nasboot 1 apply: applied 1 action"
has "egress: cake on eth1 at egress_kbit" "^sqm-state nasboot: qdisc cake root bandwidth ${up_rate}Kbit besteffort .* overhead 18$"
has "ingress: cake on ifb4eth1 at ingress_kbit" "^sqm-state nasboot: qdisc cake root bandwidth ${down_rate}Kbit besteffort .* ingress .* overhead 18$"
has "ingress: u32 match-all redirected to ifb4eth1" "^sqm-state nasboot: .*mirred \(Egress Redirect to device ifb4eth1\)"
# The same qdiscs, filter and IFB as the anchor's, but for handles and counters.
if diff <(sed -n 's/^sqm-state anchor: //p' "$work/sqm") <(sed -n 's/^sqm-state nasboot: //p' "$work/sqm") >"$work/state.diff"; then
	t_ok "nasboot's SQM is the anchor's, qdisc for qdisc"
else
	t_fail "nasboot's SQM differs from the anchor's: $(tr '\n' ' ' <"$work/state.diff")"
fi
has "status names the egress shaper and its counters" "^sqm: nasboot status: +sqm eth1: cake bandwidth ${up_rate}kbit .*sent [0-9]+ B .*dropped [0-9]+"
has "status names the ingress shaper" "^sqm: nasboot status: +sqm ifb4eth1: cake bandwidth ${down_rate}kbit .*ingress"
has "status: in sync with the profile" "^sqm: nasboot status: in sync with the profile"
has "second plan: nothing to do" "^sqm-check plan-again: .*nothing to do: the board matches the profile"
has "second apply: exit 0" "^sqm-check apply-again-exit=0$"
has "second apply: no action" "^sqm-check apply-again: applied 0 action\(s\)"
has "without [interface.sqm]: apply exit 0" "^sqm-check remove-exit=0$"
has "without [interface.sqm]: eth1's root back to the default" "^sqm-check remove-qdisc: qdisc noqueue "
hasnt "without [interface.sqm]: no cake on eth1" "^sqm-check remove-qdisc: .*cake"
hasnt "without [interface.sqm]: no ingress qdisc on eth1" "^sqm-check remove-ingress: .*ingress"
has "without [interface.sqm]: ifb4eth1 removed" "^sqm-check remove-ifb=absent$"
has "without [interface.sqm]: a plan after it has nothing to do" "^sqm-check remove-plan-again: .*nothing to do: the board matches the profile"
has "qdisc = \"fq_codel\": apply exit 0" "^sqm-check fq-exit=0$"
for d in eth1 ifb4eth1; do
	has "fq_codel: $d's root is nasboot's HTB, every packet to its class" "^sqm-check fq-qdisc $d: qdisc htb 4e42: root .*default 0x1"
	has "fq_codel: under it, fq_codel as the class's leaf" "^sqm-check fq-qdisc $d: .*qdisc fq_codel 4e43: parent 4e42:1 "
done
has "fq_codel: the upload's class at egress_kbit, overhead 18" "^sqm-check fq-class eth1: class htb 4e42:1 root .*rate ${up_rate}Kbit overhead 18 ceil ${up_rate}Kbit"
has "fq_codel: the download's class at ingress_kbit" "^sqm-check fq-class ifb4eth1: class htb 4e42:1 root .*rate ${down_rate}Kbit overhead 18 ceil ${down_rate}Kbit"
has "fq_codel: the ingress redirect to ifb4eth1 kept" "^sqm-check fq-filter: .*mirred \(Egress Redirect to device ifb4eth1\)"
has "fq_codel: a plan after it has nothing to do" "^sqm-check fq-plan-again: .*nothing to do: the board matches the profile"
has "back to cake: apply exit 0" "^sqm-check cake-again-exit=0$"
has "back to cake: eth1" "^sqm-check cake-again-qdisc eth1: qdisc cake 4e42: root .*bandwidth ${up_rate}Kbit"
has "back to cake: ifb4eth1" "^sqm-check cake-again-qdisc ifb4eth1: qdisc cake 4e42: root .*bandwidth ${down_rate}Kbit"
has "back to cake: a plan after it has nothing to do" "^sqm-check cake-again-plan: .*nothing to do: the board matches the profile"
t_done
