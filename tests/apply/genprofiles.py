#!/usr/bin/python3
"""Seeded random nasboot profiles for tests/apply/generated.sh.

genprofiles.py SEED COUNT DIR writes DIR/NNNN.toml, COUNT profiles drawn
from the schema (board/reference.toml names every key): interfaces with
roles, methods, addresses, routes, MTU and ethtool knobs; every firewall
key and value (profiles, backends, hooks, services, ports, pinned NFS
ports, local port range, log, forward with flow_offload, nat_reflection
and port forwards), bridges with ports and stp; sysctl presets and keys; storage;
NFS exports (paths with spaces and the characters exports(5) escapes,
clients of every kind, every option) and SMB shares (every backend, its
line first in [samba], guests and the users alice and bob). Some draws are
invalid on purpose (a port inside the local range, a service port twice,
an interface named twice...): `check` must refuse those with exit 2, and
the suite only loads what it accepts. The same SEED gives the same files.
Also writes DIR/NNNN.want: the WAN ports the profile opens (tcp and udp),
for the semantic probe.
"""
import os
import random
import sys

SERVICES = ["ssh", "http", "https", "nfs", "smb", "dns", "ntp"]
PORTS = {"ssh": (22,), "http": (80,), "https": (443,), "nfs": (111, 2049), "smb": (139, 445), "dns": (53,), "ntp": ()}
ODD = [" ", "\"", "#", "(", ")", ",", "\\", "é", "'"]


