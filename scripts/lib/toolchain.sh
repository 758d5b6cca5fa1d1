# shellcheck shell=bash
# Toolchain helpers for nasboot: install the cross toolchains and run cargo
# for any board target with the right flags.  Sourced by scripts/build,
# scripts/test and friends; defines functions and constants only (sourcing
# it runs nothing and changes no shell options).
#
# Public interface:
#   toolchain_install [TARGET...]   install what building/testing TARGETs
#                                   needs (default: all targets); idempotent,
#                                   fast when everything is there
#   toolchain_cargo TARGET SUBCMD [ARGS...]
#                                   run `cargo SUBCMD --target TARGET ARGS...`
#                                   with -Z build-std (+ RUSTC_BOOTSTRAP=1 on
#                                   the pinned stable) when TARGET needs it,
#                                   and +crt-static for the host target
#   toolchain_test TARGET [ARGS...] `cargo test` for TARGET under qemu-user
#                                   (the runners are in .cargo/config.toml)
#   toolchain_resolve NAME          alias (host, ppc, mips, ...) -> triple
#   toolchain_runner TARGET         qemu-user binary for TARGET ("" for host)
#   toolchain_needs_build_std TARGET  true when std is built from rust-src
#   toolchain_bin_dir TARGET [PROFILE]  where cargo puts TARGET's binaries
#   toolchain_target_dir TARGET     the CARGO_TARGET_DIR used for TARGET's
#                                   tests (build-std targets: test-std under
#                                   toolchain_std_base, outside the clone)
#   toolchain_build_dir             the release builds' (build-std there)
#   TOOLCHAIN_TARGETS               the default target list (array)
#
# Pinned toolchain: the machine's stable Rust, checked to be
# $TOOLCHAIN_RUST_VERSION.  Tier-3 targets (mips, mipsel, sparc) build std
# from the rust-src component with `-Z build-std=std,panic_abort`, allowed on
# stable by RUSTC_BOOTSTRAP=1 (set only for those cargo invocations).  No
# nightly is used.
#
# Environment knobs:
#   NASBOOT_RUST_ANY=1        accept a rustc other than the pinned version
#   NASBOOT_BUILD_STD=always  build std from source for every cross target
#                             (default "auto": only where no prebuilt std)
#   NASBOOT_NO_INSTALL=1      toolchain_install only checks, installs nothing
#
# musl targets (powerpc, mips, mipsel; musl has no SPARC port): static
# musl built from Debian's source package by scripts/lib/musl.sh and cached
# outside the clone; rustc links it with the glibc targets' cross gcc as
# driver, told (toolchain_musl_rustflags) to take musl's start files and
# libraries instead of glibc's.

TOOLCHAIN_RUST_VERSION=${TOOLCHAIN_RUST_VERSION:-1.95.0}
TOOLCHAIN_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOOLCHAIN_HOST=x86_64-unknown-linux-gnu
TOOLCHAIN_TARGETS=(
    x86_64-unknown-linux-gnu
    powerpc-unknown-linux-gnu
    powerpc-unknown-linux-musl
    mips-unknown-linux-gnu
    mips-unknown-linux-musl
    mipsel-unknown-linux-gnu
    mipsel-unknown-linux-musl
    sparc-unknown-linux-gnu
    sparc64-unknown-linux-gnu
)
# Flags for the host's test builds (`cargo test` through toolchain_cargo):
# static and non-PIE like the release binaries.  Passed through the env var
# only, never .cargo/config.toml: see the comment there.  Release builds of
# every target, the host's included, use toolchain_board_rustflags.
TOOLCHAIN_HOST_RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static"
TOOLCHAIN_BUILD_STD="-Zbuild-std=std,panic_abort"
# Release binaries (cargo build, every target, the host too) build std from rust-src
# with these std features instead of the defaults: no "backtrace" (the DWARF
# symbolizer, useless with panic=abort and a stripped binary) and
# "optimize_for_size". Measured on mips: 2.37 MB -> 2.11 MB. Tests keep the
# default std.
TOOLCHAIN_BUILD_STD_FEATURES="-Zbuild-std-features=optimize_for_size"
# Extra rustflags for release binaries (cargo build, every target), on
# top of the per-target ones in .cargo/config.toml (cargo joins the arrays);
# they apply to std too, which is built from source with them.  Measured on
# mipsel, each against the build without it (docs/bench/size.md; each commit says by how much):
#   -Cpanic=immediate-abort    a panic traps at once, without the panic
#                              machinery or any message (needs the std built
#                              here; unstable, hence -Zunstable-options)
#   -Cforce-unwind-tables=no   no .eh_frame for Rust code: nothing unwinds
#                              with panic=abort
#   -Crelocation-model=static  no PIC code (GOT loads) in what is a non-PIE
#                              static executable anyway
#   -Zlocation-detail=none     no file, line and column of each panic site
#                              in .rodata: with immediate-abort nothing
#                              prints them (nasboot calls no
#                              Location::caller); mips musl -3,056 B
# Tests keep the defaults (panics must print their message there).
# toolchain_board_rustflags adds per-target link flags.
TOOLCHAIN_BOARD_RUSTFLAGS=(-Zunstable-options -Cpanic=immediate-abort
    -Cforce-unwind-tables=no -Crelocation-model=static -Zlocation-detail=none)

