# shellcheck shell=bash
# Library behind scripts/board: an emulated MIPS 24K board (QEMU malta,
# Debian's mipsel 4kc-malta kernel, busybox-static:mipsel in an initramfs).
#
# Sourced by scripts/board; everything here is a function or a constant.
# No eval: every command is built as an argv array.

BOARD_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BOARD_CACHE=${BOARD_CACHE:-$BOARD_REPO/target/board}
BOARD_QEMU=${BOARD_QEMU:-qemu-system-mipsel}

# Exit codes of `scripts/board run` (also printed as "board: outcome=...").
BOARD_RC_POWEROFF=0      # guest powered off; script (if any) exited 0
BOARD_RC_ERROR=1         # harness error (qemu failed to start, bad input...)
BOARD_RC_USAGE=2         # bad command line
BOARD_RC_SCRIPT_FAILED=3 # guest powered off but the guest script exited != 0
BOARD_RC_RESET=4         # board reset (watchdog, reboot -f): qemu left via -no-reboot
BOARD_RC_PANIC=5         # kernel panic (panic=1 then reset)
BOARD_RC_LOG=6           # outcome as expected but a --expect-log/--reject-log failed
BOARD_RC_TIMEOUT=124     # --timeout exceeded, qemu killed

board_say() { printf 'board: %s\n' "$*" >&2; }
board_die() { printf 'board: error: %s\n' "$*" >&2; exit "$BOARD_RC_ERROR"; }
board_usage_error() { printf 'board: usage: %s (see scripts/board help)\n' "$*" >&2; exit "$BOARD_RC_USAGE"; }

board_help() {
    cat <<'EOF'
scripts/board COMMAND [ARGS]

  fetch [--refresh]   install host tools (apt) and cache kernel + busybox under
                      target/board (idempotent; --refresh re-resolves the kernel)
  run [OPTIONS]       build an initramfs and boot the board once
  modules NAME...     print the resolved insmod order (deps, softdeps) for NAMEs
  info                kernel version, cache paths, key module availability
  disk new IMG [MB]   create an ext2 image (default 16 MB)
  disk cat IMG PATH   print a file from an image (debugfs, no mount needed)
  disk ls IMG [DIR]   list a directory of an image
  disk put IMG SRC DEST  copy a host file into an image
  debs PKG...         unpack PKG:mipsel + its lib* dependencies (cached) and
                      print the tree (what run --deb puts into the initramfs)
  smoke               self-test: poweroff, softdog reset, magic close, disk
                      persistence, e1000 + pcnet32 with hostfwd; prints timings
  help

run OPTIONS
  --bin FILE          static mipsel binary -> /usr/sbin/nasboot
  --profile FILE      -> /etc/nasboot.toml
  --script FILE       busybox sh script run by /init after mounts and modules;
                      when it returns, /init prints "board: script-exit=N" and
                      powers off. It may also `poweroff -f` / `reboot -f` itself.
  --file SRC:DEST     extra file into the initramfs (repeatable; DEST absolute)
  --module 'NAME [PARAM=V ...]'  include and insmod at boot, deps first
                      (repeatable; default list is just `softdog`; giving
                      softdog again replaces its params)
  --no-module NAME    drop NAME from the boot load list
  --with-module NAME  include (with deps) but do not load; use `modprobe NAME`
  --exec-init PROG    after mounts and modules, /init execs PROG as PID 1
                      (e.g. /lib/systemd/systemd) instead of running the
                      script; PROG's own units must run /board/script,
                      print "board: script-exit=N" and power off
  --deb PKG           unpack Debian's mipsel PKG and the lib* packages it
                      depends on (recursively) into the root, for dynamic
                      user space (e.g. nfs-kernel-server, rpcbind); repeatable.
                      Downloads need the network: run `debs PKG...` first
                      when the board itself boots inside a namespace
  --disk IMG          attach IMG as IDE disk (/dev/sda), created as ext2 if
                      missing; mounted at /data (loads ata_piix, ext4)
  --disk-size MB      size when creating (default 16)
  --no-mount          attach the disk but do not mount it
  --nic MODEL[:BACKEND]  add a NIC (repeatable, eth0, eth1... in order).
                      MODEL: e1000 | pcnet (=pcnet32) | virtio; its driver is
                      loaded at boot. BACKEND: user (default; slirp, restrict=on,
                      guest should use 10.0.2.15/24) | tap:IFNAME (existing tap,
                      e.g. in a netns: run the harness under `ip netns exec`) |
                      none (no link partner)
  --hostfwd RULE      forward host port to the first user NIC, e.g.
                      tcp:127.0.0.1:18080-:80 (host address must be 127.0.0.1)
  --append ARGS       extra kernel command line
  --mem MB            guest RAM (default 256)
  --timeout SECONDS   kill qemu after this (default 120) -> outcome timeout
  --log FILE          serial log (default target/board/last.log)
  --result FILE       write outcome=, script_exit=, wall_s= lines
  --expect OUTCOME    poweroff | reset | panic | timeout: exit 0 iff it happened
  --expect-log ERE    log must match (grep -E), repeatable
  --reject-log ERE    log must not match, repeatable
  --qemu-arg ARG      extra qemu argument (repeatable)
  -v, --verbose       stream the serial console to stderr
  --keep              keep the staging dir (printed)

Exit codes: 0 poweroff (script ok) | 3 poweroff, script failed | 4 reset |
5 panic | 124 timeout | 6 log assertion failed | 1 harness error | 2 usage.
With --expect X: 0 iff outcome X happened (and log assertions held).
EOF
}

