#!/usr/bin/env bash
# Emulated board, real softdog, persistent disk: a candidate applied with
# `apply --confirm 600` and not confirmed is never what the next boot
# brings up. The board ends inside the window, twice:
#   kill   the watchdog daemon killed with SIGKILL: softdog resets it;
#   sysrq  an immediate reset (sysrq b), as a power cut.
# Each time the next boot's `run -b` finds the journal (on the disk, with
# the profile: tests/board/confirm-window.sh) from another boot, reverts
# to A before anything else and says so; the profile file is A again, B
# is kept as nasboot.toml.rejected, the journal says rolled-back, and A's
# sysctl (ip_default_ttl 65, B's 99) is in force.
# And a candidate that cuts the LAN (eth0 down), `apply --confirm 5`, not
# confirmed (tests/board/confirm-lan.sh): the host's HTTP probe of the
# board's busybox httpd (slirp, hostfwd) is answered under A, not under
# B, and again after the revert, within the deadline plus BOUND_S (4 s:
# the holder's 0.1 s tick, the apply, and the emulated e1000's link,
# which comes up about 2 s after the interface). The guest time from the
# deadline to eth0 up again is printed.
# A confirm-hold process holds the revert (the guest's process list,
# every 0.05 s). The same with the `run` daemon on the watchdog (both
# profiles with a 5 s watchdog): the daemon holds the revert, so no
# `confirm-hold` process runs in the window, the revert and its check
# are in the daemon's log, and the daemon pets on after it (no softdog
# reset).
# And a candidate that adds a VLAN and SQM (cake both ways, an IFB for the
# ingress; tests/board/confirm-vlan-sqm.sh), not confirmed: reverted, the
# board's links, addresses, routes and qdiscs equal to A's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/watchdog/common.sh
. "$here/common.sh"
wd_setup confirm

