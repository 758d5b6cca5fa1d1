#!/usr/bin/env bash
# The real e1000 driver on a big-endian board (tests/beboard.sh; ppc: QEMU
# g3beige), through the board's own static nasboot running natively on its
# big-endian kernel: SIOCSIFMTU, SIOCSIFHWADDR, SIOCSIFTXQLEN (which
# qemu-user mistranslates for big-endian guests), SIOCETHTOOL rings,
# offloads and pause (which qemu-user does not translate at all; the tx
# ring clamped to the driver's 4096 with a note), and addresses, a static
# route with its metric and the default route by rtnetlink. Read back
# from /sys, with the
# board's BusyBox `ip` and with Debian's ethtool cross-built for the board
# (ioctl only: its own C structs against the same big-endian kernel); traffic to the LAN host in the nbbe namespace; a
# re-plan has nothing to do. SQM on eth1 (cake both ways at 5,000 and
# 8,000 kbit/s with overhead 44 and ATM cells, the IFB ifb4eth1, the
# ingress redirect) set through rtnetlink on the big-endian kernel and
# read back through nasboot's own dump (the board's BusyBox has no tc):
# the re-plan's "nothing to do"
# holds only if every value crossed both ways intact. On sparc64 (QEMU sun4u) eth1 is the sun4u's
# own Happy Meal (the kernel's hme driver) with offloads, a ring and pause
# asked of it too: what hme has (the netdev features) is read back with
# ethtool -k; what it lacks (get/set_ringparam, get/set_pauseparam) is
# a note from nasboot (`eth1 ring: not supported by the driver`, `eth1
# pause: ...`, checked), and the read-back is skipped with a SKIP line
# naming sunhme.c only when ethtool gets EOPNOTSUPP (any other answer is
# checked against the profile). One boot, about 25 s (ppc). Needs
# root.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/beboard.sh
. "$here/../beboard.sh"
t_need iproute2
be_setup e1000
ns=nbbe-nic-$$
be_ns "$ns"
ip netns exec "$ns" ip tuntap add dev nbbe0 mode tap
ip -n "$ns" addr add 192.168.77.1/24 dev nbbe0
ip -n "$ns" link set nbbe0 up

profile=$T_TOP/tests/profiles/be-e1000.toml
if [ "$BE_NIC2" = sunhme ]; then
	# eth1's [interface.ethtool], before [firewall]: what hme has and lacks.
	awk '/^\[firewall\]/ { while ((getline l < extra) > 0) print l } { print }' \
		extra="$T_TOP/tests/profiles/be-sunhme-ethtool.toml" "$profile" >"$work/profile.toml"
	profile=$work/profile.toml
fi

be_guest_lib >"$work/guest.sh"
cat >>"$work/guest.sh" <<'GUEST'
for i in eth0 eth1; do echo "guest: driver $i=$(basename "$(readlink /sys/class/net/$i/device/driver)")"; done
ethtool -g eth0 | w rings-before
ethtool -k eth1 | grep -E '^(scatter-gather|tx-checksumming):' | w offloads1-before
nasboot plan >/tmp/plan1 2>&1
w plan-before </tmp/plan1
nasboot -v apply >/tmp/apply1 2>&1
echo "guest: apply-exit=$?"
w apply </tmp/apply1
ethtool -g eth0 | sed -n '/^Current/,$p' | w rings
ethtool -k eth0 | grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|scatter-gather|tx-checksumming):' | w offloads
ethtool -a eth0 | w pause
ethtool -k eth1 | grep -E '^(generic-segmentation-offload|generic-receive-offload|scatter-gather|tx-checksumming):' | w offloads1
ethtool -g eth1 2>&1 | w rings1
ethtool -a eth1 2>&1 | w pause1
for i in eth0 eth1; do
	for f in mtu tx_queue_len address operstate; do echo "guest: sys $i $f=$(cat /sys/class/net/$i/$f)"; done
done
ip link show dev eth0 | w link0
ip link show dev eth1 | w link1
ip addr show dev eth0 | w addr0
ip -6 addr show dev eth0 | w addr0v6
ip addr show dev eth1 | w addr1
ip route show | w routes
ping -c 3 -W 5 192.168.77.1 >/dev/null && echo "guest: ping ok"
ping -c 2 -s 1372 -W 5 192.168.77.1 >/dev/null && echo "guest: ping at the MTU ok"
nasboot plan >/tmp/plan2 2>&1
w plan-again </tmp/plan2
nasboot apply >/tmp/apply2 2>&1
echo "guest: apply2-exit=$?"
w apply-again </tmp/apply2
nasboot status 2>&1 | w status
for q in eth1 ifb4eth1; do
	echo "guest: link $q=$(cat /sys/class/net/$q/operstate 2>&1) $(cat /sys/class/net/$q/ifalias 2>&1)"
done
GUEST

log=$work/e1000.log
be_boot_bg "$ns" "$log" 120 --profile "$profile" --script "$work/guest.sh" \
	--nic e1000:tap:nbbe0 --nic "$BE_NIC2:none"
