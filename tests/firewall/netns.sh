#!/bin/bash
# The firewall against real traffic, in board-shaped network namespaces
# (root). For each binary (the host one, and a big-endian one under
# qemu-user when target/dist has it) and each backend (nftables,
# iptables-restore as installed, and the legacy x_tables iptables):
#
#   - the host binary runs with no nft on its PATH (t_path_without_nft) and
#     loads the nftables rule sets itself, through netlink, as its output
#     says; a binary under qemu-user, whose nf_tables netlink socket the
#     kernel refuses, loads them with nft, as its output says too;
#   - from the LAN, listeners on the box's ssh/nfs/smb ports are reachable,
#     a port outside the LAN services is not, ping and ping6 work;
#   - from the WAN, new inbound TCP fails and ping to the box fails;
#   - replies to connections the box opened pass: TCP, UDP from port 53
#     (a 3000-byte DNS reply arrives whole through its fragments), ICMP
#     echo-reply, ICMPv6 through neighbour discovery;
#   - ICMP fragmentation-needed reaches the box (path MTU 1280 learnt);
#   - stateless: no conntrack entry after all that traffic (conntrack -L and
#     nf_conntrack_count), with either hook; stateful: WAN flows tracked,
#     LAN flows not;
#   - `apply --confirm 2` without a confirm brings the previous rules back,
#     and with one keeps the new ones (the host binary saves and replays
#     them through netlink);
#   - nftables with the nft tool (`--loader nft` for the host binary): no
#     nft on PATH is a clear error that keeps the rules loaded; an nft that
#     rejects the rule set (tests/firewall/inject) gets the fallback loaded;
#   - a reload plus a conntrack flush does not cut an established LAN TCP
#     session, while the Bubba 2 rules (the anchor,
#     tests/firewall/bubba2-firewall.conf) cut it once the conntrack table
#     is new;
#   - the backend cases name `hook = "input"`; the default `hook = "auto"`
#     takes the ingress hooks on this box (every link named) and passes
#     the same stateless traffic checks with no input hook, an unnamed
#     interface (a veth usb0) brings the input chain back, and `hook = "ingress"` keeps
#     the ingress hooks regardless; an nft that knows no inet ingress hook
#     (tests/firewall/old-nft, with the tool as above) gets the input chain;
#   - `firewall lock-down`: the host binary, with no nft, locks down with
#     nftables; a binary under qemu-user (no netlink) with only the legacy
#     iptables on PATH locks down with iptables;
#   - `profile = "off"` on legacy iptables, read from the running kernel,
#     every program traced (strace): a fresh board runs no `*tables-save` (asking would create the empty
#     filter table it asks about), loaded chains of nasboot's are removed,
#     and an "off" board settles.
#
# Usage: tests/firewall/netns.sh [TARGET...]   (default: the `netns`
# targets of tests/lib.sh's table found in target/dist or $NASBOOT_DIST)
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib.sh
. "$TOP/tests/lib.sh"
# shellcheck source=scripts/lib/netns.sh
. "$TOP/scripts/lib/netns.sh"
# shellcheck source=tests/firewall/lib.sh
. "$TOP/tests/firewall/lib.sh"

P=nbfw
WORK=$(mktemp -d /tmp/nasboot-fw.XXXXXX)
cleanup() {
	fw_board_down "$P"
	rm -rf "$WORK"
}
trap cleanup EXIT

fw_packages
t_need strace
dpkg -s qemu-user >/dev/null 2>&1 || apt-get install -y --no-install-recommends qemu-user >/dev/null
# After the installs, so that the PATH without nft has what they add.
NONFT=$(t_path_without_nft "$WORK/nonft")

mapfile -t TARGETS < <(t_present_targets netns "$@")

IFACES='[board]
name = "netns-board"
[[interface]]
name = "eth0"
role = "wan"
[[interface]]
name = "eth1"
role = "lan"
'
STATELESS="$IFACES"'[firewall]
lan_services = ["ssh", "nfs", "smb"]
mountd_port = 4002
'
STATEFUL="$IFACES"'[firewall]
profile = "stateful"
'

