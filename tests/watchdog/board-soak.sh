#!/usr/bin/env bash
# Emulated board, real softdog: the short soak. scripts/bench-soak with
# 25 s of guest time (5 pet intervals) per tool after a 12 s warm-up,
# guest clock at wall speed (--icount off: QEMU's idle warp, which the
# hour-long run uses, now and then leaves the guest asleep): `nasboot watchdog`
# with the /proc health checks (load, MemAvailable, pidfile, heartbeat),
# then BusyBox `watchdog`, in one boot. The board must power off (no
# reset); nasboot's VmRSS and VmHWM must not grow between the samples; it
# wakes once per 5 s pet interval (the switches over the soak are the
# intervals, give or take the one in flight at a sample). The hour-long
# run is `scripts/bench-soak` (docs/bench/soak.md). About 1.5 minutes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/watchdog/common.sh
. "$here/common.sh"
wd_setup soak

seconds=25
set +e
"$T_TOP/scripts/bench-soak" --seconds "$seconds" --warmup 12 --icount off --bin "$WD_BIN" --out "$work/soak.md" >"$work/bench.log" 2>&1
rc=$?
set -e
t_eq "soak: the board powered off with no reset" 0 "$rc"
get() { # TOOL WHEN KEY
	sed -n "s/^soak: tool=$1 when=$2 .*$3=\([0-9.]*\).*/\1/p" "$work/soak.md"
}
for t in nasboot busybox; do
	for w in start end; do
		v=$(get "$t" "$w" rss_kb)
		if [ -n "$v" ]; then t_ok "soak: $t sampled at $w (VmRSS $v kB)"; else t_fail "soak: no $t $w sample"; fi
	done
done
if [ "$rc" -eq 0 ]; then
	t_eq "soak: nasboot VmRSS did not grow" "$(get nasboot start rss_kb)" "$(get nasboot end rss_kb)"
	t_eq "soak: nasboot VmHWM did not grow" "$(get nasboot start hwm_kb)" "$(get nasboot end hwm_kb)"
	# A wake-up is a voluntary switch (sleeping in sigtimedwait, woken).
	sw=$(($(get nasboot end vcsw) - $(get nasboot start vcsw)))
	iv=$((seconds / 5))
	if [ "$sw" -ge $((iv - 1)) ] && [ "$sw" -le $((iv + 1)) ]; then
		t_ok "soak: nasboot woke $sw times in $iv intervals"
	else
		t_fail "soak: nasboot woke $sw times in $iv intervals"
	fi
	wd_log_lacks "soak: no health check failed" 'health check failed' "$work/soak-serial.log"
fi
[ "$T_FAIL" -eq 0 ] || { cat "$work/bench.log" >&2; wd_keep "$work/soak-serial.log"; }
t_done
