#!/bin/bash
# The firewall as a WAN attacker meets it (root, network namespaces laid out
# like a board: eth0 WAN, eth1 LAN). The profile is the shipped
# board/bubba2.toml. On the box run the listeners of a real NAS
# (tests/firewall/listen.py, dual-stack): UDP rpcbind 111, NetBIOS name
# and datagram 137/138, nfsd 2049, lockd 32764, statd 32765, mountd 32767,
# and 40000, inside the local port range; TCP ssh 22, 111, 139, 445, 2049,
# 32764, 32765, 32767 and 40001, inside the range.
#
# For each binary (the host one, and the big-endian ones under qemu-user
# when target/dist has them; those get the whole attack on the default rule
# set, and for the others must load the host binary's rule set byte for
# byte: with nft, what the host binary loaded through netlink) and each
# rule set nasboot can load:
#   stateless/input    nftables, hook = "input"
#   stateless/ingress  nftables, the default hook = "auto", which takes the
#                      interfaces' ingress hooks on this box
#   stateless/iptables iptables-restore as installed, and .../legacy the
#                      x_tables one (IPv6 fragments reach INPUT one by one)
#   stateful/nft, stateful/iptables
#   fallback/nft, fallback/iptables  the LAN-only rule set nasboot loads when
#                      the configured one is refused (tests/firewall/inject,
#                      whose nft the host binary is told to use with
#                      `--loader nft`)
# The host binary runs with no nft on its PATH (t_path_without_nft) and
# loads the nftables rule sets itself, through netlink, as its output says;
# a binary under qemu-user, whose nf_tables netlink socket the kernel
# refuses, loads them with nft, as its output says too.
# the WAN host (tests/firewall/wan-attack.py, scapy) sends, over IPv4 and
# IPv6: UDP to every listener from source ports 53, 123, 67, 547 and 1024;
# SYN from the same ports; ACK, FIN, Xmas and null probes; tiny, split and
# overlapping TCP fragments (RFC 1858); fragmented UDP, with a second first
# fragment rewriting the ports; IPv6 first fragments without the upper-layer
# header (RFC 7112) and atomic fragments. Then:
#   - no datagram reaches a UDP listener, except 40000 (inside the range)
#     from source port 53 or 123 under the stateless profile, which `check`
#     names; no TCP connection is accepted; the box answers no SYN with a
#     SYN-ACK, and no probe of a port below the range with a RST;
#   - stateless: an ACK to port 50000 (inside the range) is answered with a
#     RST, over IPv4 and IPv6: the probes did reach the box, and the replies
#     to its own connections still pass;
#   - host binary: nmap -sA, -sF, -sX (TCP) and -sU (UDP), each plain, with
#     -g 53 and with -g 123, and -6 -sA, report every service port filtered
#     (or open|filtered: nothing came back);
#   - stateless: the box's own DNS (IPv4, IPv6, and a 3000-byte reply in
#     fragments over both), NTP, and the DHCP and DHCPv6 server replies
#     (67 -> 68, 547 -> 546) still reach it;
#   - `check` and `plan` name the UDP and TCP listeners inside the range;
#   - control: the rule set nasboot rendered before the WAN chain was
#     tightened (tests/firewall/holes-ingress.nft) fails the same attack
#     (UDP from port 53 reaches rpcbind and nfsd, a tiny fragment SYN gets
#     a SYN-ACK from ssh), so the attack can fail.
# Not covered here: traffic from the LAN (tests/firewall/netns.sh), the
# emulated board's kernel (tests/nfs/board.sh runs the rules there).
#
# Usage: tests/firewall/attack.sh [TARGET...]   (default: the `netns`
# targets of tests/lib.sh's table found in target/dist or $NASBOOT_DIST)
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib.sh
. "$TOP/tests/lib.sh"
# shellcheck source=scripts/lib/netns.sh
. "$TOP/scripts/lib/netns.sh"
# shellcheck source=tests/firewall/lib.sh
. "$TOP/tests/firewall/lib.sh"

P=nbat
WORK=$(mktemp -d /tmp/nasboot-attack.XXXXXX)
cleanup() {
	fw_board_down "$P"
	rm -rf "$WORK"
}
trap cleanup EXIT

