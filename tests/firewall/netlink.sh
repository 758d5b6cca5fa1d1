#!/bin/bash
# nasboot's own nf_tables loader (one batch over netlink) against the real
# kernel and the real nft, in network namespaces (root), with no nft on
# nasboot's PATH (t_path_without_nft), so that nothing else can load:
#
#   - every golden rule set (tests/golden/firewall/*.nft: the shapes of
#     src/firewall/tests.rs, whose profiles are written out below) is
#     rendered in the namespace exactly as the golden file, then loaded by
#     nasboot itself in one fresh namespace and by `nft -f` of the golden
#     file in another: `nft list ruleset` is identical. Where this kernel
#     has no nf_flow_table, the flowtable shapes are loaded both ways
#     through nasboot (`--loader nft` for the tool), which loads them
#     without the flowtable, as `apply` does; the emergency rule set by
#     `firewall lock-down`; the fallback by a profile the kernel refuses;
#   - a refusal (the flowtable, on this kernel without nf_flow_table, by a
#     board that says it has the module) names what was refused, its
#     profile key, the kernel's reason and the missing feature, loads the
#     fallback (the golden fallback.nft's listing) and exits 1;
#   - a batch refused at its last messages (`ip nasboot_nat` held by
#     another socket as its owner, NFT_TABLE_F_OWNER) changes nothing: the
#     rules loaded before stay, checked with traffic from the WAN host;
#   - `kill -9` at random points (0-99 ms) of 60 applies that alternate
#     between two rule sets never leaves nasboot's table missing or
#     half-loaded: the listing is always one of the two whole rule sets
#     (tests/apply/firewall.sh spreads its kills over the apply's own
#     time and checks that some land before the load and some after);
#   - an apply of the rule set nasboot loaded, untouched since, loads
#     nothing and starts no process (the table keeps its handle); after an
#     element added, a policy changed, a rule inserted or a commit to
#     another table, the apply loads the whole rule set again; after the
#     WAN device of an ingress chain is deleted and created again, the
#     apply leaves the whole rule set (a kernel that keeps the hook by
#     name, as 6.18 does, cannot fail that check; board-vlan.sh checks the
#     6.1 case, where the hook goes with the device);
#   - `status` says "through netlink" and sees the rules; an `off` apply
#     removes them and then settles (nothing to do, no process at all).
#
# Unit tests pin the bytes (src/sys/nftnl/tests.rs, the golden batches
# tests/golden/firewall/netlink-le.txt and netlink-be.txt); the boards'
# own kernels run the loader in board-router.sh, be-board.sh and
# be-router.sh. About 1 minute.
#
# Usage: tests/firewall/netlink.sh   (the host binary from target/dist)
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib.sh
. "$TOP/tests/lib.sh"
# shellcheck source=scripts/lib/netns.sh
. "$TOP/scripts/lib/netns.sh"
# shellcheck source=tests/firewall/lib.sh
. "$TOP/tests/firewall/lib.sh"

fw_packages
t_need strace python3
host_nasboot
P=nbnl
W=$(mktemp -d /tmp/nasboot-netlink.XXXXXX)
OWNER_PID=
cleanup() {
	[ -n "$OWNER_PID" ] && kill "$OWNER_PID" 2>/dev/null
	fw_board_down "$P"
	for ns in a b; do ip netns del "$P$ns" 2>/dev/null || true; done
	rm -rf "$W"
}
trap cleanup EXIT
NONFT=$(t_path_without_nft "$W/nonft")
GOLDEN=$TOP/tests/golden/firewall

