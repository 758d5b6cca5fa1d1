#!/usr/bin/env bash
# Emulated board, real softdog, CPU starvation: a busy loop at SCHED_FIFO
# priority 5 (util-linux chrt, RT throttling off: sched_rt_runtime_us=-1,
# so the loop really owns the one CPU) runs for 20 s twice in one boot.
# (1) With rt_priority = 10 nasboot (SCHED_RR 10) preempts the loop and
# keeps petting: the board lives through it; (1b) a loop at the same
# priority (SCHED_RR 10, 12 s) shares the CPU round-robin and nasboot
# still pets. (2) The same daemon without rt_priority (SCHED_OTHER) never
# runs while the FIFO loop spins: softdog resets the board. Timeout 5 s,
# pet every 2.5 s. Boots with `--deb util-linux` for chrt. About 1 minute.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/watchdog/common.sh
. "$here/common.sh"
wd_setup starve

wd_profile "$work/rt.toml" 'rt_priority = 10'
wd_profile "$work/nort.toml"
cat >"$work/guest.sh" <<'GUEST'
echo -1 >/proc/sys/kernel/sched_rt_runtime_us
busy() { # SECONDS [CHRT-POLICY PRIO]: spin for that long (shell builtins only), default SCHED_FIFO 5
	chrt "${2:--f}" "${3:-5}" sh -c 'chrt -p $$; read -r u _ </proc/uptime; end=$((${u%.*} + '"$1"'))
		while read -r u _ </proc/uptime; [ "${u%.*}" -lt "$end" ]; do :; done'
}
nasboot -v -c /etc/rt.toml watchdog &
pid=$!
sleep 8
echo "guest: phase 1 busy loop starts"
busy 20
echo "guest: phase 1 alive after the busy loop"
busy 12 -r 10
echo "guest: phase 1b alive after the same-priority loop"
kill -TERM "$pid"
wait "$pid"
sleep 1
nasboot -v -c /etc/nort.toml watchdog &
sleep 8
echo "guest: phase 2 busy loop starts"
busy 20
echo "guest: phase 2 alive after the busy loop"
GUEST
log=$work/serial.log
"$WD_BOARD" debs util-linux >/dev/null
wd_boot "$log" --file "$work/rt.toml:/etc/rt.toml" --file "$work/nort.toml:/etc/nort.toml" \
	--deb util-linux --script "$work/guest.sh" --timeout 240
t_eq "starve: the board was reset (phase 2)" 4 "$wd_rc"
wd_log_has "starve: SCHED_RR priority 10 applied in phase 1" 'SCHED_RR priority 10' "$log"
wd_log_has "starve: the loop ran at SCHED_FIFO" "scheduling policy: SCHED_FIFO" "$log"
wd_log_has "starve: rt_priority kept petting through 20 s of busy loop" 'guest: phase 1 alive after the busy loop' "$log"
wd_log_has "starve: a same-priority loop (SCHED_RR 10) shares the CPU: still petting" 'guest: phase 1b alive after the same-priority loop' "$log"
wd_log_has "starve: the phase 1b loop ran at SCHED_RR 10" "scheduling policy: SCHED_RR" "$log"
wd_log_has "starve: phase 2 started" 'guest: phase 2 busy loop starts' "$log"
wd_log_lacks "starve: without rt_priority the board did not outlive the loop" 'guest: phase 2 alive' "$log"
p2=$(wd_line_no 'guest: phase 2 busy loop starts' "$log")
fire=$(wd_line_no 'softdog: Initiating system reboot' "$log")
if [ "$p2" -gt 0 ] && [ "$fire" -gt "$p2" ]; then
	t_ok "starve: softdog fired only during phase 2"
else
	t_fail "starve: softdog line $fire, phase 2 start line $p2"
fi
[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
t_done
