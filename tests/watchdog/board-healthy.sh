#!/usr/bin/env bash
# Emulated board, real softdog: (1) a healthy `nasboot watchdog` keeps the
# board up over more than three timeouts; (4) SIGTERM does the magic
# close: the daemon exits 0 and the board outlives the timeout.
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
[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
t_done
