#!/bin/sh
# The anchor of scripts/bench-boot --board (ppc, mips-be) for the router
# profile: the boot script a BusyBox-only router runs for what
# board/wndr3700-router.toml sets, with BusyBox's applets and the board's
# iptables (these boards have no nft):
# - BusyBox ip for the LAN VLAN on eth0, the bridge br-lan with it as its
#   port, the LAN addresses;
# - `sysctl -p` (forwarding, router advertisements on the WAN);
# - the WAN up, its DHCP client started in the background, not waited
#   for, with the argv nasboot gives it;
# - iptables-restore and ip6tables-restore of the same profile's rule set
#   as nasboot renders it for iptables (rendered on the board before the
#   runs: /etc/bench/router.v4, router.v6), each loaded once;
# - BusyBox's watchdog daemon with the profile's timeout and interval.
# The caller waits until the watchdog is armed.
set -e
ip link add link eth0 name eth0.1 type vlan id 1
ip link add br-lan type bridge
ip link set eth0.1 master br-lan
ip link set eth0 up
ip link set eth0.1 up
ip link set br-lan up
ip addr add 192.168.1.1/24 broadcast 192.168.1.255 dev br-lan
ip addr add fd00:1::1/64 dev br-lan
sysctl -q -p /etc/sysctl.d/router.conf
ip link set eth1 up
udhcpc -i eth1 -f -p /run/udhcpc.eth1.pid </dev/null >/dev/null 2>&1 &
iptables-restore --noflush </etc/bench/router.v4
ip6tables-restore --noflush </etc/bench/router.v6
watchdog -t 5 -T 20 /dev/watchdog
