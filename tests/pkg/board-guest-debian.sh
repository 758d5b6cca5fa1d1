#!/bin/sh
# Guest side of tests/pkg/board-debian.sh: Debian's LSB init script,
# board/init/debian/nasboot, installed as /etc/init.d/nasboot and run the
# way Debian's rc runs it (executed, its #!/bin/sh being Debian's dash),
# with Debian's mipsel start-stop-daemon (dpkg), /lib/lsb/init-functions
# (sysvinit-utils), run-parts (debianutils) and nft (nftables), on the
# emulated board with the real softdog as /dev/watchdog0. The common
# lifecycle is in board-guest-lib.sh (shared with BusyBox's S35nasboot);
# the Debian extras follow it. One "pkgtest: ok|FAIL ..." line per check,
# then "pkgtest: done". No probe: every check is a real one.
# shellcheck shell=sh

# The board's /init runs this with busybox's own sh, whose applets win over
# PATH (busybox-static prefers applets): go on under Debian's dash, so that
# start-stop-daemon, run-parts... are the Debian files, as under Debian.
if [ "${PKGTEST_SHELL:-}" != dash ]; then
	PKGTEST_SHELL=dash exec /bin/dash "$0"
fi
# shellcheck source=tests/pkg/board-guest-lib.sh
. /board/pkgtest-lib.sh

S=/etc/init.d/nasboot
P=/run/nasboot.pid
LOG=/var/log/nasboot.log
initd() { $S "$@"; }

# What Debian's base system has and busybox's /init does not make.
mkdir -p /var/log /etc/default
[ -e /var/run ] || ln -s /run /var/run

# The user space is Debian's, not busybox's applets of the same names.
check "/bin/sh is Debian's dash" [ "$(readlink /bin/sh)" = dash ]
check "these checks run under dash" [ "$(readlink /proc/$$/exe)" = /bin/dash ]
check "the script's shell line is #!/bin/sh" [ "$(head -n1 $S)" = "#!/bin/sh" ]
ssd=$(PATH=/sbin:/usr/sbin:/bin:/usr/bin command -v start-stop-daemon)
[ "$ssd" = /sbin/start-stop-daemon ] && [ ! -L "$ssd" ]
is "start-stop-daemon on the script's PATH is dpkg's ($ssd, not a busybox link)"
has "it is Debian's start-stop-daemon" "start-stop-daemon 1.21.23 for Debian" "$($ssd --version 2>&1)"
has "run-parts (debianutils) finds init-functions' hooks" /lib/lsb/init-functions.d/00-verbose \
	"$(run-parts --lsbsysinit --list /lib/lsb/init-functions.d 2>&1)"

pkgtest_lifecycle

# --- Debian (LSB) extras ---------------------------------------------------
# force-reload is SIGHUP as well; restart replaces the daemon; a restart with
# a broken profile is refused before the running daemon is stopped.
profile 7
initd start >/dev/null 2>&1
pid=$(cat $P 2>/dev/null || echo none)
check "start again after the lifecycle" alive "$pid"
profile 11
out=$(initd force-reload 2>&1)
rc=$?
check "force-reload exits 0 ($out)" [ "$rc" -eq 0 ]
check "force-reload re-read the profile: softdog timeout now 11 s" within 10 armed_with 11
[ "$(cat $P)" = "$pid" ] && alive "$pid"
is "force-reload keeps the pid"
within 10 in_file "profile reloaded: petting every 1000 ms" "$LOG"
has "the daemon's output goes to $LOG (start-stop-daemon --output)" "profile reloaded: petting every 1000 ms" "$(cat $LOG 2>&1)"
out=$(initd restart 2>&1)
rc=$?
check "restart exits 0 ($out)" [ "$rc" -eq 0 ]
pid2=$(cat $P 2>/dev/null || echo none)
[ "$pid2" != "$pid" ] && alive "$pid2"
is "restart started a new daemon ($pid -> $pid2)"
check "the old daemon is gone" wait_gone "$pid"
n=$(daemons)
check "one daemon after restart (found $n)" [ "$n" -eq 1 ]
check "softdog armed by the new daemon, 11 s" within 10 armed_with 11
refused restart
alive "$pid2" && [ "$(cat $P)" = "$pid2" ]
is "the running daemon was kept"
profile 7
out=$(initd stop 2>&1)
rc=$?
[ "$rc" -eq 0 ] && wait_gone "$pid2"
is "stop exits 0 ($out)"
check "magic close again: softdog stopped" [ "$(wd_state)" = inactive ]

# A daemon that does not stop (stopped by SIGSTOP, SIGTERM stays pending):
# stop waits 10 s and fails saying so (no SIGKILL: left to the watchdog),
# and restart does not start a second daemon over it.
profile 30
initd start >/dev/null 2>&1
pid=$(cat $P 2>/dev/null || echo none)
kill -STOP "$pid"
out=$(initd restart 2>&1)
rc=$?
check "restart of a daemon that does not stop fails" [ "$rc" -ne 0 ]
has "and says it is still running" "nasboot: still running 10 s after SIGTERM (pid $pid); left to the watchdog" "$out"
alive "$pid" && [ "$(cat $P)" = "$pid" ] && [ "$(daemons)" -eq 1 ] && [ "$(wd_state)" = active ]
is "no second daemon over it; softdog still armed"
kill -CONT "$pid"
wait_gone "$pid" && [ "$(wd_state)" = inactive ]
is "resumed, it takes the pending SIGTERM: magic close"
out=$(initd status 2>&1)
rc=$?
check "status of a daemon gone with its pidfile left exits 1 ($out)" [ "$rc" -eq 1 ]
has "and says the pidfile is left" "nasboot is not running, but $P exists" "$out"
initd stop >/dev/null 2>&1
check "stop clears the stale pidfile" [ ! -e $P ]