# toolchain_board_rustflags TARGET: TOOLCHAIN_BOARD_RUSTFLAGS plus the
# target's own, as a TOML array for `cargo --config target.T.rustflags=`.
# SPARC: GNU ld lays sparc64 out for 1 MiB pages (sparc 64 KiB) and aligns
# the end of RELRO to that, which pads the file with up to that many zero
# bytes (about 570 KiB on sparc64).  Linux on SPARC always uses 8 KiB pages
# (both targets need a V9 CPU, hence a sparc64 kernel), so lay them out for
# 8 KiB pages.
# MIPS and powerpc: the same padding for 64 KiB pages (up to 64 KiB of
# zeros; 61 KiB on mipsel).  The boards' kernels use 4 KiB pages: ath79 and
# malta (MIPS 24K/4Kc; 16 and 64 KiB pages are for 64-bit Loongson and
# Octeon kernels) and mpc83xx (e300: 32-bit book3s has 4 KiB pages only).
toolchain_board_rustflags() {
    local flags=("${TOOLCHAIN_BOARD_RUSTFLAGS[@]}") f
    case "$1" in
        "$TOOLCHAIN_HOST")
            # The boards get +crt-static from .cargo/config.toml.
            flags+=("-Ctarget-feature=+crt-static")
            ;;
        sparc-unknown-linux-gnu | sparc64-unknown-linux-gnu)
            flags+=("-Clink-arg=-Wl,-z,max-page-size=8192")
            ;;
        mips-unknown-linux-* | mipsel-unknown-linux-* | powerpc-unknown-linux-*)
            flags+=("-Clink-arg=-Wl,-z,max-page-size=4096")
            ;;
    esac
    # musl release binaries for MIPS: Rust's -lunwind finds an empty
    # archive (toolchain_no_unwinder) before the musl prefix's libgcc_eh
    # one.  Nothing unwinds with -Cpanic=immediate-abort, and without it
    # gcc's unwinder (frame registration, FDE search) stays out: mips
    # 722,908 -> 714,632 B.  Not powerpc, where std's personality routine
    # still calls _Unwind_GetTextRelBase.  Tests keep the real unwinder.
    case "$1" in
        mips*-unknown-linux-musl) flags+=("-Clink-arg=-L$(toolchain_build_dir)/no-unwinder") ;;
    esac
    # musl release binaries: no PT_GNU_RELRO.  GNU ld aligns the end of the
    # RELRO region (a few words of .got here) to a page, so the data
    # segment's file offset jumps to the next page boundary and the file
    # grows by whole pages: up to 4 KiB of zeros.  musl applies RELRO only
    # in its dynamic linker (ldso/dynlink.c, which static-pie also goes
    # through); a static non-PIE program starts in __libc_start_main, which
    # never mprotects it (musl 1.2.3, src/env/__libc_start_main.c), so the
    # header protects nothing in these binaries.  glibc's static start does
    # apply it: the gnu builds keep it.
    if toolchain_is_musl "$1"; then flags+=("-Clink-arg=-Wl,-z,norelro"); fi
    while IFS= read -r f; do [ -z "$f" ] || flags+=("$f"); done <<<"$(toolchain_musl_rustflags "$1")"
    toolchain_toml_array "${flags[@]}"
}

