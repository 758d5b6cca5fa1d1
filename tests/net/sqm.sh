#!/usr/bin/env bash
# [interface.sqm] against the host's real kernel, in network namespaces.
# This kernel has HTB, the ingress qdisc, u32, mirred and IFB but neither
# sch_cake nor sch_fq_codel, and no module list: so here nasboot's SQM
# always meets a kernel that refuses its qdisc, which is what this suite
# is for. It checks, with iproute2's `tc` and `tc monitor` as the
# independent witness:
#   - the kernel accepts nasboot's own messages up to the refusal (the
#     IFB, its HTB root and class at the profile's rate, seen by `tc
#     monitor`), then the step is taken back: no IFB, no root or ingress
#     qdisc of nasboot's is left, exit 3 with the refused command named;
#   - a root qdisc or an IFB that nasboot did not make is refused and
#     left as it was;
#   - bad input (SQM on a LAN, a rate of 0, an overhead out of range) is
#     exit 2 with file:line:column and key, and nothing is applied.
# The shaping itself, with cake and fq_codel and real traffic through a
# bloated modem, runs on the emulated board's kernel, which has them:
# tests/net/board-sqm.sh. Needs root. Host binary only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=scripts/lib/netns.sh
. "$T_TOP/scripts/lib/netns.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "sqm.sh: needs root (network namespaces)" >&2
	exit 1
fi
t_need iproute2

read -ra nb <<<"$(nasboot_for host)"
if [ ! -x "${nb[-1]}" ]; then
	t_fail "host: no binary at ${nb[-1]} (run scripts/build)"
	t_done
fi

P=tsq
work=$(mktemp -d /tmp/nasboot-sqm.XXXXXX)
monitor=""
cleanup() {
	[ -z "$monitor" ] || kill "$monitor" 2>/dev/null || true
	netns_board_down "$P"
	rm -rf "$work"
}
trap cleanup EXIT
netns_board_up "$P"
box=${P}box

# profile FILE SQM-LINES: eth0 the WAN, eth1 the LAN; SQM-LINES go under
# [interface.sqm] of the interface named by SQM_ON (eth0).
profile() {
	local f=$1
	shift
	{
		printf '[board]\nname = "netns-sqm"\n[firewall]\nprofile = "off"\n'
		printf '[[interface]]\nname = "eth1"\nrole = "lan"\nmethod = "manual"\n'
		if [ "${SQM_ON:-eth0}" = eth1 ]; then printf '[interface.sqm]\n%s\n' "$*"; fi
		printf '[[interface]]\nname = "eth0"\nrole = "wan"\nmethod = "manual"\n'
		if [ "${SQM_ON:-eth0}" = eth0 ]; then printf '[interface.sqm]\n%s\n' "$*"; fi
	} >"$f"
}
# run ARGS...: nasboot in the box; sets out (stdout+stderr) and rc.
run() {
	rc=0
	out=$(ip netns exec "$box" "${nb[@]}" "$@" 2>&1) || rc=$?
}
# The box's traffic-control state: every qdisc and every link. HTB's
# direct_packets_stat is a counter, not state: the links are up, and the
# kernel's own IPv6 traffic (router solicitations, MLD reports) can pass a
# foreign HTB root between two snapshots, as it once did in CI.
state() {
	ip netns exec "$box" tc qdisc show | sed 's/ direct_packets_stat [0-9]*//'
	ip -n "$box" -o link show | awk '{print $2}'
}

# The links as nasboot leaves them without SQM (up, the kernel's qdiscs).
SQM_ON=none profile "$work/plain.toml"
run -c "$work/plain.toml" apply
t_eq "the links without SQM: exit 0" 0 "$rc"
clean=$(state)

# 1. fq_codel under HTB both ways: refused at the IFB's fq_codel leaf.
profile "$work/fq.toml" 'egress_kbit = 2850
ingress_kbit = 3800
overhead = 18
qdisc = "fq_codel"'
run -c "$work/fq.toml" plan
t_eq "plan of fq_codel under HTB: exit 0" 0 "$rc"
t_has "plan creates nasboot's IFB" "create ifb4eth0 (ifb, nasboot's)" "$out"
t_has "plan shapes the download on it" "ifb4eth0: class replace parent 4e42: classid 4e42:1 htb rate 3800kbit overhead 18" "$out"
t_has "plan redirects the WAN's ingress to it" "eth0: filter add parent ffff: protocol all prio 10 u32 match u32 0 0 action mirred egress redirect dev ifb4eth0" "$out"
t_has "plan shapes the upload" "eth0: class replace parent 4e42: classid 4e42:1 htb rate 2850kbit overhead 18" "$out"
ip netns exec "$box" tc monitor >"$work/monitor" 2>&1 &
monitor=$!
sleep 0.3
run -c "$work/fq.toml" apply
sleep 0.3
kill "$monitor" 2>/dev/null || true
wait "$monitor" 2>/dev/null || true
monitor=""
t_eq "fq_codel on a kernel without it: exit 3 (partial)" 3 "$rc"
t_has "the refused command is named, with the kernel's errno" \
	"eth0 sqm: the kernel refused \`ifb4eth0: qdisc replace parent 4e42:1 handle 4e43: fq_codel\`: No such file or directory (ENOENT)" "$out"
