#!/usr/bin/env bash
# The Debian package (scripts/package-deb), installed for real with
# Debian's dpkg on the emulated MIPS 24K board (scripts/board: QEMU malta,
# Debian's 4kc-malta kernel, the real softdog) with Debian's mipsel user
# space (scripts/board run --deb): dpkg, dash as /bin/sh,
# init-system-helpers' update-rc.d and invoke-rc.d (on perl-base),
# sysv-rc's /lib/init/rc (what /etc/init.d/rcS runs at boot), coreutils,
# sysvinit-utils' init-functions, nftables. One boot; the guest side is
# tests/pkg/board-guest-dpkg.sh.
#
# Three packages of the mipsel binary: 0.1.0-1 and 0.1.0-2 as
# scripts/package-deb builds them (the same default profile), and 0.1.0-3,
# 0.1.0-2 rebuilt with another default profile (dpkg-deb -R, edited,
# dpkg-deb -b), for the conffile prompt dpkg answers with --force-confold.
# The board's dpkg database (/var/lib/dpkg/status) lists the Debian
# packages unpacked into the guest, as on an installed system.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/pkg/board-lib.sh
. "$here/board-lib.sh"

# Debian's mipsel packages: dpkg's closure of lib* packages misses zlib1g
# (dpkg-deb links libz), so it is named; libc-bin is dpkg's ldconfig, tar
# what it unpacks with.
debs=(dash dpkg zlib1g libc-bin tar init-system-helpers perl-base sysvinit-utils sysv-rc debianutils coreutils nftables)
pkgb_setup board-dpkg
"$PKGB_BOARD" debs "${debs[@]}" >/dev/null

# The packages.
upstream=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$T_TOP/Cargo.toml" | head -n1)
for rev in 1 2; do
	"$T_TOP/scripts/package-deb" --version "$upstream-$rev" --out "$work" mipsel >/dev/null
done
v1=$upstream-1
v2=$upstream-2
v3=$upstream-3
t_check "package-deb: $v1 and $v2 for mipsel" test -s "$work/nasboot_${v1}_mipsel.deb" -a -s "$work/nasboot_${v2}_mipsel.deb"
t_eq "package-deb: the version comes from Cargo.toml" "$v1" "$(dpkg-deb -f "$work/nasboot_${v1}_mipsel.deb" Version)"
rm -rf "$work/re"
dpkg-deb -R "$work/nasboot_${v2}_mipsel.deb" "$work/re"
sed -i "s/^Version: .*/Version: $v3/" "$work/re/DEBIAN/control"
sed -i 's/^timeout = 60$/timeout = 90/' "$work/re/etc/nasboot.toml"
t_has "the $v3 package's default profile differs" "timeout = 90" "$(cat "$work/re/etc/nasboot.toml")"
dpkg-deb --root-owner-group -Zxz --build "$work/re" "$work/nasboot_${v3}_mipsel.deb" >/dev/null

# The board's dpkg database: the Debian packages in the guest, installed,
# with their file lists.
# scripts/board downloads them to BOARD_DEBS, which its library (functions
# and constants only) defines.
# shellcheck source=scripts/lib/board.sh
. "$T_TOP/scripts/lib/board.sh"
cache=$BOARD_DEBS
mkdir -p "$work/info"
: >"$work/status"
lists=()
for p in "${debs[@]}"; do
	deb=$(compgen -G "$cache/${p}_*_mipsel.deb" || compgen -G "$cache/${p}_*_all.deb" || true)
	deb=${deb%%$'\n'*}
	if [ -z "$deb" ]; then
		t_fail "no cached .deb for $p in $cache"
		continue
	fi
	{
		dpkg-deb -f "$deb" | sed '/^Package: /a Status: install ok installed'
		echo
	} >>"$work/status"
	name=$p
	[ "$(dpkg-deb -f "$deb" Multi-Arch)" != same ] || name=$p:mipsel
	dpkg-deb -c "$deb" | awk '{print $6}' | sed -e 's|^\./|/|' -e 's|^/$|/.|' -e 's|\(.\)/$|\1|' >"$work/info/$p.list"
	lists+=(--file "$work/info/$p.list:/var/lib/dpkg/info/$name.list")
done

# nft loads what the rule sets use (the board has only the modules named);
# veth for the WAN host.
args=(--file "$work/status:/var/lib/dpkg/status" "${lists[@]}" --with-module nft_ct
	--with-module nft_limit --with-module nft_log --with-module nf_log_syslog --with-module veth)
for v in "$v1" "$v2" "$v3"; do
	args+=(--file "$work/nasboot_${v}_mipsel.deb:/root/nasboot_${v}_mipsel.deb")
done
for d in "${debs[@]}"; do args+=(--deb "$d"); done
printf 'V1=%s\nV2=%s\nV3=%s\n' "$v1" "$v2" "$v3" >"$work/versions"
args+=(--file "$work/versions:/root/versions")
pkgb_run "$here/board-guest-dpkg.sh" 480 "${args[@]}"
log=$(tr -d '\r' <"$pkgb_log" | grep -v '^pkgtest: ')
case $log in
*"Initiating system reboot"*) t_fail "serial console: softdog fired" ;;
*) t_ok "serial console: softdog never fired" ;;
esac
pkgb_keep
t_done
