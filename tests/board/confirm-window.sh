#!/bin/sh
# Guest script of tests/watchdog/board-confirm.sh. nasboot's state dir and
# the profile on the disk (/data), so both persist across a reset.
#
# First boot (no /data/nasboot.toml): profile A (/etc/nasboot.toml) is
# copied to the disk and applied; candidate B (/etc/b.toml) is applied
# with `--confirm 600`; the watchdog daemon runs; then the board ends
# inside the window as /etc/confirm-how says: "kill" (the daemon killed
# with SIGKILL, so softdog resets the board) or "sysrq" (an immediate
# reset, as a power cut: sysrq b).
# Second boot: `nasboot run -b` (the boot's), then the state is printed
# and the board powers off.
mkdir -p /var/lib
ln -s /data /var/lib/nasboot
P=/data/nasboot.toml
if [ ! -f "$P" ]; then
	cp /etc/nasboot.toml "$P"
	sync
	nasboot -c "$P" apply || echo "guest: apply A failed"
	echo "guest: ttl under A $(cat /proc/sys/net/ipv4/ip_default_ttl)"
	nasboot -c "$P" apply --confirm 600 /etc/b.toml
	echo "guest: apply --confirm exit=$?"
	echo "guest: ttl under B $(cat /proc/sys/net/ipv4/ip_default_ttl)"
	nasboot -c "$P" status | grep candidate
	nasboot -c "$P" watchdog &
	pid=$!
	sleep 2
	case $(cat /etc/confirm-how) in
	kill)
		echo "guest: SIGKILL to the watchdog daemon"
		kill -KILL "$pid"
		;;
	sysrq)
		echo "guest: sysrq reset"
		echo 1 >/proc/sys/kernel/sysrq
		echo b >/proc/sysrq-trigger
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
