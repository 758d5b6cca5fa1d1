# shellcheck shell=sh
# Sourced by both router anchors of scripts/bench-boot
# (boot-openwrt-router.sh, boot-busybox-router.sh): the links of
# board/wndr3700-router.toml with BusyBox's ip, and sysctl -p:
# - the switch's LAN VLAN on eth0, the bridge br-lan with it as its port,
#   the LAN addresses (OpenWrt's netifd does this over netlink itself;
#   BusyBox ip is the closest a script gets);
# - forwarding on, router advertisements taken on the WAN with it
#   (accept_ra 2): `sysctl -p` of a sysctl.d file, as procd's sysctl
#   script does;
# - the WAN up, its DHCP client started in the background and not waited
#   for (netifd runs it beside the boot), with the argv nasboot gives it.
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