box() { ip netns exec "${P}box" "$@"; }
lan() { ip netns exec "${P}lan" "$@"; }
wan() { ip netns exec "${P}wan" "$@"; }

# connects NS HOST PORT [socat address type]: a TCP connection opens.
connects() {
	ip netns exec "$1" socat -u OPEN:/dev/null "${4:-TCP4}:$2:$3,connect-timeout=2" 2>/dev/null
}

quiet() { "$@" >/dev/null 2>&1; }
fails() { ! "$@" >/dev/null 2>&1; }
differs() { [ "$1" != "$2" ]; }
positive() { [ "$1" -gt 0 ]; }

# nb_path TARGET: nasboot's PATH: none with nft for the host binary (it
# loads nftables itself); the suite's for one under qemu-user (nft loads).
nb_path() {
	if [ "$1" = host ]; then echo "$NONFT"; else echo "$PATH"; fi
}

# tool_args TARGET: sets TOOL to the arguments that make that binary load
# nftables with the nft tool, for the cases that put an nft of their own on
# PATH: `--loader nft` for the host one, none under qemu-user (the tool is
# all it has).
tool_args() {
	TOOL=()
	if [ "$1" = host ]; then TOOL=(--loader nft); fi
}

# An iptables-save dump without comments, counters and empty tables (a
# rollback may leave an empty raw table loaded: same rules, no rule).
rules_only() {
	sed -e '/^#/d' -e 's/ \[[0-9]*:[0-9]*\]$//' |
		awk '/^\*/ { t = $0 "\n"; keep = 0; next }
			/^COMMIT/ { if (keep) printf "%sCOMMIT\n", t; next }
			{ t = t $0 "\n"; if ($0 ~ /^-A/ || $0 ~ /^:[A-Z]+ DROP/) keep = 1 }'
}

# The rule set as loaded, for comparisons (no comments, no counters).
snapshot() {
	case $1 in
	nftables) box nft list table inet nasboot 2>&1 || true ;;
	*)
		box env PATH="$PATHX" iptables-save | rules_only
		box env PATH="$PATHX" ip6tables-save | rules_only
		;;
	esac
}

# ct_count: conntrack entries in the box's namespace.
ct_count() {
	box conntrack -C 2>/dev/null || echo 0
}

# A held LAN -> box TCP session: session_open PORT, session_send TEXT,
# session_got TEXT (whether the box received it within 3 s), session_close.
session_open() {
	SESSION_OUT=$WORK/session.out
	SESSION_FIFO=$WORK/session.fifo
	rm -f "$SESSION_OUT" "$SESSION_FIFO"
	mkfifo "$SESSION_FIFO"
	fw_listen "${P}box" -u "TCP4-LISTEN:$1,reuseaddr" "OPEN:$SESSION_OUT,creat,append"
	fw_listening "${P}box" "tcp:$1"
	ip netns exec "${P}lan" socat -u STDIN "TCP4:$NETNS_LAN_BOX:$1" <"$SESSION_FIFO" &
	SESSION_PID=$!
	exec 3>"$SESSION_FIFO"
}
session_send() { printf '%s\n' "$1" >&3; }
session_got() {
	local i
	for i in $(seq 30); do
		if grep -qx "$1" "$SESSION_OUT" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}
session_close() {
	exec 3>&-
	kill "$SESSION_PID" 2>/dev/null || true
	wait "$SESSION_PID" 2>/dev/null || true
	fw_stop_listeners
}