# ---------------------------------------------------------------- fetch ---

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
        apt-get update -q >&2 || board_die "apt-get update failed"
        board_apt_updated=1
    fi
}

board_fetch() {
    local refresh=0
    while [ $# -gt 0 ]; do
        case $1 in
            --refresh) refresh=1 ;;
            *) board_usage_error "fetch [--refresh]" ;;
        esac
        shift
    done
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

    local line cmd pkg missing=()
    while read -r cmd pkg; do
        if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ] && [ ! -x "/sbin/$cmd" ]; then
            missing+=("$pkg")
        fi
    done < <(board_host_tools)
    if [ ${#missing[@]} -gt 0 ]; then
        board_apt_update
        board_say "apt-get install ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
            board_die "apt-get install failed"
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

    local debs=$BOARD_CACHE/debs
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
    board_ready || board_fetch
    BOARD_KVER=$(cat "$BOARD_CACHE/kver")
    BOARD_ROOT=$BOARD_CACHE/root
    BOARD_MODDIR=$BOARD_ROOT/lib/modules/$BOARD_KVER
}

# -------------------------------------------------------------- modules ---

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

# ----------------------------------------------------------------- debs ---

# board_debs_closure PKG...: PKG plus every lib* package (and zlib1g) it
# depends on (Depends and Pre-Depends, recursively), one name per line.  Only libraries
# are followed: the board gets a program and what it links against, not
# Debian's maintainer-script machinery (debconf, ucf, adduser...).
board_debs_closure() {
    local -A seen=()
    local -a queue=("$@")
    local p d
    while [ ${#queue[@]} -gt 0 ]; do
        p=${queue[0]}
        queue=("${queue[@]:1}")
        [ -z "${seen[$p]:-}" ] || continue
        seen[$p]=1
        while read -r d; do
            case $d in lib* | zlib1g) queue+=("$d") ;; esac
        done < <(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
            --no-replaces --no-enhances "$p:mipsel" 2>/dev/null |
            sed -n 's/^ *\(Pre\)\{0,1\}Depends: <\{0,1\}\([^<>:]*\)\(:mipsel\)\{0,1\}>\{0,1\}$/\2/p')
    done
    printf '%s\n' "${!seen[@]}" | LC_ALL=C sort
}

# board_debs_download PKG: PKG's mipsel (or arch: all) .deb into the cache.
board_debs_download() {
    local debs=$BOARD_CACHE/debs
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
board_debs_dir=''
board_debs_tree() {
    [ $# -gt 0 ] || board_usage_error "debs PKG..."
    board_ensure_ready
    local key
    key=$(printf '%s\n' "$@" | LC_ALL=C sort -u | tr '\n' '+')
    board_debs_dir=$BOARD_CACHE/debroot/${key%+}
    [ -f "$board_debs_dir/.complete" ] && return 0
    mkdir -p "$BOARD_CACHE/debroot"
    exec 8>"$BOARD_CACHE/debroot/.lock"
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
        for deb in "$BOARD_CACHE/debs/${p}_"*_mipsel.deb "$BOARD_CACHE/debs/${p}_"*_all.deb; do
            [ -f "$deb" ] || continue
            dpkg -x "$deb" "$tree" || board_die "dpkg -x $deb failed"
        done
    done
    rm -rf "$tree/usr/share/doc" "$tree/usr/share/man" "$tree/usr/share/locale" \
        "$tree/usr/share/info" "$tree/usr/share/lintian" "$tree/usr/lib/mipsel-linux-gnu/gconv" \
        "$tree/etc/init.d"
    board_debs_check "$tree"
    rm -rf "$board_debs_dir"
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

# ----------------------------------------------------------------- disk ---

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

# ------------------------------------------------------------ guest init ---

board_write_init() {
    cat >"$1" <<'INIT'
#!/bin/busybox sh
# Guest /init generated by scripts/board.
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm /tmp /run /data
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
hostname board
ip link set lo up
echo "board: init up uptime=$(cut -d' ' -f1 /proc/uptime)"
kver=$(uname -r)
while read -r mod params; do
    [ -n "$mod" ] || continue
    # params are "k=v k=v": split on purpose
    # shellcheck disable=SC2086
    insmod "/lib/modules/$kver/$mod" $params || echo "board: insmod $mod failed"
done </etc/board/modules.load
echo "board: modules loaded uptime=$(cut -d' ' -f1 /proc/uptime)"
if [ -f /etc/board/disk ]; then
    i=0
    while [ ! -b /dev/sda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    if [ -f /etc/board/disk-mount ]; then
        if mount -t ext2 /dev/sda /data; then
            echo "board: disk mounted at /data"
        else
            echo "board: disk mount failed"
        fi
    fi
fi
export BOARD_KVER="$kver"
cd /
if [ -f /etc/board/exec-init ]; then
    # Hand PID 1 over (e.g. to systemd); the script then runs from there.
    read -r prog </etc/board/exec-init
    echo "board: exec $prog uptime=$(cut -d' ' -f1 /proc/uptime)"
    exec "$prog"
fi
echo "board: script start uptime=$(cut -d' ' -f1 /proc/uptime)"
rc=0
if [ -f /board/script ]; then
    sh /board/script
    rc=$?
fi
echo "board: script-exit=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
sync
umount /data 2>/dev/null
poweroff -f
sleep 3600
INIT
    chmod 755 "$1"
}

# ------------------------------------------------------------------ run ---

board_nic_driver() {
    case $1 in
        e1000) echo e1000 ;;
        pcnet | pcnet32) echo pcnet32 ;;
        virtio | virtio-net-pci) echo virtio_net ;;
        *) board_usage_error "--nic model must be e1000, pcnet or virtio (got '$1')" ;;
    esac
}

board_nic_device() {
    case $1 in
        e1000) echo e1000 ;;
        pcnet | pcnet32) echo pcnet ;;
        virtio | virtio-net-pci) echo virtio-net-pci ;;
    esac
}

