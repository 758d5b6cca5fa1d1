# shellcheck shell=bash
# The big-endian boards' kernel and user space, cross-built from Debian's
# own sources with Debian's cross gcc and cached outside the clone
# (scripts/board --board NAME fetch). Part of scripts/lib/board.sh.
#
# Each product lives in ${NASBOOT_CACHE:-/var/cache/nasboot}/<name>-<hash>,
# where the hash covers its recipe (the pinned Debian version, the config
# fragments, the code of the function that builds it, the cross gcc's
# version): a second run builds nothing, a changed recipe builds anew
# beside the old one. A directory counts only with its .done file, written
# last; a build happens in <dir>.build and is renamed into place.
#
#   kernel-<board>-<hash>/vmlinux  Debian's linux-source-6.1, `make
#                                  allnoconfig KCONFIG_ALLCONFIG=<common +
#                                  board fragment>`, one image, no modules
#   busybox-<arch>-<hash>/busybox  Debian's busybox source, defconfig, static
#   nft-<arch>-<hash>/nft          Debian's libmnl, libnftnl and nftables
#                                  sources, static (mini-gmp, no cli, no json)
#   iptables-<arch>-<hash>/xtables-legacy-multi
#                                  Debian's iptables source, static, legacy
#                                  only (iptables-restore, ip6tables-restore,
#                                  -save: the multi-call binary's names)
#   ethtool-<arch>-<hash>/ethtool  Debian's ethtool source, static, ioctl
#                                  only (SIOCETHTOOL: the NIC suite's
#                                  witness for rings, offloads and pause)
#
# The time each build took is in its directory's .done (seconds=N).

BOARD_BUILD_CACHE=${NASBOOT_CACHE:-/var/cache/nasboot}
BOARD_LINUX_DEB=linux-source-6.1
# NASBOOT_BOARD_BUSYBOX_VERSION pins another (tests/board/be-bad-input.sh
# names one that does not exist, for the failed-step message).
BOARD_BUSYBOX_DEB_VERSION=${NASBOOT_BOARD_BUSYBOX_VERSION:-1:1.35.0-4+deb12u1}
BOARD_LIBMNL_DEB_VERSION=1.0.4-3
BOARD_LIBNFTNL_DEB_VERSION=1.2.4-2
BOARD_NFTABLES_DEB_VERSION=1.0.6-2+deb12u2
BOARD_ETHTOOL_DEB_VERSION=1:6.1-1
BOARD_IPTABLES_DEB_VERSION=1.8.9-2
# make -j: the machines are 2 shared cores.
BOARD_BUILD_JOBS=${NASBOOT_BUILD_JOBS:-2}

# board_build_die STEP MESSAGE: a failed build step, with the board and
# where its log is.
board_build_die() {
    board_die "--board $BOARD_NAME: $1 failed: $2"
}

# board_build_hash ITEM...: 12 hex digits over the recipe; ITEMs are file
# paths (their content) or words (themselves).
board_build_hash() {
    local i
    {
        for i in "$@"; do
            if [ -f "$i" ]; then cat "$i"; else printf '%s\n' "$i"; fi
        done
        "${BOARD_CROSS}gcc" -dumpfullversion 2>/dev/null || echo "no ${BOARD_CROSS}gcc"
    } | sha256sum | cut -c1-12
}

