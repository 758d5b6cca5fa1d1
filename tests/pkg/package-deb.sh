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
t_has "the default profile: the WAN lets in TCP only as replies (no SYN, to the local port range)" "tcp dport 32768-60999 tcp flags & (syn | ack) != syn accept" "$rules"
t_has "the default profile: the LAN gets SSH only" "elements = { 22 }" "$rules"

# Negative control: the same package without its copyright file.
rm -rf "$work/x"
dpkg-deb -R "$work/nasboot_${version}_amd64.deb" "$work/x"
rm "$work/x/usr/share/doc/nasboot/copyright"
dpkg-deb --root-owner-group --build "$work/x" "$work/broken.deb" >/dev/null
t_has "negative control: lintian reports an error without the copyright file" "E: nasboot: no-copyright-file" "$(lintian "$work/broken.deb" 2>&1 || true)"

# postinst's first start, in a network namespace (its own /sys/class/net):
# the packaged profile names eth0 and eth1, and a first install on a machine
# without them must not start (its firewall would drop the interfaces it
# does not name). The postinst is run with its two paths moved into $work,
# and update-rc.d, invoke-rc.d and deb-systemd-helper replaced by stubs that
# log their argv: what this checks is which calls postinst makes, not what
# those tools do.
pi=$work/postinst
mkdir -p "$pi/bin"
for c in update-rc.d invoke-rc.d deb-systemd-helper; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$c" "$pi" >"$pi/bin/$c"
	chmod +x "$pi/bin/$c"
done
cp "$T_TOP/board/init/debian/nasboot.toml" "$pi/nasboot.toml"
printf '#!/bin/sh\n' >"$pi/initd"
chmod +x "$pi/initd"
sed -e "s|/etc/nasboot.toml|$pi/nasboot.toml|g" -e "s|/etc/init.d/nasboot|$pi/initd|g" "$T_TOP/board/init/debian/postinst" >"$pi/postinst"
fails() { ! "$@" >/dev/null 2>&1; }
ip netns del nbpkgpi 2>/dev/null || true
ip netns add nbpkgpi
postinst() {
	rm -f "$pi/calls"
	ip netns exec nbpkgpi env PATH="$pi/bin:$PATH" sh "$pi/postinst" configure "$@" 2>"$pi/err"
	cat "$pi/calls"
}
calls=$(postinst "")
t_has "postinst on a machine without eth0/eth1: registered" "update-rc.d nasboot defaults" "$calls"
t_check "postinst on a machine without eth0/eth1: not started" fails grep -q "invoke-rc.d" <<<"$calls"
t_has "postinst on a machine without eth0/eth1: says why" "names eth0 eth1 which this machine does not have" "$(cat "$pi/err")"
t_has "postinst upgrading there: restarts what ran" "invoke-rc.d --skip-systemd-native nasboot restart" "$(postinst 0.0.9-1)"
ip -n nbpkgpi link add eth0 type veth peer name eth1
t_has "postinst with eth0 and eth1: starts" "invoke-rc.d --skip-systemd-native nasboot start" "$(postinst "")"
ip netns del nbpkgpi
t_done
