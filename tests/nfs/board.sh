#!/usr/bin/env bash
# NFS on the emulated MIPS 24K board (scripts/board: QEMU malta, Debian's
# mipsel kernel with its real nfsd, Debian's mipsel nfs-kernel-server and
# rpcbind): nasboot applies tests/profiles/board-nfs.toml (exports, nfsd
# settings, stateless nftables firewall), nfsd starts from the files
# nasboot wrote, and a host-side user-space client (libnfs-utils' nfs-cat,
# in a network namespace on the board's LAN tap, from a privileged port so
# that `secure` is exercised) reads a file. The same client from a LAN
# address outside the exported subnet gets MNT3ERR_ACCES. nfsd starts from
# /etc/default/nfs-kernel-server as Debian's init script does (the thread
# count nasboot sized, NFSv3 only, mountd on 32767); rpc.statd and lockd
# register on the ports the nfs.conf drop-in pins (rpcinfo); `check`
# names no listener inside the local port range; conntrack is never
# loaded under the stateless rule set. Needs root (netns, tap).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/lanboard.sh
. "$here/../lanboard.sh"

t_need libnfs-utils iproute2
lb_setup test

cat "$T_TOP/tests/board/nfs-server.sh" - >"$work/guest.sh" <<'GUEST'
echo "guest: default-file $(grep -E '^(RPCNFSDCOUNT|RPCMOUNTDOPTS)=' /etc/default/nfs-kernel-server | tr '\n' ' ')"
echo "guest: mountd $(rpcinfo -p | grep -c ' 32767  mountd')"
echo "guest: statd $(rpcinfo -p | grep -c ' 32765  status')"
echo "guest: nlockmgr $(rpcinfo -p | grep -c ' 32764  nlockmgr')"
nasboot check | grep 'listens inside' || true
echo "guest: ephemeral listeners $(nasboot check | grep -c 'listens inside')"
nft list table inet nasboot >/dev/null && echo "guest: nft table loaded"
echo "guest: nfs ready"
nc -l -p 7000 >/dev/null
[ -e /proc/sys/net/netfilter/nf_conntrack_count ] && echo "guest: conntrack loaded" || echo "guest: conntrack never loaded"
exportfs -v
[ "$NFS_APPLY_RC" = 0 ] && [ "$NFS_START_RC" = 0 ]
GUEST

lb_boot "$work/guest.sh" 300
if lb_wait_ready 280; then
	t_ok "board: nfsd up after nasboot apply"
	got=$(lb_client nfs-cat "nfs://192.168.77.2/srv/nfs/hello.txt" 2>"$work/cat.err") || true
	t_eq "client in 192.168.77.0/24 reads the file over NFSv3" "hello over nfs" "$got"
	set +e
	lb_client nfs-cat "nfs://192.168.78.2/srv/nfs/hello.txt" >"$work/refused.out" 2>"$work/refused.err"
	st=$?
	set -e
	t_check "client in 192.168.78.0/24 (outside the export) is refused" [ "$st" != 0 ]
	t_has "refusal is mountd's access error" "MNT3ERR_ACCES" "$(cat "$work/refused.err")"
	t_eq "refused client got no data" "" "$(cat "$work/refused.out")"
else
	t_fail "board: nfsd up after nasboot apply (see $log)"
fi
lb_release
lb_finish
t_eq "board: guest script passed, board powered off" 0 "$lb_rc"
lb_log_has "nasboot apply exit 0" 'guest: apply-exit=0'
lb_log_has "threads from the distro file nasboot wrote (256 MB: 8)" 'guest: threads=8 '
lb_log_has "NFSv3 only (versions written before nfsd started)" 'versions=\+3 -4 '
lb_log_has "RPCMOUNTDOPTS pins mountd to the firewall's port" 'RPCMOUNTDOPTS="--manage-gids --port 32767"'
lb_log_has "mountd registered on 32767 (rpcinfo)" 'guest: mountd [1-9]'
lb_log_has "statd registered on 32765, from the nfs.conf drop-in (rpcinfo)" 'guest: statd [1-9]'
lb_log_has "lockd registered on 32764, set by statd from the drop-in (rpcinfo)" 'guest: nlockmgr [1-9]'
lb_log_has "check names no NFS listener inside the local port range" 'guest: ephemeral listeners 0'
lb_log_has "stateless nftables rule set loaded" 'guest: nft table loaded'
lb_log_has "NFS traffic passed without connection tracking" 'guest: conntrack never loaded'
lb_log_has "exportfs -v: LAN subnet, sync, root_squash, secure" '/srv/nfs[[:space:]]+192\.168\.77\.0/24\(sync,.*secure,root_squash'
t_done
