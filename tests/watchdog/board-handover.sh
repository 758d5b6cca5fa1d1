#!/usr/bin/env bash
# Emulated board, real softdog: EBUSY names the holder (BusyBox's
# watchdog); SIGUSR2 hands the open device over (exec of
# handover_command with WDTFD) to a new `nasboot watchdog` that adopts
# it, petting never stops, and SIGTERM still does the magic close.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/watchdog/common.sh
. "$here/common.sh"
wd_setup handover

wd_profile "$work/p.toml" 'handover_command = ["/usr/sbin/nasboot", "-v", "watchdog"]'
cat >"$work/guest.sh" <<'GUEST'
watchdog -F -T 10 -t 2 /dev/watchdog0 &
bb=$!
sleep 1
nasboot watchdog
echo "guest: busy-exit=$?"
kill -TERM "$bb"
wait "$bb"
nasboot -v watchdog &
pid=$!
sleep 3
kill -USR2 "$pid"
sleep 9
echo "guest: alive 9 s after the hand-over"
tr '\0' ' ' <"/proc/$pid/environ" | grep -o 'WDTFD=[0-9]*' | sed 's/^/guest: env /'
kill -TERM "$pid"
wait "$pid"
echo "guest: nasboot-exit=$?"
sleep 7
echo "guest: alive after the close"
GUEST
log=$work/serial.log
wd_boot "$log" --profile "$work/p.toml" --script "$work/guest.sh"
t_eq "handover: board powered off, no reset" 0 "$wd_rc"
wd_log_has "busy: the holder is named" '/dev/watchdog0: busy: process [0-9]+ \(watchdog\) holds it open' "$log"
wd_log_has "busy: exit status 1" 'guest: busy-exit=1' "$log"
wd_log_has "handover: announced" 'handing the watchdog over to /usr/sbin/nasboot \(WDTFD\)' "$log"
wd_log_has "handover: the new process adopted the descriptor" 'watchdog WDTFD=[0-9]+: "Software Watchdog"' "$log"
wd_log_has "handover: the same process runs with WDTFD set" 'guest: env WDTFD=[0-9]+' "$log"
wd_log_has "handover: alive past the timeout" 'guest: alive 9 s after the hand-over' "$log"
wd_log_has "handover: orderly stop after the hand-over" 'guest: nasboot-exit=0' "$log"
wd_log_has "handover: alive after the close" 'guest: alive after the close' "$log"
wd_log_lacks "handover: softdog never fired" 'softdog: Initiating system reboot' "$log"
[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
t_done
