# shellcheck shell=bash
# Kernel modules: the index of the cached kernel's modules, load order with dependencies (scripts/board modules, info).
# Part of scripts/lib/board.sh, which sources it.

# Maps filled by board_mod_index: normalised name -> relative path, deps.
declare -A board_mod_path=()
declare -A board_mod_deps=()
declare -A board_mod_softpre=()
declare -A board_mod_alias=()
declare -A board_mod_builtin=()
board_mod_indexed=0

# Normalised module name (no dir, no .ko, '-' -> '_') into board_n; a
# variable rather than stdout so that indexing needs no subshells.
board_n=''
board_norm() {
    board_n=${1##*/}
    board_n=${board_n%.ko}
    board_n=${board_n//-/_}
}

board_mod_norm() {
    board_norm "$1"
    printf '%s' "$board_n"
}

board_mod_index() {
    [ "$board_mod_indexed" = 1 ] && return 0
    local path deps name line kw mod rest
    while IFS= read -r line; do
        path=${line%%:*}
        deps=${line#*:}
        board_norm "$path"
        board_mod_path[$board_n]=$path
        board_mod_deps[$board_n]=$deps
    done <"$BOARD_MODDIR/modules.dep"
    while read -r kw mod rest; do
        [ "$kw" = softdep ] || continue
        # "pre: a b post: c" -> keep the pre list
        rest=${rest#*pre:}
        rest=${rest%%post:*}
        board_norm "$mod"
        board_mod_softpre[$board_n]=$rest
    done <"$BOARD_MODDIR/modules.softdep"
    # Plain aliases only (crypto-crc32c, crc32c, fs-ext2...), not device ids.
    while read -r kw name mod; do
        board_norm "$mod"
        board_mod_alias[$name]="${board_mod_alias[$name]:-} $board_n"
    done < <(awk '$1 == "alias" && $2 !~ /[*:?]/' "$BOARD_MODDIR/modules.alias")
    while IFS= read -r line; do
        board_norm "$line"
        board_mod_builtin[$board_n]=1
    done <"$BOARD_MODDIR/modules.builtin"
    board_mod_indexed=1
}

# Appends to board_mod_order (relative paths, load order), deps first.
declare -A board_mod_seen=()
board_mod_order=()
board_mod_resolve() {
    local name
    board_norm "$1"
    name=$board_n
    [ -n "${board_mod_seen[$name]:-}" ] && return 0
    board_mod_seen[$name]=1
    if [ -z "${board_mod_path[$name]:-}" ]; then
        if [ -n "${board_mod_builtin[$name]:-}" ]; then
            return 0
        fi
        local alias_target
        for alias_target in ${board_mod_alias[$1]:-}; do
            board_mod_resolve "$alias_target"
        done
        [ -n "${board_mod_alias[$1]:-}" ] && return 0
        case $1 in crypto-*) return 0 ;; esac # built into the kernel
        board_die "kernel module '$1' not found in $BOARD_KVER"
    fi
    local s d
    for s in ${board_mod_softpre[$name]:-}; do
        board_mod_resolve "$s"
    done
    for d in ${board_mod_deps[$name]}; do
        board_mod_resolve "$d"
    done
    board_mod_order+=("${board_mod_path[$name]}")
}

board_modules_cmd() {
    [ $# -gt 0 ] || board_usage_error "modules NAME..."
    board_ensure_ready
    board_mod_index
    local m
    for m in "$@"; do board_mod_resolve "$m"; done
    printf '%s\n' "${board_mod_order[@]}"
}

board_info() {
    board_ensure_ready
    if [ "$BOARD_KIND" = built ]; then
        local f
        printf 'board        %s (%s)\n' "$BOARD_NAME" "$BOARD_QEMU"
        printf 'target       %s\n' "$BOARD_TARGET"
        [ -n "$BOARD_NFT" ] || printf 'nft          none (its build failed: see scripts/board fetch)\n'
        for f in "$BOARD_KERNEL" "$BOARD_BUSYBOX" "$BOARD_IPTABLES" "$BOARD_ETHTOOL" ${BOARD_NFT:+"$BOARD_NFT"}; do
            printf '%-12s %s (built in %s s)\n' "${f##*/}" "$f" "$(sed -n 's/^seconds=//p' "${f%/*}/.done")"
        done
        printf 'modules      none (everything built in: %s)\n' "${BOARD_KERNEL%/*}/config"
        return 0
    fi
    board_mod_index
    printf 'kernel       %s\n' "$BOARD_KVER"
    printf 'vmlinuz      %s\n' "$BOARD_ROOT/boot/vmlinuz-$BOARD_KVER"
    printf 'busybox      %s\n' "$BOARD_ROOT/bin/busybox"
    printf 'modules      %s\n' "$BOARD_MODDIR"
    local m
    for m in watchdog softdog e1000 pcnet32 virtio_net ata_piix ext4 virtio_blk \
        nfsd nf_tables nf_conntrack nft_nat nft_masq nft_ct nf_nat; do
        if [ -n "${board_mod_path[$m]:-}" ]; then
            printf 'module       %-14s %s\n' "$m" "${board_mod_path[$m]}"
        elif [ -n "${board_mod_builtin[$m]:-}" ]; then
            printf 'module       %-14s built-in\n' "$m"
        else
            printf 'module       %-14s absent\n' "$m"
        fi
    done
}