# shellcheck source=scripts/lib/apt.sh
. "$TOOLCHAIN_REPO/scripts/lib/apt.sh"
# shellcheck source=scripts/lib/musl.sh
. "$TOOLCHAIN_REPO/scripts/lib/musl.sh"

toolchain_is_musl() { case "$1" in *-linux-musl) return 0 ;; *) return 1 ;; esac; }

# toolchain_musl_rustflags TARGET: rustflags (one a line) that link TARGET
# against the cached musl (musl_prefix): no rustc-provided start files
# (link-self-contained=no, there are none for a tier-3 target), gcc's -B
# finds musl's crt1.o/crti.o/crtn.o before glibc's, -L its libc.a and the
# libunwind.a beside it (powerpc: and libgcc).  Nothing for other targets.
toolchain_musl_rustflags() {
    toolchain_is_musl "$1" || return 0
    local prefix
    prefix=$(musl_prefix "$1") || return
    printf '%s\n' -Clink-self-contained=no "-Clink-arg=-B$prefix/lib/" "-Clink-arg=-L$prefix/lib"
    # libgcc_eh's frame registration (called by gcc's crtbeginT.o) locks
    # through weak references to pthread_mutex_lock/unlock, which a static
    # link leaves null unless something else pulled them in, while it
    # takes threads as active once std has linked pthread_key_create: the
    # unit tests crashed at start-up.  Link the two.
    echo -Clink-arg=-Wl,-u,pthread_mutex_lock,-u,pthread_mutex_unlock
    # gcc -Os on powerpc saves and restores registers through libgcc's
    # _savegpr_*/_restgpr_* (musl's libc.a calls them); rustc links with
    # -nodefaultlibs, so name libgcc.
    case "$1" in powerpc-*) echo -Clink-arg=-lgcc ;; esac
}

# toolchain_no_unwinder: the empty libunwind.a of musl release builds (see
# toolchain_board_rustflags), in the build directory.
toolchain_no_unwinder() {
    local d
    d=$(toolchain_build_dir)/no-unwinder
    [ -f "$d/libunwind.a" ] && return 0
    mkdir -p "$d" && ar rcs "$d/libunwind.a"
}

# toolchain_toml_array WORD...: the words as a TOML array of strings.
toolchain_toml_array() {
    local f out=""
    for f in "$@"; do out+="${out:+, }\"$f\""; done
    echo "[$out]"
}

toolchain_say() { printf 'toolchain: %s\n' "$*" >&2; }
toolchain_die() { printf 'toolchain: error: %s\n' "$*" >&2; return 1; }

# toolchain_resolve NAME: print the triple for a target name or alias.
toolchain_resolve() {
    case "$1" in
        host | x86_64 | x86_64-unknown-linux-gnu) echo x86_64-unknown-linux-gnu ;;
        ppc | powerpc | powerpc-unknown-linux-gnu) echo powerpc-unknown-linux-gnu ;;
        mips | mips-unknown-linux-gnu) echo mips-unknown-linux-gnu ;;
        mipsel | mipsel-unknown-linux-gnu) echo mipsel-unknown-linux-gnu ;;
        sparc | sparc-unknown-linux-gnu) echo sparc-unknown-linux-gnu ;;
        sparc64 | sparc64-unknown-linux-gnu) echo sparc64-unknown-linux-gnu ;;
        ppc-musl | powerpc-musl | powerpc-unknown-linux-musl) echo powerpc-unknown-linux-musl ;;
        mips-musl | mips-unknown-linux-musl) echo mips-unknown-linux-musl ;;
        mipsel-musl | mipsel-unknown-linux-musl) echo mipsel-unknown-linux-musl ;;
        *)
            toolchain_die "unknown target '$1' (known: host powerpc mips mipsel sparc sparc64 powerpc-musl mips-musl mipsel-musl or their triples)"
            ;;
    esac
}

