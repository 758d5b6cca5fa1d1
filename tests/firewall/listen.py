#!/usr/bin/python3
"""Listeners for tests/firewall/attack.sh, run in the box's namespace.

    listen.py LOG READY UDP_PORTS TCP_PORTS

Binds one dual-stack socket (IPv6, IPV6_V6ONLY off, so IPv4 arrives too)
per port: UDP sockets log every datagram, TCP sockets every accepted
connection, one line each to LOG ("udp PORT SRC SPORT" / "tcp PORT SRC
SPORT"), flushed at once. Writes READY once every socket is bound. The
port lists are comma-separated. Runs until killed.
"""

import select
import socket
import sys


def bind(kind, port):
    s = socket.socket(socket.AF_INET6, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    if kind == socket.SOCK_STREAM:
        s.listen(64)
    return s


def main():
    log_path, ready, udp, tcp = sys.argv[1:5]
    socks = {}
    for p in filter(None, udp.split(",")):
        socks[bind(socket.SOCK_DGRAM, int(p))] = ("udp", int(p))
    for p in filter(None, tcp.split(",")):
        socks[bind(socket.SOCK_STREAM, int(p))] = ("tcp", int(p))
    log = open(log_path, "a", buffering=1)
    open(ready, "w").close()
    while True:
        readable, _, _ = select.select(list(socks), [], [])
        for s in readable:
            proto, port = socks[s]
            if proto == "udp":
                _, peer = s.recvfrom(65535)
            else:
                conn, peer = s.accept()
                conn.close()
            src = peer[0].removeprefix("::ffff:")
            log.write(f"{proto} {port} {src} {peer[1]}\n")


if __name__ == "__main__":
    main()
