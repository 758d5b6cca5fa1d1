#!/usr/bin/python3
"""Crafted packets from the WAN host, for tests/firewall/attack.sh.

    wan-attack.py IFACE BOXMAC SRC4 BOX4 SRC6 BOX6 UDP_PORTS TCP_PORTS

Run in the WAN host's namespace (scapy from Debian's python3-scapy). Sends
frames straight to BOXMAC on IFACE (no ARP or neighbour discovery per
packet: a rule set that drops ND from the WAN must not slow the attack
down), over IPv4 and IPv6, to the box:

  udp     a datagram to each UDP port from each source port in SPORTS
          (53 and 123 are the DNS and NTP replies the stateless profile
          lets in, 67 and 547 DHCP's server ports, 1024 any other);
  syn     a TCP SYN to each TCP port from the same source ports;
  probe   ACK, FIN, Xmas (FIN PSH URG) and null segments to each TCP port;
  tiny    a SYN cut after 8 bytes of TCP header (RFC 1858's tiny
          fragment), the rest in a second fragment at offset 8;
  split   a SYN whose header is cut after 16 bytes (ports and flags in
          the first fragment, the rest of the header in the second);
  overlap a first fragment that reads as an ACK to the port, and a second
          one at offset 8 that rewrites the flags to SYN (RFC 1858 3.2),
          in both orders; the TCP checksum is the SYN's;
  ufrag   a UDP datagram from port 53 in two fragments; and the same with
          a second first fragment (offset 0) that rewrites the ports;
  chain6  IPv6 only: a first fragment that holds only a Destination
          Options header, the TCP or UDP header in the second fragment
          (RFC 7112's incomplete header chain);
  atomic6 IPv6 only: a SYN, and a UDP datagram from port 53, in an atomic
          fragment (fragment header, offset 0, no more fragments).

and, as the positive control, an ACK to port 50000, inside the local port
range, where the box's TCP stack must answer with RST (the replies to the
box's own connections arrive there).

Prints one line per TCP segment the box sent back ("synack|rst|other
FAMILY BOXPORT"), "sent N", and "dropped N": the frames the capture socket
lost (PACKET_STATISTICS). The capture sees every frame on IFACE, the
attack's own included, and scapy reads them in Python, so with scapy's
default 64 KiB receive buffer a loaded machine lost the box's answers
(an IPv6 RST missing from a CI run); the buffer is made large enough for
the whole attack, and a drop is reported rather than read as silence.
What reached the box's UDP listeners is in the listeners' own log
(tests/firewall/listen.py).
"""

import socket
import struct
import sys
import time

from scapy.all import (IP, TCP, UDP, AsyncSniffer, Ether, IPv6,
                       IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, Raw, conf)

conf.verb = 0
SPORTS = [53, 123, 67, 547, 1024]
DATA = b"nasboot-attack!!"  # 16 bytes: keeps fragment offsets whole
CONTROL_PORT = 50000
SOL_PACKET = 263  # <linux/socket.h>
SO_RCVBUFFORCE = 33  # <asm-generic/socket.h>; Python names only SO_RCVBUF
PACKET_STATISTICS = 6  # <linux/if_packet.h>: struct tpacket_stats
CAPTURE_BUFFER = 64 << 20  # the attack is ~2,000 frames of ~2 KiB truesize at most


def segment(l3, sport, dport, flags, data=b""):
    """A TCP segment's bytes with its checksum over L3's pseudo-header."""
    pkt = l3 / TCP(sport=sport, dport=dport, flags=flags, seq=1000, window=8192) / Raw(data)
    raw = bytes(pkt)
    return raw[len(bytes(l3)):] if not isinstance(l3, IP) else raw[raw[0] % 16 * 4:]


def datagram(l3, sport, dport, data=DATA):
    pkt = l3 / UDP(sport=sport, dport=dport) / Raw(data)
    raw = bytes(pkt)
    return raw[len(bytes(l3)):] if not isinstance(l3, IP) else raw[raw[0] % 16 * 4:]