# toolchain_tier3 TARGET: true for targets without any prebuilt std.
toolchain_tier3() {
    case "$1" in
        mips-unknown-linux-gnu | mipsel-unknown-linux-gnu | sparc-unknown-linux-gnu) return 0 ;;
        *-unknown-linux-musl) return 0 ;;
        *) return 1 ;;
    esac
}

toolchain_runner() {
    case "$1" in
        powerpc-unknown-linux-*) echo qemu-ppc ;;
        mips-unknown-linux-*) echo qemu-mips ;;
        mipsel-unknown-linux-*) echo qemu-mipsel ;;
        sparc-unknown-linux-gnu) echo qemu-sparc32plus ;;
        sparc64-unknown-linux-gnu) echo qemu-sparc64 ;;
        *) echo "" ;;
    esac
}

# toolchain_linker TARGET: the cross gcc used as linker (matches config.toml).
toolchain_linker() {
    case "$1" in
        powerpc-unknown-linux-*) echo powerpc-linux-gnu-gcc ;;
        mips-unknown-linux-*) echo mips-linux-gnu-gcc ;;
        mipsel-unknown-linux-*) echo mipsel-linux-gnu-gcc ;;
        sparc-unknown-linux-gnu | sparc64-unknown-linux-gnu) echo sparc64-linux-gnu-gcc ;;
        *) echo gcc ;;
    esac
}

# toolchain_apt_packages TARGET: Debian packages TARGET needs.  The libc6-dev
# cross packages are only Recommends of the gcc ones, hence listed here.
toolchain_apt_packages() {
    case "$1" in
        powerpc-unknown-linux-gnu) echo gcc-powerpc-linux-gnu libc6-dev-powerpc-cross qemu-user ;;
        mips-unknown-linux-gnu) echo gcc-mips-linux-gnu libc6-dev-mips-cross qemu-user ;;
        mipsel-unknown-linux-gnu) echo gcc-mipsel-linux-gnu libc6-dev-mipsel-cross qemu-user ;;
        sparc-unknown-linux-gnu)
            echo gcc-sparc64-linux-gnu libc6-dev-sparc-sparc64-cross lib32gcc-12-dev-sparc64-cross qemu-user
            ;;
        sparc64-unknown-linux-gnu) echo gcc-sparc64-linux-gnu libc6-dev-sparc64-cross qemu-user ;;
        # musl: the cross gcc compiles musl and drives the link; apt-get
        # source needs dpkg-dev; musl's build needs make.
        *-unknown-linux-musl)
            local g
            g=$(toolchain_linker "$1")
            echo "gcc-${g%-gcc} dpkg-dev make qemu-user"
            ;;
        *) echo gcc libc6-dev ;;
    esac
}

toolchain_sysroot() { rustc --print sysroot; }

# toolchain_has_std TARGET: a prebuilt std for TARGET is installed.
toolchain_has_std() {
    local libdir
    libdir="$(toolchain_sysroot)/lib/rustlib/$1/lib"
    compgen -G "$libdir/libstd-*.rlib" >/dev/null
}

toolchain_has_rust_src() {
    [ -f "$(toolchain_sysroot)/lib/rustlib/src/rust/library/Cargo.lock" ]
}

# toolchain_needs_build_std TARGET
toolchain_needs_build_std() {
    [ "$1" = "$TOOLCHAIN_HOST" ] && return 1
    toolchain_tier3 "$1" && return 0
    [ "${NASBOOT_BUILD_STD:-auto}" = always ] && return 0
    ! toolchain_has_std "$1"
}

