//! Listeners the stateless profile would expose: sockets bound inside the
//! local port range, read from `/proc/net/{tcp,tcp6,udp,udp6}`.
//!
//! Without connection tracking the WAN chain cannot tell a reply from a
//! probe, so it lets UDP from source port 53 or 123, and TCP without SYN,
//! in to the kernel's ephemeral ports, where the box's own connections
//! live. A service bound there (an unpinned rpc.statd, a forwarder's
//! upstream socket) is reachable that way: `check` and `plan` name each
//! one, so it is pinned below the range or opened on purpose.
//!
//! The format is the kernel's (net/ipv4/tcp_ipv4.c `get_tcp4_sock`,
//! net/ipv4/udp.c `udp4_format_sock`): after a header line, one socket a
//! line, `sl: LOCAL REMOTE STATE ...`, LOCAL as `ADDR:PORT` in hex. The
//! port is printed in host order; the address is the network-order word
//! (or, for IPv6, four words) printed as a native integer, so its bytes are
//! the word's native bytes. TCP listeners are in state 0A (TCP_LISTEN);
//! UDP sockets not connected to a peer are in state 07 (TCP_CLOSE).
//! Sockets bound to a loopback address are left out: the kernel drops
//! packets for 127.0.0.0/8 or ::1 that arrive on any other interface.
//!
//! Not covered: under qemu-user with a guest of the other byte order the
//! kernel's native words are the host's, so a non-wildcard address is shown
//! byte-swapped (the port is right).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use super::model::{Kind, Model};
use crate::config::types::PortRange;
use crate::paths;
use crate::seam::Seams;

/// TCP or UDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Proto {
    Tcp,
    Udp,
}

/// One socket bound inside the range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Listener {
    pub proto: Proto,
    pub addr: IpAddr,
    pub port: u16,
}

/// Where to find the sockets, and which state means "listening".
const TABLES: [(&str, Proto, &str); 4] = [
    (paths::PROC_NET_TCP, Proto::Tcp, "0A"),
    (paths::PROC_NET_TCP6, Proto::Tcp, "0A"),
    (paths::PROC_NET_UDP, Proto::Udp, "07"),
    (paths::PROC_NET_UDP6, Proto::Udp, "07"),
];

fn hex_addr(hex: &str) -> Option<IpAddr> {
    let word = |i: usize| hex.get(i * 8..i * 8 + 8).and_then(|w| u32::from_str_radix(w, 16).ok()).map(u32::to_ne_bytes);
    match hex.len() {
        8 => Some(IpAddr::V4(Ipv4Addr::from(word(0)?))),
        32 => {
            let mut b = [0u8; 16];
            for i in 0..4 {
                b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            Some(IpAddr::V6(Ipv6Addr::from(b)))
        }
        _ => None,
    }
}

/// The listening sockets of one `/proc/net` table, bound inside `range`
/// and not to loopback. Lines that do not parse are skipped.
pub(crate) fn parse(text: &str, proto: Proto, listening: &str, range: PortRange) -> Vec<Listener> {
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let mut f = line.split_whitespace();
        let (Some(_sl), Some(local), Some(_remote), Some(state)) = (f.next(), f.next(), f.next(), f.next()) else {
            continue;
        };
        if state != listening {
            continue;
        }
        let Some((addr, port)) = local.split_once(':') else { continue };
        let (Some(addr), Ok(port)) = (hex_addr(addr), u16::from_str_radix(port, 16)) else { continue };
        let loopback = match addr {
            IpAddr::V4(a) => a.is_loopback(),
            IpAddr::V6(a) => a.is_loopback() || a.to_ipv4_mapped().is_some_and(|m| m.is_loopback()),
        };
        if range.contains(port) && !loopback && !out.iter().any(|l: &Listener| l.addr == addr && l.port == port) {
            out.push(Listener { proto, addr, port });
        }
    }
    out
}

/// Whether the model's stateless reply rules guard any zone: only then can
/// a listener in the range be reached that way.
pub(crate) fn relevant(m: &Model) -> bool {
    m.kind == Kind::Stateless && (!m.wan_ifaces.is_empty() || (!m.lan.all && !m.lan_ifaces.is_empty()))
}

/// The listeners exposed through the reply rules: inside the range, not
/// loopback, and not on a port the WAN opens anyway. Reads only; a table
/// that cannot be read (no IPv6, an image under `--root`) is skipped.
pub(crate) fn observe(m: &Model, seams: &mut Seams<'_>) -> Vec<Listener> {
    if !relevant(m) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (path, proto, listening) in TABLES {
        let Ok(bytes) = seams.files.read(Path::new(path)) else { continue };
        let open = match proto {
            Proto::Tcp => &m.wan.tcp,
            Proto::Udp => &m.wan.udp,
        };
        let found = parse(&String::from_utf8_lossy(&bytes), proto, listening, m.reply_ports);
        out.extend(found.into_iter().filter(|l| !open.contains(&l.port)));
    }
    out
}

