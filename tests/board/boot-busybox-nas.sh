#!/bin/sh
# The anchor of scripts/bench-boot --board (ppc, mips-be) for the NAS
# profile: the boot script a BusyBox-only board runs for what
# board/bubba2.toml sets without its exports (these boards have no
# nfs-utils), with BusyBox's applets and the board's iptables:
# - BusyBox ip for the links and the LAN address, ifconfig for the queue
#   length (BusyBox ip has no txqueuelen);
# - the WAN's DHCP client started in the background, not waited for, with
#   the argv nasboot gives it;
# - `sysctl -p` of the preset and the read-ahead;
# - iptables-restore of the Bubba's shipped rules (shared/anchors);
# - BusyBox's watchdog daemon with the profile's timeout and interval.
# The caller waits until the watchdog is armed.
set -e
ip link set dev eth0 up
udhcpc -i eth0 -f -p /run/udhcpc.eth0.pid </dev/null >/dev/null 2>&1 &
ip link set dev eth1 mtu 1500
ifconfig eth1 txqueuelen 1000
ip addr add 192.168.10.1/24 broadcast 192.168.10.255 dev eth1
ip link set dev eth1 up
sysctl -q -p /etc/sysctl.d/bubba.conf
echo 1024 >/sys/block/sda/queue/read_ahead_kb
iptables-restore </etc/network/firewall.conf
watchdog -t 10 -T 30 /dev/watchdog
