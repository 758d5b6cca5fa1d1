#!/bin/sh
# The anchor for nasboot's SQM (tests/board/sqm-bottleneck.sh,
# scripts/bench-sqm): what an OpenWrt router's sqm-scripts do with their
# piece_of_cake.qos script, written out as plain tc calls (busybox sh or
# dash; iproute2's ip and tc). Run in the router's network namespace.
#
#   IFACE      the WAN (default eth1)
#   UP         egress shaper rate, kbit/s (cake on the WAN's root)
#   DOWN       ingress shaper rate, kbit/s (cake on ifb4IFACE, fed by an
#              ingress qdisc and a u32 match-all filter with a mirred
#              redirect); empty: egress only
#   OVERHEAD   bytes per packet the modem's link adds (default 0)
#   LINKLAYER  ethernet (default), atm or ptm
#
# `sqm-anchor.sh stop` removes what it made.
# TC and IP: iproute2's tc and ip (default: from PATH; Debian's BusyBox
# sh runs its own applets by those names first, so the board's scripts
# name /sbin/tc and /bin/ip).
TC=${TC:-tc}
IP=${IP:-ip}
IFACE=${IFACE:-eth1}
IFB=ifb4$IFACE
OVERHEAD=${OVERHEAD:-0}
case ${LINKLAYER:-ethernet} in
    atm) LL=atm ;;
    ptm) LL=ptm ;;
    *) LL=noatm ;;
esac

stop() {
    "$TC" qdisc del dev "$IFACE" root 2>/dev/null
    "$TC" qdisc del dev "$IFACE" handle ffff: ingress 2>/dev/null
    "$IP" link del "$IFB" 2>/dev/null
    return 0
}

if [ "${1:-}" = stop ]; then
    stop
    exit 0
fi
[ -n "${UP:-}" ] || { echo "sqm-anchor: UP is not set" >&2; exit 2; }

# Egress: cake on the WAN's root.
"$TC" qdisc replace dev "$IFACE" root cake bandwidth "${UP}kbit" besteffort $LL overhead "$OVERHEAD" || exit 1

[ -n "${DOWN:-}" ] || exit 0
# Ingress: everything the WAN receives is redirected to the IFB, whose
# root cake shapes it (the `ingress` keyword: count what arrives, drops
# included, against the rate).
"$TC" qdisc del dev "$IFACE" handle ffff: ingress 2>/dev/null
"$TC" qdisc add dev "$IFACE" handle ffff: ingress || exit 1
"$IP" link show "$IFB" >/dev/null 2>&1 || "$IP" link add "$IFB" type ifb || exit 1
"$TC" qdisc replace dev "$IFB" root cake bandwidth "${DOWN}kbit" besteffort $LL ingress overhead "$OVERHEAD" || exit 1
"$IP" link set dev "$IFB" up || exit 1
"$TC" filter add dev "$IFACE" parent ffff: protocol all prio 10 u32 match u32 0 0 flowid 1:1 \
    action mirred egress redirect dev "$IFB" || exit 1
