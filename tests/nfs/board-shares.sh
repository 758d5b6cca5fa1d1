#!/usr/bin/env bash
# A small NAS's shares on the emulated MIPS 24K board (scripts/board: QEMU
# malta, Debian's mipsel 6.1 kernel with its real nfsd and ksmbd.ko,
# Debian's mipsel nfs-kernel-server and ksmbd-tools): nasboot applies
# tests/profiles/board-shares.toml, which serves one ext4 disk (sda, made
# here around a file of random data) over NFSv3 and over SMB with
# `[samba] backend = "auto"` (no smbd on the board: ksmbd), and sets the
# disk's read-ahead; a second [[storage]] names sdz, which is not there.
#
# - The LAN (a namespace on eth1's tap) reads the file over NFS (libnfs'
#   user-space nfs-cat) and over SMB (smbclient), and both checksums match.
# - The WAN (its own namespace, bridged to eth0's tap) reaches neither
#   server: TCP to 445, 2049 and 111 at the WAN and the LAN address is
#   dropped by the stateless firewall (a timeout, no reset), also from the
#   source ports its reply rules are about (53, 123, 2049); an RPC call to
#   111/udp from source port 53 gets no answer (from the LAN it does).
#   With the firewall deleted, ksmbd still refuses the WAN (its
#   listeners are bound to the LAN interface); nfsd has no such binding,
#   so only the firewall keeps it from the WAN.
# - read_ahead_kb is read back from /sys/block/sda; sdz is a note, the
#   apply exits 0.
# - A profile change that adds or removes a share reaches the running
#   ksmbd through the real `ksmbd.control --reload` (the same ksmbd.mountd
#   pid), and a client sees it; a change of a global setting (workgroup)
#   restarts it (`ksmbd.control --shutdown`, then ksmbd.mountd: another
#   pid), and the clients see the new workgroup (wkssvc, rpcclient) and
#   still read the file.
# The host's kernel has no nfs or cifs client module (checked below): the
# clients are user-space ones. Needs root (netns, tap, bridge).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/lanboard.sh
. "$here/../lanboard.sh"
# shellcheck source=tests/nfs/shares-lib.sh
. "$here/shares-lib.sh"
LB_DEBS+=(ksmbd-tools)
LB_WITH_MODULES+=(ksmbd)
SIZE_KIB=4096

t_need libnfs-utils smbclient samba-common-bin iproute2 e2fsprogs python3
lb_setup shares
sh_wan_setup
sum=$(sh_disk_image "$SIZE_KIB" "$work/sda.img")

{
	cat <<'GUEST'
echo "guest: sda read_ahead_kb before $(cat /sys/block/sda/queue/read_ahead_kb)"
mkdir -p /mnt/sda
mount -t ext4 -o noatime /dev/sda /mnt/sda || echo "guest: mount sda failed"
modprobe ksmbd || echo "guest: modprobe ksmbd failed"
mkdir -p /etc/ksmbd
: >/etc/ksmbd/ksmbdpwd.db
nasboot plan 2>&1 | sed 's/^/guest: plan0: /'
GUEST
	cat "$T_TOP/tests/board/nfs-server.sh"
	cat <<'GUEST'
echo "guest: sda read_ahead_kb after $(cat /sys/block/sda/queue/read_ahead_kb)"
ksmbd.mountd || echo "guest: ksmbd.mountd failed"
sleep 1
echo "guest: ksmbd.mountd pid $(cat /run/ksmbd.lock)"
chmod 755 /etc/shares/ctl
echo "guest: nfs ready"
while [ ! -f /tmp/ctl-stop ]; do
    nc -l -p 7000 -e /etc/shares/ctl
done
[ "$NFS_APPLY_RC" = 0 ] && [ "$NFS_START_RC" = 0 ]
GUEST
} >"$work/guest.sh"

# ctl CMD: one command to the guest (tests/board/shares-ctl.sh); its
# answer in $work/ctl-CMD.
ctl() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		# shellcheck disable=SC2016 # $1 belongs to the inner bash
		lb_client timeout 120 bash -c 'exec 3<>/dev/tcp/192.168.77.2/7000 && echo "$1" >&3 && cat <&3' _ "$1" >"$work/ctl-$1" 2>/dev/null && [ -s "$work/ctl-$1" ] && return 0
		sleep 0.5
	done
	return 1
}
# smb SHARE CMD: smbclient as a guest on the LAN.
smb() { lb_client smbclient -N -t 60 "//192.168.77.2/$1" -c "$2" 2>&1; }

