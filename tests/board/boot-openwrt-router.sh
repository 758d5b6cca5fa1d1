#!/bin/sh
# The anchor of scripts/bench-boot for the router profile: what an
# OpenWrt-class WNDR3700 runs at boot for what board/wndr3700-router.toml
# sets, with BusyBox's applets and Debian's nft, each called once the way
# netifd, fw4 and procd's scripts get it done:
# - the switch's LAN VLAN on eth0, the bridge br-lan with it as its port,
#   the LAN addresses (netifd does this over netlink itself; BusyBox ip is
#   the closest a script gets);
# - the WAN up with udhcpc started in the background and not waited for
#   (netifd runs it beside the boot, with the argv nasboot gives it),
#   router advertisements taken
#   with forwarding on (accept_ra 2), forwarding on: `sysctl -p` of a
#   sysctl.d file, as procd's sysctl script does;
# - `nft -f` of fw4's default rule set with flow offloading (shared/anchors),
#   LAN = br-lan and WAN = eth1, plus what fw4 renders for the profile's
#   port forward (tcp 2222 to 192.168.1.10:22);
# - BusyBox's watchdog daemon with the profile's timeout and interval.
# The caller waits until the watchdog is armed.
set -e
# BusyBox's applets, by their own names (as /sbin/ip and friends on
# OpenWrt), ahead of Debian's.
PATH=/opt/busybox:$PATH
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
nft -f /etc/bench/fw4.nft
watchdog -t 5 -T 20 /dev/watchdog
