#!/bin/sh
# Guest script of the boot-loop suites (tests/watchdog/board-bootloop.sh,
# be-bootloop.sh): nasboot's state dir on the disk (/data), then
# `nasboot watchdog`; /data/stop-next says how the boot ends: there,
# SIGTERM (magic close) and a clean poweroff; else SIGSTOP, and the
# board's watchdog resets it.
mkdir -p /var/lib
ln -s /data /var/lib/nasboot
nasboot -v watchdog &
pid=$!
sleep 3
if [ -f /data/stop-next ]; then
	kill -TERM "$pid"
	wait "$pid"
	echo "guest: nasboot-exit=$?"
	rm /data/stop-next
	exit 0
fi
echo "guest: SIGSTOP"
kill -STOP "$pid"
sleep 30
echo "guest: still alive 30 s after SIGSTOP"
