#!/usr/bin/env bash
# The Buildroot/BusyBox init script, buildroot/package/nasboot/S35nasboot,
# run for real under BusyBox's own sh and start-stop-daemon (busybox-static;
# PATH = a directory of BusyBox applet links, and nft, only; an empty
# environment, as BusyBox init runs it): start, status, reload (SIGHUP), stop (magic
# close), a second start, a broken or missing profile at boot. The daemon
# runs in a board-shaped network namespace with every path under a private
# --root (tests/pkg/sandbox.sh). Needs root.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/pkg/sandbox.sh
. "$here/sandbox.sh"

sb_enter "$@"
sb_apt busybox-static
bin=$(nasboot_bin)
if [ ! -x "$bin" ]; then
	t_fail "no host binary at $bin (run scripts/build host)"
	t_done
fi
script=$T_TOP/buildroot/package/nasboot/S35nasboot
sb_setup nbbb

# Only BusyBox on PATH.
bb=$SB/bin
mkdir -p "$bb"
busybox=$(command -v busybox)
for applet in $("$busybox" --list); do
	ln -s "$busybox" "$bb/$applet"
done
# and nft, as an image with Buildroot's nftables package has it, for the
# fallback firewall.
ln -s "$(command -v nft)" "$bb/nft"
t_eq "busybox: the init sh is BusyBox's" "$busybox" "$(readlink "$bb/sh")"
t_eq "busybox: start-stop-daemon is BusyBox's" "$busybox" "$(readlink "$bb/start-stop-daemon")"

# Buildroot runs /etc/init.d/S??* in order (rcS): S35 comes before S40network.
first=$(printf '%s\n' S40network S35nasboot S01syslogd S02sysctl S50dropbear | LC_ALL=C sort | tr '\n' ' ')
t_eq "busybox: S35nasboot sorts before S40network" "S01syslogd S02sysctl S35nasboot S40network S50dropbear " "$first"
t_check "busybox: the script parses under busybox sh -n" "$bb/sh" -n "$script"

cat >/etc/default/nasboot <<EOF2
NASBOOT_BIN=$bin
NASBOOT_OPTS="--root $SB/root"
EOF2

run=(ip netns exec "${SB_NS}box" env -i "PATH=$bb" "$bb/sh" "$script")
sb_lifecycle busybox /var/run/nasboot.pid "" "${run[@]}"
sb_no_watchdog busybox /var/run/nasboot.pid "" "${run[@]}"

set +e
out=$("${run[@]}" frobnicate 2>&1)
st=$?
set -e
t_eq "busybox: an unknown action exits 1" 1 "$st"
t_has "busybox: and prints the usage" "{start|stop|restart|reload|status}" "$out"
sb_gaps
t_done