fw_packages
t_need nmap python3-scapy qemu-user
PY=/usr/bin/python3

mapfile -t TARGETS < <(t_present_targets netns "$@")

UDP_PORTS=111,137,138,2049,32764,32765,32767,40000
TCP_PORTS=22,111,139,445,2049,32764,32765,32767,40001
# The service ports nmap scans: every listener below the range.
NMAP_TCP=22,111,139,445,2049,32764,32765,32767
NMAP_UDP=111,137,138,2049,32764,32765,32767

PROFILE=$(cat "$TOP/board/bubba2.toml")
# with_firewall KEY=VALUE...: the Bubba 2 profile with these [firewall] keys.
with_firewall() {
	local text=$PROFILE kv
	for kv in "$@"; do
		case $kv in
		profile=*) text=${text/profile = \"stateless\"/profile = ${kv#*=}} ;;
		*) text=${text/backend = \"auto\"/backend = \"auto\"$'\n'${kv%%=*} = ${kv#*=}} ;;
		esac
	done
	printf '%s\n' "$text"
}

box() { ip netns exec "${P}box" "$@"; }
wan() { ip netns exec "${P}wan" "$@"; }

LISTENER=
listeners_up() {
	LOG=$WORK/listen.log
	rm -f "$LOG" "$WORK/ready"
	: >"$LOG"
	# Not through box(): $! must be the listener itself (ip netns exec execs).
	ip netns exec "${P}box" "$PY" "$TOP/tests/firewall/listen.py" "$LOG" "$WORK/ready" "$UDP_PORTS" "$TCP_PORTS" &
	LISTENER=$!
	local i
	for i in $(seq 50); do
		[ -e "$WORK/ready" ] && return 0
		sleep 0.1
	done
	t_fail "listeners did not start"
}
listeners_down() {
	kill "$LISTENER" 2>/dev/null || true
	wait "$LISTENER" 2>/dev/null || true
}

# The lines of the listeners' log that no rule set may produce: anything
# but UDP to 40000 from source port 53 or 123 when EXPOSED is 1.
leaks() {
	local exposed=$1
	awk -v exposed="$exposed" '!(exposed == 1 && $1 == "udp" && $2 == 40000 && ($4 == 53 || $4 == 123))' "$LOG"
}

# The box's TCP answers that show a probe got through: a SYN-ACK from any
# port, a RST from a port below the range.
bad_answers() {
	awk '$1 == "synack" || ($1 == "rst" && $3 < 32768)' "$1"
}

# nmap_run OUT ARGS...: nmap from the WAN host, its output in OUT.
nmap_run() {
	local out=$1
	shift
	wan nmap -Pn -n -T5 --max-retries 1 --initial-rtt-timeout 100ms --max-rtt-timeout 300ms --host-timeout 60s -oG - "$@" >"$out" 2>&1 || true
}
# nmap_filtered LABEL OUT ARGS...: nmap_run's OUT of ARGS says every
# scanned port is filtered or open|filtered (nothing, or an ICMP error
# other than port-unreachable, came back).
nmap_filtered() {
	local label=$1 out bad
	out=$(cat "$2")
	shift 2
	bad=$(printf '%s\n' "$out" | grep -o 'Ports: .*' | tr ',' '\n' | sed 's/^Ports: //; s/^ *//' | awk -F/ '$2 != "filtered" && $2 != "open|filtered"')
	if printf '%s\n' "$out" | grep -q 'Ports: ' && [ -z "$bad" ]; then
		t_ok "$label: nmap $* reports every port filtered"
	else
		t_fail "$label: nmap $*: [$bad] [$(printf '%s\n' "$out" | tail -3)]"
	fi
}

