#!/bin/bash
# The smb.conf include nasboot renders, checked by Samba's own testparm.
#
# testparm needs a whole smb.conf, so each check writes a wrapper whose
# [global] includes the file under test. testparm exits 0 even for unknown
# parameters, so its messages are checked too. nasboot runs with --root in
# a private network namespace (eth1 is one end of a veth pair there). Needs root.
# The script run inside the namespace is single-quoted on purpose.
# shellcheck disable=SC2016 source-path=SCRIPTDIR
set -eu

# shellcheck source=../lib.sh
. "$(cd "$(dirname "$0")/.." && pwd)/lib.sh"

t_need samba-common-bin iproute2 util-linux

host_nasboot

W=$(mktemp -d /tmp/nasboot-smb.XXXXXX)
trap 'rm -rf "$W"' EXIT

# testparm_file FILE NAME: run testparm on a wrapper including FILE; leaves
# $W/NAME.out, $W/NAME.err and $W/NAME.rc.
testparm_file() {
	printf '[global]\n   include = %s\n' "$1" >"$W/$2.smb.conf"
	set +e
	testparm -s "$W/$2.smb.conf" >"$W/$2.out" 2>"$W/$2.err"
	echo $? >"$W/$2.rc"
	set -e
}

# assert_clean NAME: testparm loaded it without complaint.
assert_clean() {
	t_eq "$1: testparm exits 0" 0 "$(cat "$W/$1.rc")"
	t_has "$1: loaded" "Loaded services file OK." "$(cat "$W/$1.err")"
	t_check "$1: no unknown or invalid parameter" bash -c "! grep -Eiq 'unknown parameter|invalid|error' '$W/$1.err'"
}

# The checker itself must catch a bad file.
printf '[global]\n   bogus option = 1\n' >"$W/bad.conf"
testparm_file "$W/bad.conf" bad
t_check "the checker notices an unknown parameter" grep -q 'Unknown parameter encountered: "bogus option"' "$W/bad.err"

# The golden include.
testparm_file "$T_TOP/tests/golden/nfs/smb-nasboot.conf" golden
assert_clean golden

# nasboot's own output for a profile.
ROOT=$W/root
mkdir -p "$ROOT/srv/media" "$ROOT/srv/backup" "$ROOT/etc/samba"
printf '[global]\n   include = /etc/samba/nasboot.conf\n' >"$ROOT/etc/samba/smb.conf"
cat >"$ROOT/nasboot.toml" <<'EOF'
[board]
name = "smb-test"
[firewall]
profile = "off"
[[interface]]
name = "eth1"
role = "lan"
[samba]
# smbd itself need not be installed here: testparm reads the include.
backend = "smbd"
aio_read_size = 0
aio_write_size = 0
[[samba.share]]
name = "media"
path = "/srv/media"
guest_ok = true
[[samba.share]]
name = "backup"
path = "/srv/backup"
read_only = false
valid_users = ["backup"]
EOF
unshare -n -- bash -c '
	set -eu
	ip link add eth1 type veth peer name eth1p
	set +e
	"$@" apply >"$0/apply.out" 2>"$0/apply.err"
	echo $? >"$0/apply.rc"
' "$W" "${NB[@]}" --root "$ROOT" -c /nasboot.toml
t_eq "apply exits 0" 0 "$(cat "$W/apply.rc")"
t_check "no note about the include line (smb.conf has it)" bash -c "! grep -q 'does not include' '$W/apply.err'"
INC=$ROOT/etc/samba/nasboot.conf
testparm_file "$INC" rendered
assert_clean rendered
OUT=$(cat "$W/rendered.out")
t_has "bound to lo and the LAN" "interfaces = lo eth1" "$OUT"
t_has "bind interfaces only" "bind interfaces only = Yes" "$OUT"
t_has "sendfile on" "use sendfile = Yes" "$OUT"
t_has "aio off as asked" "aio read size = 0" "$OUT"
t_has "receivefile" "min receivefile size = 16384" "$OUT"
t_has "the guest share" "[media]
	guest ok = Yes
	path = /srv/media" "$OUT"
t_has "the private share" "[backup]
	path = /srv/backup
	read only = No
	valid users = backup" "$OUT"
t_check "no socket buffer options" bash -c "! grep -qi 'socket options' '$W/rendered.out'"
t_done
