#!/bin/sh
# Guest prelude (busybox sh), sourced by the router board scripts
# (tests/routerboard.sh): the iptables package's alternatives (legacy, as on
# the Bubba 2's 2.6 kernel), both links up, routing on. With ROUTER_ADDR=1
# the addresses are set here too (scripts/bench-forward: its rows switch
# only the rule set); otherwise `nasboot apply` sets them from the profile.
for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -sf xtables-legacy-multi "/usr/sbin/$t"
done
if [ "${ROUTER_ADDR:-0}" = 1 ]; then
    ip addr add 198.51.100.2/24 dev eth0
    ip addr add fd00:51::2/64 dev eth0
    ip addr add 192.168.1.1/24 dev eth1
    ip addr add fd00:1::1/64 dev eth1
fi
ip link set eth0 up
ip link set eth1 up
# A kernel with conntrack built in (the big-endian boards) sizes its table
# by the board's memory (256 MiB: a few thousand entries); bench-forward's
# rounds of short connections leave thousands in TIME_WAIT (120 s), and a
# full table drops new connections. Where conntrack is a module (mipsel)
# the sysctl is not there yet at this point.
[ -w /proc/sys/net/netfilter/nf_conntrack_max ] && echo 65536 >/proc/sys/net/netfilter/nf_conntrack_max
echo 1 >/proc/sys/net/ipv4/ip_forward
echo 1 >/proc/sys/net/ipv6/conf/all/forwarding
# The emulated links come up ~2 s after `ip link set up`.
i=0
while { [ "$(cat /sys/class/net/eth0/operstate)" != up ] || [ "$(cat /sys/class/net/eth1/operstate)" != up ]; } && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
echo "guest: links $(cat /sys/class/net/eth0/operstate) $(cat /sys/class/net/eth1/operstate)"
for m in nf_flow_table nf_flow_table_inet nft_flow_offload; do
    grep -q "^$m " /proc/modules && echo "guest: module $m loaded"
done
