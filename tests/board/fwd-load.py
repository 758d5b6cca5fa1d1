#!/usr/bin/python3
"""Traffic across the emulated router board (tests/routerboard.sh), host side.

Stdlib only; runs in the LAN or WAN host's network namespace.

  fwd-load.py serve PORT               WAN host: TCP server (threads) and a
                                       UDP echo on the same port
  fwd-load.py up HOST PORT BYTES       send BYTES to the server (LAN->WAN)
  fwd-load.py down HOST PORT BYTES     the server sends BYTES back on the
                                       connection the client opened (WAN->LAN
                                       over an established flow)
  fwd-load.py short HOST PORT N SIZE CONC
                                       N connections, each fetching SIZE
                                       bytes then closed, CONC at a time
  fwd-load.py peer HOST PORT           print the client address the server saw
  fwd-load.py hold HOST PORT SECONDS   open a connection, send a little every
                                       0.2 s for SECONDS (a flow to find in the
                                       board's conntrack table); prints its
                                       local port first
  fwd-load.py udp HOST PORT SECONDS    the same with UDP datagrams, echoed
  fwd-load.py connect HOST PORT SECS   exit 0 if a TCP connection opens
                                       within SECS, 1 if refused or timed out
  fwd-load.py listen PORT              accept and close connections, IPv4 and
                                       IPv6 (a LAN host's service, for the WAN
                                       to attack)

Every transfer checks its byte count and exits 1 on a short one; up, down
and short print "BYTES SECONDS".
"""
import socket
import socketserver
import sys
import threading
import time

CHUNK = 65536
BLOCK = b"\xa5" * CHUNK


class Handler(socketserver.BaseRequestHandler):
    """First line: "up", "down N", "peer" or "hold"."""

    def handle(self):
        s = self.request
        f = s.makefile("rb")
        line = f.readline().decode().split()
        if not line:
            return
        if line[0] == "up":
            n = 0
            while True:
                b = f.read1(CHUNK)
                if not b:
                    break
                n += len(b)
            s.sendall(b"%d\n" % n)
        elif line[0] == "down":
            left = int(line[1])
            while left > 0:
                k = min(left, CHUNK)
                s.sendall(BLOCK[:k])
                left -= k
        elif line[0] == "peer":
            s.sendall(("%s\n" % self.client_address[0]).encode())
        elif line[0] == "hold":
            while f.read1(CHUNK):
                pass


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 128


def udp_echo(port):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", port))
    while True:
        b, a = u.recvfrom(2048)
        u.sendto(b, a)


def conn(host, port, timeout=30):
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_all(s):
    n = 0
    while True:
        b = s.recv(CHUNK)
        if not b:
            return n
        n += len(b)


def up(host, port, total):
    s = conn(host, port)
    s.sendall(b"up\n")
    left = total
    while left > 0:
        k = min(left, CHUNK)
        s.sendall(BLOCK[:k])
        left -= k
    s.shutdown(socket.SHUT_WR)
    got = int(s.makefile().readline() or -1)
    s.close()
    return got


def down(host, port, total):
    s = conn(host, port)
    s.sendall(b"down %d\n" % total)
    n = read_all(s)
    s.close()
    return n


def short(host, port, count, size, conc):
    done = [0]
    bad = [0]
    why = []
    lock = threading.Lock()
    todo = list(range(count))

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                todo.pop()
            try:
                n = down(host, port, size)
            except OSError as e:
                n = -1
                why.append(str(e))
            with lock:
                if n == size:
                    done[0] += n
                else:
                    bad[0] += 1

    ts = [threading.Thread(target=worker) for _ in range(conc)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if bad[0]:
        print("short: %d of %d connections failed (first: %s)" % (bad[0], count, why[0] if why else "short read"), file=sys.stderr)
    return done[0]


def timed(fn, want, *args):
    t0 = time.monotonic()
    got = fn(*args)
    dt = time.monotonic() - t0
    if got != want:
        print("short transfer: %d of %d bytes" % (got, want), file=sys.stderr)
        sys.exit(1)
    print("%d %.3f" % (got, dt))


def main(a):
    cmd = a[0]
    if cmd == "serve":
        port = int(a[1])
        threading.Thread(target=udp_echo, args=(port,), daemon=True).start()
        Server(("0.0.0.0", port), Handler).serve_forever()
    elif cmd == "listen":
        ls = socket.socket(socket.AF_INET6)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        ls.bind(("::", int(a[1])))
        ls.listen(16)
        while True:
            c, _ = ls.accept()
            c.close()
    elif cmd == "up":
        timed(up, int(a[3]), a[1], int(a[2]), int(a[3]))
    elif cmd == "down":
        timed(down, int(a[3]), a[1], int(a[2]), int(a[3]))
    elif cmd == "short":
        n, size, c = int(a[3]), int(a[4]), int(a[5])
        timed(short, n * size, a[1], int(a[2]), n, size, c)
    elif cmd == "peer":
        s = conn(a[1], int(a[2]))
        s.sendall(b"peer\n")
        print(s.makefile().readline().strip())
    elif cmd == "hold":
        s = conn(a[1], int(a[2]))
        print(s.getsockname()[1], flush=True)
        s.sendall(b"hold\n")
        end = time.monotonic() + float(a[3])
        while time.monotonic() < end:
            s.sendall(BLOCK[:512])
            time.sleep(0.2)
        s.close()
    elif cmd == "udp":
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.settimeout(2)
        u.connect((a[1], int(a[2])))
        print(u.getsockname()[1], flush=True)
        end = time.monotonic() + float(a[3])
        echoed = 0
        while time.monotonic() < end:
            u.send(b"x" * 200)
            try:
                echoed += len(u.recv(2048)) > 0
            except socket.timeout:
                pass
            time.sleep(0.2)
        print("echoed %d" % echoed, flush=True)
        sys.exit(0 if echoed else 1)
    elif cmd == "connect":
        try:
            socket.create_connection((a[1], int(a[2])), timeout=float(a[3])).close()
        except OSError as e:
            print("connect %s:%s: %s" % (a[1], a[2], e), file=sys.stderr)
            sys.exit(1)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
