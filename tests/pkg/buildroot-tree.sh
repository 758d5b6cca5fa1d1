#!/usr/bin/env bash
# Literal make and shell text is matched in single quotes on purpose.
# shellcheck disable=SC2016
# The Buildroot tree (buildroot/) and the per-board defconfigs, checked
# against OUR OWN structural rules: this re-implements nothing of Buildroot
# and is not Buildroot's utils/check-package (which needs a Buildroot copy;
# run scripts/check-buildroot BUILDROOT_DIR for that). The rules follow the
# Buildroot manual's conventions for external trees, packages and SysV
# scripts, plus this project's own (version in step with Cargo.toml, one
# binary route per board, MIPS boards on the prebuilt binary, profiles
# that `nasboot check` accepts).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
STAGE_TOP=$T_TOP
# shellcheck source=scripts/lib/stage.sh
. "$T_TOP/scripts/lib/stage.sh"

br=$T_TOP/buildroot
pkg=$br/package/nasboot
mk=$pkg/nasboot.mk
cfg=$pkg/Config.in

# external.desc, external.mk, Config.in
t_check "external.desc: name is NASBOOT ([A-Za-z0-9_])" grep -qx 'name: NASBOOT' "$br/external.desc"
t_check "external.desc: has a desc" grep -q '^desc: .' "$br/external.desc"
t_check "external.mk includes every package's .mk" \
	grep -qxF 'include $(sort $(wildcard $(BR2_EXTERNAL_NASBOOT_PATH)/package/*/*.mk))' "$br/external.mk"
for d in "$br"/package/*/; do
	p=${d%/}
	p=${p##*/}
	t_check "Config.in sources package/$p/Config.in" \
		grep -qxF "source \"\$BR2_EXTERNAL_NASBOOT_PATH/package/$p/Config.in\"" "$br/Config.in"
done

# Whitespace, for every file of the tree and the defconfigs.
bad=""
while read -r f; do
	[ -f "$f" ] || continue
	grep -qn '[[:space:]]$' "$f" && bad="$bad ${f#"$T_TOP"/}:trailing-space"
	[ -z "$(tail -c1 "$f")" ] || bad="$bad ${f#"$T_TOP"/}:no-final-newline"
	awk 'prev == "" && $0 == "" && NR > 1 { found = 1 } { prev = $0 } END { exit !found }' "$f" &&
		bad="$bad ${f#"$T_TOP"/}:consecutive-empty-lines"
