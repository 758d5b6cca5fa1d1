#!/usr/bin/env bash
# SMB on a big-endian board (tests/beboard.sh; ppc: QEMU g3beige): the
# board's own static nasboot applies tests/profiles/be-shares.toml
# (`[samba] backend = "auto"`, a share on the board's IDE disk, read-ahead
# for sda and for sdz, which is not there) against its kernel's built-in
# ksmbd (CONFIG_SMB_SERVER=y, board/kernel-common.config).
#
# The board has no ksmbd-tools: ksmbd.mountd hands the kernel its shares
# and users and starts its listener, and without it ksmbd serves nothing.
# Debian's packages for these boards are in its ports archive, which the
# test machines' network refuses, and a cross build of ksmbd-tools needs
# glib2 cross-built first, so no client reads a file over SMB on these
# boards (tests/nfs/board-shares.sh does, on the little-endian board with
# Debian's ksmbd-tools).
#
# What this covers, on the real big-endian kernel: ksmbd is there as the
# kernel shows it (/sys/module/ksmbd; the board has no modules.builtin or
# modules.dep to ask), and does not listen on 445 by itself; `plan` picks
# ksmbd from the kernel alone and says why, with notes that ksmbd.mountd
# is missing and not running (exit 0), where the same plan under a root
# without /sys/module/ksmbd (-r) refuses SMB; `apply` writes
# /etc/ksmbd/ksmbd.conf bound to the LAN interface, sets read-ahead on the
# real disk (read back from /sys) and notes sdz (exit 0); a second plan has nothing left to do; a changed
# profile replaces the file with the previous copy kept as .bak; a share
# naming a user without a password exits 3 with the file untouched and
# the rest applied; a profile error exits 2 and applies nothing. One boot,
# about 10 s. Needs root.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/beboard.sh
. "$here/../beboard.sh"
be_setup shares

profile=$T_TOP/tests/profiles/be-shares.toml
# A global setting changed (workgroup); a share naming a user who has no
# password in ksmbdpwd.db, with another read-ahead; a read-ahead over the
# limit (a profile error: the position given is the entry's device).
sed 's/^backend = "auto"$/&\nworkgroup = "NASLAB"/' "$profile" >"$work/wg.toml"
sed -e 's/^guest_ok = true$/guest_ok = false\nvalid_users = ["alice"]/' \
	-e '0,/^read_ahead_kb = 1024$/s//read_ahead_kb = 512/' "$profile" >"$work/user.toml"
sed '0,/^read_ahead_kb = 1024$/s//read_ahead_kb = 70000/' "$profile" >"$work/bad.toml"
bad_line=$(grep -n -m1 '^device = "sda"$' "$work/bad.toml" | cut -d: -f1)

be_guest_lib >"$work/guest.sh"
cat >>"$work/guest.sh" <<'GUEST'
ra() { echo "guest: sda read_ahead_kb $1 $(cat /sys/block/sda/queue/read_ahead_kb)"; }
conf() { md5sum /etc/ksmbd/ksmbd.conf 2>&1 | cut -d' ' -f1; }
echo "guest: sys-module-ksmbd $(ls /sys/module/ksmbd 2>&1 | tr '\n' ' ')"
echo "guest: module-lists $(ls "/lib/modules/$(uname -r)/modules.builtin" "/lib/modules/$(uname -r)/modules.dep" 2>/dev/null | wc -l)"
if command -v ksmbd.mountd >/dev/null; then echo "guest: mountd present"; else echo "guest: mountd absent"; fi
# Listening sockets on 445 (0x01BD), IPv4 and IPv6 (state 0A: LISTEN).
echo "guest: listen-445 $(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$2 ~ /:01BD$/ && $4 == "0A"' | wc -l)"
ra before
nb plan plan
nb apply apply
ra after
w ksmbd.conf </etc/ksmbd/ksmbd.conf
ls -a /etc/ksmbd | w ksmbd-dir
nb plan-again plan
# The control: the same plan under a root of its own (-r), where there is
# no /sys/module/ksmbd.
mkdir -p /tmp/nok/etc && cp /etc/nasboot.toml /tmp/nok/etc/
nb control -r /tmp/nok plan
first=$(conf)
nb wg -c /etc/be/wg.toml apply
[ "$(md5sum </etc/ksmbd/ksmbd.conf.bak | cut -d' ' -f1)" = "$first" ] && echo "guest: bak is the previous file"
w wg-conf </etc/ksmbd/ksmbd.conf
ls -a /etc/ksmbd | w wg-dir
second=$(conf)
nb user -c /etc/be/user.toml apply
[ "$(conf)" = "$second" ] && echo "guest: user: ksmbd.conf unchanged"
ra user
nb bad -c /etc/be/bad.toml apply
[ "$(conf)" = "$second" ] && echo "guest: bad: ksmbd.conf unchanged"
ra bad
GUEST

log=$work/shares.log
be_boot "$log" 180 --profile "$profile" --script "$work/guest.sh" --disk "$work/sda.img" \
	--nic e1000:none --nic e1000:none \
	--file "$work/wg.toml:/etc/be/wg.toml" --file "$work/user.toml:/etc/be/user.toml" \
	--file "$work/bad.toml:/etc/be/bad.toml"
t_eq "board powered off, guest script ran" 0 "$be_rc"