board_run() {
    local bin='' profile='' script='' disk='' disk_size=16 disk_mount=1 exec_init=''
    local timeout=120 log='' result='' expect='' verbose=0 keep=0 mem=256 append=''
    local -a files=() mod_specs=("softdog") no_mods=() with_mods=() nics=() hostfwds=() debs=()
    local -a expect_logs=() reject_logs=() qemu_extra=()
    local need
    while [ $# -gt 0 ]; do
        need=2
        case $1 in
            -v | --verbose) verbose=1; need=1 ;;
            --keep) keep=1; need=1 ;;
            --no-mount) disk_mount=0; need=1 ;;
            --bin | --profile | --script | --file | --module | --no-module | --with-module | --deb | --exec-init | \
                --disk | --disk-size | --nic | --hostfwd | --append | --mem | --timeout | \
                --log | --result | --expect | --expect-log | --reject-log | --qemu-arg)
                [ $# -ge 2 ] || board_usage_error "$1 needs a value"
                ;;
            --) shift; [ $# = 0 ] || board_usage_error "unexpected arguments after --: $*"; break ;;
            -h | --help) board_help; return 0 ;;
            *) board_usage_error "unknown run option '$1'" ;;
        esac
        case $1 in
            --bin) bin=$2 ;;
            --profile) profile=$2 ;;
            --script) script=$2 ;;
            --file) files+=("$2") ;;
            --module) mod_specs+=("$2") ;;
            --no-module) no_mods+=("$2") ;;
            --with-module) with_mods+=("$2") ;;
            --deb) debs+=("$2") ;;
            --exec-init) exec_init=$2 ;;
            --disk) disk=$2 ;;
            --disk-size) disk_size=$2 ;;
            --nic) nics+=("$2") ;;
            --hostfwd) hostfwds+=("$2") ;;
            --append) append=$2 ;;
            --mem) mem=$2 ;;
            --timeout) timeout=$2 ;;
            --log) log=$2 ;;
            --result) result=$2 ;;
            --expect) expect=$2 ;;
            --expect-log) expect_logs+=("$2") ;;
            --reject-log) reject_logs+=("$2") ;;
            --qemu-arg) qemu_extra+=("$2") ;;
        esac
        shift "$need"
    done
    case $timeout in '' | *[!0-9]*) board_usage_error "--timeout SECONDS (integer)" ;; esac
    case $mem in '' | *[!0-9]*) board_usage_error "--mem MB (integer)" ;; esac
    case $expect in '' | poweroff | reset | panic | timeout) ;; *) board_usage_error "--expect poweroff|reset|panic|timeout" ;; esac
    local f
    for f in "$bin" "$profile" "$script"; do
        [ -z "$f" ] || [ -f "$f" ] || board_die "no such file: $f"
    done
    local r
    for r in "${hostfwds[@]}"; do
        case $r in
            tcp:127.0.0.1:*-:* | udp:127.0.0.1:*-:* | tcp:127.0.0.1:*-10.0.2.15:* | udp:127.0.0.1:*-10.0.2.15:*) ;;
            *) board_usage_error "--hostfwd must look like tcp:127.0.0.1:HOSTPORT-:GUESTPORT (got '$r')" ;;
        esac
    done

    board_ensure_ready
    board_mod_index

    mkdir -p "$BOARD_CACHE/tmp"
    local stage
    stage=$(mktemp -d "$BOARD_CACHE/tmp/run.XXXXXX")
    if [ "$keep" = 0 ]; then
        # shellcheck disable=SC2064  # expand now: stage is local
        trap "rm -rf '$stage'" EXIT
    fi
    [ -n "$log" ] || log=$BOARD_CACHE/last.log
    mkdir -p "$(dirname "$log")"

    # --- module load list: name -> params, in order of first mention
    local -a load_names=()
    declare -A load_params=()
    local spec name params n skip
    if [ -n "$disk" ]; then
        mod_specs+=("ata_piix")
        [ "$disk_mount" = 1 ] && mod_specs+=("crc32c_generic" "ext4")
    fi
    for n in "${nics[@]}"; do
        mod_specs+=("$(board_nic_driver "${n%%:*}")")
    done
    for spec in "${mod_specs[@]}"; do
        read -r name params <<<"$spec"
        [ -n "$name" ] || continue
        name=$(board_mod_norm "$name")
        skip=0
        for n in "${no_mods[@]}"; do
            [ "$(board_mod_norm "$n")" = "$name" ] && skip=1
        done
        [ "$skip" = 1 ] && continue
        [ -n "${load_params[$name]+set}" ] || load_names+=("$name")
        load_params[$name]=$params
    done
    board_mod_seen=()
    board_mod_order=()
    for name in "${load_names[@]}"; do
        board_mod_resolve "$name"
    done
    local -a load_order=("${board_mod_order[@]}")
    for name in "${with_mods[@]}"; do
        board_mod_resolve "$name"
    done

    # --- stage the root
    local kv=$BOARD_KVER
    mkdir -p "$stage/root/bin" "$stage/root/dev" "$stage/root/proc" "$stage/root/sys" \
        "$stage/root/etc/board" "$stage/root/board" "$stage/root/lib/modules/$kv" \
        "$stage/root/usr/sbin" "$stage/root/root"
    if [ ${#debs[@]} -gt 0 ]; then
        board_debs_tree "${debs[@]}"
        cp -a "$board_debs_dir/." "$stage/root/"
    fi
    cp "$BOARD_ROOT/bin/busybox" "$stage/root/bin/busybox"
    if [ "$(id -u)" = 0 ]; then
        mknod -m 600 "$stage/root/dev/console" c 5 1
    fi
    board_write_init "$stage/root/init"
    local p
    for p in "${board_mod_order[@]}"; do
        mkdir -p "$stage/root/lib/modules/$kv/$(dirname "$p")"
        cp "$BOARD_MODDIR/$p" "$stage/root/lib/modules/$kv/$p"
    done
    : >"$stage/root/etc/board/modules.load"
    for p in "${load_order[@]}"; do
        printf '%s %s\n' "$p" "${load_params[$(board_mod_norm "$p")]:-}" >>"$stage/root/etc/board/modules.load"
    done
    # Filtered modules.dep / modules.alias so busybox modprobe works in the
    # guest for the included modules (and for kernel request_module).
    if [ ${#board_mod_order[@]} -gt 0 ]; then
        printf '%s\n' "${board_mod_order[@]}" >"$stage/included"
        awk -F: 'NR == FNR { inc[$1] = 1; next } ($1 in inc)' \
            "$stage/included" "$BOARD_MODDIR/modules.dep" >"$stage/root/lib/modules/$kv/modules.dep"
        awk 'NR == FNR { n = $0; sub(/.*\//, "", n); sub(/\.ko$/, "", n); gsub(/-/, "_", n); inc[n] = 1; next }
             ($1 == "alias" && ($3 in inc))' \
            "$stage/included" "$BOARD_MODDIR/modules.alias" >"$stage/root/lib/modules/$kv/modules.alias"
    else
        : >"$stage/root/lib/modules/$kv/modules.dep"
    fi
    [ -z "$bin" ] || install -m 755 "$bin" "$stage/root/usr/sbin/nasboot"
    [ -z "$exec_init" ] || printf '%s\n' "$exec_init" >"$stage/root/etc/board/exec-init"
    [ -z "$profile" ] || install -m 644 "$profile" "$stage/root/etc/nasboot.toml"
    [ -z "$script" ] || install -m 755 "$script" "$stage/root/board/script"
    local src dest
    for f in "${files[@]}"; do
        src=${f%%:*}
        dest=${f#*:}
        case $dest in /*) ;; *) board_usage_error "--file SRC:DEST needs an absolute DEST" ;; esac
        [ -f "$src" ] || board_die "no such file: $src"
        mkdir -p "$stage/root$(dirname "$dest")"
        cp -p "$src" "$stage/root$dest"
    done

    # --- disk
    local -a qemu_disk=()
    if [ -n "$disk" ]; then
        [ -f "$disk" ] || board_disk_new "$disk" "$disk_size"
        : >"$stage/root/etc/board/disk"
        [ "$disk_mount" = 0 ] || : >"$stage/root/etc/board/disk-mount"
        qemu_disk=(-drive "file=$disk,format=raw,if=ide,index=0,media=disk")
    fi

    # --- NICs
    local -a qemu_net=()
    local i=0 model backend dev fwd_done=0 netdev mac h
    if [ ${#nics[@]} = 0 ]; then
        qemu_net=(-nic none)
    fi
    for n in "${nics[@]}"; do
        model=${n%%:*}
        backend=user
        [ "$model" = "$n" ] || backend=${n#*:}
        dev=$(board_nic_device "$model")
        mac=$(printf '52:54:00:12:34:%02x' $((0x56 + i)))
        case $backend in
            user)
                netdev="user,id=net$i,restrict=on,net=10.0.2.0/24"
                if [ "$fwd_done" = 0 ]; then
                    for h in "${hostfwds[@]}"; do netdev+=",hostfwd=$h"; done
                    fwd_done=1
                fi
                qemu_net+=(-netdev "$netdev" -device "$dev,netdev=net$i,mac=$mac,romfile=")
                ;;
            tap:?*)
                qemu_net+=(-netdev "tap,id=net$i,ifname=${backend#tap:},script=no,downscript=no"
                    -device "$dev,netdev=net$i,mac=$mac,romfile=")
                ;;
            none)
                qemu_net+=(-device "$dev,mac=$mac,romfile=")
                ;;
            *) board_usage_error "--nic MODEL[:user|:tap:IFNAME|:none] (got '$n')" ;;
        esac
        i=$((i + 1))
    done
    # NICs without a backend only: no -netdev at all, so QEMU would add
    # malta's default pcnet on top of them.
    case " ${qemu_net[*]} " in *" -netdev "*) ;; *) qemu_net=(-nic none "${qemu_net[@]}") ;; esac
    if [ ${#hostfwds[@]} -gt 0 ] && [ "$fwd_done" = 0 ]; then
        board_usage_error "--hostfwd needs a --nic with the user backend"
    fi

    # --- initramfs
    local initrd=$stage/initrd.gz
    (cd "$stage/root" && find . -print | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
        gzip -1 >"$initrd" || board_die "initramfs build failed"

    local -a qemu=("$BOARD_QEMU" -M malta -m "$mem" -nographic -vga none -no-reboot
        -kernel "$BOARD_ROOT/boot/vmlinuz-$kv" -initrd "$initrd"
        -append "console=ttyS0 rdinit=/init panic=1${append:+ $append}"
        -serial "file:$log" -monitor none
        "${qemu_disk[@]}" "${qemu_net[@]}" "${qemu_extra[@]}")

    : >"$log"
    local tail_pid=''
    if [ "$verbose" = 1 ]; then
        tail -n +1 -F "$log" 2>/dev/null >&2 &
        tail_pid=$!
    fi
    board_say "booting (timeout ${timeout}s, log $log)"
    local t0 t1 qrc=0
    t0=$(date +%s.%N)
    timeout -k 5 "$timeout" "${qemu[@]}" </dev/null >"$stage/qemu.out" 2>&1 || qrc=$?
    t1=$(date +%s.%N)
    if [ -n "$tail_pid" ]; then
        sleep 0.3
        kill "$tail_pid" 2>/dev/null || true
        wait "$tail_pid" 2>/dev/null || true
    fi
    local wall
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')

    # --- classify
    local outcome script_exit=''
    script_exit=$(sed -n 's/^board: script-exit=\([0-9]*\).*/\1/p' "$log" | tail -n1)
    if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
        outcome=timeout
    elif ! grep -q 'Linux version' "$log"; then
        sed 's/^/qemu: /' "$stage/qemu.out" >&2
        board_die "no kernel output in $log (qemu status $qrc)"
    elif [ "$qrc" != 0 ]; then
        sed 's/^/qemu: /' "$stage/qemu.out" >&2
        board_die "qemu exited with status $qrc"
    elif grep -q 'reboot: Power down' "$log"; then
        outcome=poweroff
    elif grep -q 'Kernel panic' "$log"; then
        outcome=panic
    else
        outcome=reset
    fi
    local why=''
    case $outcome in
        reset) why=$(grep -o -m1 -E 'softdog: Initiating system reboot|reboot: Restarting system|watchdog[^\r]*reboot' "$log" || true) ;;
        panic) why=$(grep -m1 'Kernel panic' "$log" | tr -d '\r' || true) ;;
    esac
    board_say "outcome=$outcome${script_exit:+ script_exit=$script_exit} wall=${wall}s${why:+ ($why)}"
    if [ -n "$result" ]; then
        printf 'outcome=%s\nscript_exit=%s\nwall_s=%s\nlog=%s\n' "$outcome" "$script_exit" "$wall" "$log" >"$result"
    fi
    [ "$keep" = 0 ] || board_say "staging kept in $stage"

    local rc
    case $outcome in
        poweroff)
            rc=$BOARD_RC_POWEROFF
            if [ -n "$script_exit" ] && [ "$script_exit" != 0 ]; then rc=$BOARD_RC_SCRIPT_FAILED; fi
            ;;
        reset) rc=$BOARD_RC_RESET ;;
        panic) rc=$BOARD_RC_PANIC ;;
        timeout) rc=$BOARD_RC_TIMEOUT ;;
    esac
    if [ -n "$expect" ]; then
        if [ "$outcome" = "$expect" ] && [ "$rc" != "$BOARD_RC_SCRIPT_FAILED" ]; then
            rc=0
        else
            board_say "expected outcome $expect, got $outcome"
            [ "$rc" != 0 ] || rc=$BOARD_RC_LOG
        fi
    fi
    local re
    for re in "${expect_logs[@]}"; do
        if ! grep -q -E -e "$re" "$log"; then
            board_say "log lacks /$re/"
            [ "$rc" != 0 ] || rc=$BOARD_RC_LOG
        fi
    done
    for re in "${reject_logs[@]}"; do
        if grep -q -E -e "$re" "$log"; then
            board_say "log has unwanted /$re/"
            [ "$rc" != 0 ] || rc=$BOARD_RC_LOG
        fi
    done
    return "$rc"
}

