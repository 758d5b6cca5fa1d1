#!/bin/sh
# Guest side of tests/pkg/board-init.sh, run by the emulated board's /init
# under BusyBox's sh (busybox-static, mipsel) with the real softdog as
# /dev/watchdog0. It runs /etc/init.d/S35nasboot as BusyBox init would and
# prints one "pkgtest: ok|FAIL|GAP ..." line per check, then
# "pkgtest: done".
# shellcheck shell=sh

S=/etc/init.d/S35nasboot
P=/var/run/nasboot.pid
wd=/sys/class/watchdog/watchdog0
cfg=/etc/nasboot.toml

ok() { echo "pkgtest: ok $*"; }
fail() { echo "pkgtest: FAIL $*"; }
gap() { echo "pkgtest: GAP $*"; }
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else fail "$desc"; fi
}
alive() {
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}
wait_gone() {
	n=0
	while alive "$1" && [ $n -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	! alive "$1"
}
profile() {
	printf '[board]\nname = "qemu-malta"\n[firewall]\nprofile = "off"\n[watchdog]\ndevice = "/dev/watchdog0"\ntimeout = %s\ninterval = 1\n' "$1" >"$cfg"
}
# Close the watchdog with the magic close ourselves (after a daemon that
# could not), so that the board does not reset under the next checks.
disarm() {
	exec 3>/dev/watchdog0
	printf 'V' >&3
	exec 3>&-
}

mkdir -p /var
[ -e /var/run ] || ln -s /run /var/run
profile 7

# Probe: does this binary set the profile's timeout, keep running on
# SIGHUP, and close with 'V' on SIGTERM? (These come with the watchdog
# daemon; a binary without them gets GAP lines instead of those checks.)
/usr/sbin/nasboot run >/tmp/probe.log 2>&1 &
probe=$!
sleep 2
cat $wd/timeout >/tmp/probe.timeout
signals=no
if alive "$probe"; then
	kill -HUP "$probe"
	sleep 1
	if alive "$probe"; then
		kill -TERM "$probe"
		wait_gone "$probe" && [ "$(cat $wd/state)" = inactive ] && signals=yes
	fi
fi
timeouts=no
grep -q '^7$' /tmp/probe.timeout 2>/dev/null && timeouts=yes
kill -KILL "$probe" 2>/dev/null
wait "$probe" 2>/dev/null
[ "$(cat $wd/state)" = active ] && disarm
echo "pkgtest: probe signals=$signals timeouts=$timeouts"

out=$(sh $S start 2>&1)
rc=$?
check "start exits 0 ($out)" [ "$rc" -eq 0 ]
pid=$(cat $P 2>/dev/null || echo none)
check "the pidfile names a live process" alive "$pid"
check "that process is /usr/sbin/nasboot" [ "$(readlink "/proc/$pid/exe")" = /usr/sbin/nasboot ]
check "its command line is \`run\`" [ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "/usr/sbin/nasboot --config /etc/nasboot.toml run " ]
check "softdog is armed" [ "$(cat $wd/state)" = active ]
if [ "$timeouts" = yes ]; then
	check "with the profile's timeout (7 s)" [ "$(cat $wd/timeout)" = 7 ]
else
	gap "softdog's timeout from the profile: this binary does not set it (WDIOC_SETTIMEOUT)"
fi
sleep 9
check "the board outlived the timeout: the daemon pets" alive "$pid"

out=$(sh $S start 2>&1)
case $out in *"already running"*) ok "a second start says already running" ;; *) fail "a second start says already running ($out)" ;; esac
n=0
for p in /proc/[0-9]*; do
	[ "$(readlink "$p/exe" 2>/dev/null)" = /usr/sbin/nasboot ] && n=$((n + 1))
done
check "one daemon only (found $n)" [ "$n" -eq 1 ]
sh $S status >/dev/null 2>&1
check "status exits 0 while running" [ $? -eq 0 ]

if [ "$signals" = yes ]; then
	profile 9
	out=$(sh $S reload 2>&1)
	rc=$?
	check "reload exits 0 ($out)" [ "$rc" -eq 0 ]
	sleep 1
	check "the daemon survived the reload" alive "$pid"
	check "reload keeps the pid" [ "$(cat $P)" = "$pid" ]
	check "reload re-read the profile: softdog timeout now 9 s" [ "$(cat $wd/timeout)" = 9 ]
else
	gap "reload (SIGHUP keeps the pid, re-reads the profile): this binary dies on SIGHUP"
fi
printf '[board]\nname = "t"\n[watchdog]\ntimeout = 0\n' >"$cfg"
out=$(sh $S reload 2>&1)
rc=$?
check "reload of a broken profile fails" [ "$rc" -ne 0 ]
case $out in *"/etc/nasboot.toml:4:11: watchdog.timeout:"*) ok "it names file:line:column and key" ;; *) fail "it names file:line:column and key ($out)" ;; esac
check "the daemon still runs after a refused reload" alive "$pid"
profile 7

out=$(sh $S stop 2>&1)
rc=$?
check "stop exits 0 ($out)" [ "$rc" -eq 0 ]
check "the daemon is gone" wait_gone "$pid"
check "the pidfile is removed" [ ! -e $P ]
if [ "$signals" = yes ]; then
	check "stop wrote the magic close: softdog stopped" [ "$(cat $wd/state)" = inactive ]
else
	gap "stop's magic close: this binary does not close the watchdog on SIGTERM"
	[ "$(cat $wd/state)" = active ] && disarm
fi
sleep 9
ok "the board outlived the timeout after stop (no reset)"
sh $S status >/dev/null 2>&1
check "status exits 3 when stopped" [ $? -eq 3 ]

printf '[board]\nname = "t"\n[firewall]\nprofile = "of"\n' >"$cfg"
out=$(sh $S start 2>&1)
rc=$?
check "start with a broken profile fails" [ "$rc" -ne 0 ]
case $out in *"/etc/nasboot.toml:4:11: firewall.profile:"*) ok "the error names file:line:column and key" ;; *) fail "the error names file:line:column and key ($out)" ;; esac
case $out in *"fallback firewall"*) ok "the fallback firewall is tried" ;; *) fail "the fallback firewall is tried ($out)" ;; esac
check "no daemon was started" [ ! -e $P ]
check "the watchdog was left closed" [ "$(cat $wd/state)" = inactive ]
# A profile without [watchdog]: applied at start, no daemon.
printf '[board]\nname = "t"\n[firewall]\nprofile = "off"\n' >"$cfg"
out=$(sh $S start 2>&1)
rc=$?
check "no [watchdog]: start exits 0 ($out)" [ "$rc" -eq 0 ]
case $out in *"no [watchdog] in the profile, so no daemon"*) ok "no [watchdog]: it says there is no daemon" ;; *) fail "no [watchdog]: it says there is no daemon ($out)" ;; esac
check "no [watchdog]: no pidfile" [ ! -e $P ]
check "no [watchdog]: softdog left closed" [ "$(cat $wd/state)" = inactive ]
echo "pkgtest: done"