t_has "and the step says it was taken back" "the step's other changes were taken back, the link is not shaped" "$out"
# tc monitor names a device by its index ("if7") once it is gone.
mon() { grep -Eq "$1" "$work/monitor"; }
t_check "the kernel took nasboot's HTB root on the IFB (tc monitor)" mon '^qdisc htb 4e42: dev (ifb4eth0|if[0-9]+) root r2q 10 default 0x1 '
t_check "and its class at the profile's rate (3800 kbit/s)" \
	mon '^class htb 4e42:1 dev (ifb4eth0|if[0-9]+) root prio 0 rate 3800Kbit overhead 18 ceil 3800Kbit '
t_check "then took it back (tc monitor)" mon '^deleted qdisc htb 4e42: dev (ifb4eth0|if[0-9]+) root'
nomon() { ! grep -Eq "$1" "$work/monitor"; }
t_check "and never set fq_codel or an ingress redirect" nomon 'fq_codel|ingress|filter' 
t_eq "nothing of nasboot's is left: qdiscs and links as before" "$clean" "$(state)"

# 2. cake, upload only: refused at once, nothing changed.
profile "$work/cake.toml" 'egress_kbit = 2850
qdisc = "cake"'
run -c "$work/cake.toml" apply
t_eq "cake on a kernel without it: exit 3" 3 "$rc"
t_has "the qdisc named" "the kernel refused \`eth0: qdisc replace root handle 4e42: cake bandwidth 2850kbit besteffort overhead 0\`" "$out"
t_has "with what to do" "the kernel lacks this qdisc: set [interface.sqm] qdisc to one it has" "$out"
t_eq "nothing changed" "$clean" "$(state)"

# 3. A root qdisc nasboot did not make is refused and kept.
ip netns exec "$box" tc qdisc add dev eth0 root handle 1: htb default 10
theirs=$(state)
run -c "$work/fq.toml" apply
t_eq "a foreign root qdisc: exit 3" 3 "$rc"
t_has "it is named and left alone" "eth0 sqm: its root qdisc is htb 1:, which nasboot did not make, and is left alone; no shaping was applied" "$out"
t_eq "it is still there, nothing else changed" "$theirs" "$(state)"
ip netns exec "$box" tc qdisc del dev eth0 root

# 4. An IFB of that name that is not nasboot's.
ip -n "$box" link add ifb4eth0 type ifb
theirs=$(state)
run -c "$work/fq.toml" apply
t_eq "a foreign ifb4eth0: exit 3" 3 "$rc"
t_has "it is named" "ingress_kbit: ifb4eth0 exists and is not nasboot's" "$out"
t_eq "it is kept, nothing else changed" "$theirs" "$(state)"
ip -n "$box" link del ifb4eth0

# 5. Bad input: exit 2, the file, line, column and key; nothing applied.
SQM_ON=eth1 profile "$work/lan.toml" 'egress_kbit = 2850'
run -c "$work/lan.toml" apply
t_eq "SQM on the LAN: exit 2" 2 "$rc"
t_has "names the file, line and key" "$work/lan.toml:10:15: interface[0].sqm: \`eth1\` is not a WAN" "$out"
profile "$work/zero.toml" 'egress_kbit = 0'
run -c "$work/zero.toml" apply
t_eq "a rate of 0: exit 2" 2 "$rc"
t_has "names the key and the range" "interface[1].sqm.egress_kbit: rate (kbit/s) 0 is out of range (8 to 10000000)" "$out"
profile "$work/over.toml" 'egress_kbit = 2850
overhead = 300'
run -c "$work/over.toml" apply
t_eq "an overhead of 300: exit 2" 2 "$rc"
t_has "names the key and the range" "interface[1].sqm.overhead: overhead 300 is out of range (-64 to 256)" "$out"
t_eq "nothing was applied by any of them" "$clean" "$(state)"

t_done