FAR=0
# stateless_traffic LABEL: the stateless profile's checks against real
# traffic (the rule set is loaded; the board is up).
stateless_traffic() {
	local nb=$1 port
	for port in 22 111 139 445 2049 4002 8080; do
		fw_listen "${P}box" -u "TCP4-LISTEN:$port,fork,reuseaddr" OPEN:/dev/null
	done
	fw_listen "${P}box" -u "TCP6-LISTEN:22,fork,reuseaddr,ipv6only=1" OPEN:/dev/null
	fw_listen "${P}wan" "TCP4-LISTEN:8000,fork,reuseaddr" "SYSTEM:echo pong"
	fw_listen "${P}wan" "UDP4-RECVFROM:53,fork" "EXEC:cat"
	fw_listening "${P}box" tcp:22 tcp:111 tcp:139 tcp:445 tcp:2049 tcp:4002 tcp:8080 tcp6:22
	fw_listening "${P}wan" tcp:8000 udp:53
	# The probes that must go unanswered wait out their bounds side by
	# side (fw_bg_check), the listeners up, while the rest run.
	fw_bg_check "$nb: LAN cannot reach port 8080 (not a LAN service)" fails connects "${P}lan" "$NETNS_LAN_BOX" 8080
	fw_bg_check "$nb: WAN cannot open TCP to the box (ssh)" fails connects "${P}wan" "$NETNS_WAN_BOX" 22
	fw_bg_check "$nb: WAN cannot open TCP to the box (nfs)" fails connects "${P}wan" "$NETNS_WAN_BOX" 2049
	fw_bg_check "$nb: WAN cannot open TCP to the box over IPv6" fails connects "${P}wan" "[fd00:51::2]" 22 TCP6
	fw_bg_check "$nb: WAN cannot ping the box" fails wan ping -c1 -W1 "$NETNS_WAN_BOX"
	for port in 22 2049 445 139 111 4002; do
		t_check "$nb: LAN reaches box port $port" connects "${P}lan" "$NETNS_LAN_BOX" "$port"
	done
	t_check "$nb: LAN reaches box ssh over IPv6" connects "${P}lan" "[fd00:10::1]" 22 TCP6
	t_eq "$nb: box connects out to the WAN and the reply comes back" pong "$(box socat -u TCP4:"$NETNS_WAN_HOST":8000,connect-timeout=2 - 2>&1)"
	t_eq "$nb: DNS reply (UDP from port 53) comes back" dns-ok "$(echo dns-ok | box socat -T2 - UDP4:"$NETNS_WAN_HOST":53 2>&1)"
	t_eq "$nb: a 3000-byte UDP reply from port 53 comes back whole (fragmented)" 3000 "$(head -c 3000 /dev/zero | box socat -T2 - UDP4:"$NETNS_WAN_HOST":53 2>/dev/null | wc -c)"
	t_check "$nb: box pings the WAN host (echo-reply passes)" quiet box ping -q -c1 -W2 "$NETNS_WAN_HOST"
	t_check "$nb: LAN pings the box" quiet lan ping -q -c1 -W2 "$NETNS_LAN_BOX"
	t_check "$nb: box pings the WAN over IPv6 (ND both ways)" quiet box ping -q -6 -c1 -W2 fd00:51::1
	t_check "$nb: LAN pings the box over IPv6" quiet lan ping -q -6 -c1 -W2 fd00:10::1
	FAR=$((FAR + 1))
	box ping -c2 -W1 -M "do" -s 1400 "203.0.113.$FAR" >/dev/null 2>&1 || true
	t_has "$nb: ICMP fragmentation-needed passes (path MTU 1280 learnt)" "mtu 1280" "$(box ip route get "203.0.113.$FAR")"
	fw_bg_done
	t_eq "$nb: stateless: no conntrack entry after the traffic" 0 "$(box conntrack -L 2>/dev/null | wc -l)"
	t_eq "$nb: stateless: nf_conntrack_count is 0" 0 "$(box cat /proc/sys/net/netfilter/nf_conntrack_count 2>/dev/null || echo 0)"
	fw_stop_listeners
}

