#!/usr/bin/env bash
# Emulated board, real softdog, persistent disk: (5) the reset history
# survives reboots on the disk (/var/lib/nasboot -> /data) and after
# boot_loop_resets (2) watchdog resets in a row the board comes up in the
# safe profile; a clean stop (SIGTERM, magic close) ends the streak.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/watchdog/common.sh
. "$here/common.sh"
wd_setup bootloop

wd_profile "$work/p.toml" 'boot_loop_resets = 2
boot_loop_window = 600'
# Each boot: tests/board/bootloop.sh (hung, or a clean stop when
# /data/stop-next is there).
img=$work/state.img
"$WD_BOARD" disk new "$img" 16 >/dev/null

for boot in 1 2; do
	log=$work/boot$boot.log
	wd_boot "$log" --profile "$work/p.toml" --script "$here/../board/bootloop.sh" --disk "$img"
	t_eq "bootloop: boot $boot hung and was reset" 4 "$wd_rc"
	wd_log_lacks "bootloop: boot $boot uses the normal profile" 'boot loop:' "$log"
	[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
done

# Third boot: two resets in a row -> safe profile; then a clean stop.
printf 'x\n' >"$work/stop-next"
"$WD_BOARD" disk put "$img" "$work/stop-next" /stop-next >/dev/null
log=$work/boot3.log
wd_boot "$log" --profile "$work/p.toml" --script "$here/../board/bootloop.sh" --disk "$img"
t_eq "bootloop: boot 3 powered off" 0 "$wd_rc"
wd_log_has "bootloop: boot 3 comes up in the safe profile" 'boot loop: 2 resets in a row within 600 s; coming up in the safe profile' "$log"
wd_log_has "bootloop: the watchdog is still on in the safe profile" 'petting every 2500 ms' "$log"
wd_log_has "bootloop: clean stop" 'guest: nasboot-exit=0' "$log"
[ "$T_FAIL" -eq 0 ] || wd_keep "$log"

hist=$("$WD_BOARD" disk cat "$img" /resets)
t_eq "bootloop: history has three boots" 3 "$(grep -c -v '^#' <<<"$hist")"
t_eq "bootloop: ends recorded: unclean, unclean, clean" "unclean unclean clean" "$(grep -v '^#' <<<"$hist" | awk '{print $4}' | xargs)"

# Fourth boot: the clean stop ended the streak.
printf 'x\n' >"$work/stop-next"
"$WD_BOARD" disk put "$img" "$work/stop-next" /stop-next >/dev/null
log=$work/boot4.log
wd_boot "$log" --profile "$work/p.toml" --script "$here/../board/bootloop.sh" --disk "$img"
t_eq "bootloop: boot 4 powered off" 0 "$wd_rc"
wd_log_lacks "bootloop: boot 4 is back to the normal profile" 'boot loop:' "$log"
[ "$T_FAIL" -eq 0 ] || wd_keep "$log"
t_done
