#!/usr/bin/python3
"""A WAN host on an 802.1Q VLAN, for tests/firewall/board-vlan.sh.

    vlan-peer.py IFACE VID ADDR MAC LOG

The host kernel here has no 802.1Q, so this answers in user space (scapy,
raw frames on IFACE): ARP requests for ADDR and ICMP echo requests to ADDR
that arrive tagged with VLAN VID get their replies tagged with VID, from
MAC. Every tagged frame seen is logged to LOG, one line each:
"vlan VID arp SRC" or "vlan VID icmp SRC", flushed at once. Untagged
frames, and frames of other VLANs, get no answer (logged as "untagged ..."
or "vlan N ..."). Runs until killed.
"""

import sys

from scapy.all import ARP, Dot1Q, Ether, ICMP, IP, conf, sendp, sniff  # noqa: E402


def main():
    iface, vid, addr, mac, log_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    conf.verb = 0
    log = open(log_path, "a", buffering=1)

    def seen(p):
        tag = f"vlan {p[Dot1Q].vlan}" if Dot1Q in p else "untagged"
        if ARP in p and p[ARP].op == 1 and p[ARP].pdst == addr:
            log.write(f"{tag} arp {p[ARP].psrc}\n")
            if Dot1Q in p and p[Dot1Q].vlan == vid:
                sendp(Ether(src=mac, dst=p[Ether].src) / Dot1Q(vlan=vid) /
                      ARP(op=2, hwsrc=mac, psrc=addr, hwdst=p[ARP].hwsrc, pdst=p[ARP].psrc), iface=iface)
        elif IP in p and ICMP in p and p[IP].dst == addr and p[ICMP].type == 8:
            log.write(f"{tag} icmp {p[IP].src}\n")
            if Dot1Q in p and p[Dot1Q].vlan == vid:
                ip = p[IP]
                sendp(Ether(src=mac, dst=p[Ether].src) / Dot1Q(vlan=vid) /
                      IP(src=addr, dst=ip.src) / ICMP(type=0, id=ip[ICMP].id, seq=ip[ICMP].seq) / ip[ICMP].payload,
                      iface=iface)

    sniff(iface=iface, prn=seen, store=False)


main()