done < <(find "$br" "$T_TOP"/board/*/buildroot_defconfig -type f)
t_eq "no trailing space, a final newline, no double empty lines" "" "$bad"

# nasboot.mk
t_eq "nasboot.mk: the 80-column header naming the package" \
	"$(printf '%080d\n' 0 | tr 0 '#')|#|# nasboot|#|$(printf '%080d\n' 0 | tr 0 '#')" \
	"$(head -n5 "$mk" | tr '\n' '|' | sed 's/|$//')"
t_eq "nasboot.mk: top-level variables are all NASBOOT_*" "" \
	"$(grep -E '^[A-Za-z_][A-Za-z0-9_]* *(\+|\?|:)?= ' "$mk" | grep -v '^NASBOOT_' || true)"
t_eq "nasboot.mk: recipes in define blocks are tab-indented" "" \
	"$(awk '/^define /{d=1; next} /^endef/{d=0; next} d && $0 !~ /^\t/ && $0 != "" { print NR": "$0 }' "$mk")"
t_eq "nasboot.mk: \$() not \${} for make variables" "" "$(grep -n '\${' "$mk" || true)"
t_check "nasboot.mk: local source, the tree above buildroot/" grep -qx 'NASBOOT_SITE = $(BR2_EXTERNAL_NASBOOT_PATH)/..' "$mk"
t_check "nasboot.mk: site method local" grep -qx 'NASBOOT_SITE_METHOD = local' "$mk"
t_check "nasboot.mk: cargo-package for the source route" grep -qx '$(eval $(cargo-package))' "$mk"
t_check "nasboot.mk: generic-package for the prebuilt route" grep -qx '$(eval $(generic-package))' "$mk"
t_check "nasboot.mk: installs the SysV script" grep -q 'S35nasboot $(TARGET_DIR)/etc/init.d/S35nasboot\|/etc/init.d/S35nasboot$' "$mk"
t_check "nasboot.mk: installs the udev rule where udev is" grep -q 'board/init/udev/60-nasboot.rules' "$mk"
t_check "nasboot.mk: ... and the file it installs exists" test -f "$T_TOP/board/init/udev/60-nasboot.rules"
mkver=$(sed -n 's/^NASBOOT_VERSION = //p' "$mk")
cargover=$(sed -n '/^\[package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$T_TOP/Cargo.toml")
t_eq "nasboot.mk: NASBOOT_VERSION is Cargo.toml's version" "$cargover" "$mkver"

# Config.in
t_eq "Config.in: every symbol is BR2_PACKAGE_NASBOOT*" "" \
	"$(sed -n 's/^config //p' "$cfg" | grep -v '^BR2_PACKAGE_NASBOOT' || true)"
t_eq "Config.in: help text is <tab><2 spaces>, at most 62 characters" "" \
	"$(awk '/^\thelp$/{h=1; next} /^[^\t]/{h=0} h && $0 != "" && (substr($0, 1, 3) != "\t  " || length($0) > 65) { print NR": "$0 }' "$cfg")"
t_eq "Config.in: attributes indented with one tab" "" \
	"$(grep -nE '^ +(bool|string|depends|select|default|help|prompt)' "$cfg" || true)"
t_check "Config.in: the source route needs Buildroot's Rust" \
	grep -qPzo 'config BR2_PACKAGE_NASBOOT_FROM_SOURCE\n[^\n]*\n\tdepends on BR2_PACKAGE_HOST_RUSTC_TARGET_ARCH_SUPPORTS\n\tselect BR2_PACKAGE_HOST_RUSTC\n' "$cfg"
for arch in BR2_mips BR2_mipsel BR2_powerpc BR2_sparc BR2_sparc64; do
	t_check "Config.in: the prebuilt route covers $arch" grep -qP "^\tdefault \"[a-z0-9_]+-unknown-linux-(gnu|musl)\" if $arch\$" "$cfg"
done

# S35nasboot, in the manner of Buildroot's SysV scripts.
s=$pkg/S35nasboot
t_check "S35nasboot: DAEMON without a path" grep -qx 'DAEMON="nasboot"' "$s"
t_check "S35nasboot: PIDFILE=/var/run/\$DAEMON.pid" grep -qx 'PIDFILE="/var/run/$DAEMON.pid"' "$s"
t_check "S35nasboot: reads /etc/default/\$DAEMON" grep -qF '[ -r "/etc/default/$DAEMON" ] && . "/etc/default/$DAEMON"' "$s"
t_eq "S35nasboot: indented with tabs" "" "$(grep -nE '^	* ' "$s" || true)"
t_eq "S35nasboot: not executable in git (installed with 0755)" 100644 \
	"$(git -C "$T_TOP" ls-files -s buildroot/package/nasboot/S35nasboot | cut -d' ' -f1)"
t_eq "S35nasboot: sorts before S40network" "S35nasboot" "$(printf 'S40network\nS35nasboot\n' | LC_ALL=C sort | head -n1)"

# Board defconfigs.
has_triple() { stage_triple "$1" >/dev/null; }
read -ra nb <<<"$(nasboot_for host)"
for b in $(stage_boards); do
	d=$T_TOP/board/$b/buildroot_defconfig
	link=$br/configs/${b}_defconfig
	t_eq "$b: configs/${b}_defconfig points at board/$b/buildroot_defconfig" \
		"$(readlink -f "$d")" "$(readlink -f "$link" 2>/dev/null || echo missing)"
	t_check "$b: enables nasboot" grep -qx 'BR2_PACKAGE_NASBOOT=y' "$d"
	t_check "$b: BR2_DOWNLOAD_FORCE_CHECK_HASHES=y" grep -qx 'BR2_DOWNLOAD_FORCE_CHECK_HASHES=y' "$d"
	routes=$(grep -cxE 'BR2_PACKAGE_NASBOOT_(FROM_SOURCE|PREBUILT)=y' "$d" || true)
	t_eq "$b: exactly one binary route" 1 "$routes"
	t_check "$b: its architecture has a triple" has_triple "$b"
	if grep -qxE 'BR2_mipsel?=y' "$d"; then
		t_check "$b: MIPS: the prebuilt binary (Buildroot's Rust has no MIPS)" grep -qx 'BR2_PACKAGE_NASBOOT_PREBUILT=y' "$d"
	fi
	if grep -qx 'BR2_PACKAGE_NASBOOT_FROM_SOURCE=y' "$d"; then
		t_check "$b: from source: glibc (Buildroot's Rust needs it on powerpc and sparc64)" \
			grep -qx 'BR2_TOOLCHAIN_BUILDROOT_GLIBC=y' "$d"
	fi
	profile=$(stage_option "$b" BR2_PACKAGE_NASBOOT_PROFILE)
	t_check "$b: names a profile" test -n "$profile"
	t_check "$b: the profile $profile exists" test -f "$T_TOP/$profile"
	if [ -x "${nb[-1]}" ]; then
		t_check "$b: nasboot check accepts $profile" "${nb[@]}" -q check -c "$T_TOP/$profile"
	else
		t_fail "$b: no host binary at ${nb[-1]} to check $profile (run scripts/build host)"
	fi
done
t_done