class Attack:
    def __init__(self, iface, mac, src4, box4, src6, box6):
        self.sock = conf.L2socket(iface=iface)
        self.mac = mac
        self.ip = lambda: IP(src=src4, dst=box4)
        self.ip6 = lambda: IPv6(src=src6, dst=box6)
        self.ident = 4000
        self.sent = 0

    def out(self, pkts):
        for p in pkts:
            self.sock.send(Ether(dst=self.mac) / p)
            self.sent += 1

    def next_id(self):
        self.ident += 1
        return self.ident

    def frags4(self, proto, payload, cuts):
        """IPv4 fragments of PAYLOAD: (start, end) byte ranges, each start a
        multiple of 8; MF on all but the last range."""
        ident = self.next_id()
        out = []
        for i, (a, b) in enumerate(cuts):
            mf = "MF" if i < len(cuts) - 1 else 0
            out.append(IP(src=self.ip().src, dst=self.ip().dst, id=ident, proto=proto, flags=mf, frag=a // 8) / Raw(payload[a:b]))
        return out

    def frags6(self, nh, payload, cuts):
        ident = self.next_id()
        out = []
        for i, (a, b) in enumerate(cuts):
            m = 1 if i < len(cuts) - 1 else 0
            out.append(self.ip6() / IPv6ExtHdrFragment(nh=nh, offset=a // 8, m=m, id=ident) / Raw(payload[a:b]))
        return out

    def frags(self, f, proto, payload, cuts):
        return (self.frags4 if f == 4 else self.frags6)(proto, payload, cuts)

    @staticmethod
    def same_id(f, pkt, like):
        """Give PKT the fragment identification of LIKE."""
        if f == 4:
            pkt.id = like.id
        else:
            pkt[IPv6ExtHdrFragment].id = like[IPv6ExtHdrFragment].id

    def overlap(self, f, ack, syn):
        """A first fragment holding bytes 0-15 of ACK (its flags read ACK),
        and one at offset 8 holding bytes 8-end of SYN, with one id."""
        first = self.frags(f, 6, ack, [(0, 16), (16, 16)])[0]
        rest = self.frags(f, 6, syn, [(0, 8), (8, len(syn))])[1]
        self.same_id(f, rest, first)
        return first, rest

    def both(self, proto, payload, cuts):
        l3 = self.frags4(proto, payload[4], cuts) + self.frags6(proto, payload[6], cuts)
        self.out(l3)

    def run(self, udp_ports, tcp_ports):
        l3 = {4: self.ip(), 6: self.ip6()}
        for fam, base in l3.items():
            for dport in udp_ports:
                for sport in SPORTS:
                    self.out([base / UDP(sport=sport, dport=dport) / Raw(DATA)])
            for dport in tcp_ports:
                for sport in SPORTS:
                    self.out([base / TCP(sport=sport, dport=dport, flags="S", seq=1000)])
                for flags in ["A", "F", "FPU", ""]:
                    self.out([base / TCP(sport=2000, dport=dport, flags=flags, seq=1000)])
            self.out([base / TCP(sport=2001, dport=CONTROL_PORT, flags="A", seq=1000, ack=1)])
        for dport in tcp_ports:
            syn = {f: segment(b, 53, dport, "S", DATA) for f, b in l3.items()}
            ack = {f: segment(b, 53, dport, "A", DATA) for f, b in l3.items()}
            # The ACK reading carries the SYN's checksum: whichever copy of
            # bytes 8-15 reassembly kept, the result would be a valid SYN.
            ack = {f: a[:16] + syn[f][16:18] + a[18:] for f, a in ack.items()}
            self.both(6, syn, [(0, 8), (8, len(syn[4]))])  # tiny
            self.both(6, syn, [(0, 16), (16, len(syn[4]))])  # split
            for f in (4, 6):  # overlap, both orders
                first, rest = self.overlap(f, ack[f], syn[f])
                self.out([first, rest])
                first, rest = self.overlap(f, ack[f], syn[f])
                self.out([rest, first])
            opts = bytes(IPv6ExtHdrDestOpt(nh=6))
            self.out(self.frags6(60, opts + segment(l3[6], 53, dport, "S"), [(0, 8), (8, 8 + 20)]))
            self.out([self.ip6() / IPv6ExtHdrFragment(nh=6, offset=0, m=0, id=self.next_id()) / Raw(segment(l3[6], 53, dport, "S"))])
        for dport in udp_ports:
            dgram = {f: datagram(b, 53, dport, DATA * 2) for f, b in l3.items()}
            self.both(17, dgram, [(0, 16), (16, len(dgram[4]))])  # ufrag
            # A first fragment to a reply port inside the range, then a
            # second first fragment that rewrites the ports to DPORT.
            for f in (4, 6):
                lure = datagram(l3[f], 53, CONTROL_PORT, DATA * 2)
                fr = self.frags(f, 17, lure, [(0, 16), (16, len(lure))])
                over = self.frags(f, 17, dgram[f], [(0, 16), (16, 16)])[0]
                self.same_id(f, over, fr[0])
                self.out([fr[0], over, fr[1]])
            opts = bytes(IPv6ExtHdrDestOpt(nh=17))
            body = datagram(l3[6], 53, dport)
            self.out(self.frags6(60, opts + body, [(0, 8), (8, 8 + len(body))]))
            self.out([self.ip6() / IPv6ExtHdrFragment(nh=17, offset=0, m=0, id=self.next_id()) / Raw(body)])


def main():
    iface, mac, src4, box4, src6, box6, udp, tcp = sys.argv[1:9]
    udp_ports = [int(p) for p in udp.split(",") if p]
    tcp_ports = [int(p) for p in tcp.split(",") if p]
    boxes = {box4, box6}

    def from_box(p):
        return TCP in p and ((IP in p and p[IP].src in boxes) or (IPv6 in p and p[IPv6].src in boxes))

    capture = conf.L2listen(iface=iface)
    # SO_RCVBUFFORCE (root): past net.core.rmem_max.
    capture.ins.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, CAPTURE_BUFFER)
    capture.ins.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)  # reading resets the counters
    sniff = AsyncSniffer(opened_socket=capture, lfilter=from_box, store=True)
    sniff.start()
    time.sleep(0.5)
    attack = Attack(iface, mac, src4, box4, src6, box6)
    attack.run(udp_ports, tcp_ports)
    time.sleep(1.5)
    _, drops = struct.unpack("II", capture.ins.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
    answers = sniff.stop()
    capture.close()
    for p in answers:
        t = p[TCP]
        fam = "v4" if IP in p else "v6"
        kind = "synack" if (t.flags & 0x12) == 0x12 else "rst" if t.flags & 0x04 else "other"
        print(f"{kind} {fam} {t.sport}")
    print(f"sent {attack.sent}")
    print(f"dropped {drops}")


if __name__ == "__main__":
    main()