# twin_ns: two fresh namespaces, nbnla and nbnlb, each with the links the
# golden profiles name (veths: eth0, eth1, eth2, eth0.2, br-lan).
twin_ns() {
	local ns i name
	for ns in a b; do
		ip netns del "$P$ns" 2>/dev/null || true
		ip netns add "$P$ns"
		ip -n "$P$ns" link set lo up
		i=0
		for name in eth0 eth1 eth2 eth0.2 br-lan; do
			i=$((i + 1))
			ip -n "$P$ns" link add "$name" type veth peer name "p$i"
			ip -n "$P$ns" link set "$name" up
		done
	done
}
in_a() { ip netns exec "${P}a" "$@"; }
in_b() { ip netns exec "${P}b" "$@"; }
native() { in_a env PATH="$NONFT" "${NB[@]}" "$@"; }

IFACES='[board]
name = "t"
[[interface]]
name = "eth0"
role = "wan"
[[interface]]
name = "eth1"
role = "lan"
'
ROUTER='[board]
name = "t"
[[interface]]
name = "eth0.2"
kind = "vlan"
link = "eth0"
id = 2
role = "wan"
[[interface]]
name = "br-lan"
kind = "bridge"
ports = ["eth1", "eth2"]
role = "lan"
address = ["192.168.1.1/24", "fd00:1::1/64"]
[firewall]
profile = "stateful"
forward = true
[[firewall.port_forward]]
proto = "tcp"
wan_port = 2222
to = "192.168.1.10:22"
[[firewall.port_forward]]
proto = "udp"
wan_port = 51820
to = "192.168.1.20:51820"
'
# The golden shapes: name, then the [firewall] keys (as in
# src/firewall/tests.rs; `hook = "input"` where the golden took the input
# chain for want of links, so that these namespaces' links do not change it).
shape() {
	case $1 in
	stateless) printf '%s[firewall]\nhook = "input"\n' "$IFACES" ;;
	stateless-services) printf '%s[firewall]\nhook = "input"\nlan_services = ["ssh", "nfs", "smb"]\nlan_tcp_ports = [8080]\nmountd_port = 4002\nwan_services = ["ssh"]\nwan_udp_ports = [51820]\n' "$IFACES" ;;
	stateful) printf '%s[firewall]\nprofile = "stateful"\nwan_services = ["https"]\n' "$IFACES" ;;
	off) printf '%s[firewall]\nprofile = "off"\n' "$IFACES" ;;
	forward) printf '%s[firewall]\nforward = true\nlog_rate = 30\n' "$IFACES" ;;
	ingress) printf '%s[firewall]\nhook = "ingress"\n' "$IFACES" ;;
	ingress-services) printf '%s[firewall]\nhook = "ingress"\nlan_services = ["ssh", "nfs"]\nwan_services = ["ssh"]\n' "$IFACES" ;;
	forward-no-offload) printf '%s[firewall]\nforward = true\nflow_offload = "off"\n' "$IFACES" ;;
	router) printf '%s' "$ROUTER" ;;
	esac
}

# Does this kernel load a flowtable at all? (nft itself, on a scratch table.)
twin_ns
if in_b nft -f - 2>/dev/null <<'EOF'; then
table inet nbnlprobe { flowtable f { hook ingress priority 0; devices = { "eth0" }; } }
EOF
	FLOWTABLE=1
else
	FLOWTABLE=0
	echo "    this kernel loads no flowtable (no nf_flow_table): the flowtable shapes are compared as apply loads them, without it"
fi

