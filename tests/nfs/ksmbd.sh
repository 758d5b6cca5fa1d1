#!/bin/bash
# The ksmbd.conf nasboot renders, checked by Debian's ksmbd-tools (3.4.7):
# ksmbd.mountd parses it and the users ksmbd.adduser provisioned, on a host
# kernel without the ksmbd module (tests/nfs/ksmbd-lib.sh says how). nasboot
# runs with --root in a private network namespace (eth1 one end of a veth
# pair there), so it runs no ksmbd tool itself: the unit tests
# (src/share/tests.rs) hold the reload and restart steps. Also: a user
# without a password, a share path that is a file, read-ahead on a block
# device that is not there, and backend = "auto" without smbd on an image
# whose kernel lacks or has ksmbd. Needs root. About a second.
# The script run inside the namespace is single-quoted on purpose.
# shellcheck disable=SC2016 source-path=SCRIPTDIR
set -eu

# shellcheck source=../lib.sh
. "$(cd "$(dirname "$0")/.." && pwd)/lib.sh"
# shellcheck source=ksmbd-lib.sh
. "$T_TOP/tests/nfs/ksmbd-lib.sh"

t_need ksmbd-tools iproute2 util-linux coreutils

host_nasboot

W=$(mktemp -d /tmp/nasboot-ksmbd.XXXXXX)
trap 'rm -rf "$W"' EXIT

# The checker itself must catch a bad file.
printf '[global]\n\tbind interfaces only = yes\n[media\n\tpath = /srv\n' >"$W/bad.conf"
: >"$W/empty.db"
t_check "the checker refuses a file ksmbd cannot parse" bash -c "! (. '$T_TOP/tests/nfs/ksmbd-lib.sh'; ksmbd_parse '$W/bad.conf' '$W/empty.db' '$W/bad.log')"
t_has "ksmbd.mountd says why" "Failed to parse configuration file" "$(cat "$W/bad.log")"

# The golden file, with its two users provisioned by ksmbd.adduser.
for u in alice bob; do
	ksmbd.adduser -a "$u" -p "pw-$u" -i "$W/golden.db" -c "$T_TOP/tests/golden/nfs/ksmbd.conf" >/dev/null 2>&1
done
if ksmbd_parse "$T_TOP/tests/golden/nfs/ksmbd.conf" "$W/golden.db" "$W/golden.log"; then t_ok "golden: ksmbd.mountd parses it"; else t_fail "golden: ksmbd.mountd parses it: $(head -3 "$W/golden.log")"; fi
t_eq "golden: every share loaded" "backup media" "$(ksmbd_shares "$W/golden.log" | xargs)"
t_eq "golden: the provisioned users loaded (and ksmbd's guest)" "alice bob nobody" "$(ksmbd_users "$W/golden.log" | xargs)"

# nasboot's own output for a profile, users provisioned beforehand.
ROOT=$W/root
mkdir -p "$ROOT/srv/media" "$ROOT/srv/backup" "$ROOT/etc/ksmbd" "$ROOT/sys/block/sda/queue"
echo 128 >"$ROOT/sys/block/sda/queue/read_ahead_kb"
: >"$ROOT/srv/file"
cat >"$ROOT/nasboot.toml" <<'TOML'
[board]
name = "ksmbd-test"
[firewall]
profile = "off"
[[interface]]
name = "eth1"
role = "lan"
[[storage]]
device = "sda"
read_ahead_kb = 1024
[[storage]]
device = "sdz"
read_ahead_kb = 1024
[samba]
backend = "ksmbd"
[[samba.share]]
name = "media"
path = "/srv/media"
guest_ok = true
[[samba.share]]
name = "backup"
path = "/srv/backup"
read_only = false
valid_users = ["backup"]
TOML
# nb NAME ARGS...: nasboot in a private network namespace; $W/NAME.{out,err,rc}.
nb() {
	local name=$1
	shift
	unshare -n -- bash -c '
		ip link add eth1 type veth peer name eth1p
		"${@:2}" >"$1.out" 2>"$1.err"
		echo $? >"$1.rc"
	' nb "$W/$name" "${NB[@]}" --root "$ROOT" -c /nasboot.toml "$@"
}
nb unprovisioned apply
t_eq "a user without a password: exit 3 (the rest applied)" 3 "$(cat "$W/unprovisioned.rc")"
t_has "it is named, with its key" "ksmbd: user \`backup\` (samba.share[1].valid_users) has no password in /etc/ksmbd/ksmbdpwd.db" "$(cat "$W/unprovisioned.err")"
t_check "no ksmbd.conf written" test ! -e "$ROOT/etc/ksmbd/ksmbd.conf"
t_eq "the rest applied: sda's read-ahead" 1024 "$(cat "$ROOT/sys/block/sda/queue/read_ahead_kb")"
t_has "a block device that is not there is a note" "sdz: no such block device now" "$(cat "$W/unprovisioned.err")"

