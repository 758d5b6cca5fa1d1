#!/bin/sh
# Guest script of tests/watchdog/board-confirm.sh's daemon case: the LAN
# case of confirm-lan.sh with the `run` daemon on the watchdog. Profile A
# (/etc/nasboot.toml: eth0 on the LAN, a watchdog) comes up by `nasboot
# run -b`; candidate B (/etc/b.toml: eth0 down) with `apply --confirm 5`,
# not confirmed: the daemon holds the revert. Prints what the suite
# checks: whether a `confirm-hold` process ever ran during the window
# (busybox ps, every 0.05 s), the daemon's own log of the revert, the
# daemon alive after it, and the guest uptimes it measures.
mkdir -p /var/lib
# No SLAAC address from QEMU's router advertisements, which comes on its
# own time after each link-up: the revert's check compares the addresses.
echo 0 >/proc/sys/net/ipv6/conf/eth0/autoconf
ln -s /data /var/lib/nasboot
P=/data/nasboot.toml
cp /etc/nasboot.toml "$P"
mkdir -p /www
echo "hello from board" >/www/hello.txt
httpd -f -p 80 -h /www &
up() { [ "$(cat /sys/class/net/eth0/operstate)" = up ]; }
# BusyBox has no pgrep: its ps shows each argv.
# shellcheck disable=SC2009
hold() { ps | grep -v grep | grep -c confirm-hold; }
nasboot -c "$P" run -b --pidfile /run/nasboot.pid --log /tmp/run.log || echo "guest: run -b failed"
daemon=$(cat /run/nasboot.pid)
i=0
while ! up && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "guest: lan up uptime=$(cut -d' ' -f1 /proc/uptime)"
sleep 4
nasboot -c "$P" apply --confirm 5 /etc/b.toml
echo "guest: candidate in force uptime=$(cut -d' ' -f1 /proc/uptime) operstate=$(cat /sys/class/net/eth0/operstate)"
seen=0
i=0
while [ ! -f /data/confirm ] && [ $i -lt 300 ]; do
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
grep -E 'was not confirmed|reverted to' /tmp/run.log | sed 's/^/guest: daemon log: /'
kill -0 "$daemon" && echo "guest: the daemon $daemon still runs"
sleep 4
kill -0 "$daemon" && echo "guest: the daemon $daemon still pets"
# The orderly stop (magic close) before the power-off.
kill -TERM "$daemon"
exit 0