for name in stateless stateless-services stateful off forward ingress ingress-services forward-no-offload router; do
	twin_ns
	if [ "$name" = off ]; then
		# Something of nasboot's to remove.
		in_a nft -f "$GOLDEN/stateless.nft"
		in_b nft -f "$GOLDEN/stateless.nft"
	fi
	shape "$name" >"$W/$name.toml"
	in_a "${NB[@]}" -q -c "$W/$name.toml" firewall render --backend nftables >"$W/$name.render"
	t_check "$name: the profile renders the golden file" cmp -s "$W/$name.render" "$GOLDEN/$name.nft"
	out=$(native -c "$W/$name.toml" firewall apply --backend nftables 2>&1) && rc=0 || rc=$?
	t_eq "$name: nasboot's own load exits 0 ($out)" 0 "$rc"
	if [ "$name" != off ]; then
		t_has "$name: it says it loaded through netlink" "through netlink" "$out"
	fi
	if grep -q 'flowtable ft' "$GOLDEN/$name.nft" && [ "$FLOWTABLE" = 0 ]; then
		in_b "${NB[@]}" -q -c "$W/$name.toml" firewall apply --backend nftables --loader nft 2>/dev/null || true
		what="nasboot --loader nft (the flowtable refused by this kernel both ways)"
	else
		in_b nft -f "$GOLDEN/$name.nft"
		what="nft -f of the golden file"
	fi
	in_a nft list ruleset >"$W/$name.a"
	in_b nft list ruleset >"$W/$name.b"
	if cmp -s "$W/$name.a" "$W/$name.b"; then
		t_ok "$name: the same listing as $what ($(grep -c . "$W/$name.a") lines)"
	else
		t_fail "$name: the listing differs from $what"
		diff "$W/$name.b" "$W/$name.a" | head -10 | sed 's/^/    /'
	fi
done

# The emergency rule set: `firewall lock-down`, no profile, no nft.
twin_ns
out=$(native firewall lock-down 2>&1) && rc=0 || rc=$?
t_eq "lock-down with no nft at all: exit 0 ($out)" 0 "$rc"
t_has "lock-down: nftables, loaded by nasboot itself" "locked down (nftables)" "$out"
in_b nft -f "$GOLDEN/emergency.nft"
t_eq "lock-down: the listing of the golden emergency.nft" "$(in_b nft list ruleset)" "$(in_a nft list ruleset)"

# A rule set the kernel refuses: a router whose board says it has the
# flowtable's module (/sys/module/nft_flow_offload, under --root) on a
# kernel that has none, so that no rule set without it is tried instead:
# the flowtable named with its key and the missing feature, the fallback
# loaded, exit 1.
if [ "$FLOWTABLE" = 0 ]; then
	twin_ns
	mkdir -p "$W/root/etc" "$W/root/sys/module/nft_flow_offload"
	shape forward >"$W/root/etc/nasboot.toml"
	out=$(native --root "$W/root" firewall apply 2>&1) && rc=0 || rc=$?
	t_eq "refused: exit 1" 1 "$rc"
	t_has "refused: names the flowtable, its profile key and the kernel's reason" \
		"the kernel refused flowtable ft in table inet nasboot (from firewall.flow_offload): No such file or directory" "$out"
	t_has "refused: names the missing feature, or a missing device" "or this kernel has no flowtable (nf_flow_table_inet)" "$out"
	t_has "refused: says the fallback is loaded" "loaded the fallback rule set instead (nftables: loopback and LAN only)" "$out"
	in_b nft -f "$GOLDEN/fallback.nft"
	t_eq "refused: the listing is the golden fallback.nft's" "$(in_b nft list ruleset)" "$(in_a nft list ruleset)"
else
	echo "GAP refused: this kernel loads flowtables; the refusal is the router board suite's (tests/firewall/board-router.sh: no fib module)"
fi

