#!/usr/bin/env bash
# S35nasboot on the emulated MIPS 24K board (scripts/board: QEMU malta,
# Debian's 4kc-malta kernel, a busybox-static:mipsel initramfs) with the
# real softdog: start, a second start, status, reload (the softdog timeout
# follows the profile), a refused reload, stop (the magic close stops
# softdog, and the board outlives the timeout), and a broken profile at
# boot. The guest side is tests/pkg/board-guest.sh (the checks shared with
# board-debian.sh are in board-guest-lib.sh); its "pkgtest:" lines are
# counted here. GAP lines name checks that the binary cannot pass (found
# by a probe in the guest); they count as neither.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/pkg/board-lib.sh
. "$here/board-lib.sh"

pkgb_setup board-init
printf '[board]\nname = "qemu-malta"\n[firewall]\nprofile = "off"\n[watchdog]\ntimeout = 7\n' >"$work/profile.toml"
pkgb_run "$here/board-guest.sh" 240 --profile "$work/profile.toml" \
	--file "$T_TOP/buildroot/package/nasboot/S35nasboot:/etc/init.d/S35nasboot"
pkgb_keep
t_done
