#!/usr/bin/env bash
# Emulated board, real softdog: (3) a failing health check (a test
# command that exits 1) resets the board only after the policy ran: the
# failure is retried for retry_timeout, the repair command runs once,
# then petting stops and softdog resets the board.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/watchdog/common.sh
. "$here/common.sh"
wd_setup health

wd_profile "$work/p.toml" 'test_command = ["/bin/false"]
retry_timeout = 4
repair_command = ["/bin/touch", "/tmp/repaired"]
max_repairs = 1'
cat >"$work/guest.sh" <<'GUEST'
nasboot -v watchdog &
sleep 60
echo "guest: still alive after 60 s"
GUEST
log=$work/serial.log
wd_boot "$log" --profile "$work/p.toml" --script "$work/guest.sh"
t_eq "health: the board was reset" 4 "$wd_rc"
wd_log_has "health: the failure is logged" 'health check failed: test command /bin/false: exit status 1' "$log"
wd_log_has "health: the repair ran" 'repair 1 of 1: running the repair command' "$log"
wd_log_has "health: the repair command succeeded" 'repair command /bin/touch succeeded' "$log"
wd_log_has "health: gave up after the repair" 'giving up after 1 repair\(s\)' "$log"
wd_log_has "health: softdog fired" 'softdog: Initiating system reboot' "$log"
fail=$(wd_line_no 'health check failed' "$log")
repair=$(wd_line_no 'running the repair command' "$log")
giveup=$(wd_line_no 'giving up after' "$log")
fire=$(wd_line_no 'softdog: Initiating system reboot' "$log")
if [ "$fail" -gt 0 ] && [ "$fail" -lt "$repair" ] && [ "$repair" -lt "$giveup" ] && [ "$giveup" -lt "$fire" ]; then
	t_ok "health: failure, repair, give-up, reset in that order"
else
	t_fail "health: order of lines fail=$fail repair=$repair giveup=$giveup reset=$fire"
fi
[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
t_done
