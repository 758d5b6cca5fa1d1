# shellcheck shell=bash
# musl for the *-unknown-linux-musl board targets, built from Debian's own
# `musl` source package with Debian's cross gcc, and cached outside the
# clone.  Sourced by scripts/lib/toolchain.sh; defines functions only.
#
#   musl_prefix TRIPLE   print the cache directory for TRIPLE's musl
#                        (the recipe's hash in its name); nothing built
#   musl_ensure TRIPLE   build musl for TRIPLE unless that directory is
#                        complete already, then print it
#
# The prefix holds musl's lib/ (crt1.o, crti.o, crtn.o, libc.a, ...) plus
# lib/libunwind.a for Rust's `-lunwind` (its unwind crate asks for it on
# musl): gcc's libgcc_eh.a with a stub of glibc's _dl_find_object, which
# gcc 12's unwinder calls and musl has not (the stub reports "not found",
# so the unwinder falls back to dl_iterate_phdr, which musl has).
#
# Cache: ${NASBOOT_CACHE:-/var/cache/nasboot}/musl-<arch>-<hash>, where the
# hash covers the recipe (package version, flags, the code of musl_ensure)
# and the cross gcc's version, so a second run builds nothing and a changed recipe builds
# anew beside the old one.  Nothing of it enters the clone.
#
# Rust's mips and mipsel musl targets are soft-float (target features
# "+mips32r2,+soft-float", as OpenWrt's ath79 images are), so musl is built
# -msoft-float for both; powerpc's is hard-float, like the e300 core, with
# the 64-bit long double musl's powerpc port requires (nothing in Rust uses
# long double).
# musl has no SPARC port: the SPARC builds stay on glibc.

MUSL_DEB_VERSION=1.2.3-1
MUSL_CACHE=${NASBOOT_CACHE:-/var/cache/nasboot}

# musl_arch TRIPLE: "<gcc triple> <musl CFLAGS>" for a musl target.
musl_arch() {
    case "$1" in
        mips-unknown-linux-musl) echo "mips-linux-gnu -msoft-float" ;;
        mipsel-unknown-linux-musl) echo "mipsel-linux-gnu -msoft-float" ;;
        # musl needs a 64-bit long double (Debian's gcc defaults to IBM's 128-bit)
        powerpc-unknown-linux-musl) echo "powerpc-linux-gnu -mlong-double-64" ;;
        *) return 1 ;;
    esac
}

musl_say() { printf 'musl: %s\n' "$*" >&2; }

musl_prefix() {
    local spec gcc hash
    spec=$(musl_arch "$1") || { musl_say "error: no musl recipe for $1"; return 1; }
    gcc=${spec%% *}-gcc
    hash=$( {
        echo "$MUSL_DEB_VERSION $spec"
        declare -f musl_ensure musl_deb_src
        "$gcc" -dumpfullversion 2>/dev/null || echo "no $gcc"
    } | sha256sum | cut -c1-12)
    echo "$MUSL_CACHE/musl-${1%%-*}-$hash"
}

# musl_deb_src: give apt a deb-src entry for each deb source it has (the
# same URIs and suites), in a file of its own, when it has none.
musl_deb_src() {
    local f=/etc/apt/sources.list.d/nasboot-deb-src.sources d
    for d in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$d" ] || continue
        grep -Eq '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' "$d" && return 0
    done
    musl_say "adding deb-src entries ($f)"
    {
        echo "# Written by nasboot's scripts/lib/musl.sh: source packages (apt-get source musl)."
        for d in /etc/apt/sources.list.d/*.sources; do
            [ -f "$d" ] || continue
            awk '/^Types:/ { print "Types: deb-src"; next } { print }' "$d"
            echo
        done
        for d in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -f "$d" ] || continue
            awk '$1 == "deb" { sub(/^deb/, "deb-src"); print }' "$d" | while read -r _ uri suite comps; do
                printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n\n' "$uri" "$suite" "$comps"
            done
        done
    } >"$f.tmp"
    mv "$f.tmp" "$f"
    # The new source lists read (scripts/lib/toolchain.sh's update).
    # shellcheck disable=SC2034 # read by toolchain_apt_update
    TOOLCHAIN_APT_UPDATED=0
    toolchain_apt_update
}

musl_ensure() {
    local t=$1 prefix spec host cflags work src gcc
    prefix=$(musl_prefix "$t") || return
    if [ -f "$prefix/.done" ]; then
        echo "$prefix"
        return 0
    fi
    [ "${NASBOOT_NO_INSTALL:-0}" = 1 ] && { musl_say "error: $prefix missing (NASBOOT_NO_INSTALL=1)"; return 1; }
    spec=$(musl_arch "$t")
    host=${spec%% *}
    cflags=${spec#"$host"}
    gcc=$host-gcc
    musl_deb_src || return
    work=$(mktemp -d "$MUSL_CACHE/build.XXXXXX") || { mkdir -p "$MUSL_CACHE" && work=$(mktemp -d "$MUSL_CACHE/build.XXXXXX"); } || return
    musl_say "building musl $MUSL_DEB_VERSION for $t in $prefix"
    (
        set -e
        cd "$work"
        apt-get source -qq "musl=$MUSL_DEB_VERSION" >&2
        src=$(find . -maxdepth 1 -type d -name 'musl-*' | head -n1)
        cd "$src"
        # shellcheck disable=SC2086 # cflags is a word list
        ./configure --target="$host" --prefix="$prefix" --disable-shared \
            CC="$gcc" CFLAGS="-Os -pipe $cflags" >&2
        make -s -j"$(nproc)" >&2
        rm -rf "$prefix"
        make -s install >&2
        # The unwinder archive for Rust's -lunwind (see the top of this file).
        printf '%s\n' 'struct dl_find_object;' \
            'int _dl_find_object(void *pc, struct dl_find_object *r) { (void)pc; (void)r; return -1; }' \
            >"$work/dl_find_object.c"
        # shellcheck disable=SC2086
        "$gcc" $cflags -Os -c -o "$work/dl_find_object.o" "$work/dl_find_object.c"
        cp "$("$gcc" -print-file-name=libgcc_eh.a)" "$prefix/lib/libunwind.a"
        chmod u+w "$prefix/lib/libunwind.a"
        "$host-ar" rs "$prefix/lib/libunwind.a" "$work/dl_find_object.o" 2>/dev/null
        echo "musl $MUSL_DEB_VERSION $spec" >"$prefix/.done"
    ) || { rm -rf "$work"; musl_say "error: musl build for $t failed"; return 1; }
    rm -rf "$work"
    echo "$prefix"
}
