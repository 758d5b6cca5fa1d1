#!/bin/sh
# Guest side of tests/pkg/board-systemd.sh: board/init/systemd's units under
# Debian's mipsel systemd 252 as PID 1 on the emulated board, the real
# softdog as /dev/watchdog0. Run by board-test.service (after basic.target,
# so journald is up); one "pkgtest: ok|FAIL ..." line per check, then
# "pkgtest: done".
# shellcheck shell=sh
# shellcheck source=tests/pkg/board-guest-lib.sh
. /board/pkgtest-lib.sh

U=nasboot.service
mainpid() { systemctl show -p MainPID --value $U; }
active() { systemctl is-active $U 2>/dev/null; }

has "PID 1 is systemd" /systemd/systemd "$(readlink /proc/1/exe)"
systemd-analyze verify /etc/systemd/system/$U /etc/systemd/system/nasboot-fallback.service >/tmp/verify 2>&1
is "systemd-analyze verify accepts both units ($(cat /tmp/verify))"

profile 7
systemctl start $U
is "systemctl start exits 0"
pid=$(mainpid)
check "active" [ "$(active)" = active ]
check "MainPID is a live /usr/sbin/nasboot" [ "$(readlink "/proc/$pid/exe")" = /usr/sbin/nasboot ]
check "its command line is \`run\`" [ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" = "/usr/sbin/nasboot --config /etc/nasboot.toml run " ]
[ "$(wd_state)" = active ] && [ "$(wd_timeout)" = 7 ]
is "softdog is armed with the profile's timeout (7 s)"
[ "$(systemctl show -p RuntimeWatchdogUSec --value)" = 0 ]
is "PID 1 left the watchdog to nasboot (RuntimeWatchdogSec off)"
sleep 9
check "the board outlived the timeout: the daemon pets" alive "$pid"
systemctl start $U
[ "$(mainpid)" = "$pid" ] && [ "$(daemons)" -eq 1 ]
is "a second start keeps the one daemon"
# The daemon let go of the apply lock once its apply was done: an apply
# beside it neither waits (nor would it end: timeout) nor says it waits.
timeout 60 /usr/sbin/nasboot -q --config "$cfg" apply >/tmp/apply.out 2>&1
is "an apply beside the running daemon exits 0 ($(cat /tmp/apply.out))"
check "... at once: the daemon holds no apply lock" [ "$(grep -c 'waiting for it' /tmp/apply.out)" -eq 0 ]
systemctl status $U >/dev/null 2>&1
check "systemctl status exits 0 while running" [ $? -eq 0 ]

profile 9
systemctl reload $U
is "systemctl reload exits 0"
sleep 1
[ "$(mainpid)" = "$pid" ] && alive "$pid"
is "reload keeps the MainPID"
check "reload re-read the profile: softdog timeout now 9 s" [ "$(wd_timeout)" = 9 ]
printf '[board]\nname = "t"\n[watchdog]\ntimeout = 0\n' >"$cfg"
systemctl reload $U 2>/dev/null
check "reload of a broken profile fails (ExecReload checks first)" [ $? -ne 0 ]
[ "$(mainpid)" = "$pid" ] && alive "$pid"
is "the daemon still runs after a refused reload"
has "the journal names file:line:column and key" "/etc/nasboot.toml:4:11: watchdog.timeout:" "$(journalctl -u $U --no-pager 2>&1)"
profile 7
systemctl reload $U

# A crash (SIGKILL: no magic close) is respawned (Restart=on-failure,
# RestartSec=5) and the new daemon takes the watchdog over within the
# 7 s timeout: no reset.
kill -KILL "$pid"
n=0
while { [ "$(mainpid)" = "$pid" ] || [ "$(mainpid)" = 0 ]; } && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
new=$(mainpid)
[ "$new" != "$pid" ] && [ "$new" != 0 ] && alive "$new"
is "a killed daemon is restarted (new MainPID $new)"
sleep 9
check "the restarted daemon pets: the board outlived the timeout" alive "$new"
has "the kernel saw the crash close the watchdog without the magic close" "watchdog did not stop" "$(dmesg | grep 'did not stop')"
pid=$new

systemctl stop $U
is "systemctl stop exits 0"
check "the daemon is gone" wait_gone "$pid"
check "stop (SIGTERM) wrote the magic close: softdog stopped" [ "$(wd_state)" = inactive ]
sleep 9
ok "the board outlived the timeout after stop (no reset)"
systemctl is-active --quiet $U
check "is-active exits 3 when stopped" [ $? -eq 3 ]

# board/init/udev/60-nasboot.rules: a network device added after the
# apply re-applies the firewall, so that hook = "auto" leaves the ingress
# hooks for the input chain when the new device is in no zone.
check "systemd-udevd runs" [ "$(systemctl is-active systemd-udevd.service)" = active ]
modprobe dummy
ip link add nbwan type dummy
# The rule's own applies for dummy0 and nbwan read the profile as it is
# now; let them finish first, or one that started before the profile
# below was written can end after this suite's apply and replace its
# rule set (seen once in CI: the input hook instead of the ingress ones).
check "udev settles after the links were added" udevadm settle --timeout=30
links=$(cd /sys/class/net && echo *)
{
	printf '[board]\nname = "qemu-malta"\n[firewall]\nprofile = "stateless"\n'
	for i in $links; do
		[ "$i" = lo ] && continue
		role=lan
		[ "$i" = nbwan ] && role=wan
		printf '[[interface]]\nname = "%s"\nrole = "%s"\n' "$i" "$role"
	done
} >"$cfg"
/usr/sbin/nasboot -q --config "$cfg" firewall apply >/tmp/fw.out 2>&1
is "firewall apply with every link named exits 0 ($(cat /tmp/fw.out))"
has "... and takes the ingress hooks (links: $links)" 'hook ingress device "nbwan"' "$(nft list ruleset 2>&1)"
ip link add nbusb type dummy
n=0
while ! nft list ruleset 2>/dev/null | grep -q 'hook input' && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
rules=$(nft list ruleset 2>&1)
has "a device added later (nbusb): udev re-applied, the input chain is back" 'hook input' "$rules"
has "... with the profile's WAN chain in it (not a fallback)" '"nbwan" : jump wan' "$rules"
check "... and no ingress hook is left" [ "$(printf '%s\n' "$rules" | grep -c 'hook ingress')" -eq 0 ]
ip link del nbusb
ip link del nbwan

printf '[board]\nname = "t"\n[firewall]\nprofile = "of"\n' >"$cfg"
systemctl start $U 2>/dev/null
check "start with a broken profile fails" [ $? -ne 0 ]
check "the unit is failed, not restarting ($(systemctl show -p SubState --value $U))" [ "$(active)" = failed ]
has "the journal names file:line:column and key" "/etc/nasboot.toml:4:11: firewall.profile:" "$(journalctl -u $U --no-pager 2>&1)"
# The fallback ran once it has left "inactive" at least once and is done.
n=0
while { [ "$(systemctl show -p InactiveExitTimestampMonotonic --value nasboot-fallback.service)" = 0 ] ||
	[ "$(systemctl show -p ActiveState --value nasboot-fallback.service)" = activating ]; } && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
check "OnFailure ran nasboot-fallback.service" [ "$(systemctl show -p InactiveExitTimestampMonotonic --value nasboot-fallback.service)" != 0 ]
check "and it succeeded" [ "$(systemctl show -p Result --value nasboot-fallback.service)" = success ]
has "the lock-down rule set is loaded (input policy drop)" "policy drop" "$(nft list chain inet nasboot input 2>&1)"
check "no daemon was started" [ "$(daemons)" -eq 0 ]
check "the watchdog was left closed" [ "$(wd_state)" = inactive ]
echo "pkgtest: done"