ksmbd.adduser -a backup -p pw -i "$ROOT/etc/ksmbd/ksmbdpwd.db" -c "$T_TOP/tests/golden/nfs/ksmbd.conf" >/dev/null 2>&1
nb plan plan
t_has "plan names the server" "note: SMB: ksmbd (backend = \"ksmbd\")" "$(cat "$W/plan.out")"
nb apply apply
t_eq "apply exits 0 (sdz only noted)" 0 "$(cat "$W/apply.rc")"
CONF=$ROOT/etc/ksmbd/ksmbd.conf
if ksmbd_parse "$CONF" "$ROOT/etc/ksmbd/ksmbdpwd.db" "$W/rendered.log"; then t_ok "rendered: ksmbd.mountd parses it"; else t_fail "rendered: ksmbd.mountd parses it: $(head -3 "$W/rendered.log")"; fi
t_eq "rendered: every share loaded" "backup media" "$(ksmbd_shares "$W/rendered.log" | xargs)"
t_eq "rendered: the provisioned user loaded" "backup nobody" "$(ksmbd_users "$W/rendered.log" | xargs)"
t_has "bound to the LAN only" "	bind interfaces only = yes
	interfaces = eth1
	map to guest = bad user" "$(cat "$CONF")"
t_has "the private share" "[backup]
	path = /srv/backup
	read only = no
	guest ok = no
	valid users = backup" "$(cat "$CONF")"
# A changed profile: the file replaced, the previous copy kept.
cp "$CONF" "$W/first.conf"
sed -i 's|^path = "/srv/backup"|path = "/srv/media"|' "$ROOT/nasboot.toml"
nb again apply
t_eq "a changed share: exit 0" 0 "$(cat "$W/again.rc")"
t_check "the previous copy kept as .bak" cmp -s "$W/first.conf" "$CONF.bak"
t_has "the new path" "path = /srv/media
	read only = no" "$(cat "$CONF")"

# A share path that is a file: named, nothing applied.
sed -i 's|^path = "/srv/media"\(.*\)$|path = "/srv/file"|' "$ROOT/nasboot.toml"
cp "$CONF" "$W/before.conf"
nb file check
t_eq "a share path that is a file: check exits 2" 2 "$(cat "$W/file.rc")"
t_has "it is named with file, line and key" "/nasboot.toml:18:8: samba.share[0].path: /srv/file is not a directory" "$(cat "$W/file.err")"
nb file apply
t_eq "apply exits 2 too" 2 "$(cat "$W/file.rc")"
t_check "and writes nothing" cmp -s "$W/before.conf" "$CONF"

# backend = "auto" with no smbd on PATH (an empty PATH for nasboot): ksmbd
# where the board's kernel (the --root image's release and module tree)
# has it, else SMB is not served and the rest applies, exit 3.
mkdir -p "$W/nobin" "$ROOT/proc/sys/kernel" "$ROOT/lib/modules/6.1.0-nb/kernel/fs/ksmbd"
echo 6.1.0-nb >"$ROOT/proc/sys/kernel/osrelease"
echo kernel/net/ipv4/tcp_cubic.ko >"$ROOT/lib/modules/6.1.0-nb/modules.builtin"
echo 128 >"$ROOT/sys/block/sda/queue/read_ahead_kb"
rm -f "$CONF"
cat >"$ROOT/nasboot.toml" <<'TOML'
[board]
name = "ksmbd-auto"
[firewall]
profile = "off"
[[interface]]
name = "eth1"
role = "lan"
[[storage]]
device = "sda"
read_ahead_kb = 1024
[samba]
[[samba.share]]
name = "media"
path = "/srv/media"
TOML
NB=(env PATH="$W/nobin" "${NB[@]}")
nb unserved apply
t_eq "auto, no smbd, no ksmbd in the kernel: exit 3" 3 "$(cat "$W/unserved.rc")"
t_has "SMB is not served, and said why" "SMB is not served (auto: no smbd on PATH, and the kernel has no ksmbd module); the rest of the profile applies" "$(cat "$W/unserved.err")"
t_eq "the rest applied" 1024 "$(cat "$ROOT/sys/block/sda/queue/read_ahead_kb")"
t_check "no server's file written" test ! -e "$CONF" -a ! -e "$ROOT/etc/samba/nasboot.conf"
: >"$ROOT/lib/modules/6.1.0-nb/kernel/fs/ksmbd/ksmbd.ko.xz"
nb auto plan
t_has "with ksmbd.ko in the image: ksmbd" "note: SMB: ksmbd (auto: no smbd, and the kernel has ksmbd)" "$(cat "$W/auto.out")"
t_has "and its file" "--- /etc/ksmbd/ksmbd.conf ---" "$(cat "$W/auto.out")"
t_done