# board_build_apt PKG...: install the Debian packages that are missing.
board_build_apt() {
    local missing
    mapfile -t missing < <(apt_missing "$@")
    [ ${#missing[@]} = 0 ] && return 0
    board_need_root "the --board $BOARD_NAME build"
    [ "${NASBOOT_NO_INSTALL:-0}" = 1 ] && board_die "--board $BOARD_NAME: packages missing: ${missing[*]} (NASBOOT_NO_INSTALL=1)"
    board_say "apt-get install ${missing[*]}"
    apt_install "${missing[@]}" || board_die "--board $BOARD_NAME: apt-get install ${missing[*]} failed"
}

# board_cross_apt PKG...: the cross compiler with its C library (gcc-*
# only recommends libc6-dev-*-cross, which --no-install-recommends leaves
# out: a fresh machine then fails at the first #include), and PKG.
board_cross_apt() {
    local arch=${BOARD_CROSS%-linux-gnu-}
    board_build_apt "gcc-${BOARD_CROSS%-}" "libc6-dev-$arch-cross" "$@"
}

# board_build_source PKG VERSION DIR: `apt-get source PKG=VERSION` into
# DIR (a deb-src entry is added when apt has none: musl_deb_src); prints
# the unpacked tree.
board_build_source() {
    local pkg=$1 ver=$2 dir=$3 src
    musl_deb_src >&2 || board_die "--board $BOARD_NAME: could not add deb-src entries"
    mkdir -p "$dir"
    (cd "$dir" && apt-get source -qq "$pkg=$ver" >&2 2>&1) ||
        board_build_die "apt-get source $pkg=$ver" "see the messages above"
    src=$(find "$dir" -mindepth 1 -maxdepth 1 -type d -name "$pkg-*" | head -n1)
    [ -n "$src" ] || board_build_die "apt-get source $pkg" "no $pkg-* directory in $dir"
    printf '%s\n' "$src"
}

# board_build_step LOG DESC CMD...: run CMD with its output in LOG; on
# failure, the log's tail and a message naming the step and the board.
board_build_step() {
    local log=$1 desc=$2
    shift 2
    if ! "$@" >>"$log" 2>&1; then
        tail -n 25 "$log" | sed 's/^/  | /' >&2
        board_build_die "$desc" "log $log"
    fi
}

# ---------------------------------------------------------------- kernel ---

# The kernel's fragments: the common one, then the board's, then
# NASBOOT_BOARD_KCONFIG if set (a fragment of one's own on top: its lines
# win; the "# need" lines of all of them are checked).
board_kernel_fragments() {
    printf '%s\n' "$BOARD_REPO/board/kernel-common.config" "$BOARD_REPO/board/$BOARD_DIR/kernel.config"
    [ -z "${NASBOOT_BOARD_KCONFIG:-}" ] || printf '%s\n' "$NASBOOT_BOARD_KCONFIG"
}

board_kernel_dir() {
    local -a frags
    mapfile -t frags < <(board_kernel_fragments)
    local ver
    ver=$(dpkg-query -W -f '${Version}' "$BOARD_LINUX_DEB" 2>/dev/null || echo none)
    echo "$BOARD_BUILD_CACHE/kernel-$BOARD_NAME-$(board_build_hash "$ver" "$BOARD_KARCH" "${frags[@]}" \
        "$(declare -f board_kernel_build board_kernel_check)")"
}

# board_kernel_check CONFIG FRAGMENT...: every option a fragment marks
# "# need" must be =y in the resolved CONFIG; names the first missing one.
board_kernel_check() {
    local config=$1 f opt why bad=0
    shift
    for f in "$@"; do
        while IFS='|' read -r opt why; do
            if ! grep -qx "$opt=y" "$config"; then
                board_say "error: --board $BOARD_NAME: the kernel config lacks $opt=y${why:+ (needed for $why)}; allnoconfig dropped it or the fragment does not set it: ${f#"$BOARD_REPO/"}"
                bad=1
            fi
        done < <(awk '/^# need/ { why = $0; sub(/^# need:? */, "", why); need = 1; next }
                      need && /^CONFIG_[A-Z0-9_]+=y/ { sub(/=y.*/, ""); print $0 "|" why; need = 0; next }
                      { need = 0 }' "$f")
    done
    return "$bad"
}

board_kernel_build() {
    local dir=$1 src=$2 out=$1.build log
    local -a frags
    mapfile -t frags < <(board_kernel_fragments)
    rm -rf "$out"
    mkdir -p "$out"
    log=$out/build.log
    cat "${frags[@]}" >"$out/fragment.config"
    local t0=$SECONDS
    board_say "kernel for --board $BOARD_NAME: allnoconfig + ${frags[*]#"$BOARD_REPO/"} (log $log)"
    board_build_step "$log" "kernel config (make allnoconfig)" \
        make -C "$src" O="$out/obj" ARCH="$BOARD_KARCH" CROSS_COMPILE="$BOARD_CROSS" \
        KCONFIG_ALLCONFIG="$out/fragment.config" allnoconfig
    board_kernel_check "$out/obj/.config" "${frags[@]}" ||
        board_die "--board $BOARD_NAME: the kernel lacks what nasboot's suites need (above); nothing built"
    board_say "kernel for --board $BOARD_NAME: make -j$BOARD_BUILD_JOBS vmlinux (4-8 min on 2 cores)"
    board_build_step "$log" "kernel build (make vmlinux)" \
        make -C "$src" O="$out/obj" ARCH="$BOARD_KARCH" CROSS_COMPILE="$BOARD_CROSS" -j"$BOARD_BUILD_JOBS" vmlinux
    cp "$out/obj/vmlinux" "$out/vmlinux"
    "${BOARD_CROSS}strip" "$out/vmlinux"
    cp "$out/obj/.config" "$out/config"
    rm -rf "$out/obj"
    printf 'seconds=%d\n' $((SECONDS - t0)) >"$out/.done"
    rm -rf "$dir"
    mv "$out" "$dir"
    board_say "kernel for --board $BOARD_NAME built in $((SECONDS - t0)) s: $dir/vmlinux"
}

# board_linux_src: Debian's kernel source, unpacked once per package
# version; prints the tree.
board_linux_src() {
    board_build_apt "$BOARD_LINUX_DEB" bc bison flex make xz-utils
    local ver tree
    ver=$(dpkg-query -W -f '${Version}' "$BOARD_LINUX_DEB")
    tree=$BOARD_BUILD_CACHE/linux-source-$ver
    if [ ! -f "$tree/.done" ]; then
        board_say "unpacking /usr/src/$BOARD_LINUX_DEB.tar.xz into $tree"
        rm -rf "$tree" "$tree.new"
        mkdir -p "$tree.new"
        tar -C "$tree.new" --strip-components=1 -xJf "/usr/src/$BOARD_LINUX_DEB.tar.xz" ||
            board_build_die "unpacking the kernel source" "/usr/src/$BOARD_LINUX_DEB.tar.xz"
        : >"$tree.new/.done"
        mv "$tree.new" "$tree"
    fi
    printf '%s\n' "$tree"
}

board_kernel_ensure() {
    local dir
    board_build_apt "$BOARD_LINUX_DEB"
    dir=$(board_kernel_dir)
    if [ ! -f "$dir/.done" ]; then
        board_build_apt "gcc-${BOARD_CROSS%-}" bc bison flex
        board_kernel_build "$dir" "$(board_linux_src)"
    fi
    # shellcheck disable=SC2034 # read by run.sh
    BOARD_KERNEL=$dir/vmlinux
}

# --------------------------------------------------------------- busybox ---

board_busybox_dir() {
    echo "$BOARD_BUILD_CACHE/busybox-$BOARD_ARCH-$(board_build_hash "$BOARD_BUSYBOX_DEB_VERSION" "$(declare -f board_busybox_build)")"
}

board_busybox_build() {
    local dir=$1 out=$1.build src log
    rm -rf "$out"
    mkdir -p "$out"
    log=$out/build.log
    local t0=$SECONDS
    board_say "busybox $BOARD_BUSYBOX_DEB_VERSION for $BOARD_ARCH, static (log $log)"
    src=$(board_build_source busybox "$BOARD_BUSYBOX_DEB_VERSION" "$out/src")
    board_build_step "$log" "busybox config (make defconfig)" make -C "$src" defconfig
    # Static; tc wants kernel headers' CBQ, not needed on the boards.
    sed -i -e 's/^# CONFIG_STATIC is not set/CONFIG_STATIC=y/' -e 's/^CONFIG_TC=y/# CONFIG_TC is not set/' "$src/.config"
    # shellcheck disable=SC2016 # $1 is the inner shell's
    board_build_step "$log" "busybox config (make oldconfig)" bash -c 'yes "" | make -C "$1" oldconfig' _ "$src"
    board_build_step "$log" "busybox build" make -C "$src" -j"$BOARD_BUILD_JOBS" CROSS_COMPILE="$BOARD_CROSS" busybox
    cp "$src/busybox" "$out/busybox"
    "${BOARD_CROSS}strip" "$out/busybox"
    rm -rf "$out/src"
    printf 'seconds=%d\n' $((SECONDS - t0)) >"$out/.done"
    rm -rf "$dir"
    mv "$out" "$dir"
    board_say "busybox built in $((SECONDS - t0)) s: $dir/busybox"
}

board_busybox_ensure() {
    local dir
    dir=$(board_busybox_dir)
    if [ ! -f "$dir/.done" ]; then
        board_cross_apt dpkg-dev make
        board_busybox_build "$dir"
    fi
    # shellcheck disable=SC2034 # read by run.sh
    BOARD_BUSYBOX=$dir/busybox
}

# ------------------------------------------------------------------- nft ---

board_nft_dir() {
    echo "$BOARD_BUILD_CACHE/nft-$BOARD_ARCH-$(board_build_hash "$BOARD_LIBMNL_DEB_VERSION" \
        "$BOARD_LIBNFTNL_DEB_VERSION" "$BOARD_NFTABLES_DEB_VERSION" "$(declare -f board_nft_build board_nft_autotools)")"
}

# board_nft_autotools LOG NAME SRC PREFIX CONFIGURE-ARGS...: configure,
# make, make install, static, for the board's triple.
board_nft_autotools() {
    local log=$1 name=$2 src=$3 prefix=$4
    shift 4
    (
        cd "$src" || exit 1
        export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig PKG_CONFIG_PATH=''
        ./configure --host="${BOARD_CROSS%-}" --prefix="$prefix" --enable-static --disable-shared \
            CC="${BOARD_CROSS}gcc" CFLAGS="-Os -pipe" "$@"
    ) >>"$log" 2>&1 || { tail -n 25 "$log" | sed 's/^/  | /' >&2; board_build_die "$name configure" "log $log"; }
    board_build_step "$log" "$name build" make -C "$src" -j"$BOARD_BUILD_JOBS"
    board_build_step "$log" "$name install" make -C "$src" install
}

board_nft_build() {
    local dir=$1 out=$1.build log prefix src
    rm -rf "$out"
    mkdir -p "$out"
    log=$out/build.log
    prefix=$out/prefix
    local t0=$SECONDS
    # `|| exit 1` after each source: in auto mode this runs in a subshell
    # under `!`, where set -e does not stop it at a failed fetch.
    board_say "nft (libmnl $BOARD_LIBMNL_DEB_VERSION, libnftnl $BOARD_LIBNFTNL_DEB_VERSION, nftables $BOARD_NFTABLES_DEB_VERSION) for $BOARD_ARCH, static (log $log)"
    src=$(board_build_source libmnl "$BOARD_LIBMNL_DEB_VERSION" "$out/src") || exit 1
    board_nft_autotools "$log" libmnl "$src" "$prefix"
    src=$(board_build_source libnftnl "$BOARD_LIBNFTNL_DEB_VERSION" "$out/src") || exit 1
    board_nft_autotools "$log" libnftnl "$src" "$prefix"
    src=$(board_build_source nftables "$BOARD_NFTABLES_DEB_VERSION" "$out/src") || exit 1
    board_nft_autotools "$log" nftables "$src" "$prefix" --with-mini-gmp --without-cli --without-json \
        --without-xtables --disable-man-doc --disable-python LDFLAGS=-static
    # libtool links the program against the static library, but only
    # -all-static makes the binary itself static.
    rm -f "$src/src/nft"
    board_build_step "$log" "nft static link" make -C "$src/src" nft LDFLAGS=-all-static
    cp "$src/src/nft" "$out/nft"
    "${BOARD_CROSS}strip" "$out/nft"
    if "${BOARD_CROSS}readelf" -l "$out/nft" | grep -q 'INTERP'; then
        board_build_die "nft static link" "$out/nft is not static"
    fi
    rm -rf "$out/src" "$prefix"
    printf 'seconds=%d\n' $((SECONDS - t0)) >"$out/.done"
    rm -rf "$dir"
    mv "$out" "$dir"
    board_say "nft built in $((SECONDS - t0)) s: $dir/nft"
}

# nft is not needed on a board: nasboot loads nf_tables itself, through
# netlink. NASBOOT_BOARD_NFT=no (the default) builds none; =auto builds it
# when its sources can be had (for fw4's rows in bench-forward) and
# records a failed build in <dir>.failed, going on without nft; =yes makes
# the failure fatal and tries again.
board_nft_ensure() {
    local dir mode=${NASBOOT_BOARD_NFT:-no}
    # shellcheck disable=SC2034 # read by run.sh
    BOARD_NFT=''
    case $mode in
        no) return 0 ;;
        auto | yes) ;;
        *) board_die "NASBOOT_BOARD_NFT must be auto, yes or no (got '$mode')" ;;
    esac
    dir=$(board_nft_dir)
    if [ ! -f "$dir/.done" ]; then
        if [ "$mode" = auto ] && [ -f "$dir.failed" ]; then
            board_say "--board $BOARD_NAME: no nft: $(cat "$dir.failed") (NASBOOT_BOARD_NFT=yes tries again)"
            return 0
        fi
        board_cross_apt dpkg-dev make pkg-config bison flex
        if [ "$mode" = yes ]; then
            board_nft_build "$dir"
        elif ! (board_nft_build "$dir"); then
            echo "its build failed on $(date -u +%F) (log $dir.build/build.log)" >"$dir.failed"
            board_say "--board $BOARD_NAME: no nft: the build failed (above); going on with iptables-restore only"
            return 0
        fi
    fi
    # shellcheck disable=SC2034 # read by run.sh
    BOARD_NFT=$dir/nft
}

