#!/bin/sh
# Guest script of scripts/bench-confirm (busybox sh) on the emulated 24K,
# guest time (QEMU -icount). Profile A (/etc/nasboot.toml): eth0 on the
# LAN (10.0.2.15/24, QEMU's user network), a watchdog (4 s: the daemon
# pets every 2 s); candidate B (/etc/b.toml): the same with eth0 down,
# which cuts the LAN. ROUNDS (the kernel command line's bench.rounds=)
# interleaved rounds of:
#   cost    with nothing pending, a plain `apply` of A (nothing to change)
#           and `run -b` (the boot's: the apply, then the daemon, stopped
#           after each), by this tree's nasboot and by
#           /usr/local/bin/nasboot-a (the same source without the
#           journal's stat), the order alternating each round:
#           "bench: cost apply|boot b|a ROUND MICROSECONDS"
#   revert  B applied with `apply --confirm 4`, not confirmed, its revert
#           held by a confirm-hold process (no daemon runs) or by the
#           `run` daemon: from the deadline (the journal's, CLOCK_BOOTTIME)
#           to the journal settled (A applied, the board observed and
#           found as before), to eth0's carrier again (polled every
#           0.1 s: a tighter loop of processes would slow the revert it
#           times), and to the LAN answering again: an ICMP echo of QEMU's
#           user network's gateway 10.0.2.2 answered (pings of 1 s
#           timeout, from the carrier on). In ms:
#           "bench: revert hold|daemon ROUND ANSWER-MS SETTLED-MS CARRIER-MS"
# Each revert must end in A's state: the journal rolled back with the
# board matching, the profile file A's; else "bench: failed ...".
ROUNDS=$(sed -n 's/.*bench.rounds=\([0-9]*\).*/\1/p' /proc/cmdline)
P=/etc/nasboot.toml
NB_A=/usr/local/bin/nasboot-a
chmod +x "$NB_A"
cp "$P" /etc/a.toml
mkdir -p /var/lib/nasboot
# No SLAAC address from QEMU's router advertisements, which comes on its
# own time after each link-up: the revert's check compares the addresses.
echo 0 >/proc/sys/net/ipv6/conf/eth0/autoconf
now() { adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d%06d\n", s, u }'; }
ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
fail() {
	echo "bench: failed: $*"
	exit 1
}
carrier() { [ "$(cat /sys/class/net/eth0/operstate)" = up ]; }
answers() { ping -c 1 -W 1 10.0.2.2 >/dev/null 2>&1; }
daemon_stop() {
	pid=$(cat /run/nasboot.pid 2>/dev/null) || return 0
	kill -TERM "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	rm -f /run/nasboot.pid
}

nasboot apply >/dev/null 2>&1 || fail "apply A"
i=0
until answers || [ $i -gt 30 ]; do i=$((i + 1)); done
answers || fail "the LAN does not answer under A"
# Once untimed: the page cache holds both binaries.
nasboot -q apply >/dev/null 2>&1
"$NB_A" -q apply >/dev/null 2>&1

# cost BIN WHAT ROUND
cost() {
	case $2 in
	apply)
		t0=$(now)
		"$1" -q apply >/dev/null 2>&1 || fail "$1 apply"
		t1=$(now)
		;;
	boot)
		t0=$(now)
		"$1" -q run -b --pidfile /run/nasboot.pid >/dev/null 2>&1 || fail "$1 run -b"
		t1=$(now)
		daemon_stop
		;;
	esac
	echo "bench: cost $2 $3 $4 $((t1 - t0))"
}

# revert HOLDER ROUND
revert() {
	[ "$1" = daemon ] && { nasboot -q run -b --pidfile /run/nasboot.pid >/dev/null 2>&1 || fail "run -b"; }
	nasboot -q apply --confirm 4 /etc/b.toml >/dev/null 2>&1 || fail "apply --confirm"
	deadline=$(sed -n 's/^deadline //p' /var/lib/nasboot/confirm.pending)
	while [ -e /var/lib/nasboot/confirm.pending ]; do sleep 0.1; done
	settled=$(ms)
	until carrier; do sleep 0.1; done
	up=$(ms)
	until answers; do :; done
	back=$(ms)
	# BusyBox has no pgrep: its ps shows each argv.
	# shellcheck disable=SC2009
	if [ "$1" = hold ] && ps | grep -v grep | grep -q 'run -b'; then fail "a daemon ran"; fi
	[ "$1" = daemon ] && daemon_stop
	sed -n 2p /var/lib/nasboot/confirm | grep -q '^state rolled-back' || fail "the journal: $(sed -n 2p /var/lib/nasboot/confirm)"
	grep -q '^note reverted to .*; the board matches' /var/lib/nasboot/confirm || fail "the revert's check: $(grep '^note' /var/lib/nasboot/confirm)"
	cmp -s "$P" /etc/a.toml || fail "the profile file is not A"
	echo "bench: revert $1 $2 $((back - deadline)) $((settled - deadline)) $((up - deadline))"
}

r=1
while [ $r -le "$ROUNDS" ]; do
	if [ $((r % 2)) = 1 ]; then order="b a"; else order="a b"; fi
	for what in apply boot; do
		for side in $order; do
			bin=nasboot
			[ "$side" = a ] && bin=$NB_A
			cost "$bin" "$what" "$side" "$r"
		done
	done
	for holder in hold daemon; do
		revert "$holder" "$r"
	done
	r=$((r + 1))
done
echo "bench: done"
