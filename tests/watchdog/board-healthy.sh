#!/usr/bin/env bash
# Emulated board, real softdog: (1) a healthy `nasboot watchdog` keeps the
# board up over more than three timeouts; (4) SIGTERM does the magic
# close: the daemon exits 0 and the board outlives the timeout; (5) `run
# --background`, as the init scripts start it: the command returns with
# the apply's status, the watchdog armed, a stderr pipe not held (the
# `$(...)` returns); the daemon, whose pid is in the pidfile, pets it in
# a child over two timeouts, and SIGTERM closes it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/watchdog/common.sh
. "$here/common.sh"
wd_setup healthy

wd_profile "$work/p.toml"
cat >"$work/guest.sh" <<'GUEST'
nasboot -v watchdog &
pid=$!
sleep 17
echo "guest: alive after 17 s"
kill -TERM "$pid"
wait "$pid"
echo "guest: nasboot-exit=$?"
sleep 8
echo "guest: alive 8 s after the magic close"
out=$(nasboot -v run --background --pidfile /run/nb.pid 2>&1)
echo "guest: bg-exit=$? bg-state=$(cat /sys/class/watchdog/watchdog0/state)"
echo "$out" | sed 's/^/guest: bg-out: /'
pid=$(cat /run/nb.pid)
echo "guest: bg-pid=$pid comm=$(cat "/proc/$pid/comm") parent=$(awk '{ print $4 }' "/proc/$pid/stat")"
sleep 12
echo "guest: bg alive after 12 s, state=$(cat /sys/class/watchdog/watchdog0/state)"
kill -TERM "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 1; done
echo "guest: bg stopped, state=$(cat /sys/class/watchdog/watchdog0/state)"
sleep 8
echo "guest: alive 8 s after the background daemon's close"
GUEST
log=$work/serial.log
wd_boot "$log" --profile "$work/p.toml" --script "$work/guest.sh"
t_eq "healthy: board powered off, no reset" 0 "$wd_rc"
wd_log_has "healthy: driver identity and options logged" '"Software Watchdog" firmware [0-9]+ options SETTIMEOUT\|MAGICCLOSE\|KEEPALIVEPING' "$log"
wd_log_has "healthy: timeout set to 5 s" 'timeout 5 s' "$log"
wd_log_has "healthy: pets at half the timeout" 'petting every 2500 ms' "$log"
wd_log_has "healthy: alive over three timeouts" 'guest: alive after 17 s' "$log"
wd_log_lacks "healthy: softdog never fired" 'softdog: Initiating system reboot' "$log"
wd_log_has "sigterm: magic close logged" 'magic close: stopped' "$log"
wd_log_has "sigterm: exit status 0" 'guest: nasboot-exit=0' "$log"
wd_log_has "sigterm: board outlives the timeout after close" 'guest: alive 8 s after the magic close' "$log"
wd_log_lacks "sigterm: kernel did not complain" 'watchdog did not stop' "$log"
wd_log_has "background: returns 0 with the watchdog armed" 'guest: bg-exit=0 bg-state=active' "$log"
wd_log_has "background: names the daemon's pid" 'guest: bg-out: nasboot: the watchdog daemon goes on as pid [0-9]+' "$log"
wd_log_has "background: the pidfile names a nasboot reparented to init" 'guest: bg-pid=[0-9]+ comm=nasboot parent=1' "$log"
wd_log_has "background: it pets over two timeouts" 'guest: bg alive after 12 s, state=active' "$log"
wd_log_has "background: SIGTERM closes the watchdog" 'guest: bg stopped, state=inactive' "$log"
wd_log_has "background: the board outlives the timeout" "guest: alive 8 s after the background daemon's close" "$log"
[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
t_done
