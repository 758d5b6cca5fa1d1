# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# The prologue and helpers of tests/apply/confirm.sh and confirm-kill.sh:
# profiles A and B, a board in network namespaces with nasboot under a
# --root, and its observation. Sourced first thing: it sources
# tests/lib.sh, scripts/lib/netns.sh and tests/firewall/lib.sh, re-runs
# the script in a mount namespace of its own (unshare -m: /var/lib is
# mounted read-only there), and checks that the host's nasboot is built
# (NB: its argv). The helpers want P (the netns prefix), W (a scratch
# directory) and R (the root, under W) set, nasboot copied to
# $W/nasboot, and cf_init run once (in each worker).
#
#   cf_init              after P, W and R: the PATH without nft
#   cf_setup             the namespaces (again), profile A in force
#   cf_reset_a           A in force again on the same namespaces: the
#                        journal removed, A applied, what A does not name
#                        (vp0 up, ip_default_ttl) set back by hand
#   cf_observe           the board, one field a line: links, addresses,
#                        routes, `nft list ruleset`, sysctls (global and
#                        per interface), txqueuelen, qdiscs, exports, and
#                        the read-ahead of $CF_LOOP when set
#   cf_probe ADDR        the LAN host's TCP probe of ADDR:22: answered|refused
#   cf_kill_holders      kill -9 the holders under this root
#   cf_same DESC A B     t_ok when observations A and B are equal, else
#                        t_fail with the fields that differ
#   cf_now_ms            the wall clock in ms
#   nb ARGS              nasboot -r $R ARGS in the box (B is /etc/b.toml there)
#   box CMD              CMD in the box

# shellcheck source=../lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/lib.sh"
# shellcheck source=../../scripts/lib/netns.sh
. "$T_TOP/scripts/lib/netns.sh"
# shellcheck source=../firewall/lib.sh
. "$T_TOP/tests/firewall/lib.sh"

if [ -z "${NB_CONFIRM_NS:-}" ]; then
	t_need util-linux iproute2 nftables socat
	exec env NB_CONFIRM_NS=1 unshare -m --propagation private bash "$0" "$@"
fi

host_nasboot

# The holders this suite started: nasboot processes whose argv names our root.
cf_kill_holders() {
	local pid
	for pid in $(pgrep -f -- "-r $R " || true); do
		kill -9 "$pid" 2>/dev/null || true
	done
}
cf_init() { NONFT=$(t_path_without_nft "$W/nonft"); }
nb() { ip netns exec "${P}box" env PATH="$NONFT" "$W/nasboot" -r "$R" "$@"; }
box() { ip netns exec "${P}box" "$@"; }

A_TEXT='[board]
name = "a"
[[interface]]
name = "eth0"
role = "wan"
address = ["198.51.100.2/24"]
gateway = "198.51.100.1"
[[interface]]
name = "eth1"
role = "lan"
address = ["192.168.10.1/24"]
[firewall]
hook = "input"
lan_services = ["ssh", "nfs"]
[[nfs.export]]
path = "/srv/a"
clients = ["192.168.10.0/24"]
'
B_TEXT='[board]
name = "b"
[[interface]]
name = "eth0"
role = "wan"
address = ["198.51.100.2/24"]
gateway = "198.51.100.1"
[[interface]]
name = "eth1"
role = "lan"
address = ["192.168.20.1/24"]
[[interface]]
name = "br0"
kind = "bridge"
ports = ["vp0"]
role = "lan"
address = ["10.9.9.1/24"]
[firewall]
hook = "input"
lan_services = ["nfs"]
[sysctl.set]
"net.ipv4.ip_default_ttl" = 99
[[nfs.export]]
path = "/srv/b"
clients = ["192.168.20.0/24"]
'