# ---------------------------------------------------------------- smoke ---

board_smoke() {
    local dir=$BOARD_REPO/tests/board
    local out=$BOARD_CACHE/smoke
    local fails=0
    mkdir -p "$out"
    board_ensure_ready
    board_smoke_case() {
        local label=$1
        shift
        if (board_run "$@"); then
            board_say "SMOKE PASS $label"
        else
            board_say "SMOKE FAIL $label (rc $?)"
            fails=$((fails + 1))
        fi
    }
    board_smoke_case "poweroff" --script "$dir/poweroff.sh" --expect poweroff \
        --log "$out/poweroff.log" --timeout 90 --expect-log 'board: script-exit=0'
    board_smoke_case "softdog reset" --module 'softdog soft_margin=5' --script "$dir/softdog-reset.sh" \
        --expect reset --log "$out/reset.log" --timeout 120 \
        --expect-log 'softdog: Initiating system reboot' --reject-log 'board: script-exit='
    board_smoke_case "magic close" --module 'softdog soft_margin=5' --script "$dir/softdog-magic-close.sh" \
        --expect poweroff --log "$out/magic.log" --timeout 120 --reject-log 'Initiating system reboot'
    local img=$out/persist.img
    rm -f "$img"
    board_smoke_case "disk boot 1" --disk "$img" --script "$dir/disk-count.sh" --expect poweroff \
        --log "$out/disk1.log" --timeout 120 --expect-log 'boots=1([^0-9]|$)'
    board_smoke_case "disk boot 2" --disk "$img" --script "$dir/disk-count.sh" --expect poweroff \
        --log "$out/disk2.log" --timeout 120 --expect-log 'boots=2([^0-9]|$)'
    board_smoke_case "disk boot 3, reset" --disk "$img" --module 'softdog soft_margin=5' \
        --file "$dir/disk-count.sh:/board/disk-count.sh" \
        --script "$dir/disk-count-reset.sh" --expect reset --log "$out/disk3.log" --timeout 120 \
        --expect-log 'boots=3([^0-9]|$)' --expect-log 'softdog: Initiating system reboot'
    board_smoke_case "disk boot 4 after reset" --disk "$img" --script "$dir/disk-count.sh" \
        --expect poweroff --log "$out/disk4.log" --timeout 120 --expect-log 'boots=4([^0-9]|$)'
    if [ "$(board_disk_cmd cat "$img" /boots | tr -d '\n')" = 4 ]; then
        board_say "SMOKE PASS disk readable on host (boots=4)"
    else
        board_say "SMOKE FAIL disk readable on host"
        fails=$((fails + 1))
    fi
    local model
    for model in e1000 pcnet; do
        board_smoke_net "$model" "" "$out" || fails=$((fails + 1))
    done
    board_smoke_netns e1000 "$out" || fails=$((fails + 1))
    board_say "smoke: $fails failure(s); logs in $out"
    [ "$fails" = 0 ]
}