run_case() {
	local target=$1 backend=$2 what=$3 nb root out rc before after via
	local -a NB TOOL
	read -ra NB <<<"$(nasboot_for "$target")"
	# An absolute qemu path: some cases run with a PATH that lacks it.
	NB[0]=$(command -v "${NB[0]}")
	tool_args "$target"
	via=$(t_native_or_tool "$target")
	PATHX=$(nb_path "$target")
	if [ "$backend" = legacy ]; then
		fw_legacy_path "$WORK/legacy"
		PATHX=$WORK/legacy:$PATHX
	fi
	nb="$target/$what"
	local be=$backend
	[ "$be" = legacy ] && be=iptables
	root=$WORK/root-$target-$what
	rm -rf "$root"
	fw_root "$root" "$STATELESS"'hook = "input"
'
	fw_board_up "$P"
	fwapply() { box env PATH="$PATHX" "${NB[@]}" --root "$root" firewall apply --backend "$be" "$@"; }

	out=$(fwapply 2>&1) && rc=0 || rc=$?
	t_eq "$nb: stateless apply exits 0 ($out)" 0 "$rc"
	if [ "$be" = nftables ]; then
		t_has "$nb: the rule set is loaded $via" "$via" "$out"
		t_has "$nb: hook = \"input\": one input chain" 'hook input' "$(box nft list ruleset)"
	fi

	stateless_traffic "$nb"

	# Rollback: the stateful rules are not confirmed; the stateless ones come back.
	before=$(snapshot "$be")
	fw_root "$root" "$STATEFUL"
	out=$(fwapply --confirm 2 2>&1) && rc=0 || rc=$?
	t_eq "$nb: unconfirmed apply exits 1" 1 "$rc"
	t_has "$nb: unconfirmed apply says so" "not confirmed within 2 s: the previous rule set is back" "$out"
	after=$(snapshot "$be")
	t_check "$nb: the previous rule set is back after the rollback" test "$before" = "$after"
	# Confirmed in time: the stateful rules stay.
	(sleep 1 && box env PATH="$PATHX" "${NB[@]}" --root "$root" firewall confirm >/dev/null) &
	out=$(fwapply --confirm 5 2>&1) && rc=0 || rc=$?
	wait
	t_eq "$nb: confirmed apply exits 0 ($(echo "$out" | tail -1))" 0 "$rc"
	t_check "$nb: the confirmed rule set stays" differs "$(snapshot "$be")" "$before"

	# Stateful: WAN flows tracked, LAN flows notrack.
	fw_listen "${P}wan" "TCP4-LISTEN:8000,fork,reuseaddr" "SYSTEM:echo pong"
	fw_listen "${P}box" -u "TCP4-LISTEN:2049,fork,reuseaddr" OPEN:/dev/null
	fw_listening "${P}wan" tcp:8000
	fw_listening "${P}box" tcp:2049
	box conntrack -F >/dev/null 2>&1 || true
	t_eq "$nb: stateful: box connects out" pong "$(box socat -u TCP4:"$NETNS_WAN_HOST":8000,connect-timeout=2 - 2>&1)"
	t_check "$nb: stateful: LAN reaches nfs" connects "${P}lan" "$NETNS_LAN_BOX" 2049
	t_check "$nb: stateful: WAN cannot open TCP" fails connects "${P}wan" "$NETNS_WAN_BOX" 2049
	t_has "$nb: stateful: the WAN flow is tracked" "dst=$NETNS_WAN_HOST" "$(box conntrack -L 2>/dev/null)"
	t_eq "$nb: stateful: no LAN flow is tracked" 0 "$(box conntrack -L 2>/dev/null | grep -c "$NETNS_LAN_HOST" || true)"
	fw_stop_listeners

	if [ "$backend" = nftables ]; then
		# The nft tool and no nft on PATH: a clear error, and the loaded
		# rules stay as they are.
		before=$(snapshot nftables)
		mkdir -p "$WORK/empty"
		out=$(box env PATH="$WORK/empty" "${NB[@]}" --root "$root" firewall apply --backend nftables "${TOOL[@]}" 2>&1) && rc=0 || rc=$?
		t_eq "$nb: missing nft exits 1" 1 "$rc"
		t_has "$nb: missing nft is named" "\`nft\` is not on PATH: nothing was loaded; the previous rule set is kept" "$out"
		t_check "$nb: missing nft keeps the previous rule set" test "$before" = "$(snapshot nftables)"
		# Fault injection: an nft that rejects any rule set with a WAN chain
		# (as a kernel lacking an expression would). The real fallback loads.
		out=$(box env PATH="$TOP/tests/firewall/inject:$PATH" "${NB[@]}" --root "$root" firewall apply --backend nftables "${TOOL[@]}" 2>&1) && rc=0 || rc=$?
		t_eq "$nb: rejected rule set exits 1" 1 "$rc"
		t_has "$nb: nft's complaint is reported" "nft rejected the rule set: /dev/stdin:" "$out"
		t_has "$nb: the fallback is loaded" "loaded the fallback rule set instead (nftables: loopback and LAN only)" "$out"
		t_has "$nb: the fallback accepts the LAN" 'iifname "eth1" accept' "$(snapshot nftables)"
		fw_listen "${P}box" -u "TCP4-LISTEN:22,fork,reuseaddr" OPEN:/dev/null
		fw_listening "${P}box" tcp:22
		t_check "$nb: fallback: LAN reaches ssh" connects "${P}lan" "$NETNS_LAN_BOX" 22
		t_check "$nb: fallback: WAN cannot" fails connects "${P}wan" "$NETNS_WAN_BOX" 22
		fw_stop_listeners
	fi

	# A reload (and a new conntrack table) keeps an established LAN session.
	session_open 9000
	session_send one
	t_check "$nb: LAN session carries data" session_got one
	out=$(fwapply 2>&1) || true
	box conntrack -F >/dev/null 2>&1 || true
	session_send two
	t_check "$nb: the LAN session survives a reload and a conntrack flush" session_got two
	session_close

	fw_board_down "$P"
}