# A batch refused at its end changes nothing: the rules before stay, seen
# from the WAN. `ip nasboot_nat`, the batch's last table, is held by
# another socket as its owner; the "off" rule set (no fallback to load)
# would delete nasboot's tables.
fw_board_up "$P"
box() { ip netns exec "${P}box" "$@"; }
printf '%s[firewall]\nwan_tcp_ports = [8080]\n' "$IFACES" >"$W/open.toml"
printf '%s[firewall]\nprofile = "off"\n' "$IFACES" >"$W/off.toml"
box env PATH="$NONFT" "${NB[@]}" -q -c "$W/open.toml" firewall apply
fw_listen "${P}box" -u TCP4-LISTEN:8080,fork,reuseaddr OPEN:/dev/null
fw_listen "${P}box" -u TCP4-LISTEN:8081,fork,reuseaddr OPEN:/dev/null
sleep 0.3
wan_connects() { ip netns exec "${P}wan" socat -u OPEN:/dev/null "TCP4:$NETNS_WAN_BOX:$1,connect-timeout=2" 2>/dev/null; }
wan_refused() { ! wan_connects "$1"; }
t_check "late refusal: before, the WAN reaches the opened 8080" wan_connects 8080
t_check "late refusal: before, the WAN does not reach 8081" wan_refused 8081
mkfifo "$W/owner.in"
box python3 "$TOP/tests/firewall/own-table.py" ip nasboot_nat <"$W/owner.in" >"$W/owner.out" &
OWNER_PID=$!
exec 4>"$W/owner.in"
for _ in $(seq 50); do grep -q held "$W/owner.out" 2>/dev/null && break; sleep 0.1; done
before=$(box nft list table inet nasboot)
out=$(box env PATH="$NONFT" "${NB[@]}" -c "$W/off.toml" firewall apply 2>&1) && rc=0 || rc=$?
t_eq "late refusal: exit 1 ($out)" 1 "$rc"
t_has "late refusal: the kernel refused the last table" "the kernel refused table ip nasboot_nat: Operation not permitted" "$out"
t_eq "late refusal: nasboot's inet table is exactly as before" "$before" "$(box nft list table inet nasboot)"
t_check "late refusal: the WAN still reaches 8080 (the rules before)" wan_connects 8080
t_check "late refusal: the WAN still does not reach 8081" wan_refused 8081
exec 4>&-
wait "$OWNER_PID" 2>/dev/null || true
OWNER_PID=
fw_stop_listeners

# kill -9 at random points: the table is always one whole rule set.
printf '%s[firewall]\nhook = "input"\nwan_services = ["ssh"]\n' "$IFACES" >"$W/one.toml"
printf '%s[firewall]\nprofile = "stateful"\nwan_services = ["https"]\n' "$IFACES" >"$W/two.toml"
for f in one two; do
	box env PATH="$NONFT" "${NB[@]}" -q -c "$W/$f.toml" firewall apply
	box nft list ruleset >"$W/$f.list"
done
# Not through box(): $! must be nasboot itself (ip netns exec and env
# exec), or the kill would hit a subshell and leave nasboot running while
# the rule set is listed. Killed means its status says SIGKILL (a kill of
# a process that has already exited but is not yet reaped succeeds too).
bad=0 killed=0 new=0 now=
for i in $(seq 60); do
	f=one
	[ $((i % 2)) = 0 ] && f=two
	ip netns exec "${P}box" env PATH="$NONFT" "${NB[@]}" -q -c "$W/$f.toml" firewall apply >/dev/null 2>&1 &
	pid=$!
	sleep "0.00$((RANDOM % 10))$((RANDOM % 10))"
	kill -9 "$pid" 2>/dev/null || true
	rc=0
	wait "$pid" 2>/dev/null || rc=$?
	[ "$rc" = 137 ] && killed=$((killed + 1))
	if ! box nft list ruleset >"$W/now.list" 2>&1; then
		bad=$((bad + 1))
		now=$(head -c 400 "$W/now.list")
	elif cmp -s "$W/now.list" "$W/$f.list"; then
		new=$((new + 1))
	elif ! cmp -s "$W/now.list" "$W/one.list" && ! cmp -s "$W/now.list" "$W/two.list"; then
		bad=$((bad + 1))
		now=$(head -c 400 "$W/now.list")
	fi
done
echo "    kill -9: 60 applies, $killed killed while running; then the new rule set in $new, the one before in $((60 - new - bad))"
t_eq "kill -9 during 60 applies ($killed killed before they ended): always one whole rule set loaded (last other: $now)" 0 "$bad"
t_check "kill -9: some applies were killed before they ended ($killed of 60)" test "$killed" -gt 0