# toolchain_std_base: where the build-std target directories live. std
# built from rust-src, and the dependencies from crates.io, depend on
# rustc, the flags and Cargo.lock, not on the tree: they live outside
# the clone, in ${NASBOOT_CACHE:-/var/cache/nasboot}/cargo-<hash of
# rustc -vV>, one directory for every clone, so that any new clone (CI's
# on a machine that ran it before, wherever it clones) compiles nasboot
# and links, nothing more. Cargo names nasboot's own artifacts the same
# from any path and takes them as up to date when the sources are older
# than they are (a clone's test binary was run by another clone so):
# toolchain_cargo holds each target's directory for one clone at a time
# and makes cargo build nasboot again when the last clone there was
# another (toolchain_claim). CARGO_TARGET_DIR set,
# NASBOOT_CARGO_CACHE=none, or a cache that cannot be written: target/ in
# the clone, as before.
# The directories of an older scheme, one per clone path, each with its
# clone's path in .clone: one whose clone is this one or gone (nothing
# uses it) is taken over, renamed (what it has built stays); the others
# are removed once their clone is gone.
toolchain_std_base() {
    local cache=${NASBOOT_CACHE:-/var/cache/nasboot} dir old
    if [ -z "${CARGO_TARGET_DIR:-}" ] && [ "${NASBOOT_CARGO_CACHE:-auto}" != none ] &&
        mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; then
        dir=$cache/cargo-$(rustc -vV | sha256sum | cut -c1-12)
        if [ ! -d "$dir" ]; then
            for old in "$cache"/cargo-[0-9a-f]*/.clone; do
                case $(cat "$old" 2>/dev/null) in "$TOOLCHAIN_REPO") ;; *) [ ! -d "$(cat "$old" 2>/dev/null)" ] || continue ;; esac
                mv -T "${old%/.clone}" "$dir" 2>/dev/null && rm -f "$dir/.clone" && break
            done
        fi
        for old in "$cache"/cargo-[0-9a-f]*/.clone; do
            [ -f "$old" ] && [ ! -d "$(cat "$old")" ] && rm -rf "${old%/.clone}"
        done
        mkdir -p "$dir" && echo "$dir"
    else
        echo "${CARGO_TARGET_DIR:-$TOOLCHAIN_REPO/target}"
    fi
}

# toolchain_claim DIR CMD...: CMD holding the cargo target directory DIR
# (one target's, shared by every clone: toolchain_std_base) for this
# clone. When the clone that used it last (DIR/.nasboot-clone) was
# another, nasboot's own fingerprints there are removed first, so that
# cargo compiles nasboot from this clone's sources, whatever their
# times; std and the dependencies stay built. The lock is held until CMD
# ends: cargo holds the directory for as long (a test run's whole), so
# two clones wait for each other either way. A DIR inside the clone is
# the clone's alone: CMD at once.
toolchain_claim() {
    local dir=$1
    shift
    case $dir/ in "$TOOLCHAIN_REPO"/*)
        "$@"
        return
        ;;
    esac
    mkdir -p "$dir" || return
    (
        flock 8 || exit
        if [ "$(cat "$dir/.nasboot-clone" 2>/dev/null)" != "$TOOLCHAIN_REPO" ]; then
            rm -rf "$dir"/*/.fingerprint/nasboot-* &&
                echo "$TOOLCHAIN_REPO" >"$dir/.nasboot-clone" || exit
        fi
        "$@"
    ) 8>"$dir/.nasboot-clone.lock"
}

# toolchain_target_dir TARGET: the CARGO_TARGET_DIR toolchain_cargo uses
# for tests. build-std targets get their own (test-std under
# toolchain_std_base): their cargo runs with RUSTC_BOOTSTRAP=1, which
# proc-macro2's build script watches, so sharing the host artifacts
# (proc-macros, build scripts) with the other targets would rebuild
# proc-macro2/syn/serde_derive/serde every time the two kinds of builds
# alternate. Not the release builds' (build-std, toolchain_build_dir):
# scripts/test runs the two side by side, and cargo holds a target
# directory's lock for a whole test run.
toolchain_target_dir() {
    if toolchain_needs_build_std "$1"; then
        echo "$(toolchain_std_base)/test-std"
    else
        echo "${CARGO_TARGET_DIR:-$TOOLCHAIN_REPO/target}"
    fi
}