# run_hooks TARGET: the default `hook = "auto"` on nftables. On this box
# (lo, eth0 WAN, eth1 LAN: every interface named and Ethernet-like) it is
# the interfaces' ingress hooks, with the same traffic checks and no input
# hook; a namespace whose kernel adds fallback tunnel devices (sit0...)
# gets the input chain instead. An interface the profile does not name
# (usb0, a veth here) brings the input chain back; `hook = "ingress"` keeps the
# ingress hooks regardless. An nft that refuses the ingress hooks (before
# 0.9.7; tests/firewall/old-nft) gets the input chain instead (the host
# binary told to load with the tool).
run_hooks() {
	local nb=$1/auto root=$WORK/root-$1-auto out rc ruleset extra path
	local -a NB TOOL
	read -ra NB <<<"$(nasboot_for "$1")"
	NB[0]=$(command -v "${NB[0]}")
	tool_args "$1"
	path=$(nb_path "$1")
	rm -rf "$root"
	fw_root "$root" "$STATELESS"
	fw_board_up "$P"
	out=$(box env PATH="$path" "${NB[@]}" --root "$root" firewall apply 2>&1) && rc=0 || rc=$?
	t_eq "$nb: apply exits 0 ($out)" 0 "$rc"
	t_has "$nb: the rule set is loaded $(t_native_or_tool "$1")" "$(t_native_or_tool "$1")" "$out"
	ruleset=$(box nft list ruleset)
	extra=$(netns_box_extra "$P")
	if [ -z "$extra" ]; then
		t_has "$nb: the WAN chain is on eth0's ingress hook" 'hook ingress device "eth0"' "$ruleset"
		t_has "$nb: the LAN chain is on eth1's ingress hook" 'hook ingress device "eth1"' "$ruleset"
		t_check "$nb: no input hook" fails grep -q 'hook input' <<<"$ruleset"
	else
		t_has "$nb: links the profile does not name ($extra): the input chain" 'hook input' "$ruleset"
		t_check "$nb: ... and no ingress hook" fails grep -q 'hook ingress' <<<"$ruleset"
	fi
	stateless_traffic "$nb"
	out=$(box env PATH="$TOP/tests/firewall/old-nft:$PATH" "${NB[@]}" --root "$root" firewall apply "${TOOL[@]}" 2>&1) && rc=0 || rc=$?
	t_eq "$nb: an nft without inet ingress: apply exits 0 ($out)" 0 "$rc"
	if [ -z "$extra" ]; then
		t_has "$nb: an nft without inet ingress: it says so" 'loaded the input chain instead (hook = "auto")' "$out"
	fi
	t_has "$nb: an nft without inet ingress: the input chain" 'hook input' "$(box nft list ruleset)"
	box ip link add usb0 type veth peer name usb1
	out=$(box env PATH="$path" "${NB[@]}" --root "$root" firewall apply 2>&1) && rc=0 || rc=$?
	t_eq "$nb: with usb0 too, apply exits 0 ($out)" 0 "$rc"
	ruleset=$(box nft list ruleset)
	t_has "$nb: usb0 is in no zone: the input chain" 'hook input' "$ruleset"
	t_check "$nb: usb0 is in no zone: no ingress hook" fails grep -q 'hook ingress' <<<"$ruleset"
	fw_root "$root" "$STATELESS"'hook = "ingress"
'
	out=$(box env PATH="$path" "${NB[@]}" --root "$root" firewall apply 2>&1) && rc=0 || rc=$?
	t_eq "$nb: hook = \"ingress\" with usb0, apply exits 0 ($out)" 0 "$rc"
	ruleset=$(box nft list ruleset)
	t_has "$nb: hook = \"ingress\": the WAN chain on eth0's ingress hook" 'hook ingress device "eth0"' "$ruleset"
	t_check "$nb: hook = \"ingress\": no input hook" fails grep -q 'hook input' <<<"$ruleset"
	fw_board_down "$P"
}

