#!/bin/sh
# The anchor of scripts/bench-boot for the router profile: what an
# OpenWrt-class WNDR3700 runs at boot for what board/wndr3700-router.toml
# sets, with BusyBox's applets and Debian's nft, each called once the way
# netifd, fw4 and procd's scripts get it done:
# - the links, forwarding and the WAN's DHCP client
#   (tests/board/boot-router-links.sh);
# - `nft -f` of fw4's default rule set with flow offloading (shared/anchors),
#   LAN = br-lan and WAN = eth1, plus what fw4 renders for the profile's
#   port forward (tcp 2222 to 192.168.1.10:22);
# - BusyBox's watchdog daemon with the profile's timeout and interval.
# The caller waits until the watchdog is armed.
set -e
# BusyBox's applets, by their own names (as /sbin/ip and friends on
# OpenWrt), ahead of Debian's.
PATH=/opt/busybox:$PATH
# shellcheck source=tests/board/boot-router-links.sh
. /etc/bench/router-links.sh
nft -f /etc/bench/fw4.nft
watchdog -t 5 -T 20 /dev/watchdog
