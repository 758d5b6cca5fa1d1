#!/usr/bin/env bash
# Samba's smbd on the emulated MIPS 24K board (scripts/board: QEMU malta,
# Debian's mipsel 6.1 kernel): Debian's mipsel samba 4.17 and samba-libs
# with their library closure (scripts/board debs: about 100 MB unpacked,
# too large for the board's initramfs in its 256 MB) on a second disk,
# an ext4 image made here, mounted read-only; smbd runs from there (its
# private libraries where its RUNPATH looks, the rest on
# LD_LIBRARY_PATH). The profile is tests/profiles/board-shares.toml,
# `[samba] backend = "auto"`: with smbd on PATH the plan picks smbd and
# nasboot writes its include (/etc/samba/nasboot.conf, the last line of
# a minimal smb.conf). The LAN reads the disk's file with smbclient, and
# its checksum matches; the WAN gets no answer on 445 or 139 (the
# firewall). With the firewall deleted, smbd refuses the WAN address
# (`bind interfaces only`: it listens on lo's and eth1's addresses); it
# binds addresses, not devices, so a WAN host that routes the LAN
# address through the board reaches it: the firewall is what keeps it
# out (a note, printed). Needs root (netns, tap, bridge).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/lanboard.sh
. "$here/../lanboard.sh"
# shellcheck source=tests/nfs/shares-lib.sh
. "$here/shares-lib.sh"
SIZE_KIB=8192

t_need smbclient iproute2 e2fsprogs python3
lb_setup smbd
sh_wan_setup
sum=$(sh_disk_image "$SIZE_KIB" "$work/sda.img")
# Samba's tree (cached by scripts/board), on a disk of its own.
tree=$("$LB_BOARD" debs samba samba-libs | tail -1)
[ -x "$tree/usr/sbin/smbd" ] || { echo "board-smbd: no smbd in $tree" >&2; exit 1; }
mkfs.ext4 -q -F -b 4096 -d "$tree" -L samba "$work/samba.img" $(($(du -sm "$tree" | cut -f1) * 3 / 2))M >&2

{
	cat <<'GUEST'
# The disks by their content: the kernel may name them in either order.
mkdir -p /mnt/sda /opt/samba /usr/lib/mipsel-linux-gnu
for d in sda sdb; do
    mkdir -p "/tmp/$d"
    mount -t ext4 -o ro "/dev/$d" "/tmp/$d" || echo "guest: mount $d failed"
    if [ -e "/tmp/$d/usr/sbin/smbd" ]; then
        umount "/tmp/$d"
        mount -t ext4 -o ro "/dev/$d" /opt/samba
    else
        umount "/tmp/$d"
        mount -t ext4 -o noatime "/dev/$d" /mnt/sda
    fi
done
ln -s /opt/samba/usr/lib/mipsel-linux-gnu/samba /usr/lib/mipsel-linux-gnu/samba
ln -s /opt/samba/usr/sbin/smbd /usr/sbin/smbd
mkdir -p /etc/samba /var/lib/samba/private /run/samba /var/log/samba /var/cache/samba /var/lock/samba
printf '[global]\n   map to guest = bad user\n   log file = /var/log/samba/log.%%m\n   include = /etc/samba/nasboot.conf\n' >/etc/samba/smb.conf
nasboot plan 2>&1 | sed 's/^/guest: plan0: /'
GUEST
	cat "$T_TOP/tests/board/nfs-server.sh"
	cat <<'GUEST'
echo "guest: include $(grep -c '' /etc/samba/nasboot.conf) lines"
export LD_LIBRARY_PATH=/opt/samba/usr/lib/mipsel-linux-gnu:/opt/samba/lib/mipsel-linux-gnu
smbd -D || echo "guest: smbd failed"
i=0
while [ $i -lt 120 ] && ! grep -q ':01BD 00000000:0000 0A' /proc/net/tcp; do
    sleep 1
    i=$((i + 1))
done
echo "guest: smbd listens on $(grep ':01BD 00000000:0000 0A' /proc/net/tcp | awk '{print $2}' | tr '\n' ' ')"
echo "guest: memory used after smbd: $(free | awk '/^Mem/ {print $3}') KiB"
echo "guest: nfs ready"
nc -l -p 7000 >/dev/null
nft delete table inet nasboot && echo "guest: firewall deleted"
nc -l -p 7000 >/dev/null
[ "$NFS_APPLY_RC" = 0 ]
GUEST
} >"$work/guest.sh"

lb_boot "$work/guest.sh" 600 --disk "$work/sda.img" --no-mount \
	--module crc32c_generic --module ext4 \
	--qemu-arg -drive --qemu-arg "file=$work/samba.img,format=raw,if=ide,index=1,media=disk"
if lb_wait_ready 400; then
	t_ok "board: smbd up from its disk after nasboot apply"
	rm -f "$work/got"
	lb_client smbclient -N -t 60 //192.168.77.2/data -c "get big $work/got" >"$work/smb.out" 2>&1 || true
	t_eq "LAN: SMB (smbd) read of the disk's file, checksum matches" "$sum" "$(sha256sum <"$work/got" 2>/dev/null | cut -d' ' -f1)"
	t_eq "LAN: 445/tcp open" open "$(lan tcp 192.168.77.2 445)"
	for a in 203.0.113.2 192.168.77.2; do
		for p in 445 139; do
			probe_bg "$a-$p" wan tcp "$a" "$p"
		done
	done
	probe_bg sp53 wan tcp 203.0.113.2 445 53
	probe_wait
	for a in 203.0.113.2 192.168.77.2; do
		for p in 445 139; do
			t_eq "WAN -> $a: $p/tcp dropped" timeout "$(cat "$work/probe-$a-$p")"
		done
	done
	t_eq "WAN -> 203.0.113.2: 445/tcp from source port 53 dropped" timeout "$(cat "$work/probe-sp53")"
	lb_release
	if lb_wait_for 'guest: firewall deleted' 60; then
		t_eq "no firewall: WAN -> 203.0.113.2: smbd refuses 445/tcp (bound to lo and eth1)" refused "$(wan tcp 203.0.113.2 445)"
		echo "note: no firewall: WAN -> 192.168.77.2 (the LAN address routed through eth0): 445/tcp $(wan tcp 192.168.77.2 445): smbd binds addresses, not devices" >&2
	else
		t_fail "the guest deleted the firewall (see $log)"
	fi
	lb_release
else
	t_fail "board: smbd up from its disk after nasboot apply (see $log)"
	lb_stop
fi
lb_finish
t_eq "board: guest script passed, board powered off" 0 "$lb_rc"
lb_log_has "plan names the server: smbd, chosen by auto" 'plan0: note: SMB: smbd \(auto: smbd is installed\)'
lb_log_has "nasboot apply exit 0" 'guest: apply-exit=0'
lb_log_has "nasboot wrote the include" 'guest: include [1-9][0-9]* lines'
lb_log_has "smbd listens on lo's and eth1's addresses only (bind interfaces only)" 'guest: smbd listens on (0100007F:01BD 024DA8C0:01BD|024DA8C0:01BD 0100007F:01BD) [[:space:]]*$'
grep -a 'guest: memory used' "$log" | tr -d '\r' >&2 || true
t_done
