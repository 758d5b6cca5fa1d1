#!/bin/sh
# Guest control handler for scripts/bench-shares (busybox sh, run by
# `nc -l -p 7000 -e`): one command from the host, one answer line.
#   prep DISK RA [SETTINGS]
#                  put the servers' settings in place (SETTINGS: stock,
#                  nasboot, or keep, the default; see below); set DISK's
#                  read-ahead (/sys/block/DISK/queue/read_ahead_kb) to RA
#                  KiB, or with RA = "nasboot" to 128 and then let
#                  `nasboot apply` set it from the profile; wait until
#                  nfsd's file cache has closed every file (a file's
#                  read-ahead maximum is copied when it is opened); drop the
#                  page cache. Answers "ready DISK ra=KB".
#   local DISK     read /mnt/DISK/big into /dev/null (a cold, local,
#                  sequential read); answers "local " and stat's fields,
#                  taken before and after, as differences.
#   stat DISK      "stat BUSY TOTAL READS SECTORS NFSREADS NFSBYTES": the
#                  CPU's busy and total time so far in USER_HZ ticks
#                  (/proc/stat), the disk's completed reads and sectors
#                  read (/sys/block/DISK/stat), nfsd's NFSv3 READs served
#                  and bytes read (/proc/net/rpc/nfsd, "proc3" and "io")
#   knobs DISK     "knobs max_block_size=B threads=N versions=V": nfsd's
#                  largest READ (the largest a client is offered), its
#                  thread count and versions (/proc/fs/nfsd)
#   stop           end the benchmark
# The servers' settings, switched only when they change (saved by the
# benchmark's guest script in /etc/bench):
#   stock    the kernel's values of the sysctls nasboot's preset sets
#            (sysctl.stock), Debian's /etc/default/nfs-kernel-server
#            (default.stock) and no nasboot drop-in in /etc/nfs.conf.d;
#            ksmbd from ksmbd-stock.conf
#   nasboot  the values and files `nasboot apply` wrote (sysctl.nasboot,
#            default.nasboot, nfsconf.nasboot); ksmbd from the
#            ksmbd.conf nasboot wrote
#   small    nasboot's, with ksmbd from ksmbd-small.conf (nasboot's file
#            and `smb2 max read = 64K`)
#   stockv3  stock, but with nasboot's nfs.conf drop-in (NFSv3 only,
#            mountd's port); ksmbd from ksmbd-stock.conf
#   bigblock nasboot's, with nfsd's max_block_size 1 MiB (written while
#            nfsd is stopped); every other set restores the kernel's
# smbd, where it runs, takes smb.conf.stock or smb.conf.nasboot as
# /etc/samba/smb.conf and re-reads it on SIGHUP.
# nfsd is stopped and started again as Debian's init script starts it
# (rpc.nfsd with RPCNFSDCOUNT; the versions from nfs.conf); ksmbd.mountd
# is shut down (ksmbd.control --shutdown) and started on the other file.
read -r cmd disk arg set
stat() {
    read -r _ us ni sy id io hi si _ </proc/stat
    read -r rd _ sec _ <"/sys/block/$1/stat"
    # proc3's fields: the count of procedures, then NULL ... READ (the 7th).
    nr=$(sed -n 's/^proc3 [0-9]* \([0-9]* \)\{6\}\([0-9]*\).*/\2/p' /proc/net/rpc/nfsd)
    nb=$(sed -n 's/^io \([0-9]*\) .*/\1/p' /proc/net/rpc/nfsd)
    echo "$((us + ni + sy + hi + si)) $((us + ni + sy + id + io + hi + si)) $rd $sec ${nr:-0} ${nb:-0}"
}
# The files nfsd's cache holds: the first line of its statistics
# ("total entries: N" or "total inodes: N", by kernel version).
cached() { sed -n '1s/^total [a-z]*: *//p' /proc/fs/nfsd/filecache; }
# settings stock|nasboot|keep (see above).
settings() {
    cur=$(cat /tmp/settings.cur 2>/dev/null || echo nasboot)
    [ "$1" = keep ] || [ "$1" = "$cur" ] && return 0
    case $1 in stock | stockv3) s=stock ;; nasboot | small | bigblock) s=nasboot ;; *) return 1 ;; esac
    while read -r f v; do echo "$v" >"$f" || return 1; done <"/etc/bench/sysctl.$s"
    rpc.nfsd 0 || return 1
    blk=$(cat "/etc/bench/maxblk.$s")
    [ "$1" != bigblock ] || blk=1048576
    [ "$(cat /proc/fs/nfsd/max_block_size)" = "$blk" ] || echo "$blk" >/proc/fs/nfsd/max_block_size || return 1
    cp "/etc/bench/default.$s" /etc/default/nfs-kernel-server
    if [ "$1" = stock ]; then
        rm -f /etc/nfs.conf.d/nasboot.conf
    else
        cp /etc/bench/nfsconf.nasboot /etc/nfs.conf.d/nasboot.conf
    fi
    # shellcheck disable=SC1091 # the board's file
    . /etc/default/nfs-kernel-server
    rpc.nfsd "$RPCNFSDCOUNT" || return 1
    if [ -s /run/ksmbd.lock ]; then
        ksmbd.control --shutdown >/dev/null 2>&1
        i=0
        while [ $i -lt 20 ] && [ -s /run/ksmbd.lock ] && kill -0 "$(cat /run/ksmbd.lock)" 2>/dev/null; do
            sleep 0.5
            i=$((i + 1))
        done
        if [ "$1" != nasboot ]; then
            ksmbd.mountd -c "/etc/bench/ksmbd-${1%v3}.conf" </dev/null >/dev/null 2>&1 || return 1
        else
            ksmbd.mountd </dev/null >/dev/null 2>&1 || return 1
        fi
    fi
    if [ -s /run/samba/smbd.pid ]; then
        cp "/etc/bench/smb.conf.$s" /etc/samba/smb.conf || return 1
        kill -HUP "$(cat /run/samba/smbd.pid)" || return 1
        sleep 2
    fi
    echo "$1" >/tmp/settings.cur
}
case $disk in sda | sdb) ;; *) [ "$cmd" = stop ] || { echo "error no disk '$disk'"; exit 0; } ;; esac
case $cmd in
    prep)
        settings "${set:-keep}" || { echo "error settings $set"; exit 0; }
        ra=/sys/block/$disk/queue/read_ahead_kb
        if [ "$arg" = nasboot ]; then
            echo 128 >"$ra" || { echo "error read_ahead_kb 128"; exit 0; }
            nasboot -q apply >/dev/null || { echo "error nasboot apply"; exit 0; }
        else
            echo "$arg" >"$ra" || { echo "error read_ahead_kb $arg"; exit 0; }
        fi
        # nfsd closes an unused file after two passes of its laundrette
        # (2 s each): until then it keeps the old read-ahead.
        i=0
        while [ $i -lt 40 ] && [ "$(cached)" != 0 ]; do
            sleep 0.5
            i=$((i + 1))
        done
        [ "$(cached)" = 0 ] || { echo "error nfsd still holds $(cached) file(s)"; exit 0; }
        sync
        echo 3 >/proc/sys/vm/drop_caches
        echo "ready $disk ra=$(cat "$ra")"
        ;;
    local)
        # shellcheck disable=SC2046 # six numbers
        set -- $(stat "$disk")
        dd if="/mnt/$disk/big" of=/dev/null bs=64k 2>/dev/null || { echo "error dd"; exit 0; }
        # shellcheck disable=SC2046
        set -- "$@" $(stat "$disk")
        echo "local $(($7 - $1)) $(($8 - $2)) $(($9 - $3)) $((${10} - $4)) $((${11} - $5)) $((${12} - $6))"
        ;;
    stat) echo "stat $(stat "$disk")" ;;
    knobs) echo "knobs max_block_size=$(cat /proc/fs/nfsd/max_block_size) threads=$(cat /proc/fs/nfsd/threads) versions=$(tr ' ' , </proc/fs/nfsd/versions)" ;;
    stop) : >/tmp/bench-stop ;;
    *) echo "error unknown command '$cmd'" ;;
esac