# LSB exit codes when nothing runs.
out=$(initd stop 2>&1)
rc=$?
check "stop when stopped exits 0 ($out)" [ "$rc" -eq 0 ]
out=$(initd reload 2>&1)
rc=$?
check "reload when stopped exits 7, not running ($out)" [ "$rc" -eq 7 ]
sh -c 'exit 0' &
dead=$!
wait "$dead"
echo "$dead" >$P
out=$(initd status 2>&1)
rc=$?
check "status with a stale pidfile exits 1 ($out)" [ "$rc" -eq 1 ]
has "and says the pidfile is left" "not running, but $P exists" "$out"
out=$(initd start 2>&1)
rc=$?
pid=$(cat $P 2>/dev/null || echo none)
[ "$rc" -eq 0 ] && [ "$pid" != "$dead" ] && alive "$pid"
is "start over a stale pidfile starts the daemon ($out)"
initd stop >/dev/null 2>&1
check "stopped" wait_gone "$pid"
out=$(initd frobnicate 2>&1)
rc=$?
check "an unknown action exits 3" [ "$rc" -eq 3 ]
has "and prints the usage" "Usage: /etc/init.d/nasboot {start|stop|status|reload|force-reload|restart}" "$out"

# The log: init's notes (the rejected profiles) land in /var/log/nasboot.log.
logged=$(cat $LOG 2>/dev/null)
has "the log has the rejected profile at start, file:line:column" \
	"init: profile rejected (status 2): nasboot: /etc/nasboot.toml:4:11: firewall.profile:" "$logged"
has "the log says the fallback firewall was applied" "init: fallback firewall applied" "$logged"

# A WAN for real (board-guest-lib.sh), and the controls without a rule set.
wan_up wan0
wan_controls

# At boot, a broken or a missing profile: the error, no daemon, softdog
# closed, and the lock-down rule set (loopback and replies only).
nft flush ruleset
printf '[board]\nname = "t"\n[firewall]\nprofile = "of"\n' >"$cfg"
out=$(initd start 2>&1)
rc=$?
check "boot, broken profile: start fails" [ "$rc" -ne 0 ]
has "boot, broken profile: the error names file:line:column and key" "/etc/nasboot.toml:4:11: firewall.profile:" "$out"
has "boot, broken profile: says the fallback was applied" "applied the built-in fallback firewall (lock-down" "$out"
[ ! -e $P ] && [ "$(daemons)" -eq 0 ]
is "boot, broken profile: no daemon"
check "boot, broken profile: softdog closed" [ "$(wd_state)" = inactive ]
lockdown "boot, broken profile"
first=$(printf '%s\n' "$out" | sed -n 1p)
second=$(printf '%s\n' "$out" | sed -n 2p)
check "boot, broken profile: the console line is ended first ($first)" [ "$first" = "Starting nasboot: nasboot" ]
case $second in
"nasboot: profile rejected (status 2): nasboot: /etc/nasboot.toml:4:11: firewall.profile: unknown variant"*)
	ok "boot, broken profile: the error is the next line, whole" ;;
*) fail "boot, broken profile: the error is the next line, whole ($second)" ;;
esac
nft flush ruleset
rm -f "$cfg"
out=$(initd start 2>&1)
rc=$?
check "boot, no profile: start fails" [ "$rc" -ne 0 ]
has "boot, no profile: the error names the file" "/etc/nasboot.toml: cannot read the profile: No such file or directory" "$out"
[ ! -e $P ] && [ "$(daemons)" -eq 0 ]
is "boot, no profile: no daemon"
check "boot, no profile: softdog closed" [ "$(wd_state)" = inactive ]
lockdown "boot, no profile"
has "the log has the missing profile" "init: profile rejected (status 2): nasboot: /etc/nasboot.toml: cannot read" "$(cat $LOG)"

# /etc/default/nasboot: another profile, options, pidfile and log file.
cat >/etc/default/nasboot <<'EOF'
NASBOOT_CONFIG=/etc/nasboot-alt.toml
NASBOOT_OPTS="-v"
PIDFILE=/run/nasboot-alt.pid
NASBOOT_LOG=/tmp/nasboot-alt.log
EOF
profile 13 /etc/nasboot-alt.toml
out=$(initd start 2>&1)
rc=$?
pid=$(cat /run/nasboot-alt.pid 2>/dev/null || echo none)
[ "$rc" -eq 0 ] && alive "$pid"
is "default file: start exits 0 ($out)"
check "default file: its pidfile, not /run/nasboot.pid" [ ! -e $P ]
check "default file: the daemon runs with its options and profile" \
	[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "/usr/sbin/nasboot -v --config /etc/nasboot-alt.toml run --background --pidfile /run/nasboot-alt.pid --log /tmp/nasboot-alt.log " ]
check "default file: softdog timeout from that profile (13 s)" within 10 armed_with 13
initd status >/dev/null 2>&1
check "default file: status exits 0" [ $? -eq 0 ]
within 10 in_file "petting every 1000 ms (timeout 13 s)" /tmp/nasboot-alt.log
has "default file: the daemon's output goes to its log (-v)" "petting every 1000 ms (timeout 13 s)" "$(cat /tmp/nasboot-alt.log 2>&1)"
out=$(initd stop 2>&1)
rc=$?
[ "$rc" -eq 0 ] && wait_gone "$pid" && [ "$(wd_state)" = inactive ]
is "default file: stop exits 0, magic close ($out)"
rm -f /etc/default/nasboot
kill "$wanns"
sleep 2
dmesg >/tmp/dmesg
check "no 'watchdog did not stop' in the kernel log" [ "$(grep -c 'did not stop' /tmp/dmesg)" -eq 0 ]
echo "pkgtest: done"
