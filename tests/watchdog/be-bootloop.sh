#!/usr/bin/env bash
# A big-endian board's boot-loop backoff (tests/beboard.sh; the board's own
# watchdog: ppc and sparc64 QEMU's i6300esb card, mips-be softdog), with
# the board's static nasboot and a persistent ext2 disk (--disk, the
# board's IDE controller: /dev/sda on /data): the reset history
# (/var/lib/nasboot -> /data) survives each reset; after boot_loop_resets
# (2) resets in a row the third boot comes up in the safe profile, the
# watchdog still on; its clean stop (SIGTERM, magic close) ends the
# streak, so the fourth boot is back to normal. The history is read back
# on the host (scripts/board disk cat) after each boot: `running`, then
# `unclean running`, and at the end unclean, unclean, clean. Every boot
# checks that the disk was mounted. The harness checks the image with
# `e2fsck -y` before each boot, as a board's boot would: on ppc and
# mips-be a reset leaves the inode and block bitmaps and the `.bak` link
# count behind, and without that check the next boot's history write can
# fail with EIO (board/README.md, "Disk"); what it repaired is printed as
# a NOTE. The mipsel twin is tests/watchdog/board-bootloop.sh. Four
# boots, under a minute.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/beboard.sh
. "$here/../beboard.sh"
be_setup bootloop
be_wd_profile "$work/p.toml"
printf 'boot_loop_resets = 2\nboot_loop_window = 600\n' >>"$work/p.toml"

# Each boot: tests/board/bootloop.sh (hung, or a clean stop when
# /data/stop-next is there).
img=$work/state.img
be_board disk new "$img" 16 >/dev/null

# history: the entries of the image's reset history, one "cause end" a line.
history() {
	be_board disk cat "$img" /resets | grep -v '^#' | awk '{ print $3, $4 }'
}

# repairs LOG: the harness checks the image before each boot (e2fsck -y);
# what it had to repair is noted (the fs driver's doing, not nasboot's).
repairs() {
	if grep -q 'e2fsck -y repaired' "$1.harness"; then
		echo "NOTE ${1##*/}: $(grep -m1 'e2fsck -y repaired' "$1.harness")"
	fi
}

# Boots 1 and 2: hung, reset by the board's watchdog; normal profile.
for boot in 1 2; do
	log=$work/boot$boot.log
	be_boot "$log" 90 --profile "$work/p.toml" --script "$here/../board/bootloop.sh" --disk "$img"
	repairs "$log"
	be_has "boot $boot: the disk is mounted on /data" 'board: disk mounted at /data' "$log"
	be_has "boot $boot: nasboot pets the board's watchdog" 'petting every 2500 ms' "$log"
	be_has "boot $boot: hung (SIGSTOP)" 'guest: SIGSTOP' "$log"
	t_eq "boot $boot: the watchdog reset the board" 4 "$be_rc"
	[ -z "$BE_WD_FIRED" ] || be_has "boot $boot: the driver says it fired" "$BE_WD_FIRED" "$log"
	be_lacks "boot $boot: not alive 30 s after SIGSTOP" 'still alive 30 s after SIGSTOP' "$log"
	be_lacks "boot $boot: the normal profile" 'boot loop:' "$log"
	# The entry nasboot wrote before the reset is on the disk: the boot's
	# own (running), the ones before it turned unclean.
	want=running
	[ "$boot" = 1 ] || want="unclean running"
	t_eq "boot $boot: history on the disk after the reset" "$want" "$(history | awk '{ print $2 }' | xargs)"
done

# Boot 3: two resets in a row -> the safe profile; then a clean stop.
printf 'x\n' >"$work/stop-next"
be_board disk put "$img" "$work/stop-next" /stop-next >/dev/null
log=$work/boot3.log
be_boot "$log" 90 --profile "$work/p.toml" --script "$here/../board/bootloop.sh" --disk "$img"
repairs "$log"
be_has "boot 3: the disk is mounted on /data" 'board: disk mounted at /data' "$log"
t_eq "boot 3: powered off (no reset)" 0 "$be_rc"
be_has "boot 3: comes up in the safe profile" 'boot loop: 2 resets in a row within 600 s; coming up in the safe profile' "$log"
be_has "boot 3: the watchdog is still on in the safe profile" 'petting every 2500 ms' "$log"
be_has "boot 3: magic close" 'magic close: stopped' "$log"
be_has "boot 3: clean stop" 'guest: nasboot-exit=0' "$log"

t_eq "history: three boots" 3 "$(history | wc -l)"
t_eq "history: ends recorded unclean, unclean, clean" "unclean unclean clean" "$(history | awk '{ print $2 }' | xargs)"

# Boot 4: the clean stop ended the streak.
be_board disk put "$img" "$work/stop-next" /stop-next >/dev/null
log=$work/boot4.log
be_boot "$log" 90 --profile "$work/p.toml" --script "$here/../board/bootloop.sh" --disk "$img"
repairs "$log"
be_has "boot 4: the disk is mounted on /data" 'board: disk mounted at /data' "$log"
t_eq "boot 4: powered off" 0 "$be_rc"
be_lacks "boot 4: back to the normal profile" 'boot loop:' "$log"
t_eq "history: ends recorded unclean, unclean, clean, clean" "unclean unclean clean clean" "$(history | awk '{ print $2 }' | xargs)"
t_done
