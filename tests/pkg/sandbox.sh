# shellcheck shell=bash
# A sandbox for running nasboot's init scripts for real, as root, without
# touching the host's boot setup. Sourced by tests/pkg/init-*.sh, not run.
#
#   sb_enter "$@"   re-executes the calling suite in a private mount
#                   namespace, with a tmpfs on /run (pidfiles, netns) and a
#                   private directory bound over /etc/default
#   sb_setup P      makes the sandbox: $SB/root is the --root of every
#                   nasboot call (profile at $SB/root/etc/nasboot.toml, the
#                   watchdog "device" a plain file at
#                   $SB/root/dev/watchdog0, a fake /proc/sys knob), and the
#                   board-shaped network namespaces ${P}box/wan/lan, the
#                   init script running in ${P}box
#   sb_profile N    writes the sandbox profile with somaxconn = N
#   sb_cleanup      stops the daemons this suite started (by pid) and
#                   removes the namespaces; installed as the EXIT trap
#
# The daemon is `nasboot run` from target/dist (nasboot_for host).

SB=""
SB_NS=""
SB_PIDS=""
# What the binary can do in the sandbox (sb_probe): yes, or why not.
SB_DEVICE=""
# The emulated-board suite that runs what the sandbox cannot (a suite may
# name its own before sb_lifecycle).
SB_BOARD_SUITE=tests/pkg/board-init.sh
SB_SIGNALS=""
SB_GAPS=0

# sb_gap DESC: a check this binary cannot pass here, printed (not silent)
# and counted apart; sb_gaps prints the count (before t_done).
sb_gap() {
	SB_GAPS=$((SB_GAPS + 1))
	printf 'GAP  %s\n' "$*"
}

sb_gaps() {
	printf '%s: %d known gap(s)\n' "${0##*/}" "$SB_GAPS"
}

# sb_probe: run `nasboot run` once in the sandbox, straight, to learn
# whether it accepts the plain-file watchdog (SB_DEVICE) and handles
# SIGHUP (stays) and SIGTERM (magic close) (SB_SIGNALS).
sb_probe() {
	local bin pid err
	bin=$(nasboot_bin)
	err=$SB/probe.log
	ip netns exec "${SB_NS}box" "$bin" --root "$SB/root" run >/dev/null 2>"$err" &
	pid=$!
	disown "$pid"
	sb_track "$pid"
	sleep 1.5
	SB_DEVICE=yes
	SB_SIGNALS=no
	if ! sb_alive "$pid"; then
		SB_DEVICE="\`run\` exited: $(grep -m1 -o 'not a watchdog device[^;]*' "$err" || head -c 200 "$err")"
	else
		kill -HUP "$pid"
		sleep 0.5
		if sb_alive "$pid"; then
			kill -TERM "$pid"
			sb_wait_gone "$pid" && [ "$(sb_wd_last)" = V ] && SB_SIGNALS=yes
		fi
	fi
	kill -KILL "$pid" 2>/dev/null || true
	sb_wait_gone "$pid" || true
	: >"$SB/root/dev/watchdog0"
	echo 128 >"$SB/root/proc/sys/net/core/somaxconn"
	printf 'probe: plain-file watchdog: %s; SIGHUP/SIGTERM handled: %s\n' "$SB_DEVICE" "$SB_SIGNALS"
}

sb_apt() {
	t_need "$@"
}

sb_enter() {
	if [ "$(id -u)" != 0 ]; then
		echo "${0##*/}: needs root (mount and network namespaces)" >&2
		exit 1
	fi
	if [ -z "${SB_IN_NS:-}" ]; then
		sb_apt util-linux iproute2 procps nftables
		SB_IN_NS=1 exec unshare --mount --propagation private -- bash "$0" "$@"
	fi
	mount -t tmpfs -o mode=0755 nasboot-sandbox-run /run
	mkdir -p /run/lock
}