lb_boot "$work/guest.sh" 600 --disk "$work/sda.img" --no-mount \
	--module crc32c_generic --module ext4 \
	--file "$T_TOP/tests/board/shares-ctl.sh:/etc/shares/ctl"
if ! lb_wait_ready 400; then
	t_fail "board: nfsd and ksmbd up after nasboot apply (see $log)"
	lb_stop
	lb_finish
	t_done
	exit 1
fi
t_ok "board: nfsd and ksmbd up after nasboot apply"

# The LAN reads the file over both protocols.
got=$(lb_client nfs-cat "nfs://192.168.77.2/mnt/sda/big" | sha256sum | cut -d' ' -f1)
t_eq "LAN: NFSv3 read of the disk's file, checksum matches" "$sum" "$got"
rm -f "$work/smb.out"
out=$(smb data "get big $work/smb.out")
got=$(sha256sum <"$work/smb.out" 2>/dev/null | cut -d' ' -f1 || true)
t_eq "LAN: SMB (ksmbd) read of the same file, checksum matches" "$sum" "$got"
[ "$got" = "$sum" ] || echo "smbclient: $out" >&2

# The WAN reaches neither server; the same probes from the LAN show what
# an open port answers.
t_eq "LAN: 445/tcp open" open "$(lan tcp 192.168.77.2 445)"
t_eq "LAN: 2049/tcp open" open "$(lan tcp 192.168.77.2 2049)"
t_eq "LAN: portmapper answers on 111/udp (from port 53 too)" reply "$(lan udp 192.168.77.2 111 53)"
for a in 203.0.113.2 192.168.77.2; do
	for p in 445 139 2049 111 32767; do
		probe_bg "$a-$p" wan tcp "$a" "$p"
	done
done
for sp in 53 123 2049; do
	for p in 445 2049; do
		probe_bg "sp$sp-$p" wan tcp 203.0.113.2 "$p" "$sp"
	done
done
probe_bg udp53 wan udp 203.0.113.2 111 53
probe_bg udp123 wan udp 203.0.113.2 111 123
probe_wait
for a in 203.0.113.2 192.168.77.2; do
	for p in 445 139 2049 111 32767; do
		t_eq "WAN -> $a: $p/tcp dropped" timeout "$(cat "$work/probe-$a-$p")"
	done
done
for sp in 53 123 2049; do
	for p in 445 2049; do
		t_eq "WAN -> 203.0.113.2: $p/tcp from source port $sp dropped" timeout "$(cat "$work/probe-sp$sp-$p")"
	done
done
t_eq "WAN -> 203.0.113.2: portmapper call on 111/udp from source port 53 dropped" timeout "$(cat "$work/probe-udp53")"
t_eq "WAN -> 203.0.113.2: portmapper call on 111/udp from source port 123 dropped" timeout "$(cat "$work/probe-udp123")"

# A share added by a profile change: a reload of the running ksmbd.
if ctl add-share; then
	a=$(cat "$work/ctl-add-share")
	t_has "add a share: plan says reload" "ksmbd.control --reload (shares or users changed)" "$a"
	t_check "add a share: apply exit 0, the same ksmbd.mountd (reloaded)" grep -Eq '^rc=0 pid-before=([0-9]+) pid-after=\1 alive=yes$' "$work/ctl-add-share"
	t_has "add a share: LAN lists it" "extra" "$(lb_client smbclient -N -L //192.168.77.2 -g 2>&1 | grep '^Disk|')"
	smb extra "get hello.txt $work/hello.txt" >/dev/null || true
	t_eq "add a share: LAN reads a file from it" "hello over nfs" "$(cat "$work/hello.txt" 2>/dev/null)"
else
	t_fail "add a share: the guest answered (see $log)"
