# shellcheck shell=sh
# Guest-side checks shared by the init-script suites on the emulated board
# (tests/pkg/board-guest.sh for BusyBox's S35nasboot, board-guest-debian.sh
# for Debian's LSB script). Sourced at /board/pkgtest-lib.sh; POSIX sh, so
# that it runs under BusyBox's sh and under Debian's dash alike. Each check
# prints one "pkgtest: ok|FAIL|GAP ..." line; the host side counts them.
#
# The sourcing script defines initd (runs the init script with an action:
# `initd start`) and sets P (its pidfile), then calls pkgtest_lifecycle.

wd=/sys/class/watchdog/watchdog0
cfg=/etc/nasboot.toml
# What the binary can do; a script without a probe keeps them "yes", so
# that every check is a real one (FAIL, never GAP).
signals=yes
timeouts=yes

ok() { echo "pkgtest: ok $*"; }
fail() { echo "pkgtest: FAIL $*"; }
gap() { echo "pkgtest: GAP $*"; }
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else fail "$desc"; fi
}
# CMD && CMD; is DESC: the status of what ran just before.
is() {
	if [ $? -eq 0 ]; then ok "$1"; else fail "$1"; fi
}
# has DESC NEEDLE TEXT: TEXT contains NEEDLE.
has() {
	case $3 in *"$2"*) ok "$1" ;; *) fail "$1 ([$2] not in [$3])" ;; esac
}
alive() {
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}
# within SECONDS CMD...: CMD succeeds within SECONDS, asked every 0.1 s.
# The guest's clock runs at wall speed, so a host that stalls QEMU (CI's
# background builds) delays the daemon, not the clock: a fixed sleep and
# then a check would fail there. What the daemon must do, the checks wait
# for with this.
within() {
	_left=$(($1 * 10))
	shift
	until "$@"; do
		[ "$_left" -gt 0 ] || return 1
		sleep 0.1
		_left=$((_left - 1))
	done
}
gone() { ! alive "$1"; }
# own_netns PID: PID is in a network namespace other than ours.
own_netns() { [ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ]; }
wait_gone() { within 10 gone "$1"; }
# The number of live /usr/sbin/nasboot processes.
daemons() {
	n=0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = /usr/sbin/nasboot ] && alive "${p#/proc/}" && n=$((n + 1))
	done
	echo "$n"
}
wd_state() { cat $wd/state; }
wd_timeout() { cat $wd/timeout; }
# armed_with SECONDS: softdog is active with that timeout.
armed_with() { [ "$(wd_state)" = active ] && [ "$(wd_timeout)" = "$1" ]; }
# in_file NEEDLE FILE: FILE contains NEEDLE.
in_file() { grep -qF -- "$1" "$2" 2>/dev/null; }
state_is() { [ "$(wd_state)" = "$1" ]; }
# tcp_listen PORT: the /proc/net/tcp or tcp6 line of a socket listening
# on PORT (state 0A), as a pattern for grep.
tcp_listen() { echo "^ *[0-9]*: [0-9A-F]*:$(printf '%04X' "$1") [0-9A-F]*:[0-9A-F]* 0A "; }
# listening PORT: a TCP socket listens on PORT in this network namespace
# (BusyBox's nc -l binds to :: where the kernel has IPv6).
listening() { grep -qs "$(tcp_listen "$1")" /proc/net/tcp /proc/net/tcp6; }
# profile TIMEOUT [FILE]: a valid profile whose watchdog is softdog.
profile() {
	printf '[board]\nname = "qemu-malta"\n[firewall]\nprofile = "off"\n[watchdog]\ndevice = "/dev/watchdog0"\ntimeout = %s\ninterval = 1\n' "$1" >"${2:-$cfg}"
}
# Close the watchdog with the magic close ourselves (after a daemon that
# could not), so that the board does not reset under the next checks.
disarm() {
	exec 3>/dev/watchdog0
	printf 'V' >&3
	exec 3>&-
}

# Probe: does this binary set the profile's timeout, keep running on
# SIGHUP, and close with 'V' on SIGTERM? Sets $signals and $timeouts; a
# binary without these gets GAP lines instead of those checks.
pkgtest_probe() {
	profile 7
	/usr/sbin/nasboot run >/tmp/probe.log 2>&1 &
	probe=$!
	within 10 armed_with 7
	cat $wd/timeout >/tmp/probe.timeout
	signals=no
	if alive "$probe"; then
		kill -HUP "$probe"
		within 10 in_file "profile reloaded" /tmp/probe.log
		if alive "$probe"; then
			kill -TERM "$probe"
			wait_gone "$probe" && [ "$(wd_state)" = inactive ] && signals=yes
		fi
	fi
	timeouts=no
	grep -q '^7$' /tmp/probe.timeout 2>/dev/null && timeouts=yes
	kill -KILL "$probe" 2>/dev/null
	wait "$probe" 2>/dev/null
	[ "$(wd_state)" = active ] && disarm
	echo "pkgtest: probe signals=$signals timeouts=$timeouts"
}