board_free_port() {
    local p
    for p in $(seq 18080 18180); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    board_die "no free port"
}

# Boot with a NIC and busybox httpd in the guest (tests/board/net-httpd.sh);
# fetch a page from the host, then ask for /stop so the guest powers off.
# NETNS empty: user backend with hostfwd 127.0.0.1:PORT -> guest :80.
# NETNS set: the caller made a tap device tap0 in that netns (192.168.77.1/24)
# and the harness runs inside it; the guest is 192.168.77.2.
board_smoke_net() {
    local model=$1 netns=$2 out=$3 dir=$BOARD_REPO/tests/board
    local label log rc=0 host port
    local -a pre=() args=()
    if [ -z "$netns" ]; then
        label="$model user+hostfwd"
        log=$out/net-$model-user.log
        host=127.0.0.1
        port=$(board_free_port)
        args=(--nic "$model" --hostfwd "tcp:127.0.0.1:$port-:80")
    else
        label="$model tap in netns"
        log=$out/net-$model-tap.log
        host=192.168.77.2
        port=80
        pre=(ip netns exec "$netns")
        args=(--nic "$model:tap:tap0" --append "board.ip=192.168.77.2/24")
    fi
    : >"$log"
    "${pre[@]}" "$BOARD_REPO/scripts/board" run "${args[@]}" --script "$dir/net-httpd.sh" \
        --expect poweroff --log "$log" --timeout 180 \
        --expect-log "eth0 driver=$(board_nic_driver "$model")" &
    local pid=$! body='' i
    for i in $(seq 1 150); do
        grep -q 'board: httpd up' "$log" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    body=$("${pre[@]}" "$BOARD_REPO/scripts/board" http-get "$host" "$port" /hello.txt) || true
    "${pre[@]}" "$BOARD_REPO/scripts/board" http-get "$host" "$port" /stop >/dev/null 2>&1 || true
    wait "$pid" || rc=$?
    if [ "$rc" = 0 ] && [ "$body" = "hello from board" ]; then
        board_say "SMOKE PASS nic $label (host got '$body' from $host:$port)"
        return 0
    fi
    board_say "SMOKE FAIL nic $label (rc $rc, body '$body', log $log)"
    return 1
}