# toolchain_build_dir: the CARGO_TARGET_DIR of release builds
# (`toolchain_cargo TARGET build`): every target, the host included, builds
# std from source there with RUSTC_BOOTSTRAP=1 (see toolchain_target_dir).
toolchain_build_dir() {
    echo "$(toolchain_std_base)/build-std"
}

# toolchain_bin_dir TARGET [PROFILE]: where release builds put TARGET's
# binaries.
toolchain_bin_dir() {
    echo "$(toolchain_build_dir)/$1/${2:-release}"
}

toolchain_check_rust() {
    command -v rustc >/dev/null && command -v cargo >/dev/null \
        || toolchain_die "rustc/cargo not found (install Rust $TOOLCHAIN_RUST_VERSION with rustup)" || return
    local have
    have=$(rustc --version | awk '{print $2}')
    if [ "$have" != "$TOOLCHAIN_RUST_VERSION" ]; then
        if [ "${NASBOOT_RUST_ANY:-0}" = 1 ]; then
            toolchain_say "warning: rustc $have, pinned $TOOLCHAIN_RUST_VERSION (NASBOOT_RUST_ANY=1)"
        else
            toolchain_die "rustc is $have, the project pins $TOOLCHAIN_RUST_VERSION (set NASBOOT_RUST_ANY=1 to go on anyway)" || return
        fi
    fi
}

# toolchain_apt_install PKG...: install the packages not installed yet.
# Runs `apt-get update` at most once per shell (before installing if the
# package lists are empty, or to retry a failed install), and waits for a
# dpkg lock held by another apt instead of failing.
TOOLCHAIN_APT_UPDATED=0
toolchain_apt_update() {
    [ "$TOOLCHAIN_APT_UPDATED" = 1 ] && return 0
    toolchain_say "apt-get update"
    # Retried for 5 minutes (scripts/lib/apt.sh); a failure after that
    # goes on with the lists there are.
    apt_update || toolchain_say "apt-get update failed; going on with the package lists there are"
    TOOLCHAIN_APT_UPDATED=1
}
toolchain_apt_install() {
    local missing
    mapfile -t missing < <(apt_missing "$@")
    [ "${#missing[@]}" = 0 ] && return 0
    if [ "${NASBOOT_NO_INSTALL:-0}" = 1 ]; then
        toolchain_die "missing packages (NASBOOT_NO_INSTALL=1): ${missing[*]}"
        return
    fi
    [ "$(id -u)" = 0 ] || toolchain_die "need root to apt-get install: ${missing[*]}" || return
    toolchain_say "apt-get install ${missing[*]}"
    apt_install "${missing[@]}" || toolchain_die "apt-get install failed: ${missing[*]}"
}

# toolchain_locked CMD...: CMD holding the toolchain's lock (lock_run in
# scripts/lib/lock.sh, through apt.sh): scripts/test builds and runs the
# qemu-user tests side by side; two rustups at once fail (each renames
# the other's download away), and two musl builds of one target would
# write the same prefix.
toolchain_locked() { lock_run toolchain "$@"; }

# toolchain_rustup ARGS...: rustup under the toolchain's lock, tried once
# more after a failure (a rustup outside this lock, in another clone,
# may have raced it).
toolchain_rustup() {
    toolchain_locked rustup "$@" && return 0
    sleep 2
    toolchain_locked rustup "$@"
}

