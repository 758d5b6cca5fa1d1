#!/usr/bin/env bash
# The Debian (LSB) init script, board/init/debian/nasboot, run for real
# under /bin/sh (dash) with Debian's start-stop-daemon and
# /lib/lsb/init-functions: start, status, reload (SIGHUP), stop (magic
# close), a second start, and a broken or missing profile at boot. The
# daemon runs in a board-shaped network namespace with every path under a
# private --root (tests/pkg/sandbox.sh). Needs root. Where the daemon
# refuses the sandbox's plain-file watchdog, its lifecycle is a GAP here:
# tests/pkg/board-debian.sh runs it on the emulated board with softdog and
# Debian's mipsel dash, start-stop-daemon and init-functions.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/pkg/sandbox.sh
. "$here/sandbox.sh"

sb_enter "$@"
sb_apt dash sysvinit-utils dpkg insserv
bin=$(nasboot_bin)
if [ ! -x "$bin" ]; then
	t_fail "no host binary at $bin (run scripts/build host)"
	t_done
fi
script=$T_TOP/board/init/debian/nasboot
sb_setup nbdeb

# The header insserv reads: before networking, on $local_fs only.
hdr=$(sed -n '/^### BEGIN INIT INFO/,/^### END INIT INFO/p' "$script")
t_has "LSB header: Provides" "# Provides:          nasboot" "$hdr"
t_has "LSB header: Required-Start is \$local_fs" "# Required-Start:    \$local_fs"$'\n' "$hdr"
t_has "LSB header: X-Start-Before networking" "# X-Start-Before:    networking" "$hdr"
case $hdr in
*"\$network"*) t_fail "LSB header must not depend on \$network" ;;
*) t_ok "LSB header does not depend on \$network" ;;
esac
t_has "LSB header: Default-Stop 0 1 6" "# Default-Stop:      0 1 6" "$hdr"

# insserv's own ordering, in a scratch /etc with stand-ins for the scripts
# networking depends on (headers as Debian's ifupdown and initscripts).
ins=$SB/insserv
mkdir -p "$ins/etc/init.d"
for r in S 0 1 2 3 4 5 6; do mkdir -p "$ins/etc/rc$r.d"; done
cp "$script" "$ins/etc/init.d/nasboot"
lsb() {
	printf '#!/bin/sh\n### BEGIN INIT INFO\n# Provides:          %s\n# Required-Start:    %s\n# Required-Stop:     %s\n# Default-Start:     S\n# Default-Stop:      %s\n### END INIT INFO\n' "$2" "$3" "$4" "$5" >"$ins/etc/init.d/$1"
	chmod +x "$ins/etc/init.d/$1"
}
lsb mountkernfs.sh mountkernfs "" "" ""
lsb urandom.sh urandom "\$local_fs" "\$local_fs" "0 6"
lsb mountall.sh "mountall" "" "" ""
lsb networking "networking ifupdown" "mountkernfs \$local_fs urandom" "\$local_fs" "0 6"
if (cd "$ins/etc/init.d" && insserv -p "$ins/etc/init.d" -c /etc/insserv.conf -i "$ins" \
	mountkernfs.sh mountall.sh urandom.sh networking nasboot) >"$ins/log" 2>&1; then
	t_ok "insserv accepts the header"
else
	t_fail "insserv accepts the header: $(cat "$ins/log")"
fi
seq_of() { find "$ins/etc/rc$1.d" -name "$2[0-9][0-9]$3" -printf '%f\n' | sed -n "s/^$2\([0-9]*\).*/\1/p"; }
n=$(seq_of S S nasboot)
w=$(seq_of S S networking)
m=$(seq_of S S mountall.sh)
t_check "insserv: nasboot in rcS (S$n)" test -n "$n"
t_check "insserv: nasboot after mountall (\$local_fs: S$m < S$n)" test "${m:-99}" -lt "${n:-0}"
t_check "insserv: nasboot before networking (S$n < S$w)" test "${n:-99}" -lt "${w:-0}"
for r in 0 1 6; do
	t_check "insserv: nasboot stopped in runlevel $r" test -n "$(seq_of "$r" K nasboot)"
done

cat >/etc/default/nasboot <<EOF2
DAEMON=$bin
NASBOOT_OPTS="--root $SB/root"
NASBOOT_LOG=$SB/nasboot.log
EOF2

# The daemon's lifecycle under this script, for real: tests/pkg/board-debian.sh.
SB_BOARD_SUITE=tests/pkg/board-debian.sh
sb_lifecycle debian /run/nasboot.pid "$SB/nasboot.log" \
	ip netns exec "${SB_NS}box" /bin/sh "$script"
sb_no_watchdog debian /run/nasboot.pid "$SB/nasboot.log" \
	ip netns exec "${SB_NS}box" /bin/sh "$script"

# restart: a new daemon, the old one gone.
if [ "$SB_DEVICE" = yes ]; then
	ip netns exec "${SB_NS}box" /bin/sh "$script" start >/dev/null 2>&1 || true
	pid=$(cat /run/nasboot.pid 2>/dev/null || echo none)
	[ "$pid" != none ] && sb_track "$pid"
	set +e
	out=$(ip netns exec "${SB_NS}box" /bin/sh "$script" restart 2>&1)
	st=$?
	set -e
	t_eq "debian: restart exits 0 ($out)" 0 "$st"
	pid2=$(cat /run/nasboot.pid 2>/dev/null || echo none)
	[ "$pid2" != none ] && sb_track "$pid2"
	t_check "debian: restart replaced the daemon ($pid -> $pid2)" test "$pid" != "$pid2"
	t_check "debian: the new daemon runs" sb_alive "$pid2"
	t_check "debian: the old daemon is gone" sb_wait_gone "$pid"
	ip netns exec "${SB_NS}box" /bin/sh "$script" stop >/dev/null 2>&1 || true
	t_check "debian: stopped after restart" sb_wait_gone "$pid2"
else
	sb_gap "debian: restart: this binary refuses the sandbox's plain-file watchdog; $SB_BOARD_SUITE runs it on the emulated board with the real softdog"
fi

set +e
out=$(/bin/sh "$script" frobnicate 2>&1)
st=$?
set -e
t_eq "debian: an unknown action exits 3" 3 "$st"
t_has "debian: and prints the usage" "Usage: /etc/init.d/nasboot {start|stop|status|reload|force-reload|restart}" "$out"
sb_gaps
t_done
