#!/usr/bin/env bash
# Emulated board, real softdog: (2) a SIGSTOPped daemon stops petting and
# softdog resets the board within the timeout (5 s) plus a little slack.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/watchdog/common.sh
. "$here/common.sh"
wd_setup sigstop

wd_profile "$work/p.toml"
cat >"$work/guest.sh" <<'GUEST'
nasboot -v watchdog &
pid=$!
sleep 4
echo "guest: SIGSTOP at uptime=$(cut -d' ' -f1 /proc/uptime)"
kill -STOP "$pid"
sleep 30
echo "guest: still alive 30 s after SIGSTOP"
GUEST
log=$work/serial.log
wd_boot "$log" --profile "$work/p.toml" --script "$work/guest.sh"
t_eq "sigstop: the board was reset" 4 "$wd_rc"
wd_log_has "sigstop: softdog fired" 'softdog: Initiating system reboot' "$log"
wd_log_lacks "sigstop: not alive 30 s later" 'still alive 30 s after SIGSTOP' "$log"
stop=$(sed -n 's/.*guest: SIGSTOP at uptime=\([0-9.]*\).*/\1/p' "$log" | head -1)
fire=$(sed -n 's/^\[ *\([0-9.]*\)\] softdog: Initiating system reboot.*/\1/p' "$log" | head -1)
if [ -n "$stop" ] && [ -n "$fire" ]; then
	delay=$(awk -v a="$stop" -v b="$fire" 'BEGIN { printf "%.2f", b - a }')
	# Last pet at most one interval (2.5 s) before the stop: the reset
	# comes 2.5 to 5 s after it; allow 1.5 s of emulation slack.
	if awk -v d="$delay" 'BEGIN { exit !(d >= 2.4 && d <= 6.5) }'; then
		t_ok "sigstop: reset ${delay} s after SIGSTOP (timeout 5 s)"
	else
		t_fail "sigstop: reset ${delay} s after SIGSTOP, want 2.4..6.5"
	fi
else
	t_fail "sigstop: could not time the reset (stop=[$stop] fire=[$fire])"
fi
[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
t_done
