# shellcheck shell=bash
# What the Buildroot package (buildroot/package/nasboot) installs for a
# board, laid out in a directory without Buildroot. Sourced, not run.
#
#   stage_boards             the boards with a Buildroot defconfig
#                            (board/<board>/buildroot_defconfig)
#   stage_triple BOARD       the Rust target triple of BOARD's binary,
#                            from its defconfig's architecture through the
#                            defaults of BR2_PACKAGE_NASBOOT_PREBUILT_TRIPLE
#                            in buildroot/package/nasboot/Config.in
#   stage_board BOARD DIR    installs into DIR, as nasboot.mk does:
#                              usr/sbin/nasboot       target/dist/nasboot-<triple>
#                              etc/init.d/S35nasboot  the BusyBox init script
#                              etc/nasboot.toml       BR2_PACKAGE_NASBOOT_PROFILE
#                            and prints the installed paths, one a line
#
# Needs STAGE_TOP (the nasboot tree) and STAGE_DIST (the binaries; default
# $STAGE_TOP/target/dist).

stage_boards() {
	local d
	for d in "$STAGE_TOP"/board/*/buildroot_defconfig; do
		[ -f "$d" ] || continue
		d=${d%/buildroot_defconfig}
		echo "${d##*/}"
	done
}

# The value of a string option in BOARD's defconfig.
stage_option() {
	sed -n "s/^$2=\"\\(.*\\)\"\$/\\1/p" "$STAGE_TOP/board/$1/buildroot_defconfig"
}

stage_triple() {
	local board=$1 triple sym
	while read -r triple sym; do
		if grep -qx "$sym=y" "$STAGE_TOP/board/$board/buildroot_defconfig"; then
			echo "$triple"
			return 0
		fi
	done < <(sed -n '/^config BR2_PACKAGE_NASBOOT_PREBUILT_TRIPLE/,/^$/s/^\tdefault "\([^"]*\)" if \(BR2_[A-Za-z0-9_]*\)$/\1 \2/p' \
		"$STAGE_TOP/buildroot/package/nasboot/Config.in")
	echo "stage: no triple for board $board" >&2
	return 1
}

stage_board() {
	local board=$1 dir=$2 triple profile dist=${STAGE_DIST:-$STAGE_TOP/target/dist}
	triple=$(stage_triple "$board") || return 1
	profile=$(stage_option "$board" BR2_PACKAGE_NASBOOT_PROFILE)
	case $profile in
	/*) ;;
	?*) profile=$STAGE_TOP/$profile ;;
	esac
	if [ ! -f "$dist/nasboot-$triple" ]; then
		echo "stage: $dist/nasboot-$triple is missing (run scripts/build $triple)" >&2
		return 1
	fi
	install -D -m 0755 "$dist/nasboot-$triple" "$dir/usr/sbin/nasboot"
	install -D -m 0755 "$STAGE_TOP/buildroot/package/nasboot/S35nasboot" "$dir/etc/init.d/S35nasboot"
	echo usr/sbin/nasboot
	echo etc/init.d/S35nasboot
	if [ -n "$profile" ]; then
		install -D -m 0644 "$profile" "$dir/etc/nasboot.toml"
		echo etc/nasboot.toml
	fi
}