# own_traffic LABEL: the box's own DNS, NTP and DHCP replies still arrive.
own_traffic() {
	local nb=$1 got
	fw_listen "${P}wan" "UDP4-RECVFROM:53,fork" "EXEC:cat"
	fw_listen "${P}wan" "UDP6-RECVFROM:53,fork,ipv6only=1" "EXEC:cat"
	fw_listen "${P}wan" "UDP4-RECVFROM:123,fork" "EXEC:cat"
	fw_listening "${P}wan" udp:53 udp6:53 udp:123
	t_eq "$nb: DNS over IPv4 (a reply from port 53 to the box's local port)" dns4 "$(echo dns4 | box socat -T2 - UDP4:"$NETNS_WAN_HOST":53 2>&1)"
	t_eq "$nb: DNS over IPv6" dns6 "$(echo dns6 | box socat -T2 - "UDP6:[fd00:51::1]:53" 2>&1)"
	t_eq "$nb: a 3000-byte DNS reply in fragments, IPv4" 3000 "$(head -c 3000 /dev/zero | box socat -T2 - UDP4:"$NETNS_WAN_HOST":53 2>/dev/null | wc -c)"
	t_eq "$nb: a 3000-byte DNS reply in fragments, IPv6" 3000 "$(head -c 3000 /dev/zero | box socat -T2 - "UDP6:[fd00:51::1]:53" 2>/dev/null | wc -c)"
	t_eq "$nb: NTP (a reply from port 123)" ntp "$(echo ntp | box socat -T2 - UDP4:"$NETNS_WAN_HOST":123 2>&1)"
	fw_stop_listeners
	for fam in 4 6; do
		local server=67 client=68 to=$NETNS_WAN_BOX
		[ "$fam" = 6 ] && server=547 client=546 to="[fd00:51::2]"
		rm -f "$WORK/dhcp"
		fw_listen "${P}box" -u "UDP$fam-RECV:$client" "OPEN:$WORK/dhcp,creat"
		fw_listening "${P}box" "udp${fam#4}:$client"
		echo "offer$fam" | wan socat -u - "UDP$fam-SENDTO:$to:$client,sourceport=$server"
		# The reply written, or 3 s.
		for _ in $(seq 30); do
			grep -q "offer$fam" "$WORK/dhcp" 2>/dev/null && break
			sleep 0.1
		done
		got=$(cat "$WORK/dhcp" 2>/dev/null || true)
		t_eq "$nb: a DHCP server reply ($server -> $client) reaches the box" "offer$fam" "$got"
		fw_stop_listeners
	done
}

# attack LABEL EXPOSED CONTROL NMAP: the crafted packets, and nmap when NMAP
# is 1. EXPOSED: the stateless profile (40000 is reachable from 53/123);
# CONTROL: expect the RST from port 50000.
attack() {
	local nb=$1 exposed=$2 control=$3 scan=$4 out sent g mac
	listeners_up
	out=$WORK/answers
	mac=$(box cat /sys/class/net/eth0/address)
	wan "$PY" "$TOP/tests/firewall/wan-attack.py" eth0 "$mac" "$NETNS_WAN_HOST" "$NETNS_WAN_BOX" fd00:51::1 fd00:51::2 "$UDP_PORTS" "$TCP_PORTS" >"$out" 2>"$WORK/attack.err" || true
	sent=$(awk '$1 == "sent" { print $2 }' "$out")
	t_check "$nb: the attack ran ($(tail -1 "$WORK/attack.err"))" positive "${sent:-0}"
	# A frame the capture lost would read as an answer the box never sent.
	t_eq "$nb: the capture lost no frame" 0 "$(awk '$1 == "dropped" { print $2 }' "$out")"
	if [ "$scan" = 1 ]; then
		# The box's neighbour entry fixed on the WAN host, as the attack's
		# frames are: a rule set that drops neighbour discovery from the WAN
		# (the fallback) must not keep nmap from sending (--send-ip: nmap
		# resolves IPv6 neighbours itself otherwise).
		wan ip -6 neigh replace fd00:51::2 lladdr "$mac" dev eth0 nud permanent
		# A filtered port costs nmap its whole timeouts: the scans from
		# the three source ports (none given, 53, 123) run side by side,
		# each source port's one after the other, and IPv6 beside them;
		# a scan's replies are told from another's by their ports.
		local scans=() pids=() i
		for g in "" "-g 53" "-g 123"; do
			for s in -sA -sF -sX; do scans+=("$s $g -p $NMAP_TCP $NETNS_WAN_BOX"); done
			scans+=("-sU $g -p $NMAP_UDP $NETNS_WAN_BOX")
		done
		scans+=("-6 --send-ip -sA -p $NMAP_TCP fd00:51::2")
		for g in 0 1 2; do
			(
				for i in 0 1 2 3; do
					# shellcheck disable=SC2086 # the scan's words
					nmap_run "$WORK/nmap-$((g * 4 + i))" ${scans[$((g * 4 + i))]}
				done
			) &
			pids+=("$!")
		done
		# shellcheck disable=SC2086
		nmap_run "$WORK/nmap-12" ${scans[12]}
		wait "${pids[@]}"
		for i in "${!scans[@]}"; do
			# shellcheck disable=SC2086
			nmap_filtered "$nb" "$WORK/nmap-$i" ${scans[$i]}
		done
	fi
	sleep 0.3
	listeners_down
	t_eq "$nb: no datagram or connection reached a listener it should not" "" "$(leaks "$exposed" | tr '\n' ';')"
	t_eq "$nb: no SYN answered, no probe of a service port answered" "" "$(bad_answers "$out" | sort | uniq -c | tr '\n' ';')"
	if [ "$exposed" = 1 ]; then
		t_has "$nb: UDP from port 53 reaches 40000, inside the range (as check names it)" "udp 40000 $NETNS_WAN_HOST 53" "$(cat "$LOG")"
	else
		t_eq "$nb: nothing reached 40000 either" "" "$(grep ' 40000 ' "$LOG" || true)"
	fi
	if [ "$control" = 1 ]; then
		t_has "$nb: control: an ACK to port 50000 (inside the range) gets a RST (IPv4)" "rst v4 50000" "$(cat "$out")"
		t_has "$nb: control: the same over IPv6" "rst v6 50000" "$(cat "$out")"
	fi
}