cf_setup() {
	cf_kill_holders
	umount "$R/var/lib" 2>/dev/null || true
	rm -rf "$R"
	netns_board_up "$P"
	ip -n "${P}box" link add vp0 type veth peer name vp1
	# Up before B makes vp0 a bridge port: a link that was never up has
	# the noop qdisc, and its first up gives it the default one for good.
	ip -n "${P}box" link set vp0 up
	ip -n "${P}box" link set vp1 up
	ip -n "${P}box" link set eth0 up
	mkdir -p "$R/srv/a" "$R/srv/b" "$R/var/lib/nasboot" "$R/sys"
	fw_root "$R" "$A_TEXT"
	# The block devices' read-ahead, where a profile names one.
	ln -sfn /sys/block "$R/sys/block"
	printf '%s' "$A_TEXT" >"$W/a.toml"
	# The candidate is read through --root, as the profile is.
	printf '%s' "$B_TEXT" >"$R/etc/b.toml"
	fw_stop_listeners
	fw_listen "${P}box" TCP-LISTEN:22,fork,reuseaddr SYSTEM:true
	nb apply >/dev/null 2>"$W/a.err" || { cat "$W/a.err"; return 1; }
}

cf_reset_a() {
	cf_kill_holders
	rm -f "$R"/var/lib/nasboot/confirm* "$R/etc/nasboot.toml.rejected"
	printf '%s' "$A_TEXT" >"$R/etc/nasboot.toml"
	nb apply >/dev/null 2>"$W/a.err" || { cat "$W/a.err"; return 1; }
	# A plain apply adds the profile's addresses and removes none; nor
	# does it remove a bridge without nasboot's alias, which a run that
	# ended mixed may have left: each run starts from A whatever the last
	# one left (that one was already counted).
	box ip addr del 192.168.20.1/24 dev eth1 2>/dev/null || true
	box ip link del br0 2>/dev/null || true
	box ip link set vp0 up
	box sysctl -qw net.ipv4.ip_default_ttl=64
}

# The board's state, one field a line: links, addresses, routes, the rule
# set, sysctls, qdiscs, exports.
cf_observe() {
	{
		# The peer's namespace is left out: ip names it by looking through
		# /run/netns, where a namespace another suite adds after this
		# one's unshare is an empty file ("Peer netns reference is invalid").
		# The carrier flags too: a new bridge's carrier comes up on its own
		# time after its port joins (nasboot's own observation leaves
		# carrier out for the same reason).
		box ip -o link show 2>/dev/null | sed -E 's/^[0-9]+: //; s/@if[0-9]+//; s/ qlen [0-9]+//; s/link\/ether [0-9a-f:]+ brd [0-9a-f:]+//; s/ link-netns(id)? [^ ]+//; s/NO-CARRIER,//; s/,LOWER_UP//; s/,M-DOWN//' | awk '{print "link", $0}' | sed 's/state [A-Z]* //' | sort
		box ip -o addr show | awk '$4 !~ /^fe80/ {print "addr", $2, $3, $4}' | sort
		box ip route show | awk '{print "route", $0}' | sort
		box ip -6 route show | grep -v '^fe80\|^multicast' | awk '{print "route6", $0}' | sort || true
		box nft list ruleset | awk '{print "nft", $0}'
		for k in ip_default_ttl ip_forward ip_local_port_range; do
			echo "sysctl $k $(box cat /proc/sys/net/ipv4/$k)"
		done
		for i in eth1 vp1; do
			for k in arp_ignore rp_filter accept_redirects; do
				echo "sysctl $i.$k $(box cat "/proc/sys/net/ipv4/conf/$i/$k")"
			done
			echo "qlen $i $(box cat "/sys/class/net/$i/tx_queue_len")"
		done
		[ -z "${CF_LOOP:-}" ] || echo "read_ahead_kb $CF_LOOP $(cat "/sys/block/$CF_LOOP/queue/read_ahead_kb")"
		box tc qdisc show | awk '{print "qdisc", $0}' | sort
		awk '{print "export", $0}' "$R/etc/exports" 2>/dev/null
	} 2>&1
}

# The LAN host's TCP probe of the box's port 22, at ADDR: "answered" or "refused".
cf_probe() {
	if ip netns exec "${P}lan" timeout 2 socat -u OPEN:/dev/null "TCP:$1:22,connect-timeout=1" 2>/dev/null; then echo answered; else echo refused; fi
}

# cf_same DESC A B: two observations compared field by field; each
# difference is a failure.
cf_same() {
	local desc=$1 a=$2 b=$3 d
	d=$(diff "$a" "$b" || true)
	if [ -z "$d" ]; then t_ok "$desc: every field equal ($(wc -l <"$a") fields)"; else t_fail "$desc: differs: $d"; fi
}

cf_now_ms() { date +%s%3N; }