for target in "${TARGETS[@]}"; do
	read -ra NBT <<<"$(nasboot_for "$target")"
	if [ ! -x "${NBT[-1]}" ]; then
		t_fail "$target: no binary at ${NBT[-1]} (run scripts/build, or set NASBOOT_DIST)"
		continue
	fi
	for backend in nftables iptables legacy; do
		run_case "$target" "$backend" "$backend"
	done
	run_hooks "$target"
done

# lock-down (a profile that cannot be read): nothing reaches the box, the
# box's own connections still work. nftables: the host binary with no nft
# (it loads through netlink). iptables: a binary with neither netlink nor
# nft, one under qemu-user (the first of this run's) with only the legacy
# iptables on PATH; where the run has none, it is left out.
read -ra NB <<<"$(nasboot_for host)"
fw_legacy_path "$WORK/legacy"
LOCK=()
for target in "${TARGETS[@]}"; do
	if [ "$target" != host ] && [ -x "$T_DIST/nasboot-$target" ]; then
		read -ra LOCK <<<"$(nasboot_for "$target")"
		LOCK[0]=$(command -v "${LOCK[0]}")
		break
	fi
done
for backend in nftables iptables; do
	if [ "$backend" = iptables ] && [ "${#LOCK[@]}" -eq 0 ]; then
		echo "     lock-down/iptables: no binary under qemu-user in this run, not tested"
		continue
	fi
	fw_board_up "$P"
	if [ "$backend" = iptables ]; then
		out=$(box env PATH="$WORK/legacy" "${LOCK[@]}" firewall lock-down 2>&1) && rc=0 || rc=$?
		expect="firewall: locked down (iptables)"
	else
		out=$(box env PATH="$NONFT" "${NB[@]}" firewall lock-down 2>&1) && rc=0 || rc=$?
		expect="firewall: locked down (nftables)"
	fi
	t_eq "lock-down/$backend: exits 0" 0 "$rc"
	t_has "lock-down/$backend: says which backend" "$expect" "$out"
	fw_listen "${P}box" -u "TCP4-LISTEN:22,fork,reuseaddr" OPEN:/dev/null
	fw_listen "${P}wan" "TCP4-LISTEN:8000,fork,reuseaddr" "SYSTEM:echo pong"
	fw_listening "${P}box" tcp:22
	fw_listening "${P}wan" tcp:8000
	fw_bg_check "lock-down/$backend: LAN cannot reach ssh" fails connects "${P}lan" "$NETNS_LAN_BOX" 22
	fw_bg_check "lock-down/$backend: WAN cannot reach ssh" fails connects "${P}wan" "$NETNS_WAN_BOX" 22
	t_eq "lock-down/$backend: the box's own connection works" pong "$(box socat -u TCP4:"$NETNS_WAN_HOST":8000,connect-timeout=2 - 2>&1)"
	t_check "lock-down/$backend: IPv6 neighbour discovery works" quiet box ping -q -6 -c1 -W2 fd00:51::1
	fw_bg_done
	fw_board_down "$P"