# refused ACTION: with a profile whose watchdog.timeout is 0, `initd ACTION`
# fails and names file:line:column and the key.
refused() {
	printf '[board]\nname = "t"\n[watchdog]\ntimeout = 0\n' >"$cfg"
	out=$(initd "$1" 2>&1)
	rc=$?
	check "$1 of a broken profile fails" [ "$rc" -ne 0 ]
	has "$1: the error names file:line:column and key" "/etc/nasboot.toml:4:11: watchdog.timeout:" "$out"
}

# The lifecycle every init script must pass: start (pidfile, process,
# softdog armed with the profile's timeout, the board outlives it), a
# second start, status, reload (same pid, the profile re-read), a refused
# reload, stop (magic close), and a broken profile or none at start.
pkgtest_lifecycle() {
	profile 7
	out=$(initd start 2>&1)
	rc=$?
	check "start exits 0 ($out)" [ "$rc" -eq 0 ]
	pid=$(cat "$P" 2>/dev/null || echo none)
	check "the pidfile names a live process" alive "$pid"
	check "that process is /usr/sbin/nasboot" [ "$(readlink "/proc/$pid/exe")" = /usr/sbin/nasboot ]
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
	check "its command line is \`run --background\` with the pidfile ($cmd)" [ "${cmd#"/usr/sbin/nasboot --config /etc/nasboot.toml run --background --pidfile $P "}" != "$cmd" ]
	check "softdog is armed" within 10 state_is active
	if [ "$timeouts" = yes ]; then
		check "with the profile's timeout (7 s)" [ "$(wd_timeout)" = 7 ]
	else
		gap "softdog's timeout from the profile: this binary does not set it (WDIOC_SETTIMEOUT)"
	fi
	sleep 9
	check "the board outlived the timeout: the daemon pets" alive "$pid"

	out=$(initd start 2>&1)
	has "a second start says already running" "already running" "$out"
	n=$(daemons)
	check "one daemon only (found $n)" [ "$n" -eq 1 ]
	check "the pidfile still names the first daemon" [ "$(cat "$P")" = "$pid" ]
	initd status >/dev/null 2>&1
	check "status exits 0 while running" [ $? -eq 0 ]

	if [ "$signals" = yes ]; then
		profile 9
		out=$(initd reload 2>&1)
		rc=$?
		check "reload exits 0 ($out)" [ "$rc" -eq 0 ]
		check "reload re-read the profile: softdog timeout now 9 s" within 10 armed_with 9
		check "the daemon survived the reload" alive "$pid"
		check "reload keeps the pid" [ "$(cat "$P")" = "$pid" ]
	else
		gap "reload (SIGHUP keeps the pid, re-reads the profile): this binary dies on SIGHUP"
	fi
	refused reload
	check "the daemon still runs after a refused reload" alive "$pid"
	profile 7

	out=$(initd stop 2>&1)
	rc=$?
	check "stop exits 0 ($out)" [ "$rc" -eq 0 ]
	check "the daemon is gone" wait_gone "$pid"
	check "the pidfile is removed" [ ! -e "$P" ]
	if [ "$signals" = yes ]; then
		check "stop wrote the magic close: softdog stopped" [ "$(wd_state)" = inactive ]
	else
		gap "stop's magic close: this binary does not close the watchdog on SIGTERM"
		[ "$(wd_state)" = active ] && disarm
	fi
	sleep 9
	ok "the board outlived the timeout after stop (no reset)"
	initd status >/dev/null 2>&1
	check "status exits 3 when stopped" [ $? -eq 3 ]

	printf '[board]\nname = "t"\n[firewall]\nprofile = "of"\n' >"$cfg"
	out=$(initd start 2>&1)
	rc=$?
	check "start with a broken profile fails" [ "$rc" -ne 0 ]
	has "the error names file:line:column and key" "/etc/nasboot.toml:4:11: firewall.profile:" "$out"
	has "the fallback firewall is tried" "fallback firewall" "$out"
	check "no daemon was started" [ ! -e "$P" ]
	check "the watchdog was left closed" [ "$(wd_state)" = inactive ]
	# A profile without [watchdog]: applied at start, no daemon.
	printf '[board]\nname = "t"\n[firewall]\nprofile = "off"\n' >"$cfg"
	out=$(initd start 2>&1)
	rc=$?
	check "no [watchdog]: start exits 0 ($out)" [ "$rc" -eq 0 ]
	has "no [watchdog]: it says there is no daemon" "no [watchdog] in the profile, so no daemon" "$out"
	check "no [watchdog]: no pidfile" [ ! -e "$P" ]
	check "no [watchdog]: softdog left closed" [ "$(wd_state)" = inactive ]
}

