#!/bin/sh
# Guest prelude (busybox sh), sourced by the NFS board scripts: the user
# space a Debian board's nfs-kernel-server needs (users, state dirs, the
# nfsd filesystem, rpcbind), a tmpfs under /srv, then `nasboot apply`
# writes the exports, the nfsd settings and the firewall, and nfsd starts
# the way Debian's init script starts it: from /etc/default/nfs-kernel-server.
# Binaries come from Debian's mipsel packages (scripts/board run --deb).
# Sets NFS_APPLY_RC (nasboot's status) and NFS_START_RC (nfsd and mountd).
cat >/etc/passwd <<'PW'
root:x:0:0:root:/root:/bin/sh
_rpc:x:100:65534::/run/rpcbind:/bin/false
statd:x:101:65534::/var/lib/nfs:/bin/false
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PW
printf 'root:x:0:\nnogroup:x:65534:\n' >/etc/group
mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery /run/rpcbind /etc/nfs.conf.d \
    /etc/default /srv
: >/var/lib/nfs/etab
: >/var/lib/nfs/rmtab
mount -t tmpfs -o size=96m tmpfs /srv
mkdir -p /srv/nfs
mount -t nfsd nfsd /proc/fs/nfsd || echo "guest: mount nfsd failed"
# Debian's shipped defaults (nfs-kernel-server's postinst writes these).
cat >/etc/default/nfs-kernel-server <<'DEF'
RPCNFSDCOUNT=8
RPCNFSDPRIORITY=0
RPCMOUNTDOPTS="--manage-gids"
NEED_SVCGSSD=""
RPCSVCGSSDOPTS=""
DEF
# The iptables package's alternatives (its postinst): legacy, as on a 2.6 board.
for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -sf xtables-legacy-multi "/usr/sbin/$t"
done
rpcbind -w || echo "guest: rpcbind failed"
printf 'hello over nfs\n' >/srv/nfs/hello.txt
nasboot -v apply
NFS_APPLY_RC=$?
echo "guest: apply-exit=$NFS_APPLY_RC"
# shellcheck disable=SC1091 # the board's file, written above and by nasboot
. /etc/default/nfs-kernel-server
# rpc.statd first, as Debian's nfs-common starts before nfs-kernel-server:
# it reads its own port and lockd's from the nfs.conf drop-in nasboot wrote,
# and sets lockd's before nfsd starts lockd.
mkdir -p /var/lib/nfs/sm /var/lib/nfs/sm.bak
chown statd /var/lib/nfs/sm /var/lib/nfs/sm.bak
rpc.statd || echo "guest: statd failed"
# shellcheck disable=SC2086 # RPCMOUNTDOPTS holds several options
rpc.nfsd "$RPCNFSDCOUNT" && rpc.mountd $RPCMOUNTDOPTS
NFS_START_RC=$?
[ "$NFS_START_RC" = 0 ] || echo "guest: nfsd start failed"
echo "guest: threads=$(cat /proc/fs/nfsd/threads) versions=$(cat /proc/fs/nfsd/versions)"
