#!/bin/sh
# Guest script of tests/watchdog/board-confirm.sh. nasboot's state dir and
# the profile on the disk (/data), so both persist across a reset.
#
# First boot (no /data/nasboot.toml): profile A (/etc/nasboot.toml) is
# copied to the disk and applied; candidate B (/etc/b.toml) is applied
# with `--confirm 600`; the watchdog daemon runs; then the board ends
# inside the window as /etc/confirm-how says: "kill" (the daemon killed
# with SIGKILL, so the board's watchdog resets it) or "sysrq" (an
# immediate reset, as a power cut: sysrq b, or `reboot -n -f`, no sync,
# on a kernel without sysrq). "wait": `--confirm 3` instead, and the
# board waits for the holder's revert, prints the state and powers off;
# "daemon": the same with A brought up by `run -b`, whose daemon holds
# the revert (its log of it printed). Both print in how many of the
# process lists taken every 0.05 s in the window a `confirm-hold` ran.
# Second boot: `nasboot run -b` (the boot's), then the state is printed
# and the board powers off.
mkdir -p /var/lib
ln -s /data /var/lib/nasboot
P=/data/nasboot.toml
if [ ! -f "$P" ]; then
	cp /etc/nasboot.toml "$P"
	sync
	how=$(cat /etc/confirm-how)
	if [ "$how" = daemon ]; then
		nasboot -c "$P" run -b --pidfile /run/nasboot.pid --log /tmp/run.log || echo "guest: run -b failed"
	else
		nasboot -c "$P" apply || echo "guest: apply A failed"
	fi
	echo "guest: ttl under A $(cat /proc/sys/net/ipv4/ip_default_ttl)"
	secs=600
	case $how in wait | daemon) secs=3 ;; esac
	nasboot -c "$P" apply --confirm "$secs" /etc/b.toml
	echo "guest: apply --confirm exit=$?"
	echo "guest: ttl under B $(cat /proc/sys/net/ipv4/ip_default_ttl)"
	nasboot -c "$P" status | grep candidate
	if [ "$how" = wait ] || [ "$how" = daemon ]; then
		seen=0
		i=0
		while [ ! -f /data/confirm ] && [ $i -lt 200 ]; do
			# BusyBox has no pgrep: its ps shows each argv.
			# shellcheck disable=SC2009
			seen=$((seen + $(ps | grep -v grep | grep -c confirm-hold)))
			sleep 0.05
			i=$((i + 1))
		done
		echo "guest: confirm-hold seen in $seen process lists of $i"
		echo "guest: ttl after the deadline $(cat /proc/sys/net/ipv4/ip_default_ttl)"
		echo "guest: journal $(sed -n 2p /data/confirm)"
		cmp -s "$P" /etc/nasboot.toml && echo "guest: profile file is A"
		if [ "$how" = daemon ]; then
			grep -E 'was not confirmed|reverted to' /tmp/run.log | sed 's/^/guest: daemon log: /'
			pid=$(cat /run/nasboot.pid)
			kill -0 "$pid" && echo "guest: the daemon $pid still runs"
			kill -TERM "$pid"
		fi
		exit 0
	fi
	nasboot -c "$P" watchdog &
	pid=$!
	sleep 2
	case $how in
	kill)
		echo "guest: SIGKILL to the watchdog daemon"
		kill -KILL "$pid"
		;;
	sysrq)
		if [ -w /proc/sysrq-trigger ]; then
			echo "guest: sysrq reset"
			echo 1 >/proc/sys/kernel/sysrq
			echo b >/proc/sysrq-trigger
		else
			echo "guest: reboot -n -f (no sysrq)"
			reboot -n -f
		fi
		;;
	esac
	sleep 30
	echo "guest: still alive 30 s later"
	exit 1
fi
t0=$(cut -d' ' -f1 /proc/uptime)
nasboot -c "$P" run -b
echo "guest: run -b exit=$? at uptime $t0 -> $(cut -d' ' -f1 /proc/uptime)"
echo "guest: ttl after the boot $(cat /proc/sys/net/ipv4/ip_default_ttl)"
cmp -s "$P" /etc/nasboot.toml && echo "guest: profile file is A"
cmp -s "$P.rejected" /etc/b.toml && echo "guest: B kept as rejected"
echo "guest: journal $(sed -n 2p /data/confirm)"
nasboot -c "$P" status | grep -E 'candidate|last good'
exit 0