wd_profile "$work/a.toml" '[sysctl.set]
"net.ipv4.ip_default_ttl" = 65'
wd_profile "$work/b.toml" '[sysctl.set]
"net.ipv4.ip_default_ttl" = 99'
for how in kill sysrq; do
	img=$work/$how.img
	"$WD_BOARD" disk new "$img" 16 >/dev/null
	printf '%s\n' "$how" >"$work/how"
	args=(--profile "$work/a.toml" --script "$here/../board/confirm-window.sh" --disk "$img"
		--file "$work/b.toml:/etc/b.toml" --file "$work/how:/etc/confirm-how")
	log=$work/$how-1.log
	wd_boot "$log" "${args[@]}"
	t_eq "$how: the first boot ends in a reset inside the window" 4 "$wd_rc"
	wd_log_has "$how: B was in force" 'guest: ttl under B 99' "$log"
	if [ "$how" = kill ]; then
		wd_log_has "$how: softdog reset the board" 'softdog: Initiating system reboot' "$log"
	fi
	wd_log_has "$how: the candidate was pending" 'candidate fnv1a64:[0-9a-f]+ pending' "$log"
	[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
	log=$work/$how-2.log
	wd_boot "$log" "${args[@]}"
	t_eq "$how: the second boot powers off" 0 "$wd_rc"
	wd_log_has "$how: the boot reverts first, and says why" 'was not confirmed \(the board restarted inside its window\)' "$log"
	wd_log_has "$how: A's sysctl is in force" 'guest: ttl after the boot 65' "$log"
	wd_log_has "$how: the profile file is A" 'guest: profile file is A' "$log"
	wd_log_has "$how: B is kept beside it" 'guest: B kept as rejected' "$log"
	wd_log_has "$how: the journal says rolled back" 'guest: journal state rolled-back' "$log"
	wd_log_has "$how: status says where the candidate is" 'rolled-back: reverted to fnv1a64:[0-9a-f]+; the board matches' "$log"
	[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
done

# The LAN cases: lan (no daemon: confirm-hold holds the revert) and
# daemon (the `run` daemon holds it; both profiles have a watchdog).
lan_profile() {
	printf '[board]\nname = "wd-test"\n[firewall]\nprofile = "off"\n[[interface]]\nname = "eth0"\nrole = "lan"\naddress = ["10.0.2.15/24"]\n%s%s' "$2" "$3" >"$1"
}
BOUND_S=4
# lan_case NAME [PROFILE-TAIL]: one boot of tests/board/confirm-lan.sh,
# the host probing; NAME daemon: with the daemon (/etc/confirm-daemon).
lan_case() {
	local name=$1 tail=${2:-} port log board first_ok cut back gap deadline again
	local -a extra=()
	lan_profile "$work/$name-a.toml" '' "$tail"
	lan_profile "$work/$name-b.toml" 'up = false
' "$tail"
	if [ "$name" = daemon ]; then
		: >"$work/daemon"
		extra=(--file "$work/daemon:/etc/confirm-daemon")
	fi
	port=$((18000 + RANDOM % 1000))
	log=$work/$name.log
	"$WD_BOARD" disk new "$work/$name.img" 16 >/dev/null
	set +e
	"$WD_BOARD" run --bin "$WD_BIN" --log "$log" --timeout 90 --profile "$work/$name-a.toml" --disk "$work/$name.img" \
		--script "$here/../board/confirm-lan.sh" --file "$work/$name-b.toml:/etc/b.toml" "${extra[@]}" \
		--nic e1000 --hostfwd "tcp:127.0.0.1:$port-:80" >"$log.harness" 2>&1 &
	board=$!
	set -e
	# One probe every 0.2 s: "T ok" or "T no", T in ms of host time.
	: >"$work/probes"
	while kill -0 "$board" 2>/dev/null; do
		if curl -s -m 0.5 "http://127.0.0.1:$port/hello.txt" 2>/dev/null | grep -q hello; then r=ok; else r=no; fi
		echo "$(date +%s%3N) $r" >>"$work/probes"
		sleep 0.2
	done
	wait "$board" && wd_rc=0 || wd_rc=$?
	t_eq "$name: the board powers off" 0 "$wd_rc"
	# The answered stretches: before the cut, and after the revert.
	read -r first_ok cut back < <(awk '$2 == "ok" && !a { a = $1 } $2 == "no" && a && !c { c = $1 } $2 == "ok" && c && !b { b = $1 } END { printf "%.0f %.0f %.0f\n", a, c, b }' "$work/probes")
	t_check "$name: answered under A" test "$first_ok" -gt 0
	t_check "$name: not answered under B" test "$cut" -gt 0
	t_check "$name: answered again after the revert" test "$back" -gt 0
	if [ "$cut" -gt 0 ] && [ "$back" -gt 0 ]; then
		gap=$((back - cut))
		echo "$name: the host's probe went unanswered for $gap ms (deadline 5 s + bound ${BOUND_S} s)"
		t_check "$name: answered again within the deadline plus ${BOUND_S} s ($gap ms)" test "$gap" -le $(((5 + BOUND_S) * 1000))
	fi
	wd_log_has "$name: the journal settled rolled back" 'guest: journal settled uptime=[0-9.]+ state rolled-back' "$log"
	deadline=$(sed -n 's/.*guest: deadline_ms=\([0-9]*\).*/\1/p' "$log" | tr -d '\r')
	again=$(sed -n 's/.*guest: lan up again uptime=\([0-9.]*\).*/\1/p' "$log" | tr -d '\r')
	if [ -n "$deadline" ] && [ -n "$again" ]; then
		echo "$name: guest time from the deadline to eth0 up again: $(awk -v d="$deadline" -v b="$again" 'BEGIN { printf "%.2f", b - d / 1000 }') s"
	fi
	lan_log=$log
}
lan_case lan
wd_log_has "lan: a confirm-hold process holds the revert" 'guest: confirm-hold seen in [1-9][0-9]* process lists' "$lan_log"
if [ "$T_FAIL" -ne 0 ]; then
	wd_keep "$lan_log"
	head -5 "$work/probes"
	tail -5 "$work/probes"
fi
# The daemon's case: it holds the revert, no confirm-hold ever runs, and
# it pets on after the revert.
fails=$T_FAIL
lan_case daemon '[watchdog]
timeout = 5
'
wd_log_has "daemon: no confirm-hold process during the window" 'guest: confirm-hold seen in 0 process lists of [1-9]' "$lan_log"
wd_log_has "daemon: the daemon reverted, and says why" 'guest: daemon log: .*was not confirmed \(its deadline passed\)' "$lan_log"
wd_log_has "daemon: its revert checked the board" 'guest: daemon log: reverted to fnv1a64:[0-9a-f]+; the board matches' "$lan_log"
wd_log_has "daemon: it pets on after the revert" 'guest: the daemon [0-9]+ still pets' "$lan_log"
wd_log_lacks "daemon: no reset" 'softdog: Initiating system reboot' "$lan_log"
if [ "$T_FAIL" -ne "$fails" ]; then
	wd_keep "$lan_log"
	head -5 "$work/probes"
	tail -5 "$work/probes"
fi

# A VLAN and SQM (cake both ways, an IFB for the ingress) in a candidate,
# not confirmed (tests/board/confirm-vlan-sqm.sh): reverted, the board
# (links, addresses, routes, qdiscs) observed equal to A.
vs_profile() {
	printf '[board]\nname = "wd-test"\n[firewall]\nprofile = "off"\n[[interface]]\nname = "eth0"\nrole = "wan"\naddress = ["10.0.2.15/24"]\n%s' "$2" >"$1"
}
vs_profile "$work/vs-a.toml" ''
vs_profile "$work/vs-b.toml" '[interface.sqm]
egress_kbit = 50000
ingress_kbit = 50000
[[interface]]
name = "eth0.10"
kind = "vlan"
link = "eth0"
id = 10
role = "lan"
address = ["192.168.10.1/24"]
'
log=$work/vlan-sqm.log
fails=$T_FAIL
wd_boot "$log" --profile "$work/vs-a.toml" --script "$here/../board/confirm-vlan-sqm.sh" --file "$work/vs-b.toml:/etc/b.toml" \
	--nic e1000 --module 8021q --module sch_cake --module sch_ingress --module cls_u32 --module act_mirred --module 'ifb numifbs=0'
t_eq "vlan-sqm: the board powers off" 0 "$wd_rc"
wd_log_has "vlan-sqm: B is in force" 'guest: apply --confirm exit=0' "$log"
wd_log_has "vlan-sqm: B made the VLAN" 'guest: B made the VLAN eth0.10' "$log"
wd_log_has "vlan-sqm: B gave it its address" 'guest: B gave it its address' "$log"
wd_log_has "vlan-sqm: B shapes eth0 with cake" 'guest: B shapes eth0 with cake' "$log"
wd_log_has "vlan-sqm: B shapes the ingress through an IFB" 'guest: B shapes the ingress through an IFB' "$log"
wd_log_has "vlan-sqm: not confirmed, rolled back" 'guest: journal state rolled-back' "$log"
wd_log_has "vlan-sqm: the revert's own check found the board as before" 'guest: note reverted to fnv1a64:[0-9a-f]+; the board matches' "$log"
wd_log_has "vlan-sqm: after the revert the board equals A" 'guest: after the revert the board equals A' "$log"
wd_log_lacks "vlan-sqm: no field differs" 'guest: differs:' "$log"
[ "$T_FAIL" -eq "$fails" ] || wd_keep "$log"
t_done
