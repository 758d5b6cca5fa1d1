#!/bin/sh
# The anchor of scripts/bench-boot for the NAS profile: what a Debian
# Bubba 2 runs at boot for what board/bubba2.toml sets, with Debian's own
# tools (iproute2, procps, iptables, nfs-kernel-server, watchdog), each
# the way its package's boot script calls it, and nothing more:
# - ifupdown's `inet dhcp` and `inet static` stanzas for eth0 and eth1:
#   its ip calls; the WAN as `allow-hotplug`, whose DHCP client udev's
#   ifup runs beside the boot rather than in its way: here BusyBox's
#   udhcpc started in the background and not waited for, with the argv
#   nasboot gives it (ifupdown's own udhcpc call waits for a lease);
# - `sysctl -p` of the preset (procps' boot script) and the read-ahead
#   (a udev rule's write to sysfs);
# - the Bubba's own if-pre-up line: iptables-restore of its shipped
#   /etc/network/firewall.conf (shared/anchors);
# - nfs-kernel-server's `exportfs -r` (its init script; nfsd itself runs
#   already, on both sides);
# - the watchdog package's daemon, started as its init script starts it
#   (without the start-stop-daemon around it), with the profile's timeout
#   and interval in /etc/watchdog.conf.
# The caller waits until the watchdog is armed.
set -e
/bin/ip link set dev eth0 up
/sbin/udhcpc -i eth0 -f -p /run/udhcpc.eth0.pid </dev/null >/dev/null 2>&1 &
/bin/ip link set dev eth1 mtu 1500 txqueuelen 1000
/bin/ip addr add 192.168.10.1/24 broadcast 192.168.10.255 dev eth1 label eth1
/bin/ip link set dev eth1 up
/sbin/sysctl -q -p /etc/sysctl.d/bubba.conf
echo 1024 >/sys/block/sda/queue/read_ahead_kb
iptables-restore </etc/network/firewall.conf
exportfs -r
/usr/sbin/watchdog
