#!/bin/sh
# Guest script: eth0 on the slirp network, busybox httpd on port 80 until the
# host asks for /stop (or 120 s pass).
drv=$(basename "$(readlink /sys/class/net/eth0/device/driver)")
echo "board: eth0 driver=$drv"
# Address from the kernel command line (board.ip=A.B.C.D/N, via --append),
# else the slirp default.
ipaddr=10.0.2.15/24
read -r cmdline </proc/cmdline
for w in $cmdline; do
    case $w in board.ip=*) ipaddr=${w#board.ip=} ;; esac
done
echo "board: eth0 address $ipaddr"
ip addr add "$ipaddr" dev eth0
ip link set eth0 up
[ "$ipaddr" != 10.0.2.15/24 ] || ip route add default via 10.0.2.2
mkdir -p /www
echo "hello from board" >/www/hello.txt
echo "stopping" >/www/stop
httpd -f -vv -p 80 -h /www 2>/tmp/httpd.log &
# The emulated link comes up ~2 s after `ip link set up`: wait for it, so the
# host's first connection is not lost (slirp would then back off).
i=0
while [ "$(cat /sys/class/net/eth0/operstate)" != up ] && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
echo "board: httpd up uptime=$(cut -d' ' -f1 /proc/uptime)"
i=0
while [ $i -lt 1200 ]; do
    grep -q 'url:/stop' /tmp/httpd.log && break
    sleep 0.1
    i=$((i + 1))
done
cat /tmp/httpd.log
grep -q 'url:/stop' /tmp/httpd.log