# A WAN for real (wan_up [NAME]): a veth pair, the far end in a network
# namespace of its own as a WAN host (198.51.100.1), the box's end NAME
# (default wan0; 198.51.100.2); $wanns is its pid (kill it at the end).
# Needs the veth module (--with-module veth) and, for lockdown, nft_ct.
wan_up() {
	wan=${1:-wan0}
	modprobe veth
	ip link add "$wan" type veth
	unshare -n sleep 1000 &
	wanns=$!
	within 10 own_netns "$wanns"
	peer=$(ip -o link show | sed -n "s/^[0-9]*: \([^:@]*\)@$wan:.*/\1/p")
	ip link set dev "$peer" netns "$wanns"
	ip addr add 198.51.100.2/24 dev "$wan"
	ip link set "$wan" up
	nsenter -t "$wanns" -n ip link set lo up
	nsenter -t "$wanns" -n ip addr add 198.51.100.1/24 dev "$peer"
	nsenter -t "$wanns" -n ip link set "$peer" up
}
# on_wan CMD...: run CMD on the WAN host.
on_wan() { nsenter -t "$wanns" -n "$@"; }
# wan_in: a TCP connection from the WAN host to the box's port 8080.
wan_in() {
	nc -l -p 8080 >/dev/null 2>&1 </dev/null &
	l=$!
	within 10 listening 8080
	echo hello | on_wan nc -w 2 198.51.100.2 8080 >/dev/null 2>&1
	r=$?
	kill "$l" 2>/dev/null
	wait "$l" 2>/dev/null
	return $r
}
# box_out: a TCP connection from the box to the WAN host's port 9090.
box_out() {
	on_wan nc -l -p 9090 >/dev/null 2>&1 </dev/null &
	l=$!
	within 10 on_wan grep -qs "$(tcp_listen 9090)" /proc/net/tcp /proc/net/tcp6
	echo hello | nc -w 2 198.51.100.1 9090 >/dev/null 2>&1
	r=$?
	kill "$l" 2>/dev/null
	wait "$l" 2>/dev/null
	return $r
}
# wan_controls: with no rule set the WAN host connects and pings, so the
# lock-down checks below can fail.
wan_controls() {
	nft flush ruleset
	wan_in
	is "no rule set: the WAN host connects to the box's port 8080 (the check can fail)"
	on_wan ping -c 1 -W 2 198.51.100.2 >/dev/null 2>&1
	is "no rule set: the WAN host pings the box"
}
# lockdown WHAT: the lock-down rule set is loaded (loopback and replies
# only), checked in nft and with packets from the WAN host.
lockdown() {
	what=$1
	ruleset=$(nft list ruleset 2>&1)
	has "$what: nft has the lock-down table inet nasboot" "table inet nasboot {" "$ruleset"
	input=$(nft list chain inet nasboot input 2>&1)
	has "$what: input policy drop" "type filter hook input priority filter; policy drop;" "$input"
	has "$what: loopback accepted" 'iif "lo" accept' "$input"
	has "$what: replies accepted" "ct state established,related accept" "$input"
	# Nothing else is accepted: no interface, no port, no address (the WAN
	# is never open; with no profile there is no known LAN either).
	others=$(printf '%s\n' "$input" | grep accept | grep -v -e 'iif "lo" accept' \
		-e 'ct state established,related accept' -e '^[[:space:]]*icmp type' -e '^[[:space:]]*icmpv6 type')
	check "$what: no other accept rule ($others)" [ -z "$others" ]
	has "$what: forward policy drop" "policy drop;" "$(nft list chain inet nasboot forward 2>&1)"
	! wan_in
	is "$what: the WAN host cannot connect to the box (port 8080, for real)"
	! on_wan ping -c 1 -W 2 198.51.100.2 >/dev/null 2>&1
	is "$what: the WAN host's ping gets no answer"
	box_out
	is "$what: the box's own connection out gets its replies"
}
