#!/bin/sh
# Guest control handler for scripts/bench-shares (busybox sh, run by
# `nc -l -p 7000 -e`): one command from the host, one answer line.
#   prep DISK RA   set DISK's read-ahead (/sys/block/DISK/queue/read_ahead_kb)
#                  to RA KiB, or with RA = "nasboot" to 128 and then let
#                  `nasboot apply` set it from the profile; wait until
#                  nfsd's file cache has closed every file (a file's
#                  read-ahead maximum is copied when it is opened); drop the
#                  page cache. Answers "ready DISK ra=KB".
#   local DISK     read /mnt/DISK/big into /dev/null (a cold, local,
#                  sequential read); answers "local " and stat's fields,
#                  taken before and after, as differences.
#   stat DISK      "stat BUSY TOTAL READS SECTORS": the CPU's busy and
#                  total time so far in USER_HZ ticks (/proc/stat), the
#                  disk's completed reads and sectors read
#                  (/sys/block/DISK/stat)
#   stop           end the benchmark
read -r cmd disk arg
stat() {
    read -r _ us ni sy id io hi si _ </proc/stat
    read -r rd _ sec _ <"/sys/block/$1/stat"
    echo "$((us + ni + sy + hi + si)) $((us + ni + sy + id + io + hi + si)) $rd $sec"
}
# The files nfsd's cache holds: the first line of its statistics
# ("total entries: N" or "total inodes: N", by kernel version).
cached() { sed -n '1s/^total [a-z]*: *//p' /proc/fs/nfsd/filecache; }
case $disk in sda | sdb) ;; *) [ "$cmd" = stop ] || { echo "error no disk '$disk'"; exit 0; } ;; esac
case $cmd in
    prep)
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
        # shellcheck disable=SC2046 # four numbers
        set -- $(stat "$disk")
        dd if="/mnt/$disk/big" of=/dev/null bs=64k 2>/dev/null || { echo "error dd"; exit 0; }
        # shellcheck disable=SC2046
        set -- "$@" $(stat "$disk")
        echo "local $(($5 - $1)) $(($6 - $2)) $(($7 - $3)) $(($8 - $4))"
        ;;
    stat) echo "stat $(stat "$disk")" ;;
    stop) : >/tmp/bench-stop ;;
    *) echo "error unknown command '$cmd'" ;;
esac
