#!/usr/bin/env bash
# The stateless firewall on a big-endian board (tests/beboard.sh; ppc: QEMU
# g3beige), loaded by the board's nasboot into its own big-endian kernel,
# once with the board's static iptables-restore and once through netlink
# by nasboot itself (the board has no nft: the bytes of its nf_tables
# messages must be right for this byte order, or the rules do not load or
# do not match), and probed as a client and an attacker would:
# from a LAN and a WAN network namespace on the host side of the board's
# two taps. The board runs BusyBox httpd on 22, 80 and 8080. The LAN
# reaches ssh and http, not 8080; the WAN reaches nothing (SYN, SYN from
# port 53 and from inside the local port range, IPv6, ICMP echo, the LAN
# address through the WAN link), while the WAN link itself works (the
# board answers ARP: a refused probe is the firewall); conntrack is never
# engaged
# (nf_conntrack_count stays 0), and a ct rule loaded afterwards shows that
# the count does move. The WAN NIC is the NIC suite's second one
# (tests/beboard.sh: e1000, or on sparc64 the sun4u's Happy Meal, hme).
# One boot per backend, about 40 s each. Needs root.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/beboard.sh
. "$here/../beboard.sh"
t_need iproute2 netcat-openbsd iputils-ping
be_setup firewall
lan=nbbe-lan-$$
wan=nbbe-wan-$$
be_ns "$lan"
be_ns "$wan"

cat >"$work/guest.sh" <<'GUEST'
# wait_go: until the host sends a line to port 7000 (this BusyBox nc -l
# does not end when the peer closes: read the line through a FIFO).
wait_go() {
	rm -f /tmp/go
	mkfifo /tmp/go
	nc -l -p 7000 >/tmp/go &
	read -r _ </tmp/go
	kill $! 2>/dev/null
}
# The board has no nft; should a build of it ever be cached, it goes.
rm -f /usr/sbin/nft /usr/bin/nft /sbin/nft
mkdir -p /www && echo board >/www/index.html
for p in 22 80 8080; do httpd -p "$p" -h /www; done
nasboot -v apply >/tmp/apply 2>&1
echo "guest: apply-exit=$?"
sed 's/^/guest: apply: /' /tmp/apply
read -r backend </etc/board/backend
if [ "$backend" = nftables ]; then
	command -v nft >/dev/null || echo "guest: no nft binary"
	echo "guest: status $(nasboot status 2>&1 | grep firewall:)"
	nasboot status 2>&1 | grep -q "through netlink, nasboot's rules loaded" && echo "guest: rules=netlink"
else
	iptables-save | grep -c '^-A nasboot' | sed 's/^/guest: rules=/'
	ip6tables-save | grep -c '^-A nasboot' | sed 's/^/guest: rules6=/'
	iptables -S INPUT | tr '\n' ' ' | sed 's/^/guest: input /'; echo
fi
echo "guest: ct-count-before=$(cat /proc/sys/net/netfilter/nf_conntrack_count)"
echo "guest: ready"
wait_go
echo "guest: ct-count-after=$(cat /proc/sys/net/netfilter/nf_conntrack_count)"
# The witness moves: a rule that uses conntrack, then traffic.
iptables -t filter -I INPUT 1 -m conntrack --ctstate NEW -j ACCEPT
echo "guest: control ready"
wait_go
echo "guest: ct-count-control=$(cat /proc/sys/net/netfilter/nf_conntrack_count)"
GUEST

