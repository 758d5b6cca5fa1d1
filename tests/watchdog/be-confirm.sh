#!/usr/bin/env bash
# A big-endian board (tests/beboard.sh; ppc and sparc64: QEMU's i6300esb,
# mips-be: softdog) with the board's static nasboot and a persistent ext2
# disk holding the journal and the profile (tests/board/confirm-window.sh):
#   wait   B applied with `apply --confirm 3` and not confirmed: the
#          holder (a confirm-hold process) reverts it; A's sysctl is
#          back, the journal rolled back;
#   daemon the same with A brought up by `run -b`: its daemon holds and
#          does the revert, no confirm-hold process runs;
#   kill   B with `--confirm 600`, the watchdog daemon killed with SIGKILL:
#          the board's watchdog resets it, and the next boot reverts first;
#   sysrq  the same with an immediate reset (a power cut).
# The mipsel twin is tests/watchdog/board-confirm.sh.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/beboard.sh
. "$here/../beboard.sh"
be_setup confirm
be_wd_profile "$work/a.toml"
printf '[sysctl.set]\n"net.ipv4.ip_default_ttl" = 65\n' >>"$work/a.toml"
be_wd_profile "$work/b.toml"
printf '[sysctl.set]\n"net.ipv4.ip_default_ttl" = 99\n' >>"$work/b.toml"

for how in wait daemon kill sysrq; do
	img=$work/$how.img
	be_board disk new "$img" 16 >/dev/null
	printf '%s\n' "$how" >"$work/how"
	args=(--profile "$work/a.toml" --script "$here/../board/confirm-window.sh" --disk "$img"
		--file "$work/b.toml:/etc/b.toml" --file "$work/how:/etc/confirm-how")
	log=$work/$how-1.log
	be_boot "$log" 90 "${args[@]}"
	be_has "$how: B was in force" 'guest: ttl under B 99' "$log"
	if [ "$how" = wait ] || [ "$how" = daemon ]; then
		t_eq "$how: powered off" 0 "$be_rc"
		be_has "$how: A's sysctl is back after the deadline" 'guest: ttl after the deadline 65' "$log"
		be_has "$how: the journal says rolled back" 'guest: journal state rolled-back' "$log"
		be_has "$how: the profile file is A" 'guest: profile file is A' "$log"
		if [ "$how" = wait ]; then
			be_has "$how: a confirm-hold process held the revert" 'guest: confirm-hold seen in [1-9][0-9]* process lists' "$log"
		else
			be_has "$how: no confirm-hold process ran" 'guest: confirm-hold seen in 0 process lists of [1-9]' "$log"
			be_has "$how: the daemon reverted, and says why" 'guest: daemon log: .*was not confirmed \(its deadline passed\)' "$log"
			be_has "$how: the daemon's revert checked the board" 'guest: daemon log: reverted to fnv1a64:[0-9a-f]+; the board matches' "$log"
			be_has "$how: the daemon runs on" 'guest: the daemon [0-9]+ still runs' "$log"
		fi
		continue
	fi
	t_eq "$how: the first boot ends in a reset inside the window" 4 "$be_rc"
	log=$work/$how-2.log
	be_boot "$log" 90 "${args[@]}"
	t_eq "$how: the second boot powers off" 0 "$be_rc"
	be_has "$how: the boot reverts first, and says why" 'was not confirmed \(the board restarted inside its window\)' "$log"
	be_has "$how: A's sysctl is in force" 'guest: ttl after the boot 65' "$log"
	be_has "$how: the profile file is A" 'guest: profile file is A' "$log"
	be_has "$how: B is kept beside it" 'guest: B kept as rejected' "$log"
	be_has "$how: the journal says rolled back" 'guest: journal state rolled-back' "$log"
done
t_done
