# shellcheck shell=bash
# ext2 disk images attached as the board's /dev/sda (scripts/board disk).
# Part of scripts/lib/board.sh, which sources it.

board_disk_new() {
    local img=$1 mb=${2:-16}
    case $mb in '' | *[!0-9]*) board_usage_error "disk new IMG [MB]" ;; esac
    mkdir -p "$(dirname "$img")"
    rm -f "$img"
    truncate -s "${mb}M" "$img"
    mkfs.ext2 -q -F -L boarddata "$img" >&2 || board_die "mkfs.ext2 $img failed"
}

# board_disk_check IMG: e2fsck -y, as a board's boot checks (and, with
# Debian's FSCKFIX=yes, repairs) a filesystem that was not cleanly
# unmounted. A reset leaves ext2 (no journal) as far as the kernel had
# written it: nasboot's atomic replace fsyncs the new file and the
# directory, but the inode and block bitmaps and the link count of the
# .bak hard link can be older. Seen on --board ppc with the ext2 and the
# ext4 driver alike; with the ext2 driver and no check, the next boot's
# allocation took an inode in use ("ext2_new_inode: inode number already
# in use", the reset history's write failing with EIO), and debugfs's
# `put` overwrote the history's inode. e2fsck -p stops at the "Unattached
# inode" the .bak link leaves.
# Says what it repaired; what e2fsck cannot repair is an error.
board_disk_check() {
    local img=$1 out rc=0
    out=$(e2fsck -y "$img" 2>&1) || rc=$?
    case $rc in
        0) ;;
        1 | 2)
            # 1 also when the check only cleared the not-clean state.
            if grep -q 'FILE SYSTEM WAS MODIFIED' <<<"$out"; then
                board_say "disk $img: e2fsck -y repaired it (not cleanly unmounted): $(grep -v -e '^e2fsck [0-9]' -e '^$' -e '^Pass [0-9]' <<<"$out" | tr '\n' ' ')"
            else
                board_say "disk $img: not cleanly unmounted; e2fsck -y found nothing to repair"
            fi
            ;;
        *)
            printf '%s\n' "$out" | sed 's/^/  e2fsck: /' >&2
            board_die "disk $img: e2fsck -y cannot repair it (status $rc)"
            ;;
    esac
}

board_disk_cmd() {
    [ $# -ge 2 ] || board_usage_error "disk new|cat|ls|put IMG ..."
    local sub=$1 img=$2
    shift 2
    case $sub in
        new) board_disk_new "$img" "$@" ;;
        cat)
            [ $# = 1 ] || board_usage_error "disk cat IMG PATH"
            # debugfs prints nothing for a missing file but says so on stderr
            local err
            err=$(debugfs -R "stat $1" "$img" 2>&1 >/dev/null | grep -v '^debugfs ' || true)
            [ -z "$err" ] || { printf '%s\n' "$err" >&2; return 1; }
            debugfs -R "cat $1" "$img" 2>/dev/null
            ;;
        ls)
            debugfs -R "ls -l ${1:-/}" "$img" 2>/dev/null
            ;;
        put)
            [ $# = 2 ] || board_usage_error "disk put IMG SRC DEST"
            board_disk_check "$img"
            debugfs -w -R "rm $2" "$img" >/dev/null 2>&1 || true
            debugfs -w -R "write $1 $2" "$img" >/dev/null 2>&1 || board_die "debugfs write failed"
            ;;
        *) board_usage_error "disk new|cat|ls|put IMG ..." ;;
    esac
}