fi
# ... and removed again.
if ctl del-share; then
	t_has "remove it: plan says reload" "ksmbd.control --reload (shares or users changed)" "$(cat "$work/ctl-del-share")"
	t_check "remove it: apply exit 0, the same ksmbd.mountd (reloaded)" grep -Eq '^rc=0 pid-before=([0-9]+) pid-after=\1 alive=yes$' "$work/ctl-del-share"
	t_has "remove it: LAN is refused the share" "NT_STATUS_BAD_NETWORK_NAME" "$(smb extra ls)"
	t_eq "remove it: the other share still served" "$sum" "$(rm -f "$work/smb2.out"; smb data "get big $work/smb2.out" >/dev/null; sha256sum <"$work/smb2.out" | cut -d' ' -f1)"
else
	t_fail "remove it: the guest answered (see $log)"
fi
# A global setting: a restart.
# wk: the workgroup ksmbd.mountd answers to wkssvc NetWkstaGetInfo
# (rpcclient's wkssvc_wkstagetinfo, level 100, anonymous; it prints the reply's
# fields only at debug level 10).
wk() {
	lb_client rpcclient -N -U% -d 10 -c wkssvc_wkstagetinfo 192.168.77.2 >"$work/wk.out" 2>&1 || true
	sed -n "s/^[[:space:]]*domain_name[[:space:]]*: '\(.*\)'\$/\1/p" "$work/wk.out" | head -1
}
t_eq "before: ksmbd's default workgroup (wkssvc)" WORKGROUP "$(wk)"
if ctl workgroup; then
	t_has "workgroup: plan says restart" "ksmbd.control --shutdown, then ksmbd.mountd (global settings changed" "$(cat "$work/ctl-workgroup")"
	t_check "workgroup: apply exit 0, another ksmbd.mountd runs (restarted)" grep -Eq '^rc=0 pid-before=([0-9]+) pid-after=[0-9]+ alive=yes$' "$work/ctl-workgroup"
	# shellcheck disable=SC2016 # $1 belongs to the inner bash
	t_check "workgroup: the pid changed" bash -c '! grep -Eq "^rc=0 pid-before=([0-9]+) pid-after=\1 " "$1"' _ "$work/ctl-workgroup"
	got=''
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		got=$(wk)
		[ "$got" = NASLAB ] && break
		sleep 1
	done
	t_eq "workgroup: clients see the new one (wkssvc)" NASLAB "$got"
	t_eq "workgroup: the file still read over SMB" "$sum" "$(rm -f "$work/smb3.out"; smb data "get big $work/smb3.out" >/dev/null; sha256sum <"$work/smb3.out" | cut -d' ' -f1)"
else
	t_fail "workgroup: the guest answered (see $log)"
fi

# The firewall deleted: ksmbd's own binding still refuses the WAN.
if ctl fw-off; then
	t_has "firewall deleted on the board" "fw-off rc=0" "$(cat "$work/ctl-fw-off")"
	for a in 203.0.113.2 192.168.77.2; do
		t_eq "no firewall: WAN -> $a: ksmbd refuses 445/tcp (bound to eth1)" refused "$(wan tcp "$a" 445)"
	done
	t_eq "no firewall: LAN: 445/tcp open" open "$(lan tcp 192.168.77.2 445)"
	# The apply puts the firewall back.
	ctl apply || true
	t_check "apply again: exit 0" grep -q '^rc=0 ' "$work/ctl-apply"
	t_eq "apply again: WAN -> 203.0.113.2: 445/tcp dropped" timeout "$(wan tcp 203.0.113.2 445)"
else
	t_fail "fw-off: the guest answered (see $log)"
fi

ctl stop || true
lb_finish
t_eq "board: guest script passed, board powered off" 0 "$lb_rc"
lb_log_has "plan names the server: ksmbd, chosen by auto" 'plan0: note: SMB: ksmbd \(auto: no smbd, and the kernel has ksmbd\)'
lb_log_has "nasboot apply exit 0 (sdz only noted)" 'guest: apply-exit=0'
lb_log_has "read-ahead before the apply: the kernel's 128 KiB" 'guest: sda read_ahead_kb before 128'
lb_log_has "read-ahead set on the real disk, read back from /sys" 'guest: sda read_ahead_kb after 1024'
lb_log_has "a disk that is not there is a note" 'note: sdz: no such block device now'
lb_log_has "ksmbd.mountd started from the ksmbd.conf nasboot wrote" 'guest: ksmbd.mountd pid [0-9]+'
grep -E 'nfs|cifs' /proc/filesystems >/dev/null || echo "note: this host's kernel has no nfs or cifs client (/proc/filesystems): the clients are user-space ones" >&2
t_done
