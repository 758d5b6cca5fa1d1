#!/usr/bin/python3
"""Capture nf_tables replies as fuzz seeds for the nf_tables target: one
file per datagram the kernel sends. Run inside a fresh network namespace
holding nasboot's tables (loaded with `nft -f` of a golden rule set, say):
the dumps of its tables, chains, sets, set elements, flowtables and rules
(one GETSETELEM per set named on the command line), and the errors of a
batch the kernel refuses (a DELTABLE of a table that does not exist,
with and without the extended ack). Usage:
    capture-nftables.py DIR [SET...]"""
import os
import socket
import struct
import sys

NLM_F_REQUEST, NLM_F_DUMP, NLM_F_ACK = 1, 0x300, 4
SOL_NETLINK, NETLINK_CAP_ACK, NETLINK_EXT_ACK = 270, 10, 11
NFT = 10 << 8
GETTABLE, DELTABLE, GETCHAIN, GETRULE, GETSET, GETSETELEM, GETFLOWTABLE = 1, 2, 4, 7, 10, 13, 23
out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def attr(kind, value):
    """One attribute: header, value, padding to 4 bytes."""
    n = 4 + len(value)
    return struct.pack("=HH", n, kind) + value + b"\0" * ((4 - n % 4) % 4)


def msg(kind, flags, seq, family=1, res_id=0, body=b""):
    payload = struct.pack("=BBH", family, 0, res_id) + body
    return struct.pack("=LHHLL", 16 + len(payload), kind, flags, seq, 0) + payload


def sock(ext):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)
    s.bind((0, 0))
    if ext:
        s.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    return s


def keep(s, name, stop):
    n = 0
    while n < 8:
        data = s.recv(65536)
        with open(os.path.join(out, f"{name}-{n}"), "wb") as f:
            f.write(data)
        n += 1
        if stop(data):
            break


def last_type(d):
    """The type of the datagram's last message."""
    i, kind = 0, 0
    while i + 16 <= len(d):
        n, kind = struct.unpack_from("=LH", d, i)
        i += max(16, (n + 3) & ~3)
    return kind


def dump(kind, name, body=b""):
    s = sock(True)
    s.send(msg(NFT | kind, NLM_F_REQUEST | NLM_F_DUMP, 7, body=body))
    keep(s, name, lambda d: last_type(d) in (2, 3))


for kind, name in [(GETTABLE, "gettable"), (GETCHAIN, "getchain"), (GETSET, "getset"), (GETFLOWTABLE, "getflowtable"), (GETRULE, "getrule")]:
    dump(kind, name, attr(1, b"nasboot\0") if kind != GETTABLE else b"")
for i, setname in enumerate(sys.argv[2:]):
    dump(GETSETELEM, f"getsetelem{i}", attr(1, b"nasboot\0") + attr(2, setname.encode() + b"\0"))
for ext in (True, False):
    s = sock(ext)
    batch = msg(0x10, NLM_F_REQUEST, 20, family=0, res_id=socket.htons(10))
    batch += msg(NFT | DELTABLE, NLM_F_REQUEST | NLM_F_ACK, 21, body=attr(1, b"no-such-table\0"))
    batch += msg(0x11, NLM_F_REQUEST, 22, family=0, res_id=socket.htons(10))
    s.send(batch)
    keep(s, "refused-ext" if ext else "refused", lambda d: True)
