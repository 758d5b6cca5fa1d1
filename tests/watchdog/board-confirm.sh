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
t_done
