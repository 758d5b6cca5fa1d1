#!/bin/sh
# Guest side of tests/pkg/board-init.sh, run by the emulated board's /init
# under BusyBox's sh (busybox-static, mipsel) with the real softdog as
# /dev/watchdog0. It runs /etc/init.d/S35nasboot as BusyBox init would
# (the checks are in board-guest-lib.sh, shared with the Debian script's
# suite) and prints one "pkgtest: ok|FAIL|GAP ..." line per check, then
# "pkgtest: done".
# shellcheck shell=sh

# shellcheck source=tests/pkg/board-guest-lib.sh
. /board/pkgtest-lib.sh

S=/etc/init.d/S35nasboot
P=/var/run/nasboot.pid
initd() { sh $S "$@"; }

mkdir -p /var
[ -e /var/run ] || ln -s /run /var/run
pkgtest_probe
pkgtest_lifecycle
echo "pkgtest: done"