# Settled: the rule set nasboot loaded, untouched since, is not loaded
# again (the table keeps its handle; a load makes a new table). Anything
# committed since, even to another table, and it is loaded again.
handle() { box nft -a list table inet nasboot 2>/dev/null | sed -n '1s/.*# handle //p'; }
differs() { ! cmp -s "$@"; }
box env PATH="$NONFT" "${NB[@]}" -q -c "$W/one.toml" firewall apply
h=$(handle)
out=$(box env PATH="$NONFT" strace -f -qq -e trace=execve -o "$W/settled.trace" "${NB[@]}" -c "$W/one.toml" firewall apply 2>&1) && rc=0 || rc=$?
t_eq "settled: the same apply again exits 0 and says nothing" "0 " "$rc $out"
t_eq "settled: ... and loads nothing (the table's handle is still $h)" "$h" "$(handle)"
t_eq "settled: ... and starts no process" 1 "$(grep -c execve "$W/settled.trace")"
# tamper DESC NFT-ARGS...: nft changes nasboot's table; the apply after
# it loads the whole rule set again.
tamper() {
	local desc=$1
	shift
	box nft "$@"
	t_check "settled: $desc (set-up: the listing changed)" differs <(box nft list ruleset) "$W/one.list"
	box env PATH="$NONFT" "${NB[@]}" -q -c "$W/one.toml" firewall apply
	t_check "settled: after $desc, the apply loads the rule set again" cmp -s <(box nft list ruleset) "$W/one.list"
}
tamper "an element added to nasboot's set (port 8080 opened)" add element inet nasboot wan_tcp '{ 8080 }'
tamper "the input chain's policy turned to accept" chain inet nasboot input '{ policy accept; }'
tamper "a rule inserted" insert rule inet nasboot input accept
h=$(handle)
box nft add table ip nbother
box env PATH="$NONFT" "${NB[@]}" -q -c "$W/one.toml" firewall apply
t_check "settled: after a commit to another table, the apply loads again (a new table)" test "$h" != "$(handle)"
box nft delete table ip nbother
# A hook's device deleted and created again: Linux 6.1 deletes the chain
# with its last device (no commit), 6.18 keeps its name and binds it
# again; either way the apply after it leaves the whole rule set. (On
# 6.18 the listing is whole before that apply too, so there this cannot
# fail; tests/firewall/board-vlan.sh checks the 6.1 case on the board.)
twin_ns
native -q -c "$W/ingress.toml" firewall apply --backend nftables
in_a nft list ruleset >"$W/ingress.ref"
in_a ip link del eth0
in_a ip link add eth0 type veth peer name p1
in_a ip link set eth0 up
native -q -c "$W/ingress.toml" firewall apply --backend nftables
t_check "settled: the WAN device deleted and created again, then an apply: the whole ingress rule set" cmp -s <(in_a nft list ruleset) "$W/ingress.ref"

# status, and off.
box env PATH="$NONFT" "${NB[@]}" -q -c "$W/one.toml" firewall apply
out=$(box env PATH="$NONFT" "${NB[@]}" -c "$W/one.toml" status 2>&1) || true
t_has "status: nftables through netlink, rules loaded" "nftables through netlink, nasboot's rules loaded" "$out"
box env PATH="$NONFT" "${NB[@]}" -q -c "$W/off.toml" firewall apply
t_eq "off: nasboot's tables removed" "" "$(box nft list tables | grep nasboot || true)"
out=$(box env PATH="$NONFT" strace -f -qq -e trace=execve,sendmsg,sendto -o "$W/off.trace" "${NB[@]}" -c "$W/off.toml" firewall apply 2>&1) || true
t_eq "off again: nothing to do ($out)" "" "$out"
t_eq "off again: no process started" 1 "$(grep -c execve "$W/off.trace")"
t_done
