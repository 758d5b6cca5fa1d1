#!/usr/bin/env bash
# Debian's LSB init script, board/init/debian/nasboot, with its daemon for
# real on the emulated MIPS 24K board (scripts/board: QEMU malta, Debian's
# 4kc-malta kernel, the real softdog) and Debian's own mipsel user space
# around it (scripts/board run --deb): dash as /bin/sh, dpkg's
# start-stop-daemon, sysvinit-utils' /lib/lsb/init-functions,
# debianutils' run-parts, nftables' nft with the kernel's nf_tables. The
# guest side is tests/pkg/board-guest-debian.sh (the lifecycle shared with
# BusyBox's S35nasboot is in board-guest-lib.sh): start, a second start,
# status, reload and force-reload (SIGHUP: same pid, softdog's timeout
# follows the profile), restart (a new pid; refused with a broken
# profile, the daemon kept), a daemon that does not stop (restart fails
# after 10 s and says so, no second daemon, no SIGKILL), stop (the magic
# close), the LSB exit codes (stop when stopped 0, reload when stopped 7,
# status 1 with a stale pidfile), /etc/default/nasboot (another profile,
# options, pidfile and log file), the daemon's output and init's notes in
# /var/log/nasboot.log, and a broken or missing profile at boot (the
# error on its own console line with file:line:column, no daemon, softdog
# closed, the lock-down rule set, and a WAN host on a veth pair in the
# guest that gets nothing through it while the box's own connection out
# gets its replies). The kernel never prints "watchdog did not stop".
# About 75 s once the packages are cached.
# tests/pkg/init-debian.sh checks the header and insserv on the host.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/pkg/board-lib.sh
. "$here/board-lib.sh"

# Debian's mipsel packages: dpkg's closure of lib* packages misses zlib1g
# (dpkg-deb links libz), so it is named.
debs=(dash dpkg zlib1g sysvinit-utils debianutils nftables)
pkgb_setup board-debian
"$PKGB_BOARD" debs "${debs[@]}" >/dev/null
args=(--file "$T_TOP/board/init/debian/nasboot:/etc/init.d/nasboot" --with-module nft_ct --with-module veth)
for d in "${debs[@]}"; do args+=(--deb "$d"); done
pkgb_run "$here/board-guest-debian.sh" 240 "${args[@]}"
# The kernel's lines only (the guest's own lines quote what they look for).
log=$(tr -d '\r' <"$pkgb_log" | grep -v '^pkgtest: ')
case $log in
*"did not stop"*) t_fail "serial console: a watchdog closed without the magic close (\"did not stop\")" ;;
*) t_ok "serial console: no \"watchdog did not stop\" from the kernel" ;;
esac
case $log in
*"Initiating system reboot"*) t_fail "serial console: softdog fired" ;;
*) t_ok "serial console: softdog never fired" ;;
esac
pkgb_keep
t_done