# ------------------------------------------------------------- iptables ---

board_iptables_dir() {
    echo "$BOARD_BUILD_CACHE/iptables-$BOARD_ARCH-$(board_build_hash "$BOARD_IPTABLES_DEB_VERSION" "$(declare -f board_iptables_build board_nft_autotools)")"
}

board_iptables_build() {
    local dir=$1 out=$1.build log src
    rm -rf "$out"
    mkdir -p "$out"
    log=$out/build.log
    local t0=$SECONDS
    board_say "iptables $BOARD_IPTABLES_DEB_VERSION for $BOARD_ARCH, static, legacy (log $log)"
    src=$(board_build_source iptables "$BOARD_IPTABLES_DEB_VERSION" "$out/src")
    board_nft_autotools "$log" iptables "$src" "$out/prefix" --disable-nftables --disable-bpf-compiler \
        --disable-nfsynproxy --disable-libipq --disable-connlabel --disable-devel
    # The extensions are built in (--disable-shared); -all-static makes the
    # program itself static.
    rm -f "$src/iptables/xtables-legacy-multi"
    board_build_step "$log" "iptables static link" make -C "$src/iptables" xtables-legacy-multi LDFLAGS=-all-static
    cp "$src/iptables/xtables-legacy-multi" "$out/xtables-legacy-multi"
    "${BOARD_CROSS}strip" "$out/xtables-legacy-multi"
    if "${BOARD_CROSS}readelf" -l "$out/xtables-legacy-multi" | grep -q 'INTERP'; then
        board_build_die "iptables static link" "$out/xtables-legacy-multi is not static"
    fi
    rm -rf "$out/src" "$out/prefix"
    printf 'seconds=%d\n' $((SECONDS - t0)) >"$out/.done"
    rm -rf "$dir"
    mv "$out" "$dir"
    board_say "iptables built in $((SECONDS - t0)) s: $dir/xtables-legacy-multi"
}