# toolchain_install [TARGET...]: everything building and testing the targets
# needs: `file` (binary checks), Debian cross gcc + static glibc, qemu-user,
# rust-src (release builds of every target, and tests of the tier-3 ones,
# build std from it), prebuilt std for tier-2 targets where rustup can
# fetch it (their tests use it).
toolchain_install() {
    toolchain_locked toolchain_install_locked "$@"
}
toolchain_install_locked() {
    local targets=("$@") t pkgs=(file)
    [ "${#targets[@]}" = 0 ] && targets=("${TOOLCHAIN_TARGETS[@]}")
    for t in "${targets[@]}"; do
        t=$(toolchain_resolve "$t") || return
        # shellcheck disable=SC2207 # word lists from toolchain_apt_packages
        pkgs+=($(toolchain_apt_packages "$t"))
    done
    toolchain_apt_install "${pkgs[@]}" || return
    toolchain_check_rust || return
    for t in "${targets[@]}"; do
        t=$(toolchain_resolve "$t")
        [ "$t" = "$TOOLCHAIN_HOST" ] && continue
        if ! toolchain_tier3 "$t" && ! toolchain_has_std "$t"; then
            if [ "${NASBOOT_NO_INSTALL:-0}" != 1 ]; then
                toolchain_say "rustup target add $t"
                toolchain_rustup target add "$t" >/dev/null 2>&1 \
                    || toolchain_say "no prebuilt std for $t available here: std will be built from rust-src"
            fi
        fi
    done
    if ! toolchain_has_rust_src; then
        [ "${NASBOOT_NO_INSTALL:-0}" = 1 ] && { toolchain_die "rust-src component missing"; return; }
        toolchain_say "rustup component add rust-src"
        toolchain_rustup component add rust-src >&2 || toolchain_die "rustup component add rust-src failed" || return
    fi
    for t in "${targets[@]}"; do
        t=$(toolchain_resolve "$t")
        if toolchain_is_musl "$t"; then musl_ensure "$t" >/dev/null || return; fi
    done
    for t in "${targets[@]}"; do
        t=$(toolchain_resolve "$t")
        local tool
        for tool in "$(toolchain_linker "$t")" "$(toolchain_runner "$t")"; do
            [ -z "$tool" ] || command -v "$tool" >/dev/null \
                || toolchain_die "$tool not found after install (target $t)" || return
        done
    done
}

# toolchain_cargo TARGET SUBCMD [ARGS...]: cargo for one target.  The
# --target goes right after SUBCMD, so ARGS may contain `-- test-args`.
# Runs in the repository root.  Does not install anything: call
# toolchain_install first.
toolchain_cargo() {
    [ "$#" -ge 2 ] || toolchain_die "usage: toolchain_cargo TARGET SUBCMD [ARGS...]" || return
    local t f sub=$2
    t=$(toolchain_resolve "$1") || return
    shift 2
    local pre=() env=() own=$TOOLCHAIN_REPO/target
    if [ "$sub" = build ]; then
        case "$t" in mips*-unknown-linux-musl) toolchain_no_unwinder || return ;; esac
        pre+=("$TOOLCHAIN_BUILD_STD" "$TOOLCHAIN_BUILD_STD_FEATURES"
            --config "target.$t.rustflags = $(toolchain_board_rustflags "$t")")
        env+=(RUSTC_BOOTSTRAP=1 "CARGO_TARGET_DIR=$(toolchain_build_dir)")
        own=$(toolchain_build_dir)/$t
    elif [ "$t" = "$TOOLCHAIN_HOST" ]; then
        env+=("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS=${CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS:-$TOOLCHAIN_HOST_RUSTFLAGS}")
    elif toolchain_needs_build_std "$t"; then
        pre+=("$TOOLCHAIN_BUILD_STD")
        if toolchain_is_musl "$t"; then
            local mf=()
            while IFS= read -r f; do mf+=("$f"); done <<<"$(toolchain_musl_rustflags "$t")"
            pre+=(--config "target.$t.rustflags = $(toolchain_toml_array "${mf[@]}")")
        fi
        env+=(RUSTC_BOOTSTRAP=1 "CARGO_TARGET_DIR=$(toolchain_target_dir "$t")")
        own=$(toolchain_target_dir "$t")/$t
    fi
    (cd "$TOOLCHAIN_REPO" && toolchain_claim "$own" env "${env[@]}" cargo "${pre[@]}" "$sub" --target "$t" "$@")
}

# toolchain_test TARGET [ARGS...]: the crate's tests for TARGET, run under
# the qemu-user runner from .cargo/config.toml (natively for the host).
# ARGS are cargo test arguments, e.g. `--lib` or `-- --test-threads=1`.
toolchain_test() {
    local t
    t=$(toolchain_resolve "$1") || return
    shift
    toolchain_cargo "$t" test "$@"
}