be_wait_bg
t_eq "board powered off, guest script ran" 0 "$be_rc"
be_has "eth0 is the kernel's e1000 driver" 'guest: driver eth0=e1000' "$log"
be_has "eth1 is the kernel's $BE_NIC2_DRIVER driver (QEMU $BE_NIC2)" "guest: driver eth1=$BE_NIC2_DRIVER\\b" "$log"
be_has "ethtool reads the driver's maxima (e1000: 4096)" 'rings-before .*Pre-set maximums: RX: 4096 .*TX: 4096' "$log"
be_has "plan names the ring change" 'plan-before .*eth0.*ring' "$log"
be_has "plan names the txqueuelen change" 'plan-before .*eth0.*txqueuelen' "$log"
be_has "apply exit 0: a knob the driver lacks does not fail the boot" 'guest: apply-exit=0' "$log"
be_has "note names the interface and the knob (82540EM: no coalescing)" 'eth0 coalesce: not supported by the driver' "$log"
be_has "tx ring above the maximum (read by ETHTOOL_GRINGPARAM): clamped" 'eth0 tx_ring: 8192 is above the driver.s maximum 4096; clamped to 4096' "$log"
be_has "rx ring 512, tx ring clamped to 4096 (ethtool -g)" 'rings Current hardware settings: RX: 512 .*TX: 4096' "$log"
for k in tcp-segmentation-offload generic-segmentation-offload generic-receive-offload scatter-gather tx-checksumming; do
	be_has "offload $k off (ethtool -k)" "offloads .*$k: off" "$log"
done
be_has "pause frames off (ethtool -a)" 'pause .*Autonegotiate: off RX: off TX: off' "$log"
be_has "MTU 1400 (/sys)" 'sys eth0 mtu=1400' "$log"
be_has "txqueuelen 500 (/sys): SIOCSIFTXQLEN on a big-endian kernel" 'sys eth0 tx_queue_len=500' "$log"
be_has "MAC set (/sys)" 'sys eth0 address=02:00:00:00:77:02' "$log"
be_has "carrier waited for: link up when apply returns" 'sys eth0 operstate=up' "$log"
be_has "eth1 MTU 1280" 'sys eth1 mtu=1280' "$log"
be_has "eth1 txqueuelen 2000" 'sys eth1 tx_queue_len=2000' "$log"
be_has "eth1 MAC" 'sys eth1 address=02:00:00:00:78:02' "$log"
if [ "$BE_NIC2" = sunhme ]; then
	be_has "hme: scatter-gather and checksumming are on before apply (the witness can move)" 'offloads1-before .*tx-checksumming: on .*scatter-gather: on' "$log"
	for k in generic-segmentation-offload generic-receive-offload scatter-gather tx-checksumming; do
		be_has "hme: offload $k off (ethtool -k eth1)" "offloads1 .*$k: off" "$log"
	done
	be_has "hme: the ring is a note naming eth1, not a failure" 'eth1 ring[a-z_]*: not supported by the driver' "$log"
	be_has "hme: pause is a note naming eth1, not a failure" 'eth1 pause[a-z_]*: not supported by the driver' "$log"
	# The read-back only where the driver answers; skipped (named) only
	# on EOPNOTSUPP, any other answer is checked or fails.
	if grep -q 'rings1 Cannot get device ring settings: Operation not supported' "$log"; then
		echo "SKIP hme: ring read-back (ethtool -g eth1): sunhme.c has no get_ringparam (EOPNOTSUPP)"
	else
		be_has "hme: rx ring 256 (ethtool -g eth1)" 'rings1 .*Current hardware settings: RX: 256 ' "$log"
	fi
	if grep -q 'pause1 Cannot get device pause settings: Operation not supported' "$log"; then
		echo "SKIP hme: pause read-back (ethtool -a eth1): sunhme.c has no get_pauseparam (EOPNOTSUPP)"
	else
		be_has "hme: pause off (ethtool -a eth1)" 'pause1 .*Autonegotiate: off RX: off TX: off' "$log"
	fi
fi
be_has "BusyBox ip agrees: mtu 1400, qlen 500" 'link0 .*mtu 1400 .*qlen 500' "$log"
be_has "BusyBox ip agrees: eth1 mtu 1280, qlen 2000" 'link1 .*mtu 1280 .*qlen 2000' "$log"
be_has "address 192.168.77.2/24 (rtnetlink)" 'addr0 .*inet 192\.168\.77\.2/24' "$log"
be_has "IPv6 address fd77::2/64 (rtnetlink)" 'addr0v6 .*inet6 fd77::2/64' "$log"
be_has "eth1 address 198.51.100.2/24" 'addr1 .*inet 198\.51\.100\.2/24' "$log"
be_has "static route with its metric" 'routes .*10\.30\.0\.0/16 via 192\.168\.77\.1 dev eth0 .*metric 10' "$log"
be_has "default route via the WAN gateway" 'routes .*default via 198\.51\.100\.1 dev eth1' "$log"
be_has "traffic to the LAN host" 'guest: ping ok' "$log"
be_has "a full-size frame at MTU 1400 gets through" 'guest: ping at the MTU ok' "$log"
be_has "plan names the upload's cake (the WAN's root)" 'plan-before .*eth1: qdisc replace root handle 4e42: cake bandwidth 5000kbit besteffort overhead 44 atm' "$log"
be_has "and the download's (the IFB's), with the ingress redirect" 'plan-before .*ifb4eth1: qdisc replace root handle 4e42: cake bandwidth 8000kbit besteffort overhead 44 atm ingress .*eth1: filter add parent ffff: protocol all prio 10 u32 match u32 0 0 action mirred egress redirect dev ifb4eth1' "$log"
be_has "SQM read back from the big-endian kernel's dump: the WAN's cake (status)" 'status .*sqm eth1: cake bandwidth 5000kbit besteffort overhead 44 atm: sent' "$log"
be_has "and the IFB's (status)" 'status .*sqm ifb4eth1: cake bandwidth 8000kbit besteffort overhead 44 atm ingress: sent' "$log"
be_has "the IFB is nasboot's, and up" 'guest: link ifb4eth1=(up|unknown) nasboot' "$log"
be_has "re-plan: nothing to do" 'plan-again .*nothing to do: the board matches the profile' "$log"
be_has "re-apply: no action, exit 0" 'apply-again .*applied 0 action\(s\)' "$log"
be_has "re-apply exit 0" 'guest: apply2-exit=0' "$log"
t_done
