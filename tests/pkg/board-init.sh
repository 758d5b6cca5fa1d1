#!/usr/bin/env bash
# S35nasboot on the emulated MIPS 24K board (scripts/board: QEMU malta,
# Debian's 4kc-malta kernel, a busybox-static:mipsel initramfs) with the
# real softdog: start, a second start, status, reload (the softdog timeout
# follows the profile), a refused reload, stop (the magic close stops
# softdog, and the board outlives the timeout), and a broken profile at
# boot. The guest side is tests/pkg/board-guest.sh; its "pkgtest:" lines
# are counted here. GAP lines name checks that this binary cannot pass yet
# (the daemon's signal handling); they count as neither.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"

bin=$T_DIST/nasboot-mipsel-unknown-linux-gnu
if [ ! -x "$bin" ]; then
	t_fail "no binary at $bin (run scripts/build mipsel-unknown-linux-gnu)"
	t_done
fi
work=$(mktemp -d /tmp/nasboot-board-init.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$T_TOP/scripts/board" fetch >/dev/null
printf '[board]\nname = "qemu-malta"\n[firewall]\nprofile = "off"\n[watchdog]\ntimeout = 7\n' >"$work/profile.toml"

set +e
"$T_TOP/scripts/board" run --bin "$bin" --profile "$work/profile.toml" \
	--file "$T_TOP/buildroot/package/nasboot/S35nasboot:/etc/init.d/S35nasboot" \
	--script "$here/board-guest.sh" --timeout 240 \
	--log "$work/serial.log" --result "$work/result" >"$work/harness.log" 2>&1
rc=$?
set -e
outcome=$(sed -n 's/^outcome=//p' "$work/result" 2>/dev/null)
t_eq "board: it powered off, no reset (harness status $rc)" poweroff "$outcome"
t_check "board: the guest checks ran to the end" grep -q '^pkgtest: done' "$work/serial.log"
grep -a '^pkgtest: probe' "$work/serial.log" || true
gaps=0
while IFS= read -r line; do
	case $line in
	'pkgtest: ok '*) t_ok "board: ${line#pkgtest: ok }" ;;
	'pkgtest: FAIL '*) t_fail "board: ${line#pkgtest: FAIL }" ;;
	'pkgtest: GAP '*)
		gaps=$((gaps + 1))
		printf 'GAP  board: %s\n' "${line#pkgtest: GAP }"
		;;
	esac
done < <(tr -d '\r' <"$work/serial.log")
if [ "$T_FAIL" -gt 0 ]; then
	mkdir -p "$T_TOP/target/pkg-tests"
	cp "$work/serial.log" "$T_TOP/target/pkg-tests/board-init.log"
	echo "serial log kept in target/pkg-tests/board-init.log"
fi
echo "board: $gaps known gap(s)"
t_done
