# shellcheck shell=sh disable=SC2086
# The anchor for scripts/bench-net: the Bubba 2-like network bring-up as
# a board's boot script would do it, one ip/ethtool/sysctl process per
# step (Debian ifupdown and BusyBox ifup run exactly such commands).
# Data, not our code path: run with `sh` with $IP, $ETHTOOL and $SYSCTL
# set to the argv prefixes of the tools (possibly under qemu-user).
# It does the same work as scripts/bench-net's profile, from a fresh
# namespace.
set -e

# sysctls (global ones that are per network namespace, then per interface)
$SYSCTL -w net.ipv4.ip_forward=1
$SYSCTL -w net.ipv4.tcp_sack=1
$SYSCTL -w net.ipv4.tcp_window_scaling=1
$SYSCTL -w net.ipv6.conf.eth0.accept_ra=0
$SYSCTL -w net.ipv4.conf.eth0.rp_filter=1
$SYSCTL -w net.ipv6.conf.eth1.accept_ra=0

# eth0: WAN
$IP link set dev eth0 mtu 1500 qlen 500
$ETHTOOL -K eth0 tso off gro on
$IP link set dev eth0 up
$IP addr add 198.51.100.2/24 broadcast 198.51.100.255 dev eth0
$IP -6 addr add fd00:51::2/64 dev eth0
$IP route add default via 198.51.100.1 dev eth0

# eth1: LAN
$IP link set dev eth1 address 02:00:00:00:10:01
$IP link set dev eth1 mtu 1400 qlen 1000
$ETHTOOL -K eth1 tso off gro on
$IP link set dev eth1 up
$IP addr add 192.168.10.1/24 broadcast 192.168.10.255 dev eth1
$IP -6 addr add fd00:10::1/64 dev eth1
$IP route add 10.8.0.0/16 via 192.168.10.2 dev eth1