board_smoke_netns() {
    local model=$1 out=$2 ns=board-smoke-$$ rc=0
    ip netns add "$ns" || board_die "ip netns add failed"
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" ip tuntap add dev tap0 mode tap
    ip netns exec "$ns" ip addr add 192.168.77.1/24 dev tap0
    ip netns exec "$ns" ip link set tap0 up
    board_smoke_net "$model" "$ns" "$out" || rc=1
    ip netns del "$ns" || true
    return "$rc"
}

# http-get HOST PORT PATH: print the body (bash /dev/tcp; no curl needed).
# Retries while the guest's slirp/tap link comes up.
board_http_get() {
    [ $# = 3 ] || board_usage_error "http-get HOST PORT PATH"
    local host=$1 port=$2 path=$3 line try
    for try in $(seq 1 20); do
        if exec 3<>"/dev/tcp/$host/$port"; then
            break
        fi 2>/dev/null
        [ "$try" = 20 ] && return 1
        sleep 1
    done
    printf 'GET %s HTTP/1.0\r\nHost: board\r\n\r\n' "$path" >&3
    local in_body=0 body=''
    while IFS= read -r -t 30 line <&3; do
        line=${line%$'\r'}
        if [ "$in_body" = 1 ]; then
            body+=$line
        elif [ -z "$line" ]; then
            in_body=1
        fi
    done
    exec 3<&-
    printf '%s\n' "$body"
}

# ----------------------------------------------------------------- main ---

board_main() {
    [ $# -gt 0 ] || { board_help; exit "$BOARD_RC_USAGE"; }
    local cmd=$1
    shift
    case $cmd in
        fetch) board_fetch "$@" ;;
        run) board_run "$@" ;;
        modules) board_modules_cmd "$@" ;;
        info) board_info "$@" ;;
        disk) board_disk_cmd "$@" ;;
        debs) board_debs_tree "$@" && printf '%s\n' "$board_debs_dir" ;;
        smoke) board_smoke "$@" ;;
        http-get) board_http_get "$@" ;;
        help | -h | --help) board_help ;;
        *) board_usage_error "unknown command '$cmd'" ;;
    esac
}