for backend in iptables nftables; do
	sed "s/^backend = .*/backend = \"$backend\"/" "$T_TOP/tests/profiles/be-firewall.toml" >"$work/p.toml"
	echo "$backend" >"$work/backend"
	ip netns exec "$lan" ip tuntap add dev nbbeL mode tap
	ip netns exec "$lan" ip tuntap add dev nbbeW mode tap
	ip -n "$lan" addr add 192.168.77.1/24 dev nbbeL
	ip -n "$lan" addr add fd77::1/64 dev nbbeL nodad
	ip -n "$lan" link set nbbeL up
	ip -n "$lan" link set nbbeW up
	log=$work/firewall-$backend.log
	be_boot_bg "$lan" "$log" 150 --profile "$work/p.toml" --script "$work/guest.sh" \
		--file "$work/backend:/etc/board/backend" --nic e1000:tap:nbbeL --nic "$BE_NIC2:tap:nbbeW"
	# QEMU holds both taps once the kernel runs; the WAN's moves to its own
	# namespace, the board still attached.
	if be_wait_for 'board: init up' 60; then
		ip -n "$lan" link set nbbeW netns "$wan"
	fi
	ip -n "$wan" addr add 198.51.100.1/24 dev nbbeW
	ip -n "$wan" addr add 2001:db8:51::1/64 dev nbbeW nodad
	ip -n "$wan" link set nbbeW up
	b=$backend
	# release: let the guest's `nc -l -p 7000` go on.
	release() { ip netns exec "$lan" bash -c 'exec 3<>/dev/tcp/192.168.77.2/7000 && echo go >&3' 2>/dev/null; }
	# reach NS ADDR PORT [nc options]: a TCP connect within 2 s.
	reach() {
		local ns=$1 addr=$2 port=$3
		shift 3
		ip netns exec "$ns" nc -z -w 2 "$@" "$addr" "$port" 2>/dev/null
	}
	if be_wait_for 'guest: ready' 90; then
		be_has "$b: nasboot apply exit 0" 'guest: apply-exit=0' "$log"
		if [ "$b" = nftables ]; then
			be_has "$b: the board has no nft binary" 'guest: no nft binary' "$log"
			be_has "$b: loaded by nasboot itself through netlink, and status sees it" 'guest: rules=netlink' "$log"
			be_has "$b: apply said so" 'guest: apply: .*firewall: load the nftables rule set \([0-9]+ lines\) through netlink' "$log"
		else
			be_has "$b: rule set loaded by the board's own iptables-restore" 'guest: rules=[1-9]' "$log"
		fi
		# The LAN has its address once the IPv6 side answers; give DAD a moment.
		sleep 1
		for p in 22 80; do
			t_check "$b: LAN reaches tcp/$p" reach "$lan" 192.168.77.2 "$p"
			t_check "$b: LAN reaches tcp/$p over IPv6" reach "$lan" fd77::2 "$p"
		done
		t_check "$b: LAN does not reach tcp/8080 (not a LAN service)" bash -c "! ip netns exec $lan nc -z -w 2 192.168.77.2 8080"
		t_check "$b: LAN pings the board" ip netns exec "$lan" ping -c 1 -W 3 192.168.77.2
		t_check "$b: the WAN link works (the board answers ARP: a refused probe is the firewall, not the wire)" \
			bash -c "ip netns exec $wan ping -c 1 -W 2 198.51.100.2 >/dev/null; ip -n $wan neigh show 198.51.100.2 | grep -q lladdr"
		for p in 22 80 8080; do
			t_check "$b: WAN does not reach tcp/$p" bash -c "! ip netns exec $wan nc -z -w 2 198.51.100.2 $p"
			t_check "$b: WAN does not reach tcp/$p from source port 53" bash -c "! ip netns exec $wan nc -z -w 2 -p 53 198.51.100.2 $p"
			t_check "$b: WAN does not reach tcp/$p over IPv6" bash -c "! ip netns exec $wan nc -z -w 2 2001:db8:51::2 $p"
		done
		t_check "$b: WAN does not reach tcp/80 from inside the local port range (40000)" bash -c "! ip netns exec $wan nc -z -w 2 -p 40000 198.51.100.2 80"
		t_check "$b: WAN ping (echo request) dropped" bash -c "! ip netns exec $wan ping -c 1 -W 2 198.51.100.2"
		ip -n "$wan" route add 192.168.77.0/24 via 198.51.100.2 2>/dev/null || true
		t_check "$b: WAN to the LAN address dropped (the input interface decides)" bash -c "! ip netns exec $wan nc -z -w 2 192.168.77.2 80"
		release || true
		if be_wait_for 'guest: control ready' 20; then
			be_has "$b: conntrack never engaged: count 0 before the probes" 'guest: ct-count-before=0' "$log"
			be_has "$b: conntrack never engaged: count 0 after the LAN and WAN probes" 'guest: ct-count-after=0' "$log"
			ip netns exec "$lan" ping -c 2 -W 3 192.168.77.2 >/dev/null || true
			release || true
		else
			t_fail "$b: the guest never reached its conntrack control"
		fi
	else
		t_fail "$b: the board never came up with its firewall (guest: ready)"
	fi
	be_wait_bg
	t_eq "$b: board powered off, guest script ran" 0 "$be_rc"
	n=$(sed -n 's/.*guest: ct-count-control=\([0-9]*\).*/\1/p' "$log" | tr -d '\r')
	if [ "${n:-0}" -gt 0 ]; then
		t_ok "$b: control: a rule that uses conntrack does engage it (count $n): the witness moves"
	else
		t_fail "$b: control: count [${n}] with a conntrack rule loaded"
	fi
	ip -n "$lan" link del nbbeL 2>/dev/null || true
	ip -n "$wan" link del nbbeW 2>/dev/null || true
done
t_done