sb_profile() {
	cat >"$SB/root/etc/nasboot.toml" <<TOML
# The init-script sandbox: files only, inside a network namespace.
[board]
name = "sandbox"

[firewall]
profile = "off"

[sysctl]
set = { "net.core.somaxconn" = "$1" }

[watchdog]
device = "/dev/watchdog0"
timeout = 4
interval = 1
TOML
}

sb_setup() {
	SB_NS=$1
	SB=$(mktemp -d /tmp/nasboot-pkg.XXXXXX)
	mkdir -p "$SB/default" "$SB/root/etc" "$SB/root/dev" "$SB/root/proc/sys/net/core"
	mount --bind "$SB/default" /etc/default
	: >"$SB/root/dev/watchdog0"
	echo 128 >"$SB/root/proc/sys/net/core/somaxconn"
	# One boot: the watchdog's reset history counts boots by boot_id, and
	# every start here runs both `apply` and `run`.
	mkdir -p "$SB/root/proc/sys/kernel/random"
	echo 5a0d6b0e-0000-4000-8000-5a0d6b0e0000 >"$SB/root/proc/sys/kernel/random/boot_id"
	sb_profile 512
	# shellcheck source=scripts/lib/netns.sh
	. "$T_TOP/scripts/lib/netns.sh"
	netns_board_up "$SB_NS"
	trap sb_cleanup EXIT
	sb_probe
}

# Remember a daemon pid so that cleanup can stop it.
sb_track() {
	case " $SB_PIDS " in
	*" $1 "*) ;;
	*) SB_PIDS="$SB_PIDS $1" ;;
	esac
}

sb_cleanup() {
	local pid
	for pid in $SB_PIDS; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	sleep 0.2
	for pid in $SB_PIDS; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	[ -n "$SB_NS" ] && netns_board_down "$SB_NS"
	umount /etc/default 2>/dev/null || true
	[ -n "$SB" ] && rm -rf "$SB"
	return 0
}

# The pids of every process running BINARY.
sb_pids_of() {
	local p exe
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		[ "$exe" = "$1" ] && echo "${p#/proc/}"
	done
	return 0
}

# The last byte written to the watchdog file, as a word: V, NUL or none.
sb_wd_last() {
	local f=$SB/root/dev/watchdog0
	if [ ! -s "$f" ]; then
		echo none
		return
	fi
	case $(tail -c 1 "$f" | od -An -c | tr -d ' ') in
	V) echo V ;;
	'\0') echo NUL ;;
	*) echo other ;;
	esac
}

sb_wd_size() {
	stat -c %s "$SB/root/dev/watchdog0"
}

