# shellcheck shell=bash
# Debian mipsel packages unpacked into a tree for the guest (scripts/board debs, run --deb).
# Part of scripts/lib/board.sh, which sources it.

# board_debs_closure PKG...: PKG plus every lib* package (and zlib1g) it
# depends on (Depends and Pre-Depends, recursively), one name per line.  Only libraries
# are followed: the board gets a program and what it links against, not
# Debian's maintainer-script machinery (debconf, ucf, adduser...).
# One apt-cache call per level of the graph, for all of that level's
# packages (apt-cache prints a block per package, headed by its name): each
# call rebuilds apt's package cache (seconds), so one a package made a
# large closure take minutes.
board_debs_closure() {
    local -A seen=()
    local -a level=("$@") next
    local p d
    while [ ${#level[@]} -gt 0 ]; do
        next=()
        for p in "${level[@]}"; do
            [ -z "${seen[$p]:-}" ] || continue
            seen[$p]=1
            next+=("$p:mipsel")
        done
        [ ${#next[@]} -gt 0 ] || break
        level=()
        while read -r d; do
            case $d in lib* | zlib1g) level+=("$d") ;; esac
        done < <(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
            --no-replaces --no-enhances "${next[@]}" 2>/dev/null |
            sed -n 's/^ *\(Pre\)\{0,1\}Depends: <\{0,1\}\([^<>:]*\)\(:mipsel\)\{0,1\}>\{0,1\}$/\2/p')
    done
    printf '%s\n' "${!seen[@]}" | LC_ALL=C sort
}

# board_debs_download PKG: PKG's mipsel (or arch: all) .deb into the cache.
board_debs_download() {
    local debs=$BOARD_DEBS
    compgen -G "$debs/${1}_*_mipsel.deb" >/dev/null && return 0
    compgen -G "$debs/${1}_*_all.deb" >/dev/null && return 0
    board_need_root "downloading $1:mipsel"
    mkdir -p "$debs"
    board_say "apt-get download $1:mipsel"
    (cd "$debs" && apt-get download -q "$1:mipsel" >/dev/null 2>&1) ||
        (cd "$debs" && apt-get download -q "$1" >/dev/null 2>&1) || {
        board_apt_update
        (cd "$debs" && apt-get download -q "$1:mipsel" >/dev/null 2>&1) ||
            (cd "$debs" && apt-get download -q "$1" >&2) ||
            board_die "apt-get download $1:mipsel failed"
    }
}

# board_debs_tree PKG...: unpack PKG and its library closure into a cached
# tree (one per package set), pruned of docs and locales, and check that
# every shared object an ELF file there needs is in the tree.  Sets
# board_debs_dir.
# The trees are kept outside the clone, beside the .debs (a fresh clone
# of a machine that built them unpacks nothing; where that is not
# writable, under BOARD_CACHE), each named by its packages and a hash of
# what makes it: this file (the closure's rules, the pruning) and apt's
# package lists (the dependencies, the versions).
board_debs_dir=''
board_debs_tree() {
    [ $# -gt 0 ] || board_usage_error "debs PKG..."
    board_ensure_ready
    local key recipe root=${BOARD_DEBS%/*}/debroot-mipsel
    key=$(printf '%s\n' "$@" | LC_ALL=C sort -u | tr '\n' '+')
    key=${key%+}
    recipe=$({
        cat "${BASH_SOURCE[0]}"
        stat -c '%n %s %Y' /var/lib/apt/lists/*Packages* 2>/dev/null
    } | sha256sum | cut -c1-12)
    mkdir -p "$root" 2>/dev/null && [ -w "$root" ] || root=$BOARD_CACHE/debroot
    board_debs_dir=$root/$key-$recipe
    [ -f "$board_debs_dir/.complete" ] && return 0
    mkdir -p "$root"
    exec 8>"$root/.lock"
    flock 8
    if [ -f "$board_debs_dir/.complete" ]; then
        exec 8>&-
        return 0
    fi
    local -a pkgs=()
    mapfile -t pkgs < <(board_debs_closure "$@")
    if [ ${#pkgs[@]} -le $# ]; then
        # No dependencies at all: the apt lists may lack mipsel.
        board_apt_update
        mapfile -t pkgs < <(board_debs_closure "$@")
    fi
    local tree=$board_debs_dir.new p deb
    rm -rf "$tree"
    mkdir -p "$tree"
    for p in "${pkgs[@]}"; do
        board_debs_download "$p"
        for deb in "$BOARD_DEBS/${p}_"*_mipsel.deb "$BOARD_DEBS/${p}_"*_all.deb; do
            [ -f "$deb" ] || continue
            dpkg -x "$deb" "$tree" || board_die "dpkg -x $deb failed"
        done
    done
    rm -rf "$tree/usr/share/doc" "$tree/usr/share/man" "$tree/usr/share/locale" \
        "$tree/usr/share/info" "$tree/usr/share/lintian" "$tree/usr/lib/mipsel-linux-gnu/gconv" \
        "$tree/etc/init.d"
    board_debs_check "$tree"
    rm -rf "$board_debs_dir"
    # The set's trees of another recipe, once a day old (a run of an
    # older clone may still copy from one).
    local old
    for old in "$root/$key-"????????????; do
        case ${old##*-} in *[!0-9a-f]*) continue ;; esac
        [ -z "$(find "$old/.complete" -mmin +1440 2>/dev/null)" ] || rm -rf "$old"
    done
    mv "$tree" "$board_debs_dir"
    : >"$board_debs_dir/.complete"
    exec 8>&-
    board_say "debs: ${pkgs[*]}"
}

# board_debs_check TREE: every DT_NEEDED of every ELF file in TREE resolves
# to a file in TREE's library directories or the file's RUNPATH (the
# closure is complete). A library's private dependency that its program
# loads first (systemd's libsystemd-shared) may live anywhere in the tree.
board_debs_check() {
    local tree=$1 f lib dir found unresolved='' dyn
    if ! command -v readelf >/dev/null 2>&1; then
        board_need_root "installing binutils (readelf)"
        board_apt_update
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends binutils >&2 ||
            board_die "apt-get install binutils failed"
    fi
    while IFS= read -r -d '' f; do
        [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
        dyn=$(readelf -d "$f" 2>/dev/null) || continue
        # The default directories, then the file's RUNPATH/RPATH (systemd
        # keeps its private libraries in one).
        local -a dirs=(/lib/mipsel-linux-gnu /usr/lib/mipsel-linux-gnu /lib /usr/lib)
        while IFS= read -r dir; do
            [ -n "$dir" ] && dirs+=("$dir")
        done < <(sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]$/\2/p' <<<"$dyn" | tr ':' '\n')
        while read -r lib; do
            found=0
            for dir in "${dirs[@]}"; do
                if [ -e "$tree$dir/$lib" ]; then found=1; break; fi
            done
            if [ "$found" = 0 ] && [ "${f%.so*}" != "$f" ] &&
                [ -n "$(find "$tree" -name "$lib" -print -quit)" ]; then
                found=1
            fi
            [ "$found" = 1 ] || unresolved+=" ${f#"$tree"}:$lib"
        done < <(sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' <<<"$dyn")
    done < <(find "$tree" -type f \( -perm -u+x -o -name '*.so*' \) -print0)
    [ -z "$unresolved" ] || board_die "unresolved shared libraries in the deb tree:$unresolved"
}