/// The notes `check` and `plan` print: one for each exposed listener.
pub(crate) fn notes(p: &crate::config::Profile, seams: &mut Seams<'_>) -> Vec<String> {
    let m = super::model::from_profile(p);
    observe(&m, seams).iter().map(|l| Note(l, m.reply_ports).to_string()).collect()
}

/// The note `check` and `plan` print for one listener.
pub(crate) struct Note<'a>(pub &'a Listener, pub PortRange);

impl fmt::Display for Note<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Note(l, range) = self;
        let (proto, how) = match l.proto {
            Proto::Tcp => ("tcp", "a WAN host cannot open a connection (SYN is dropped), but its other segments reach it"),
            Proto::Udp => ("udp", "a WAN host can reach it with UDP from source port 53 or 123"),
        };
        let addr = match l.addr {
            IpAddr::V6(a) => format!("[{a}]"),
            IpAddr::V4(a) => a.to_string(),
        };
        write!(
            f,
            "{proto} {addr}:{} listens inside firewall.local_port_range {range}: {how}; \
             pin the service below {} (see `ss -lntup`), or open the port on purpose in wan_{proto}_ports",
            l.port,
            range.lo()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An address as this machine's kernel prints it: native words.
    fn kernel_hex(a: IpAddr) -> String {
        let bytes = match a {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        };
        bytes.chunks(4).map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))).collect()
    }

    /// A /proc/net table: a header, then (address, port, state) lines.
    fn table(socks: &[(&str, u16, &str)]) -> String {
        let mut t = String::from("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n");
        for (i, (addr, port, st)) in socks.iter().enumerate() {
            let a: IpAddr = addr.parse().unwrap();
            let zero = kernel_hex(if a.is_ipv4() { Ipv4Addr::UNSPECIFIED.into() } else { Ipv6Addr::UNSPECIFIED.into() });
            t.push_str(&format!(
                "{i:>5}: {}:{port:04X} {zero}:0000 {st} 00000000:00000000 00:00000000 00000000     0        0 {} 2\n",
                kernel_hex(a),
                4242 + i
            ));
        }
        t
    }

    #[test]
    fn the_kernel_prints_127_0_0_1_as_0100007f_on_a_little_endian_host() {
        if cfg!(target_endian = "little") {
            assert_eq!(kernel_hex("127.0.0.1".parse().unwrap()), "0100007F");
        }
        assert_eq!(hex_addr(&kernel_hex("192.168.1.2".parse().unwrap())), Some("192.168.1.2".parse().unwrap()));
        assert_eq!(hex_addr(&kernel_hex("fd00::1".parse().unwrap())), Some("fd00::1".parse().unwrap()));
    }

    #[test]
    fn unconnected_udp_inside_the_range_is_named_loopback_and_connected_are_not() {
        // 40000 on 0.0.0.0 is named; 127.0.0.1:40001 is loopback; 111 is
        // below the range; the connected resolver socket is state 01.
        let udp = table(&[("0.0.0.0", 40000, "07"), ("127.0.0.1", 40001, "07"), ("0.0.0.0", 111, "07"), ("192.168.0.2", 33333, "01")]);
        let got = parse(&udp, Proto::Udp, "07", PortRange::LINUX_DEFAULT);
        assert_eq!(got, vec![Listener { proto: Proto::Udp, addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED), port: 40000 }]);
    }

    #[test]
    fn tcp6_listeners_inside_the_range() {
        // [::]:40002 is named; [::1]:40003, [::ffff:127.0.0.1]:40004 and
        // ssh are not; a connected socket (01) is no listener.
        let tcp6 = table(&[
            ("::", 40002, "0A"),
            ("::1", 40003, "0A"),
            ("::ffff:127.0.0.1", 40004, "0A"),
            ("::", 22, "0A"),
            ("fd00::2", 40005, "01"),
        ]);
        let got = parse(&tcp6, Proto::Tcp, "0A", PortRange::LINUX_DEFAULT);
        assert_eq!(got, vec![Listener { proto: Proto::Tcp, addr: IpAddr::V6(Ipv6Addr::UNSPECIFIED), port: 40002 }]);
    }

    #[test]
    fn a_narrower_range_changes_what_is_named() {
        let r: PortRange = "50000-60000".parse().unwrap();
        assert!(parse(&table(&[("0.0.0.0", 40000, "07")]), Proto::Udp, "07", r).is_empty());
    }

    #[test]
    fn garbage_lines_are_skipped() {
        let text = "header\nnot a socket line\n  1: zz:9C40 00000000:0000 07\n  2: 00000000:9C40\n";
        assert!(parse(text, Proto::Udp, "07", PortRange::LINUX_DEFAULT).is_empty());
    }

    #[test]
    fn the_note_names_the_socket_the_range_and_the_remedy() {
        let l = Listener { proto: Proto::Udp, addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED), port: 40000 };
        assert_eq!(
            Note(&l, PortRange::LINUX_DEFAULT).to_string(),
            "udp 0.0.0.0:40000 listens inside firewall.local_port_range 32768-60999: a WAN host can reach it with UDP \
             from source port 53 or 123; pin the service below 32768 (see `ss -lntup`), or open the port on purpose in wan_udp_ports"
        );
    }
}
