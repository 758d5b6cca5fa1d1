#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# `apply --confirm SECS FILE` for the whole profile, on the host's kernel,
# in board-shaped network namespaces (prefix nbcf; scripts/lib/netns.sh).
# nasboot runs in ${P}box with a --root that holds the profile, the
# exports file and /var/lib/nasboot (the journal); /proc is the real one.
#
# Profile A is in force first: eth1 192.168.10.1/24, SSH open to the LAN,
# one export. Candidate B moves eth1 to 192.168.20.1/24, closes SSH
# (lan_services = []), adds a bridge br0 with a port (vp0) and an address,
# sets net.ipv4.ip_default_ttl (which A does not name) and exports another
# path; here it also gives vp1, which A does not name, an MTU, a
# txqueuelen and net.ipv4.conf.vp1.arp_ignore, and sets the read-ahead of
# a loop device (skipped, and said, where losetup finds none). (This
# kernel has neither VLANs nor cake, and no nfsd file system for nfsd's
# knobs: the board suites and the unit tests cover those.)
#
#   1. not confirmed: `apply --confirm 3 B` returns with B in force (the
#      LAN host's TCP probe of port 22 is refused), the journal pending
#      and `status` saying so; after the deadline the holder reverts
#      without any other nasboot: links, addresses, routes, `nft list
#      ruleset`, the sysctls, the qdiscs and the exports file each equal
#      A's, field by field; the probe is answered again; the profile file
#      is A's again and B is kept as nasboot.toml.rejected; the journal
#      says rolled-back with no difference. The revert's latency (the
#      deadline to A's address back on eth1) is printed.
#   2. confirmed: B stays after the deadline, the journal says confirmed.
#   3. bad input: a candidate that fails check (exit 2, file:line:key,
#      nothing journaled); a second apply while pending (exit 2); plain
#      apply with --rollback-first; `confirm` with nothing pending (exit
#      1); the journal truncated, corrupt or for another profile (the
#      error names the file); /var/lib read-only (a tmpfs mounted ro in a
#      private mount namespace): --confirm refuses with nothing changed.
#
#   tests/apply/confirm.sh            # uses $NASBOOT_DIST or target/dist
set -eu
# shellcheck source=confirm-lib.sh
. "$(dirname "$0")/confirm-lib.sh"
P=nbcf
W=$(mktemp -d /tmp/nasboot-confirm.XXXXXX)
R=$W/root
cleanup() {
	local st=$?
	cf_kill_holders
	fw_stop_listeners
	umount "$R/var/lib" 2>/dev/null || true
	[ -z "${CF_LOOP:-}" ] || losetup -d "/dev/$CF_LOOP" 2>/dev/null || true
	netns_board_down "$P"
	rm -rf "$W"
	exit $st
}
trap cleanup EXIT
cp "${NB[0]}" "$W/nasboot"
cf_init
CF_LOOP=""
truncate -s 1M "$W/disk.img"
if dev=$(losetup -f --show "$W/disk.img" 2>"$W/losetup.err"); then
	CF_LOOP=${dev#/dev/}
	# A loop device keeps its read-ahead across detach and attach: A's
	# is set here, so that B's differs from it.
	echo 128 >"/sys/block/$CF_LOOP/queue/read_ahead_kb"
else
	echo "skip: read-ahead: no loop device here ($(cat "$W/losetup.err"))"
fi
B_TEXT+='[[interface]]
name = "vp1"
role = "lan"
mtu = 1400
txqueuelen = 500
[interface.sysctl]
"ipv4.arp_ignore" = 2
'
[ -z "$CF_LOOP" ] || B_TEXT+="[[storage]]
device = \"$CF_LOOP\"
read_ahead_kb = 4096
"
grep -qw nfsd /proc/filesystems || echo "skip: nfsd's knobs: this kernel has no nfsd file system (the unit tests cover them)"

# --- 1. not confirmed --------------------------------------------------
cf_setup
cf_observe >"$W/A.obs"
t_eq "A: the LAN host reaches port 22" answered "$(cf_probe 192.168.10.1)"
[ -z "$CF_LOOP" ] || t_eq "A: $CF_LOOP's read-ahead" "read_ahead_kb $CF_LOOP 128" "$(grep '^read_ahead_kb' "$W/A.obs")"
t0=$(cf_now_ms)
out=$(nb apply --confirm 3 /etc/b.toml 2>"$W/c.err") && st=0 || st=$?
t_eq "apply --confirm 3 B: exit 0" 0 "$st"
[ "$st" = 0 ] || cat "$W/c.err"
t_has "it prints the LAN address B gives" "eth1 192.168.20.1/24" "$out"
t_has "it prints the confirm command" "nasboot -c /etc/nasboot.toml confirm" "$out"
t_has "the journal is pending" "state pending" "$(head -2 "$R/var/lib/nasboot/confirm.pending" 2>&1)"
t_check "the profile file is B" cmp -s "$R/etc/b.toml" "$R/etc/nasboot.toml"
cf_observe >"$W/B.obs"
t_has "B: eth1 has B's address" "addr eth1 inet 192.168.20.1/24" "$(cat "$W/B.obs")"
t_has "B: br0 is there with vp0 in it" "master br0" "$(grep 'link vp0' "$W/B.obs")"
t_eq "B: ip_default_ttl" "sysctl ip_default_ttl 99" "$(grep 'sysctl ip_default_ttl' "$W/B.obs")"
t_has "B: vp1's MTU" "mtu 1400" "$(grep 'link vp1' "$W/B.obs")"
t_eq "B: vp1's txqueuelen" "qlen vp1 500" "$(grep '^qlen vp1' "$W/B.obs")"
t_eq "B: vp1's arp_ignore" "sysctl vp1.arp_ignore 2" "$(grep 'sysctl vp1.arp_ignore' "$W/B.obs")"
[ -z "$CF_LOOP" ] || t_eq "B: $CF_LOOP's read-ahead" "read_ahead_kb $CF_LOOP 4096" "$(grep '^read_ahead_kb' "$W/B.obs")"
box ip addr add 192.168.20.9/24 dev eth1 2>/dev/null || true
ip -n "${P}lan" addr add 192.168.20.2/24 dev eth0
t_eq "B: the LAN host's probe of port 22 is refused" refused "$(cf_probe 192.168.20.1)"
box ip addr del 192.168.20.9/24 dev eth1 2>/dev/null || true
st_out=$(nb status 2>&1 || true)
t_has "status shows the pending candidate" "pending: reverted in" "$st_out"
t_has "status shows the last good profile's path and digest" "last good profile: /etc/nasboot.toml fnv1a64:" "$st_out"
# The revert: the holder, with no other nasboot. Wait for A's address.
deadline=$((t0 + 3000))
back=""
for _ in $(seq 1 100); do
	if box ip -o addr show dev eth1 | grep -q 192.168.10.1/24 && [ ! -e "$R/var/lib/nasboot/confirm.pending" ]; then
		back=$(cf_now_ms)
		break
	fi
	sleep 0.02
done
if [ -n "$back" ]; then
	lat=$((back - deadline))
	echo "revert latency (deadline -> A's address back and the journal settled): ${lat} ms"
	t_check "revert within 1 s of the deadline (${lat} ms)" test "$lat" -le 1000
else
	t_fail "A's address is not back within 2 s of the deadline"
fi
sleep 0.3
cf_observe >"$W/A2.obs"
cf_same "not confirmed: the board equals A's observation" "$W/A.obs" "$W/A2.obs"
t_eq "after the revert the LAN host reaches port 22 again" answered "$(cf_probe 192.168.10.1)"
t_check "the profile file is A again" cmp -s "$W/a.toml" "$R/etc/nasboot.toml"
t_check "B is kept as nasboot.toml.rejected" cmp -s "$R/etc/b.toml" "$R/etc/nasboot.toml.rejected"
j=$(cat "$R/var/lib/nasboot/confirm" 2>&1)
t_has "the journal says rolled back" "state rolled-back" "$j"
t_has "the journal says the revert was checked" "matches its observation from before the candidate" "$j"
t_has "status says so" "rolled-back: reverted to" "$(nb status 2>&1 || true)"
t_eq "confirm with nothing pending: exit 1" 1 "$(nb confirm >/dev/null 2>&1 && echo 0 || echo $?)"
t_has "... and says so" "no candidate is pending" "$(nb confirm 2>&1 || true)"

# --- 2. confirmed ------------------------------------------------------
cf_setup
nb apply --confirm 3 /etc/b.toml >/dev/null 2>"$W/c.err" || { cat "$W/c.err"; t_fail "apply --confirm"; }
out=$(nb confirm 2>&1) && st=0 || st=$?
t_eq "confirm: exit 0" 0 "$st"
t_has "confirm says so" "confirmed:" "$out"
sleep 3.5
cf_observe >"$W/B2.obs"
t_has "confirmed: B's address stays past the deadline" "addr eth1 inet 192.168.20.1/24" "$(cat "$W/B2.obs")"
t_has "confirmed: br0 stays" "link br0" "$(cat "$W/B2.obs")"
t_has "the journal says confirmed" "state confirmed" "$(head -2 "$R/var/lib/nasboot/confirm")"
t_check "no pending journal" test ! -e "$R/var/lib/nasboot/confirm.pending"
t_check "the profile file is B" cmp -s "$R/etc/b.toml" "$R/etc/nasboot.toml"
# rollback now goes to the last good (B, confirmed): nothing changes.
out=$(nb rollback 2>&1) && st=0 || st=$?
t_eq "rollback to the confirmed profile: exit 0" 0 "$st"

# --- 3. bad input ------------------------------------------------------
cf_setup
printf '%s' "${B_TEXT/role = \"lan\"/role = \"moon\"}" >"$R/etc/bad.toml"
out=$(nb apply --confirm 3 /etc/bad.toml 2>&1) && st=0 || st=$?
t_eq "a candidate failing check: exit 2" 2 "$st"
t_has "... with file, line and key" "/etc/bad.toml:10:8: interface[1].role" "$out"
t_check "... nothing journaled" test ! -e "$R/var/lib/nasboot/confirm.pending"
t_check "... the profile file untouched" cmp -s "$W/a.toml" "$R/etc/nasboot.toml"
nb apply --confirm 30 /etc/b.toml >/dev/null 2>&1
out=$(nb apply 2>&1) && st=0 || st=$?
t_eq "a second apply while pending: exit 2" 2 "$st"
t_has "... with a clear message" "is pending for" "$out"
out=$(nb apply --rollback-first 2>&1) && st=0 || st=$?
t_eq "apply --rollback-first: exit 0" 0 "$st"
t_has "... it went back first" "--rollback-first: going back" "$out"
t_has "... A's address is back" "192.168.10.1/24" "$(box ip -o addr show dev eth1)"
cf_kill_holders
cp "$R/var/lib/nasboot/confirm" "$W/journal"
head -c 100 "$W/journal" >"$R/var/lib/nasboot/confirm.pending"
out=$(nb apply 2>&1) && st=0 || st=$?
t_eq "a truncated journal: exit 2" 2 "$st"
t_has "... the error names the file" "/var/lib/nasboot/confirm.pending:" "$out"
sed 's/^state rolled-back/state pending/; s/^profile .*/profile \/etc\/other.toml/' "$W/journal" >"$R/var/lib/nasboot/confirm.pending"
out=$(nb apply 2>&1) && st=0 || st=$?
t_has "a journal for another profile: named" "/var/lib/nasboot/confirm.pending: the confirm journal is for the profile /etc/other.toml" "$out"
out=$(nb run 2>&1) && st=0 || st=$?
t_has "at boot, an unusable journal: the safe profile, said" "coming up in the safe profile" "$out"
rm -f "$R/var/lib/nasboot/confirm.pending"
# /var/lib read-only: --confirm refuses with nothing changed.
mount -t tmpfs -o ro,size=64k tmpfs "$R/var/lib"
cf_observe >"$W/ro-before.obs"
out=$(nb apply --confirm 3 /etc/b.toml 2>&1) && st=0 || st=$?
t_eq "read-only /var/lib: exit 1" 1 "$st"
t_has "... the error names the file" "/var/lib/nasboot/confirm.pending: cannot write the confirm journal" "$out"
t_has "... and says nothing was changed" "nothing was changed" "$out"
cf_observe >"$W/ro-after.obs"
cf_same "read-only /var/lib: the board as before" "$W/ro-before.obs" "$W/ro-after.obs"
t_check "... the profile file untouched" cmp -s "$W/a.toml" "$R/etc/nasboot.toml"
umount "$R/var/lib"
# Full /var/lib: the same.
mount -t tmpfs -o size=4k tmpfs "$R/var/lib"
head -c 4096 /dev/zero >"$R/var/lib/fill" 2>/dev/null || true
out=$(nb apply --confirm 3 /etc/b.toml 2>&1) && st=0 || st=$?
t_eq "full /var/lib: exit 1" 1 "$st"
t_has "... the error names the file" "/var/lib/nasboot/confirm.pending: cannot write the confirm journal" "$out"
t_check "... the profile file untouched" cmp -s "$W/a.toml" "$R/etc/nasboot.toml"
umount "$R/var/lib"

t_done
