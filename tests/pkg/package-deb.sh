#!/usr/bin/env bash
# scripts/package-deb: the five Debian packages (powerpc mips mipsel sparc64
# amd64) from scripts/build's static binaries. For each: the files, the
# conffiles, the control fields, the maintainer scripts, the binary's
# architecture, and Debian's lintian: no error, and no warning but those
# board/init/debian/README.md lists (a new one fails here). Negative
# control: lintian does report an error on a package without its
# copyright file. tests/pkg/board-dpkg.sh installs the mipsel one for real.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"

t_need lintian file
work=$(mktemp -d /tmp/nasboot-package-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
upstream=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$T_TOP/Cargo.toml" | head -n1)
version=$upstream-1
# The warnings kept, with their reasons in board/init/debian/README.md.
kept="W: nasboot: initial-upload-closes-no-bugs [usr/share/doc/nasboot/changelog.Debian.gz:1]"

if ! "$T_TOP/scripts/package-deb" --out "$work" >"$work/built" 2>"$work/build.err"; then
	t_fail "scripts/package-deb failed: $(tail -n 5 "$work/build.err")"
	t_done
fi
t_eq "five packages built" 5 "$(wc -l <"$work/built")"

# The ELF machine `file` names for each architecture.
machine_for() {
	case $1 in
	powerpc) echo "32-bit MSB executable, PowerPC" ;;
	mips) echo "32-bit MSB executable, MIPS" ;;
	mipsel) echo "32-bit LSB executable, MIPS" ;;
	sparc64) echo "64-bit MSB executable, SPARC V9" ;;
	amd64) echo "64-bit LSB" ;;
	esac
}

want_files="./etc/default/nasboot
./etc/init.d/nasboot
./etc/nasboot.toml
./lib/systemd/system/nasboot-fallback.service
./lib/systemd/system/nasboot.service
./lib/udev/rules.d/60-nasboot.rules
./usr/sbin/nasboot
./usr/share/doc/nasboot/changelog.Debian.gz
./usr/share/doc/nasboot/copyright
./usr/share/doc/nasboot/reference.toml
./usr/share/lintian/overrides/nasboot
./usr/share/man/man8/nasboot.8.gz"

for arch in powerpc mips mipsel sparc64 amd64; do
	deb=$work/nasboot_${version}_$arch.deb
	if [ ! -s "$deb" ]; then
		t_fail "$arch: no $deb"
		continue
	fi
	t_eq "$arch: Package" nasboot "$(dpkg-deb -f "$deb" Package)"
	t_eq "$arch: Version from Cargo.toml" "$version" "$(dpkg-deb -f "$deb" Version)"
	t_eq "$arch: Architecture" "$arch" "$(dpkg-deb -f "$deb" Architecture)"
	t_eq "$arch: Pre-Depends (invoke-rc.d --skip-systemd-native)" "init-system-helpers (>= 1.54~)" "$(dpkg-deb -f "$deb" Pre-Depends)"
	t_eq "$arch: no Depends (static)" "" "$(dpkg-deb -f "$deb" Depends)"
	t_eq "$arch: the files" "$want_files" "$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sort)"
	t_has "$arch: files are root's" "root/root" "$(dpkg-deb -c "$deb" | awk '{print $2}' | sort -u)"
	rm -rf "$work/x"
	mkdir -p "$work/x"
	dpkg-deb -R "$deb" "$work/x"
	t_eq "$arch: conffiles" "/etc/default/nasboot /etc/init.d/nasboot /etc/nasboot.toml" "$(tr '\n' ' ' <"$work/x/DEBIAN/conffiles" | sed 's/ $//')"
	for s in postinst prerm postrm; do
		t_check "$arch: $s is executable" test -x "$work/x/DEBIAN/$s"
	done
	t_has "$arch: postinst registers the init script" "update-rc.d nasboot defaults" "$(cat "$work/x/DEBIAN/postinst")"
	t_has "$arch: postinst enables the systemd unit" "deb-systemd-helper enable 'nasboot.service'" "$(cat "$work/x/DEBIAN/postinst")"
	t_has "$arch: the binary is for $arch" "$(machine_for "$arch")" "$(file -b "$work/x/usr/sbin/nasboot")"
	t_has "$arch: the binary is static" "statically linked" "$(file -b "$work/x/usr/sbin/nasboot")"
	t_eq "$arch: the default profile is the package's" "$(cat "$T_TOP/board/init/debian/nasboot.toml")" "$(cat "$work/x/etc/nasboot.toml")"
	t_has "$arch: the changelog names the version" "nasboot ($version)" "$(zcat "$work/x/usr/share/doc/nasboot/changelog.Debian.gz" | head -n1)"
	t_eq "$arch: copyright is DEP-5" "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" "$(head -n1 "$work/x/usr/share/doc/nasboot/copyright")"
	lintian --tag-display-limit 0 "$deb" >"$work/lintian" 2>&1 || true
	errors=$(grep '^E: ' "$work/lintian" || true)
	t_eq "$arch: lintian: no errors" "" "$errors"
	warnings=$(grep '^W: ' "$work/lintian" | sort || true)
	t_eq "$arch: lintian: only the warnings kept" "$kept" "$warnings"
done

# The default profile is valid, and closed.
read -ra NB <<<"$(nasboot_for host)"
t_check "the default profile passes nasboot check" "${NB[@]}" -c "$T_TOP/board/init/debian/nasboot.toml" check
rules=$(unshare -n "${NB[@]}" -c "$T_TOP/board/init/debian/nasboot.toml" firewall render 2>&1)
t_has "the default profile: input chain, policy drop" "type filter hook input priority 0; policy drop;" "$rules"
t_has "the default profile: the WAN chain drops new TCP connections" "tcp flags & (syn | ack) == syn drop" "$rules"
t_has "the default profile: the LAN gets SSH only" "elements = { 22 }" "$rules"

# Negative control: the same package without its copyright file.
rm -rf "$work/x"
dpkg-deb -R "$work/nasboot_${version}_amd64.deb" "$work/x"
rm "$work/x/usr/share/doc/nasboot/copyright"
dpkg-deb --root-owner-group --build "$work/x" "$work/broken.deb" >/dev/null
t_has "negative control: lintian reports an error without the copyright file" "E: nasboot: no-copyright-file" "$(lintian "$work/broken.deb" 2>&1 || true)"
t_done
