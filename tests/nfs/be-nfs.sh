#!/usr/bin/env bash
# NFS on a big-endian board (tests/beboard.sh; ppc: QEMU g3beige): the
# board's own static nasboot applies tests/profiles/be-nfs.toml against
# its kernel's built-in nfsd. The board has no NFS user space: Debian's
# libtirpc and rpcbind source archives cannot be fetched here, and
# nfs-utils needs libtirpc, so nfsd is never
# started and no client reads a file (tests/nfs/board.sh does, on the
# little-endian board). What this covers: the export table written,
# max_block_size written to /proc/fs/nfsd and read back, versions read as
# the kernel words them (built without NFSv4, it lists no 4 at all, so
# the profile's "+3 -4" already holds and is not written; this kernel
# also refuses to switch off its only version, so a versions write is
# not exercised here), the missing exportfs named (exit 3, the file in
# place), and a second plan with nothing left to do on nfsd. One boot, about 20 s. Needs root.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/beboard.sh
. "$here/../beboard.sh"
be_setup nfs

be_guest_lib >"$work/guest.sh"
cat >>"$work/guest.sh" <<'GUEST'
mkdir -p /srv/nfs
[ -e /proc/fs/nfsd/versions ] || mount -t nfsd nfsd /proc/fs/nfsd
echo "guest: versions-kernel $(cat /proc/fs/nfsd/versions)"
echo "guest: max_block_size-before $(cat /proc/fs/nfsd/max_block_size)"
nb plan plan
nb apply apply
echo "guest: versions $(cat /proc/fs/nfsd/versions)"
echo "guest: max_block_size $(cat /proc/fs/nfsd/max_block_size)"
echo "guest: threads $(cat /proc/fs/nfsd/threads)"
grep -v '^#' /etc/exports | w exports
nb plan-again plan
GUEST

log=$work/nfs.log
be_boot "$log" 120 --profile "$T_TOP/tests/profiles/be-nfs.toml" --script "$work/guest.sh"
t_eq "board powered off, guest script ran" 0 "$be_rc"
be_has "the kernel's nfsd offers v3 and, built without NFSv4, lists no 4" 'guest: versions-kernel \+3[^.0-9]*$' "$log"
# The profile's "+3 -4" already holds: no write (a nasboot that compared
# the words asked for "-4" on every plan, and got EBUSY once nfsd ran).
be_lacks "plan does not rewrite versions that already hold" 'guest: plan .*nfsd versions =' "$log"
be_has "plan names the max_block_size change" 'guest: plan .*nfsd max_block_size = 262144' "$log"
be_has "the missing exportfs is named, with what to install" 'exportfs: not found on PATH: /etc/exports is written but not loaded; install nfs-utils' "$log"
be_has "apply exits 3: the table is in place but not loaded" 'guest: apply-exit=3' "$log"
be_has "nfsd offers v3 (read back from the kernel)" 'guest: versions \+3[^.0-9]*$' "$log"
be_lacks "... and no v4 (this kernel has none: '-4' holds without a '-4' in the list)" 'guest: versions .*\+4' "$log"
be_has "max_block_size 262144 (read back)" 'guest: max_block_size 262144' "$log"
be_has "nfsd not started by nasboot (its init script does that)" 'guest: threads 0' "$log"
be_has "the export table, every option spelled out" 'guest: exports /srv/nfs 192.168.77.0/24\(ro,sync,root_squash,secure,no_subtree_check,fsid=1\)' "$log"
be_lacks "a second plan has nothing left to do on nfsd" 'guest: plan-again .*nfsd (versions|max_block_size) =' "$log"
t_done
