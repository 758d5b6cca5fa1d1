#!/usr/bin/env bash
# Past 2038: the wall clock of every board binary, under qemu-user with the
# clock set to 2040-01-01 by faketime (qemu-user answers the guest's
# clock_gettime with its own, which faketime moves; a static binary run
# on the host directly would not see it). The 32-bit musl builds (mips,
# mipsel, powerpc: what the boards ship) read the clock through musl's
# __clock_gettime64 (src/sys/time.rs); the libc crate's time32
# clock_gettime traps from 2038-01-19 (std's SystemTime::now panics on
# EOVERFLOW). For each binary, in a network
# namespace: `firewall apply --confirm 30` writes its confirmation token
# (PID-NANOSECONDS since the epoch), which must read 2040, and `firewall
# confirm` then keeps the rule set (both exit 0). The reset history and
# the heartbeat check read the same clock; file times past 2038 are the
# unit tests' (src/sys/time.rs, under qemu-user for the musl targets).
# Needs root. About 20 s.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"

t_need faketime nftables iproute2
work=$(mktemp -d /tmp/nasboot-y2038.XXXXXX)
ns=nby38-$$
trap 'ip netns del "$ns" 2>/dev/null || true; rm -rf "$work"' EXIT
ip netns add "$ns"
ip -n "$ns" link add eth0 type veth peer name eth1
ip -n "$ns" link set eth0 up
ip -n "$ns" link set eth1 up

# 2040-01-01T00:00:00Z and an hour after, in nanoseconds.
from=2208988800000000000
to=2208992400000000000
# The wall clock only: CLOCK_MONOTONIC stays the uptime it is on a board
# (faketime would move it too, past what any board's uptime reaches).
clock=(env FAKETIME_DONT_FAKE_MONOTONIC=1 faketime '2040-01-01 00:00:00')
t_check "faketime moves qemu-user's clock (control)" test "$("${clock[@]}" date -u +%Y)" = 2040

ran=0
for t in $(t_present_targets all); do
	[ "$t" = host ] && continue
	read -ra nb <<<"$(nasboot_for "$t")"
	ran=$((ran + 1))
	root=$work/$t
	mkdir -p "$root/etc"
	printf '[board]\nname = "y2038"\n[[interface]]\nname = "eth0"\nrole = "wan"\n[firewall]\nprofile = "stateless"\n' >"$root/etc/nasboot.toml"
	ip netns exec "$ns" nft flush ruleset
	ip netns exec "$ns" "${clock[@]}" "${nb[@]}" --root "$root" firewall apply --confirm 30 >"$work/$t.out" 2>&1 &
	apply=$!
	pending=$root/run/nasboot/firewall.pending
	for _ in $(seq 100); do
		[ -s "$pending" ] && break
		kill -0 "$apply" 2>/dev/null || break
		sleep 0.2
	done
	tok=$(cat "$pending" 2>/dev/null || true)
	nanos=${tok#*-}
	if [ -n "$tok" ] && [ "$nanos" -ge "$from" ] 2>/dev/null && [ "$nanos" -lt "$to" ]; then
		t_ok "$t: in 2040 the confirmation token reads 2040 ($tok)"
	else
		t_fail "$t: in 2040 no token of 2040 (token '$tok'; $(tr '\n' ' ' <"$work/$t.out"))"
	fi
	t_check "$t: in 2040 firewall confirm exits 0" ip netns exec "$ns" "${clock[@]}" "${nb[@]}" --root "$root" -q firewall confirm
	st=0
	wait "$apply" || st=$?
	t_eq "$t: in 2040 the confirmed apply exits 0 ($(tr '\n' ' ' <"$work/$t.out"))" 0 "$st"
done
t_check "some board binaries ran ($ran)" test "$ran" -ge 1
t_done
