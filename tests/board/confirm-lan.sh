#!/bin/sh
# Guest script of tests/watchdog/board-confirm.sh's LAN cases: busybox
# httpd on port 80; profile A (/etc/nasboot.toml: eth0 on the LAN,
# 10.0.2.15/24) applied; then candidate B (/etc/b.toml: eth0 down, which
# cuts the LAN) with `apply --confirm 5`, not confirmed. Prints the guest
# uptimes the suite measures: the candidate in force, the journal
# settled, eth0 up again; and in how many of the process lists taken
# every 0.05 s in the window a `confirm-hold` ran.
# With /etc/confirm-daemon (both profiles then have a watchdog), A comes
# up by `nasboot run -b`, whose daemon holds the revert: then the
# daemon's log of the revert, and whether it still runs and pets after it.
mkdir -p /var/lib
ln -s /data /var/lib/nasboot
# No SLAAC address from QEMU's router advertisements, which comes on its
# own time after each link-up: the revert's check compares the addresses.
echo 0 >/proc/sys/net/ipv6/conf/eth0/autoconf
P=/data/nasboot.toml
cp /etc/nasboot.toml "$P"
mkdir -p /www
echo "hello from board" >/www/hello.txt
httpd -f -p 80 -h /www &
up() { [ "$(cat /sys/class/net/eth0/operstate)" = up ]; }
# BusyBox has no pgrep: its ps shows each argv.
# shellcheck disable=SC2009
hold() { ps | grep -v grep | grep -c confirm-hold; }
daemon=''
if [ -e /etc/confirm-daemon ]; then
	nasboot -c "$P" run -b --pidfile /run/nasboot.pid --log /tmp/run.log || echo "guest: run -b failed"
	daemon=$(cat /run/nasboot.pid)
else
	nasboot -c "$P" apply || echo "guest: apply A failed"
fi
i=0
while ! up && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "guest: lan up uptime=$(cut -d' ' -f1 /proc/uptime)"
sleep 4
nasboot -c "$P" apply --confirm 5 /etc/b.toml
echo "guest: candidate in force uptime=$(cut -d' ' -f1 /proc/uptime) operstate=$(cat /sys/class/net/eth0/operstate)"
seen=0
i=0
while [ ! -f /data/confirm ] && [ $i -lt 200 ]; do
	seen=$((seen + $(hold)))
	sleep 0.05
	i=$((i + 1))
done
echo "guest: journal settled uptime=$(cut -d' ' -f1 /proc/uptime) $(sed -n 2p /data/confirm)"
echo "guest: confirm-hold seen in $seen process lists of $i"
i=0
while ! up && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
echo "guest: lan up again uptime=$(cut -d' ' -f1 /proc/uptime)"
# The deadline, CLOCK_BOOTTIME in ms: the clock /proc/uptime reads.
echo "guest: deadline_ms=$(sed -n 's/^deadline //p' /data/confirm)"
if [ -n "$daemon" ]; then
	grep -E 'was not confirmed|reverted to' /tmp/run.log | sed 's/^/guest: daemon log: /'
	kill -0 "$daemon" && echo "guest: the daemon $daemon still runs"
fi
sleep 4
if [ -n "$daemon" ]; then
	kill -0 "$daemon" && echo "guest: the daemon $daemon still pets"
	# The orderly stop (magic close) before the power-off.
	kill -TERM "$daemon"
fi
exit 0
