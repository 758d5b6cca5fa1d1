#!/bin/sh
# Guest script of tests/watchdog/board-confirm.sh's LAN case: busybox
# httpd on port 80; profile A (/etc/nasboot.toml: eth0 on the LAN,
# 10.0.2.15/24) applied; then candidate B (/etc/b.toml: eth0 down, which
# cuts the LAN) with `apply --confirm 5`, not confirmed. Prints the guest
# uptimes the suite measures: the candidate in force, the journal
# settled, eth0 up again.
mkdir -p /var/lib
ln -s /data /var/lib/nasboot
P=/data/nasboot.toml
cp /etc/nasboot.toml "$P"
mkdir -p /www
echo "hello from board" >/www/hello.txt
httpd -f -p 80 -h /www &
up() { [ "$(cat /sys/class/net/eth0/operstate)" = up ]; }
nasboot -c "$P" apply || echo "guest: apply A failed"
i=0
while ! up && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "guest: lan up uptime=$(cut -d' ' -f1 /proc/uptime)"
sleep 4
nasboot -c "$P" apply --confirm 5 /etc/b.toml
echo "guest: candidate in force uptime=$(cut -d' ' -f1 /proc/uptime) operstate=$(cat /sys/class/net/eth0/operstate)"
i=0
while [ ! -f /data/confirm ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
echo "guest: journal settled uptime=$(cut -d' ' -f1 /proc/uptime) $(sed -n 2p /data/confirm)"
i=0
while ! up && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
echo "guest: lan up again uptime=$(cut -d' ' -f1 /proc/uptime)"
# The deadline, CLOCK_BOOTTIME in ms: the clock /proc/uptime reads.
echo "guest: deadline_ms=$(sed -n 's/^deadline //p' /data/confirm)"
sleep 4
exit 0
