#!/usr/bin/python3
"""Hold an nf_tables table as its owner, for tests/firewall/netlink.sh.

own-table.py FAMILY NAME creates table NAME (FAMILY: ip or inet) with the
NFT_TABLE_F_OWNER flag (Linux 5.12): the kernel refuses any other socket's
change to it (EPERM) and removes it when this process's socket closes.
Prints "held" once the kernel has committed it, then waits for standard
input to close. Exit 1 if the kernel refuses it (printed with its errno).
"""
import socket
import struct
import sys

NFT = 10 << 8
NEWTABLE, GETGEN = 0, 16
NLM_F_REQUEST, NLM_F_ACK, NLM_F_CREATE = 1, 4, 0x400
FAMILIES = {"ip": 2, "inet": 1}
NFT_TABLE_F_OWNER = 2


def attr(kind, value):
    n = 4 + len(value)
    return struct.pack("=HH", n, kind) + value + b"\0" * ((4 - n % 4) % 4)


def msg(kind, flags, seq, family, body=b"", res_id=0):
    payload = struct.pack("=BBH", family, 0, res_id) + body
    return struct.pack("=LHHLL", 16 + len(payload), kind, flags, seq, 0) + payload


family, name = FAMILIES[sys.argv[1]], sys.argv[2]
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)
s.bind((0, 0))
body = attr(1, name.encode() + b"\0") + attr(2, struct.pack(">I", NFT_TABLE_F_OWNER))
batch = msg(0x10, NLM_F_REQUEST, 1, 0, res_id=socket.htons(10))
batch += msg(NFT | NEWTABLE, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK, 2, family, body)
batch += msg(0x11, NLM_F_REQUEST, 3, 0, res_id=socket.htons(10))
s.send(batch)
reply = s.recv(65536)
length, kind = struct.unpack_from("=LH", reply, 0)
if kind != 2:
    sys.exit(f"own-table: unexpected reply type {kind}")
(code,) = struct.unpack_from("=i", reply, 16)
if code != 0:
    sys.exit(f"own-table: the kernel refused the table: errno {-code}")
print("held", flush=True)
sys.stdin.read()