# What the kernel has.
kconfig=$(be_board info | sed -n 's/^modules *none (everything built in: \(.*\))$/\1/p')
t_check "the board's kernel config has CONFIG_SMB_SERVER=y ($kconfig)" grep -qx 'CONFIG_SMB_SERVER=y' "$kconfig"
be_has "the kernel shows its built-in ksmbd in /sys/module" 'guest: sys-module-ksmbd .*version' "$log"
be_has "... and has no module lists to ask (modules.builtin, modules.dep)" 'guest: module-lists 0[[:space:]]*$' "$log"
be_has "the board has no ksmbd.mountd" 'guest: mountd absent' "$log"
be_has "without ksmbd.mountd, ksmbd does not listen on 445" 'guest: listen-445 0[[:space:]]*$' "$log"

# plan and apply.
be_has "plan exits 0" 'guest: plan-exit=0' "$log"
be_has "plan picks ksmbd from the kernel alone, and says why" 'guest: plan .*note: SMB: ksmbd \(auto: no smbd, and the kernel has ksmbd\)' "$log"
be_lacks "... not as a kernel without ksmbd" 'guest: plan .*the kernel has no ksmbd module' "$log"
be_has "control: where /sys/module/ksmbd is not there (-r), the same plan refuses SMB" 'guest: control .*refused: SMB is not served \(auto: no smbd on PATH, and the kernel has no ksmbd module\)' "$log"
be_has "plan notes the missing ksmbd.mountd" 'guest: plan .*ksmbd: ksmbd.mountd is not on PATH: install ksmbd-tools' "$log"
be_has "plan notes that ksmbd.mountd is not running" 'guest: plan .*ksmbd.mountd is not running: it reads the new file when it starts' "$log"
be_has "plan writes ksmbd.conf" 'guest: plan .*write /etc/ksmbd/ksmbd.conf \([0-9]+ bytes\)' "$log"
be_has "plan sets sda's read-ahead, from the kernel's value" 'guest: plan .*sda read_ahead_kb = 1024 \(now 128\)' "$log"
be_has "apply exits 0 (the notes are not errors)" 'guest: apply-exit=0' "$log"
be_has "the disk's read-ahead before: the kernel's 128 KiB" 'guest: sda read_ahead_kb before 128[[:space:]]*$' "$log"
be_has "read-ahead set on the real disk, read back from /sys" 'guest: sda read_ahead_kb after 1024[[:space:]]*$' "$log"
be_has "the disk that is not there is a note" 'guest: apply .*note: sdz: no such block device' "$log"
be_has "ksmbd.conf binds ksmbd to the LAN interface only" 'guest: ksmbd.conf .*bind interfaces only = yes interfaces = eth1 ' "$log"
be_has "ksmbd.conf serves the share, guests allowed" 'guest: ksmbd.conf .*map to guest = bad user .*\[data\] path = /data .*guest ok = yes' "$log"
be_lacks "... and not the WAN" 'guest: ksmbd.conf .*interfaces = .*eth0' "$log"
be_has "the first apply leaves only ksmbd.conf in /etc/ksmbd (no temporary, no .bak)" 'guest: ksmbd-dir \. \.\. ksmbd\.conf[[:space:]]*$' "$log"
be_has "a second plan exits 0" 'guest: plan-again-exit=0' "$log"
be_lacks "a second plan has nothing left to do on ksmbd.conf and sda" 'guest: plan-again .*(write /etc/ksmbd/ksmbd.conf|sda read_ahead_kb = )' "$log"
be_has "... and keeps sdz, still missing, to set when it comes" 'guest: plan-again .*sdz read_ahead_kb = 1024' "$log"

# A changed profile: the file replaced, the previous copy kept.
be_has "a workgroup change applies, exit 0" 'guest: wg-exit=0' "$log"
be_has "the new ksmbd.conf has the workgroup" 'guest: wg-conf .*workgroup = NASLAB' "$log"
be_has "the previous ksmbd.conf is kept as ksmbd.conf.bak" 'guest: bak is the previous file' "$log"
be_has "... and nothing else is left in /etc/ksmbd" 'guest: wg-dir \. \.\. ksmbd\.conf ksmbd\.conf\.bak[[:space:]]*$' "$log"

# Exit statuses: 3 for a user without a password, 2 for a profile error.
be_has "a user without a password in ksmbdpwd.db: apply exits 3" 'guest: user-exit=3' "$log"
be_has "... naming the user, the key and the fix" 'guest: user .*ksmbd: user .alice. \(samba.share\[0\].valid_users\) has no password in /etc/ksmbd/ksmbdpwd.db' "$log"
be_has "... ksmbd.conf not written" 'guest: user: ksmbd.conf unchanged' "$log"
be_has "... the rest of the profile applied (read-ahead 512)" 'guest: sda read_ahead_kb user 512[[:space:]]*$' "$log"
be_has "a read-ahead over the limit: apply exits 2" 'guest: bad-exit=2' "$log"
be_has "... naming the file, the entry's line and the key" "guest: bad .*/etc/be/bad.toml:$bad_line:[0-9]+: storage\\[0\\].read_ahead_kb: read_ahead_kb 70000 is over 65536" "$log"
be_has "... nothing applied: read-ahead still 512" 'guest: sda read_ahead_kb bad 512[[:space:]]*$' "$log"
be_has "... ksmbd.conf unchanged" 'guest: bad: ksmbd.conf unchanged' "$log"

echo "GAP SMB served and read by a client: --board $BE_BOARD has no ksmbd-tools (ksmbd.mountd): Debian's ports archive is refused by this machine's network and a cross build needs glib2; tests/nfs/board-shares.sh reads a file over ksmbd on the little-endian board"
t_done