board_iptables_ensure() {
    local dir
    dir=$(board_iptables_dir)
    if [ ! -f "$dir/.done" ]; then
        board_cross_apt dpkg-dev make pkg-config
        board_iptables_build "$dir"
    fi
    # shellcheck disable=SC2034 # read by run.sh
    BOARD_IPTABLES=$dir/xtables-legacy-multi
}

# --------------------------------------------------------------- ethtool ---

board_ethtool_dir() {
    echo "$BOARD_BUILD_CACHE/ethtool-$BOARD_ARCH-$(board_build_hash "$BOARD_ETHTOOL_DEB_VERSION" "$(declare -f board_ethtool_build)")"
}

board_ethtool_build() {
    local dir=$1 out=$1.build log src
    rm -rf "$out"
    mkdir -p "$out"
    log=$out/build.log
    local t0=$SECONDS
    board_say "ethtool $BOARD_ETHTOOL_DEB_VERSION for $BOARD_ARCH, static, ioctl only (log $log)"
    src=$(board_build_source ethtool "$BOARD_ETHTOOL_DEB_VERSION" "$out/src")
    (
        cd "$src" || exit 1
        ./configure --host="${BOARD_CROSS%-}" --disable-netlink --disable-pretty-dump \
            CC="${BOARD_CROSS}gcc" CFLAGS="-Os -pipe" LDFLAGS=-static
    ) >>"$log" 2>&1 || { tail -n 25 "$log" | sed 's/^/  | /' >&2; board_build_die "ethtool configure" "log $log"; }
    board_build_step "$log" "ethtool build" make -C "$src" -j"$BOARD_BUILD_JOBS" ethtool
    cp "$src/ethtool" "$out/ethtool"
    "${BOARD_CROSS}strip" "$out/ethtool"
    rm -rf "$out/src"
    printf 'seconds=%d\n' $((SECONDS - t0)) >"$out/.done"
    rm -rf "$dir"
    mv "$out" "$dir"
    board_say "ethtool built in $((SECONDS - t0)) s: $dir/ethtool"
}

board_ethtool_ensure() {
    local dir
    dir=$(board_ethtool_dir)
    if [ ! -f "$dir/.done" ]; then
        board_cross_apt dpkg-dev make
        board_ethtool_build "$dir"
    fi
    # shellcheck disable=SC2034 # read by run.sh
    BOARD_ETHTOOL=$dir/ethtool
}