positive() { [ "$1" -gt 0 ]; }
fails() { ! "$@" >/dev/null 2>&1; }

# loaded PATH: the rule set as the kernel holds it, counters left out
# (iptables-save as found on PATH).
loaded() {
	box nft -s list ruleset
	box env PATH="$1" iptables-save | sed -e '/^#/d' -e 's/ \[[0-9]*:[0-9]*\]$//'
	box env PATH="$1" ip6tables-save | sed -e '/^#/d' -e 's/ \[[0-9]*:[0-9]*\]$//'
}

run_target() {
	local target=$1 scan=1 root=$WORK/root-$1 out rc be base via
	local -a NB TOOL
	read -ra NB <<<"$(nasboot_for "$target")"
	NB[0]=$(command -v "${NB[0]}")
	[ "$target" = host ] || scan=0
	# nasboot's PATH: none with nft for the host binary (it loads nftables
	# itself), the suite's under qemu-user (nft loads).
	base=$PATH
	[ "$target" = host ] && base=$(t_path_without_nft "$WORK/nonft")
	via=$(t_native_or_tool "$target")
	fw_legacy_path "$WORK/legacy"
	# name | profile keys | backend | PATH prefix | exposed | control
	while IFS='|' read -r name keys be pre exposed control; do
		local nb="$target/$name" path=$base
		TOOL=()
		[ -n "$pre" ] && path=$pre:$base
		if [ "$name" = fallback/nft ] && [ "$target" = host ]; then
			# The injected refusal is an nft: the host binary loads with it.
			path=$pre:$PATH
			TOOL=(--loader nft)
		fi
		rm -rf "$root"
		# shellcheck disable=SC2086 # keys: words
		fw_root "$root" "$(with_firewall $keys)"
		fw_board_up "$P"
		out=$(box env PATH="$path" "${NB[@]}" --root "$root" firewall apply --backend "$be" "${TOOL[@]}" 2>&1) && rc=0 || rc=$?
		case $name in
		fallback/*)
			t_eq "$nb: the refused rule set exits 1" 1 "$rc"
			t_has "$nb: the fallback is loaded" "loaded the fallback rule set instead" "$out"
			;;
		*) t_eq "$nb: apply exits 0 ($out)" 0 "$rc" ;;
		esac
		if [ "$be" = nftables ] && [ "$name" != fallback/nft ]; then
			t_has "$nb: the rule set is loaded $via" "$via" "$out"
		fi
		case $name in
		stateless/input) t_has "$nb: the input chain" 'hook input' "$(box nft list ruleset)" ;;
		stateless/ingress) t_has "$nb: the ingress hooks" 'hook ingress device "eth0"' "$(box nft list ruleset)" ;;
		esac
		# What a packet meets depends only on the rule set loaded: a
		# big-endian binary that loads the host binary's rule set byte for
		# byte meets the same attack. It gets the whole attack on the
		# default (stateless/ingress) only.
		loaded "$path" >"$WORK/loaded-$target-${name//\//-}"
		if [ "$target" = host ] || [ "$name" = stateless/ingress ] || [ ! -e "$WORK/loaded-host-${name//\//-}" ]; then
			attack "$nb" "$exposed" "$control" "$scan"
		else
			t_check "$nb: the rule set loaded is the host binary's, byte for byte" \
				cmp -s "$WORK/loaded-host-${name//\//-}" "$WORK/loaded-$target-${name//\//-}"
		fi
		if [ "$exposed" = 1 ]; then
			own_traffic "$nb"
		fi
		if [ "$name" = stateless/ingress ]; then
			listeners_up
			out=$(box env PATH="$path" "${NB[@]}" --root "$root" check 2>&1) && rc=0 || rc=$?
			t_eq "$nb: check exits 0" 0 "$rc"
			t_has "$nb: check names the UDP listener inside the range" "note: udp [::]:40000 listens inside firewall.local_port_range 32768-60999: a WAN host can reach it with UDP from source port 53 or 123" "$out"
			t_has "$nb: check names the TCP listener inside the range" "note: tcp [::]:40001 listens inside firewall.local_port_range 32768-60999" "$out"
			t_check "$nb: check names no listener below the range" fails grep -qE 'note: (udp|tcp) \[::\]:(111|2049|3276[457]) ' <<<"$out"
			out=$(box env PATH="$path" "${NB[@]}" --root "$root" plan 2>&1) || true
			t_has "$nb: plan names it too" "note: udp [::]:40000 listens inside" "$out"
			listeners_down
		fi
		fw_board_down "$P"
	done <<EOF
stateless/input|hook="input"|nftables||1|1
stateless/ingress||nftables||1|1
stateless/iptables||iptables||1|1
stateless/legacy||iptables|$WORK/legacy|1|1
stateful/nft|profile="stateful"|nftables||0|0
stateful/iptables|profile="stateful"|iptables||0|0
fallback/nft|hook="input"|nftables|$TOP/tests/firewall/inject|0|0
fallback/iptables||iptables|$TOP/tests/firewall/inject|0|0
EOF
}

for target in "${TARGETS[@]}"; do
	read -ra NBT <<<"$(nasboot_for "$target")"
	if [ ! -x "${NBT[-1]}" ]; then
		t_fail "$target: no binary at ${NBT[-1]} (run scripts/build, or set NASBOOT_DIST)"
		continue
	fi
	run_target "$target"
done

# Negative control: the rule set nasboot rendered before the WAN chain was
# tightened (tests/firewall/holes-ingress.nft). The same attack must find
# its holes, or it proves nothing about the rules above.
fw_board_up "$P"
box nft -f "$TOP/tests/firewall/holes-ingress.nft"
listeners_up
mac=$(box cat /sys/class/net/eth0/address)
wan "$PY" "$TOP/tests/firewall/wan-attack.py" eth0 "$mac" "$NETNS_WAN_HOST" "$NETNS_WAN_BOX" fd00:51::1 fd00:51::2 "$UDP_PORTS" "$TCP_PORTS" >"$WORK/answers" 2>"$WORK/attack.err" || true
sleep 0.3
listeners_down
t_has "control/old rules: UDP from port 53 reached rpcbind" "udp 111 $NETNS_WAN_HOST 53" "$(cat "$LOG")"
t_has "control/old rules: ... and nfsd over IPv6" "udp 2049 fd00:51::1 53" "$(cat "$LOG")"
t_has "control/old rules: a tiny-fragment SYN got a SYN-ACK from ssh" "synack v4 22" "$(cat "$WORK/answers")"
t_has "control/old rules: an ACK probe of ssh got a RST" "rst v4 22" "$(cat "$WORK/answers")"
fw_board_down "$P"

t_done
