# shellcheck shell=bash
# The board's kernel, modules and busybox: host tools, download and cache (scripts/board fetch).
# Part of scripts/lib/board.sh, which sources it.

board_need_root() {
    [ "$(id -u)" = 0 ] || board_die "$1 needs root (apt-get)"
}

# Host packages: command -> Debian package.
board_host_tools() {
    printf '%s\n' \
        "qemu-system-mipsel qemu-system-mips" \
        "cpio cpio" \
        "gzip gzip" \
        "depmod kmod" \
        "mkfs.ext2 e2fsprogs" \
        "debugfs e2fsprogs" \
        "ip iproute2" \
        "timeout coreutils" \
        "readelf binutils"
}

board_apt_updated=0
board_apt_update() {
    if [ "$board_apt_updated" = 0 ]; then
        board_say "apt-get update"
        apt_update || board_die "apt-get update failed"
        board_apt_updated=1
    fi
}

# board_main passes `fetch`'s arguments; board_ensure_ready passes none.
# shellcheck disable=SC2120
board_fetch() {
    local refresh=0
    while [ $# -gt 0 ]; do
        case $1 in
            --refresh) refresh=1 ;;
            *) board_usage_error "fetch [--refresh]" ;;
        esac
        shift
    done
    if [ "$BOARD_KIND" = built ]; then
        board_fetch_built
        return
    fi
    if [ "$refresh" = 0 ] && board_ready; then
        return 0
    fi
    board_need_root "fetch"
    mkdir -p "$BOARD_CACHE"
    # Serialise concurrent fetches (parallel test runs).
    exec 9>"$BOARD_CACHE/.fetch.lock"
    flock 9
    if [ "$refresh" = 0 ] && board_ready; then
        exec 9>&-
        return 0
    fi

    local cmd pkg missing=()
    while read -r cmd pkg; do
        if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ] && [ ! -x "/sbin/$cmd" ]; then
            missing+=("$pkg")
        fi
    done < <(board_host_tools)
    if [ ${#missing[@]} -gt 0 ]; then
        board_say "apt-get install ${missing[*]}"
        apt_install "${missing[@]}" || board_die "apt-get install ${missing[*]} failed"
    fi

    if ! dpkg --print-foreign-architectures | grep -qx mipsel; then
        board_say "dpkg --add-architecture mipsel"
        dpkg --add-architecture mipsel
        board_apt_updated=0
        board_apt_update
    fi
    if [ "$refresh" = 1 ]; then
        board_apt_update
    fi

    local kpkg
    kpkg=$(board_resolve_kernel_pkg) || true
    if [ -z "$kpkg" ]; then
        board_apt_update
        kpkg=$(board_resolve_kernel_pkg) || board_die "no linux-image-*-4kc-malta:mipsel in apt"
    fi
    local kver=${kpkg#linux-image-}
    board_say "kernel package $kpkg"

    local debs=$BOARD_DEBS
    mkdir -p "$debs"
    local want
    for want in "$kpkg" busybox-static; do
        if ! ls "$debs/${want}_"*_mipsel.deb >/dev/null 2>&1; then
            board_say "apt-get download $want:mipsel"
            # _apt cannot write into target/: download as root into the dir.
            (cd "$debs" && apt-get download -q "$want:mipsel" 2>&1 | grep -v 'unsandboxed' >&2) || true
            ls "$debs/${want}_"*_mipsel.deb >/dev/null 2>&1 || {
                board_apt_update
                (cd "$debs" && apt-get download -q "$want:mipsel" >&2) || board_die "download of $want failed"
            }
        fi
    done

    local root=$BOARD_CACHE/root.new
    rm -rf "$root"
    mkdir -p "$root"
    local deb
    for deb in "$debs/${kpkg}_"*_mipsel.deb "$debs/busybox-static_"*_mipsel.deb; do
        dpkg -x "$deb" "$root"
    done
    [ -f "$root/boot/vmlinuz-$kver" ] || board_die "kernel image missing in $kpkg"
    [ -x "$root/bin/busybox" ] || board_die "busybox missing in busybox-static"
    # The package ships no modules.dep (postinst runs depmod): make it here.
    board_depmod "$root" "$kver"
    rm -rf "$BOARD_CACHE/root"
    mv "$root" "$BOARD_CACHE/root"
    printf '%s\n' "$kver" >"$BOARD_CACHE/kver"
    exec 9>&-
    board_say "ready: kernel $kver in $BOARD_CACHE/root"
}

board_depmod() {
    local depmod=depmod
    command -v depmod >/dev/null 2>&1 || depmod=/usr/sbin/depmod
    [ -x "$(command -v "$depmod")" ] || depmod=/sbin/depmod
    "$depmod" -b "$1" "$2" || board_die "depmod failed"
}

board_resolve_kernel_pkg() {
    # The metapackage points at the current ABI; fall back to the highest
    # versioned image if the metapackage is unknown.
    local dep
    dep=$(apt-cache depends linux-image-4kc-malta:mipsel 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*-4kc-malta\)\(:mipsel\)\{0,1\}$/\1/p' | head -n1)
    if [ -z "$dep" ]; then
        dep=$(apt-cache search --names-only '^linux-image-[0-9].*-4kc-malta$' 2>/dev/null |
            awk '{print $1}' | sort -V | tail -n1)
    fi
    [ -n "$dep" ] || return 1
    printf '%s\n' "$dep"
}

board_ready() {
    [ -f "$BOARD_CACHE/kver" ] || return 1
    local kver
    kver=$(cat "$BOARD_CACHE/kver")
    [ -f "$BOARD_CACHE/root/boot/vmlinuz-$kver" ] &&
        [ -f "$BOARD_CACHE/root/lib/modules/$kver/modules.dep" ] &&
        [ -x "$BOARD_CACHE/root/bin/busybox" ] &&
        command -v "$BOARD_QEMU" >/dev/null 2>&1 &&
        command -v cpio >/dev/null 2>&1
}

board_ensure_ready() {
    if [ "$BOARD_KIND" = built ]; then
        board_fetch_built
        return
    fi
    # shellcheck disable=SC2119  # no option: fetch only what is missing
    board_ready || board_fetch
    BOARD_KVER=$(cat "$BOARD_CACHE/kver")
    BOARD_ROOT=$BOARD_CACHE/root
    # shellcheck disable=SC2034  # read by modules.sh and run.sh
    BOARD_MODDIR=$BOARD_ROOT/lib/modules/$BOARD_KVER
}

# A built board (--board ppc): host tools and QEMU with its firmware, then
# the kernel, BusyBox and nft from the cache, building what is missing,
# one build at a time (a lock in the cache: parallel suites wait). Sets
# BOARD_KERNEL, BOARD_BUSYBOX, BOARD_IPTABLES, BOARD_ETHTOOL and BOARD_NFT
# (empty when nft could not be built: board_nft_ensure).
board_fetch_built() {
    local cmd pkg missing=()
    while read -r cmd pkg; do
        case $cmd in qemu-system-* | depmod) continue ;; esac
        command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || [ -x "/sbin/$cmd" ] || missing+=("$pkg")
    done < <(board_host_tools)
    # Everything the builds use, first: the cross gcc's version is part of
    # every product's hash, so it must be there before any hash is taken.
    # shellcheck disable=SC2086 # word lists
    board_build_apt $BOARD_QEMU_PKG "${missing[@]}" "gcc-${BOARD_CROSS%-}" "$BOARD_LINUX_DEB" \
        dpkg-dev make bc bison flex pkg-config xz-utils
    command -v "$BOARD_QEMU" >/dev/null 2>&1 || board_die "--board $BOARD_NAME: $BOARD_QEMU not found (Debian package ${BOARD_QEMU_PKG%% *})"
    board_firmware_check
    mkdir -p "$BOARD_BUILD_CACHE" || board_die "cannot create $BOARD_BUILD_CACHE"
    # The lock only when something is to be built: a board whose products
    # are all cached does not wait for another board's build.
    local locked=0
    if ! board_built_ready; then
        exec 7>"$BOARD_BUILD_CACHE/.build.lock"
        flock 7
        locked=1
    fi
    board_kernel_ensure
    board_busybox_ensure
    board_iptables_ensure
    board_ethtool_ensure
    board_nft_ensure
    [ "$locked" = 0 ] || exec 7>&-
}

# board_built_ready: every product of the board is in the cache (nft:
# built, or recorded as failed, or not wanted).
board_built_ready() {
    local d nft
    for d in "$(board_kernel_dir)" "$(board_busybox_dir)" "$(board_iptables_dir)" "$(board_ethtool_dir)"; do
        [ -f "$d/.done" ] || return 1
    done
    case ${NASBOOT_BOARD_NFT:-no} in
        no) return 0 ;;
        yes) [ -f "$(board_nft_dir)/.done" ] ;;
        *) nft=$(board_nft_dir); [ -f "$nft/.done" ] || [ -f "$nft.failed" ] ;;
    esac
}