def q(s):
    """A TOML basic string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'


def tlist(items):
    return "[" + ", ".join(items) + "]"


def path(r):
    parts = []
    for _ in range(r.randint(1, 3)):
        name = "".join(r.choice("abcdefgh") for _ in range(r.randint(1, 6)))
        if r.random() < 0.3:
            name += r.choice(ODD) + "x"
        parts.append(name)
    return "/srv/" + "/".join(parts)


def client(r, lan):
    return r.choice([
        f"192.168.{lan}.0/24", f"192.168.{lan}.{r.randint(2, 250)}", "10.0.0.0/8", "fd00:10::/64",
        "fd00:10::5", "*.lan", "host" + str(r.randint(1, 9)), "*",
    ])


def profile(r, n):
    out = [f"[board]\nname = \"gen-{n}\"\n"]
    names = r.sample(["eth0", "eth1", "eth2", "lan0", "wan0", "br-x"], r.randint(1, 4))
    if n % 10 == 0:
        # The semantic probe's board: eth0 the WAN, eth1 the LAN.
        names = ["eth0", "eth1"]
    roles = {}
    for i, name in enumerate(names):
        role = r.choice(["lan", "wan", "lan", "wan", "none"]) if i > 1 else ("wan" if i == 0 else "lan")
        roles[name] = role
        s = f"[[interface]]\nname = {q(name)}\nrole = \"{role}\"\n"
        if name == "br-x" and r.random() < 0.7:
            # A bridge over ports the profile names nowhere else (the
            # rule sets name only the bridge).
            s += f"kind = \"bridge\"\nports = {tlist(q(p) for p in r.sample(['gp0', 'gp1', 'gp2'], r.randint(0, 2)))}\n"
            if r.random() < 0.3:
                s += f"stp = {r.choice(['true', 'false'])}\n"
        method = r.choice(["static", "static", "dhcp"]) if role != "lan" else "static"
        s += f"method = \"{method}\"\n"
        if method == "static":
            addrs = [f"192.168.{10 + i}.1/24"]
            if r.random() < 0.5:
                addrs.append(f"fd00:{10 + i}::1/64")
            s += f"address = {tlist(q(a) for a in addrs)}\n"
            if r.random() < 0.2:
                s += f"route = [{{ to = \"10.{30 + i}.0.0/16\", via = \"192.168.{10 + i}.254\", metric = {r.randint(0, 100)} }}]\n"
        if r.random() < 0.3:
            s += f"mtu = {r.choice([576, 1280, 1500, 9000, 68])}\n"
        if r.random() < 0.2:
            s += f"txqueuelen = {r.choice([100, 1000])}\n"
        if r.random() < 0.2:
            s += f"accept_ra = {r.choice([0, 1, 2])}\n"
        if r.random() < 0.2:
            s += "[interface.ethtool]\n" + "".join(
                f"{k} = {r.choice(['true', 'false'])}\n" for k in r.sample(["tso", "gso", "gro", "sg", "rx_checksum", "tx_checksum"], 2))
        out.append(s)
    fw = ["[firewall]"]
    prof = r.choice(["stateless", "stateless", "stateful", "off"])
    fw.append(f"profile = \"{prof}\"")
    fw.append(f"backend = \"{r.choice(['auto', 'nftables', 'iptables'])}\"")
    fw.append(f"hook = \"{r.choice(['auto', 'input', 'ingress'] if prof == 'stateless' else ['auto', 'input'])}\"")
    lan_services = r.choice([["all"], r.sample(SERVICES, r.randint(0, 4))])
    fw.append(f"lan_services = {tlist(q(s) for s in lan_services)}")
    wan_services = r.sample(SERVICES, r.randint(0, 2))
    fw.append(f"wan_services = {tlist(q(s) for s in wan_services)}")
    wan_tcp = sorted(set(r.choice([8080, 8443, 2222, 5000, 65535, 1, 40000]) for _ in range(r.randint(0, 3))))
    wan_udp = sorted(set(r.choice([51820, 1194, 500, 4500]) for _ in range(r.randint(0, 2))))
    fw.append(f"wan_tcp_ports = {tlist(str(p) for p in wan_tcp)}")
    fw.append(f"wan_udp_ports = {tlist(str(p) for p in wan_udp)}")
    if r.random() < 0.3:
        fw.append(f"lan_tcp_ports = {tlist(str(p) for p in r.sample([8080, 9000, 3000, 631], 2))}")
    if r.random() < 0.3:
        fw.append(f"mountd_port = {r.choice([4002, 32767, 20048, 45000])}")
    if r.random() < 0.2:
        fw.append(f"local_port_range = \"{r.choice(['32768-60999', '40000-50000', '1024-65535'])}\"")
    if r.random() < 0.3:
        fw.append(f"log = {r.choice(['true', 'false'])}")
        fw.append(f"log_rate = {r.choice([1, 10, 60])}")
    forwards = []
    if r.random() < 0.3:
        forward = r.choice(['true', 'false'])
        fw.append(f"forward = {forward}")
        if forward == "true":
            # The host kernel has no nf_flow_table, and these rule sets are
            # loaded as rendered: the flowtable one is the board's to load
            # (tests/firewall/board-router.sh).
            fw.append("flow_offload = \"off\"")
            if r.random() < 0.5:
                fw.append(f"nat_reflection = {r.choice(['true', 'false'])}")
            lans = [i for i, n in enumerate(names) if roles[n] == "lan"]
            for k in range(r.randint(0, 2) if lans else 0):
                i = r.choice(lans)
                # Sometimes outside every LAN network, or a WAN port twice:
                # refused.
                host = r.choice([f"192.168.{10 + i}.{50 + k}", f"192.168.{10 + i}.{50 + k}", "10.99.0.1"])
                forwards.append(f"[[firewall.port_forward]]\nproto = \"{r.choice(['tcp', 'udp'])}\"\nwan_port = {r.choice([2222, 8023, 8022, 2222])}\nto = \"{host}:{r.choice([22, 80, 51820])}\"\n")
    out.append("\n".join(fw) + "\n")
    out.extend(forwards)
    if r.random() < 0.4:
        out.append(f"[sysctl]\npreset = \"slow-cpu-nas\"\n")
    if r.random() < 0.2:
        out.append(f"[[storage]]\ndevice = \"sd{r.choice('ab')}\"\nread_ahead_kb = {r.choice([128, 1024, 4096])}\n")
    exports = []
    if r.random() < 0.7:
        nfs = ["[nfs]"]
        if r.random() < 0.5:
            nfs.append(f"versions = {tlist(q(v) for v in r.choice([['3'], ['3', '4'], ['4'], ['3', '4', '4.2'], ['4', '4.1'], ['4.2']]))}")
        if r.random() < 0.3:
            nfs.append(f"threads = {r.randint(1, 16)}")
        out.append("\n".join(nfs) + "\n")
        for _ in range(r.randint(1, 3)):
            p = path(r)
            exports.append(p)
            e = [f"[[nfs.export]]\npath = {q(p)}", f"clients = {tlist(q(c) for c in sorted(set(client(r, 10) for _ in range(r.randint(1, 3)))))}"]
            for k in r.sample(["rw", "sync", "secure", "subtree_check", "crossmnt", "no_wdelay"], r.randint(0, 3)):
                e.append(f"{k} = {r.choice(['true', 'false'])}")
            if r.random() < 0.3:
                e.append(f"squash = \"{r.choice(['root', 'all', 'none'])}\"")
            if r.random() < 0.2:
                e.append(f"anonuid = {r.choice([0, 1000, 65534])}")
            if r.random() < 0.2:
                e.append(f"fsid = {r.randint(0, 5)}")
            out.append("\n".join(e) + "\n")
    if r.random() < 0.4:
        lan = [n for n, role in roles.items() if role == "lan"]
        s = ["[samba]", f"backend = \"{r.choice(['auto', 'smbd', 'ksmbd'])}\"",
             f"workgroup = {q(r.choice(['WORKGROUP', 'HOME', 'NAS']))}"]
        if lan and r.random() < 0.5:
            s.append(f"interfaces = {tlist(q(n) for n in lan)}")
        if r.random() < 0.3:
            s.append(f"sendfile = {r.choice(['true', 'false'])}")
        out.append("\n".join(s) + "\n")
        for i in range(r.randint(1, 2)):
            sh = [f"[[samba.share]]\nname = {q(r.choice(['media', 'backup', 'pub', 'home']) + str(i))}",
                  f"path = {q(r.choice(exports) if exports else path(r))}"]
            if r.random() < 0.5:
                sh.append(f"read_only = {r.choice(['true', 'false'])}")
            if r.random() < 0.3:
                sh.append(f"guest_ok = {r.choice(['true', 'false'])}")
            if r.random() < 0.3:
                sh.append(f"comment = {q('share ' + str(i))}")
            if r.random() < 0.3:
                sh.append(f"valid_users = {tlist(q(u) for u in r.sample(['alice', 'bob'], r.randint(1, 2)))}")
            out.append("\n".join(sh) + "\n")
    tcp, udp = set(wan_tcp), set(wan_udp)
    for s in wan_services:
        tcp.update(PORTS[s])
        if s in ("nfs", "dns"):
            udp.update(PORTS[s])
        if s == "ntp":
            udp.add(123)
    want = f"profile {prof}\ntcp {' '.join(map(str, sorted(tcp)))}\nudp {' '.join(map(str, sorted(udp)))}\n"
    return "\n".join(out), want, names


def main():
    seed, count, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(d, exist_ok=True)
    r = random.Random(seed)
    for n in range(count):
        text, want, names = profile(r, n)
        with open(os.path.join(d, f"{n:04}.toml"), "w") as f:
            f.write(text)
        with open(os.path.join(d, f"{n:04}.want"), "w") as f:
            f.write(want + "ifaces " + " ".join(names) + "\n")


main()