done

# profile = "off" on legacy iptables, without --root (so the kernel's own
# /proc/net/ip*_tables_names): every program started is traced.
fw_board_up "$P"
mkdir -p "$WORK/off"
printf '%s' "$STATELESS" >"$WORK/off/on.toml"
printf '%s' "$IFACES"'[firewall]
profile = "off"
' >"$WORK/off/off.toml"
offrun() {
	box env PATH="$WORK/legacy:$NONFT" strace -f -qq -e trace=execve -e signal=none -o "$WORK/off/trace" \
		"${NB[@]}" -c "$WORK/off/$1.toml" firewall apply --backend iptables
}
ran() { grep -oE '"[^"]*/(ip6?tables-(save|restore))"' "$WORK/off/trace" | sed 's|.*/||; s|"||' | sort -u | paste -sd' ' - || true; }
out=$(offrun off 2>&1) && rc=0 || rc=$?
t_eq "off/legacy: a fresh board: exits 0 ($out)" 0 "$rc"
t_eq "off/legacy: a fresh board: no iptables tool runs" "" "$(ran)"
t_eq "off/legacy: a fresh board: no filter table was created" "" "$(box cat /proc/net/ip_tables_names /proc/net/ip6_tables_names)"
out=$(offrun on 2>&1) && rc=0 || rc=$?
t_eq "off/legacy: the stateless rules load ($out)" 0 "$rc"
t_has "off/legacy: nasboot's chains are loaded" ':nasboot-' "$(box iptables-legacy-save -t filter)"
out=$(offrun off 2>&1) && rc=0 || rc=$?
t_eq "off/legacy: off after the rules: exits 0 ($out)" 0 "$rc"
t_eq "off/legacy: IPv4 has nasboot's chains (IPv6 not asked), the off rule set loaded" "ip6tables-restore iptables-restore iptables-save" "$(ran)"
t_eq "off/legacy: no chain of nasboot's is left" 0 "$(box sh -c 'iptables-legacy-save -t filter; ip6tables-legacy-save -t filter' | grep -c ':nasboot-' || true)"
out=$(offrun off 2>&1) && rc=0 || rc=$?
t_eq "off/legacy: off again: exits 0 ($out)" 0 "$rc"
t_eq "off/legacy: off again settles: asked, nothing loaded" "ip6tables-save iptables-save" "$(ran)"
fw_board_down "$P"

# The anchor: the Bubba 2's rules cut an established LAN session once the
# conntrack table is new (its firewall restart reloads the modules; a flush
# stands in for that here).
fw_board_up "$P"
box iptables-restore <"$TOP/tests/firewall/bubba2-firewall.conf"
session_open 9001
session_send one
t_check "anchor: LAN session carries data under the Bubba rules" session_got one
t_check "anchor: the Bubba rules track LAN traffic (conntrack entries exist)" positive "$(ct_count)"
box conntrack -F >/dev/null 2>&1 || true
session_send two
t_check "anchor: the Bubba rules cut the LAN session after a conntrack flush" fails session_got two
session_close
fw_board_down "$P"

t_done