# Wait up to 5 s for FILE to hold WANT.
sb_wait_file() {
	for _ in $(seq 50); do
		[ "$(cat "$1" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# Is PID a live process (not gone, not a zombie waiting to be reaped)?
sb_alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# Wait up to 5 s for PID to be gone.
sb_wait_gone() {
	for _ in $(seq 50); do
		sb_alive "$1" || return 0
		sleep 0.1
	done
	return 1
}

# sb_lifecycle NAME PIDFILE LOG RUN...: the common checks of an init script.
# RUN... is the argv prefix that runs the script; the action is appended.
# LOG is the daemon's log file, or "" when the script has none.
sb_lifecycle() {
	local name=$1 pidfile=$2 log=$3
	shift 3
	local run=("$@") bin out st pid n size netns
	bin=$(nasboot_bin)
	netns=$(ip netns exec "${SB_NS}box" readlink /proc/self/ns/net)
	if [ "$SB_DEVICE" != yes ]; then
		sb_gap "$name: start, status, reload, stop of the daemon: this binary refuses the sandbox's plain-file watchdog ($SB_DEVICE); $SB_BOARD_SUITE runs them on the emulated board with the real softdog"
		sb_bad_input "$name" "$pidfile" "$log" "${run[@]}"
		return 0
	fi

	set +e
	out=$("${run[@]}" start 2>&1)
	st=$?
	set -e
	t_eq "$name: start exits 0 ($out)" 0 "$st"
	pid=$(cat "$pidfile" 2>/dev/null || echo none)
	[ "$pid" != none ] && sb_track "$pid"
	t_check "$name: the pidfile names a live process" sb_alive "$pid"
	t_eq "$name: that process is the nasboot binary" "$bin" "$(readlink "/proc/$pid/exe" 2>/dev/null)"
	t_eq "$name: it runs in the board's network namespace" "$netns" "$(readlink "/proc/$pid/ns/net" 2>/dev/null)"
	t_has "$name: its command line is \`run\` under the sandbox root" "--root $SB/root --config /etc/nasboot.toml run" "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
	t_eq "$name: the profile was applied under --root" 512 "$(cat "$SB/root/proc/sys/net/core/somaxconn")"
	size=$(sb_wd_size)
	sleep 2.2
	t_check "$name: the daemon pets the watchdog (file grew from $size)" test "$(sb_wd_size)" -gt "$size"
	t_eq "$name: the last watchdog write is a pet, not the magic close" NUL "$(sb_wd_last)"

	out=$("${run[@]}" start 2>&1) || true
	t_has "$name: a second start says it is already running" "already running" "$out"
	t_eq "$name: a second start starts no second daemon" "$pid" "$(sb_pids_of "$bin" | tr '\n' ' ' | sed 's/ $//')"

	set +e
	out=$("${run[@]}" status 2>&1)
	st=$?
	set -e
	t_eq "$name: status exits 0 while running" 0 "$st"
	t_has "$name: status names the pid" "$pid" "$out"

	if [ "$SB_SIGNALS" != yes ]; then
		sb_gap "$name: reload (SIGHUP keeps the pid, re-reads the profile) and stop's magic close: this binary does not handle SIGHUP/SIGTERM yet"
	fi
	# reload: SIGHUP, same process, the new profile applied.
	sb_profile 1024
	n=0
	if [ -n "$log" ]; then n=$(wc -l <"$log"); fi
	set +e
	out=$("${run[@]}" reload 2>&1)
	st=$?
	set -e
	t_eq "$name: reload exits 0 ($out)" 0 "$st"
	sleep 0.5
	if [ "$SB_SIGNALS" = yes ]; then
		t_check "$name: the daemon survived the reload" sb_alive "$pid"
		t_eq "$name: reload keeps the same pid" "$pid" "$(cat "$pidfile" 2>/dev/null)"
		if [ -n "$log" ]; then
			t_has "$name: the daemon logged the reload" "reloaded" "$(tail -n +"$((n + 1))" "$log")"
		fi
	else
		# The old daemon died of SIGHUP: start a new one for the rest.
		"${run[@]}" start >/dev/null 2>&1 || true
		pid=$(cat "$pidfile" 2>/dev/null || echo none)
		[ "$pid" != none ] && sb_track "$pid"
	fi

	# reload with a broken profile: refused, the daemon keeps running.
	printf '[board]\nname = "t"\n[watchdog]\ntimeout = 0\n' >"$SB/root/etc/nasboot.toml"
	set +e
	out=$("${run[@]}" reload 2>&1)
	st=$?
	set -e
	t_check "$name: reload of a broken profile fails (status $st)" test "$st" -ne 0
	t_has "$name: it names file:line:column and key" "/etc/nasboot.toml:4:11: watchdog.timeout:" "$out"
	t_check "$name: the daemon still runs after a refused reload" sb_alive "$pid"
	sb_profile 1024

	# stop: SIGTERM, magic close, pidfile gone.
	set +e
	out=$("${run[@]}" stop 2>&1)
	st=$?
	set -e
	t_eq "$name: stop exits 0 ($out)" 0 "$st"
	t_check "$name: the daemon is gone" sb_wait_gone "$pid"
	t_check "$name: the pidfile is removed" test ! -e "$pidfile"
	if [ "$SB_SIGNALS" = yes ]; then
		t_eq "$name: stop wrote the watchdog's magic close (V last)" V "$(sb_wd_last)"
	fi
	set +e
	"${run[@]}" status >/dev/null 2>&1
	st=$?
	set -e
	t_eq "$name: status exits 3 when stopped" 3 "$st"
	set +e
	"${run[@]}" stop >/dev/null 2>&1
	st=$?
	set -e
	t_eq "$name: stop when stopped exits 0" 0 "$st"

	sb_bad_input "$name" "$pidfile" "$log" "${run[@]}"
}

# sb_bad_input NAME PIDFILE LOG RUN...: a broken or missing profile at start.
sb_bad_input() {
	local name=$1
	shift 3
	local run=("$@") bin out st size
	bin=$(nasboot_bin)
	# A typo at boot: no daemon, the error located, the fallback tried.
	printf '[board]\nname = "t"\n[firewall]\nprofile = "of"\n' >"$SB/root/etc/nasboot.toml"
	size=$(sb_wd_size)
	set +e
	out=$("${run[@]}" start 2>&1)
	st=$?
	set -e
	t_check "$name: start with a broken profile fails (status $st)" test "$st" -ne 0
	t_has "$name: the error names file:line:column and key" "/etc/nasboot.toml:4:11: firewall.profile:" "$out"
	t_has "$name: the fallback firewall is applied" "applied the built-in fallback firewall" "$out"
	t_check "$name: the board's namespace is locked down (nft: input policy drop)" sb_locked_down
	ip netns exec "${SB_NS}box" nft flush ruleset
	t_eq "$name: no daemon was started" "" "$(sb_pids_of "$bin")"
	t_eq "$name: the watchdog was left closed" "$size" "$(sb_wd_size)"

	rm -f "$SB/root/etc/nasboot.toml"
	set +e
	out=$("${run[@]}" start 2>&1)
	st=$?
	set -e
	t_check "$name: start without a profile fails (status $st)" test "$st" -ne 0
	t_has "$name: it says the profile cannot be read" "/etc/nasboot.toml: cannot read the profile" "$out"
	t_eq "$name: no daemon without a profile" "" "$(sb_pids_of "$bin")"
	sb_profile 512
}

# Is the board namespace under nasboot's lock-down rule set (nftables)?
sb_locked_down() {
	local rs
	rs=$(ip netns exec "${SB_NS}box" nft list table inet nasboot 2>/dev/null) || return 1
	case $rs in
	*"hook input priority filter; policy drop;"*) return 0 ;;
	*) return 1 ;;
	esac
}

