#!/usr/bin/env bash
# A big-endian board's watchdog (tests/beboard.sh; ppc: QEMU's i6300esb
# PCI card and the kernel's i6300esb driver; mips-be: softdog), with the board's own
# static nasboot: (1) healthy, no reset over more than three timeouts of
# petting every 2.5 s, with the driver's WDIOC_GETSUPPORT identity logged
# (i6300esb: "i6300ESB timer" ... SETTIMEOUT|MAGICCLOSE|KEEPALIVEPING;
# softdog: "Software Watchdog") and the 5 s timeout taken (sysfs agrees);
# (2) SIGTERM: magic close, sysfs says inactive, the board outlives the
# timeout; (3) SIGSTOP: the card resets the board 2.5 to 5 s after the
# stop (QEMU leaves through -no-reboot; on sparc64 the card's
# -watchdog-action poweroff ends QEMU; mips-be: softdog's "Initiating
# system reboot"). The boot-loop backoff is be-bootloop.sh's. Two boots,
# about 45 s.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/beboard.sh
. "$here/../beboard.sh"
be_setup watchdog
be_wd_profile "$work/p.toml"

# (1) and (2): healthy for 17 s (timeout 5), then SIGTERM; alive 8 s later.
cat >"$work/healthy.sh" <<'GUEST'
ls /dev/watchdog* | tr '\n' ' ' | sed 's/^/guest: devices /'; echo
cat /sys/class/watchdog/watchdog0/identity | sed 's/^/guest: sysfs identity=/'
nasboot -v watchdog &
pid=$!
sleep 17
echo "guest: alive after 17 s"
cat /sys/class/watchdog/watchdog0/timeout | sed 's/^/guest: sysfs timeout=/'
cat /sys/class/watchdog/watchdog0/state | sed 's/^/guest: sysfs state=/'
kill -TERM "$pid"
wait "$pid"
echo "guest: nasboot-exit=$?"
cat /sys/class/watchdog/watchdog0/state | sed 's/^/guest: sysfs state-after=/'
sleep 8
echo "guest: alive 8 s after the magic close"
GUEST
log=$work/healthy.log
be_boot "$log" 90 --profile "$work/p.toml" --script "$work/healthy.sh"
t_eq "healthy: board powered off, no reset" 0 "$be_rc"
be_has "watchdog0 is the board's driver ($BE_WD_IDENTITY)" "guest: sysfs identity=$BE_WD_IDENTITY" "$log"
be_has "healthy: nasboot logs the driver's identity and options" "\"$BE_WD_IDENTITY\" firmware [0-9]+ options SETTIMEOUT\\|MAGICCLOSE\\|KEEPALIVEPING" "$log"
be_has "healthy: timeout 5 s taken by the driver" 'timeout 5 s' "$log"
be_has "healthy: sysfs agrees (timeout 5)" 'guest: sysfs timeout=5' "$log"
be_has "healthy: sysfs says active while nasboot runs" 'guest: sysfs state=active' "$log"
be_has "healthy: pets at half the timeout" 'petting every 2500 ms' "$log"
be_has "healthy: alive over three timeouts" 'guest: alive after 17 s' "$log"
be_has "sigterm: magic close logged" 'magic close: stopped' "$log"
be_has "sigterm: exit status 0" 'guest: nasboot-exit=0' "$log"
be_has "sigterm: the card is stopped (sysfs inactive)" 'guest: sysfs state-after=inactive' "$log"
be_has "sigterm: board outlives the timeout after close" 'guest: alive 8 s after the magic close' "$log"
be_lacks "sigterm: kernel did not complain" 'watchdog did not stop' "$log"

# (3): SIGSTOP; the guest prints its uptime every 0.2 s until the reset.
cat >"$work/sigstop.sh" <<'GUEST'
nasboot -v watchdog &
pid=$!
sleep 4
echo "guest: SIGSTOP at uptime=$(cut -d' ' -f1 /proc/uptime)"
kill -STOP "$pid"
i=0
while [ $i -lt 150 ]; do
	echo "guest: tick uptime=$(cut -d' ' -f1 /proc/uptime)"
	sleep 0.2
	i=$((i + 1))
done
echo "guest: still alive 30 s after SIGSTOP"
GUEST
log=$work/sigstop.log
be_boot "$log" 90 --profile "$work/p.toml" --script "$work/sigstop.sh"
t_eq "sigstop: the watchdog reset the board" 4 "$be_rc"
[ -z "$BE_WD_FIRED" ] || be_has "sigstop: the driver says it fired" "$BE_WD_FIRED" "$log"
be_lacks "sigstop: not alive 30 s later" 'still alive 30 s after SIGSTOP' "$log"
stop=$(be_uptime 'guest: SIGSTOP at' "$log")
last=$(grep 'guest: tick uptime=' "$log" | tail -n1 | sed -n 's/.*uptime=\([0-9.]*\).*/\1/p')
if [ -n "$stop" ] && [ -n "$last" ]; then
	delay=$(awk -v a="$stop" -v b="$last" 'BEGIN { printf "%.2f", b - a }')
	# The last pet came at most one interval (2.5 s) before the stop, the
	# card fires one timeout (5 s) after it: 2.5 to 5 s after the stop,
	# less the 0.2 s between ticks, plus emulation slack.
	if awk -v d="$delay" 'BEGIN { exit !(d >= 2.0 && d <= 6.5) }'; then
		t_ok "sigstop: reset ${delay} s after SIGSTOP (timeout 5 s)"
	else
		t_fail "sigstop: reset ${delay} s after SIGSTOP, want 2.0..6.5"
	fi
else
	t_fail "sigstop: could not time the reset (stop=[$stop] last tick=[$last])"
fi
t_done
