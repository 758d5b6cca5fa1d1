#!/usr/bin/python3
"""Capture rtnetlink dump replies as fuzz seeds for the netlink target:
one file per received datagram, RTM_GETADDR and RTM_GETROUTE dumps of this
machine's (or this namespace's) tables. Usage: capture-netlink.py DIR"""
import os
import socket
import struct
import sys

NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
RTM_GETADDR, RTM_GETROUTE = 22, 26


def dump(kind, body, name, out):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.bind((0, 0))
    seq = 7
    s.send(struct.pack("=LHHLL", 16 + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body)
    n = 0
    while True:
        data = s.recv(65536)
        with open(os.path.join(out, f"{name}-{n}"), "wb") as f:
            f.write(data)
        n += 1
        if struct.unpack_from("=H", data, 4)[0] in (2, 3) or n > 8:
            break


out = sys.argv[1]
dump(RTM_GETADDR, struct.pack("=BBBBI", 0, 0, 0, 0, 0), "getaddr", out)
dump(RTM_GETROUTE, struct.pack("=BBBBBBBBI", 0, 0, 0, 0, 0, 0, 0, 0, 0), "getroute", out)