# sb_no_watchdog NAME PIDFILE LOG RUN...: a profile without [watchdog]:
# `run` would only apply and exit, so start applies and starts no daemon.
sb_no_watchdog() {
	local name=$1 pidfile=$2
	shift 3
	local run=("$@") bin out st
	bin=$(nasboot_bin)
	printf '[board]\nname = "sandbox"\n[firewall]\nprofile = "off"\n[sysctl]\nset = { "net.core.somaxconn" = "700" }\n' >"$SB/root/etc/nasboot.toml"
	set +e
	out=$("${run[@]}" start 2>&1)
	st=$?
	set -e
	t_eq "$name: no [watchdog]: start exits 0 ($out)" 0 "$st"
	t_has "$name: no [watchdog]: it says there is no daemon" "no [watchdog] in the profile, so no daemon" "$out"
	t_eq "$name: no [watchdog]: the profile was applied" 700 "$(cat "$SB/root/proc/sys/net/core/somaxconn")"
	t_check "$name: no [watchdog]: no pidfile" test ! -e "$pidfile"
	t_eq "$name: no [watchdog]: no daemon" "" "$(sb_pids_of "$bin")"
	sb_profile 512
}

# The absolute path of the host binary.
nasboot_bin() {
	local nb
	read -ra nb <<<"$(nasboot_for host)"
	readlink -f "${nb[-1]}"
}
