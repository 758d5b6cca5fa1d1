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
            debugfs -w -R "rm $2" "$img" >/dev/null 2>&1 || true
            debugfs -w -R "write $1 $2" "$img" >/dev/null 2>&1 || board_die "debugfs write failed"
            ;;
        *) board_usage_error "disk new|cat|ls|put IMG ..." ;;
    esac
}
