#!/usr/bin/env bash
# board/init/systemd's units (nasboot.service, nasboot-fallback.service)
# run for real: Debian's mipsel systemd 252 as PID 1 on the emulated MIPS
# 24K board (scripts/board run --exec-init), the real softdog, nft for the
# fallback. The guest side is tests/pkg/board-guest-systemd.sh: start,
# a second start, an apply beside the daemon (no apply lock held), status, reload (same MainPID, the profile re-read), a
# refused reload (the journal names file:line:column), a crash (SIGKILL:
# the kernel says "watchdog did not stop", systemd restarts the daemon and
# the new one takes the watchdog over within the timeout, no reset), stop
# (the magic close), the udev rule (udevd under systemd: a stateless
# profile naming every link takes the ingress hooks, then a dummy device
# added later makes udev re-apply and the input chain comes back), and a
# broken profile (the unit fails, OnFailure loads the lock-down rule set,
# the watchdog stays closed). tests/pkg/init-systemd.sh runs
# `systemd-analyze verify` on the host as well. About 1 minute.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/pkg/board-lib.sh
. "$here/board-lib.sh"

debs=(systemd base-files nftables udev)
pkgb_setup board-systemd
"$PKGB_BOARD" debs "${debs[@]}" >/dev/null

# The unit that runs the guest checks once systemd is up, then powers off.
cat >"$work/board-test.service" <<'UNIT'
[Unit]
Description=nasboot board test
After=basic.target
[Service]
Type=oneshot
ExecStart=/bin/sh /board/run-checks
UNIT
cat >"$work/board-test.target" <<'UNIT'
[Unit]
Description=nasboot board test
Requires=basic.target board-test.service
After=basic.target
UNIT
cat >"$work/run-checks" <<'SH'
exec >/dev/console 2>&1
sh /board/script
echo "board: script-exit=$?"
sync
poweroff -f
SH
# A machine id: not a first boot, so systemd-firstboot asks nothing.
printf '%s\n' 4e6173626f6f74206f6e206d69707300 >"$work/machine-id"
args=(--exec-init /lib/systemd/systemd
	--append "systemd.unit=board-test.target systemd.show_status=0 systemd.firstboot=off"
	--file "$work/machine-id:/etc/machine-id"
	--file "$T_TOP/board/init/systemd/nasboot.service:/etc/systemd/system/nasboot.service"
	--file "$T_TOP/board/init/systemd/nasboot-fallback.service:/etc/systemd/system/nasboot-fallback.service"
	--file "$work/board-test.service:/etc/systemd/system/board-test.service"
	--file "$work/board-test.target:/etc/systemd/system/board-test.target"
	--file "$T_TOP/board/init/udev/60-nasboot.rules:/etc/udev/rules.d/60-nasboot.rules"
	--file "$work/run-checks:/board/run-checks" --with-module nft_ct
	--with-module dummy --with-module nft_limit --with-module nft_log --with-module nf_log_syslog)
for d in "${debs[@]}"; do args+=(--deb "$d"); done
pkgb_run "$here/board-guest-systemd.sh" 240 "${args[@]}"
# (systemd keeps the kernel's watchdog messages off the console: the guest
# reads them with dmesg.)
log=$(tr -d '\r' <"$pkgb_log" | grep -v '^pkgtest: ')
case $log in
*"Initiating system reboot"*) t_fail "serial console: softdog fired" ;;
*) t_ok "serial console: softdog never fired" ;;
esac
pkgb_keep
t_done
