//! rtnetlink (rtnetlink(7)) for addresses and routes, on a blocking
//! netlink socket: one request, read until the ACK or NLMSG_DONE. No
//! async runtime. Messages are built and parsed with
//! netlink-packet-route (sans-I/O); netlink-sys is only the socket.
//!
//! Why netlink rather than the SIOCSIFADDR family of ioctls: an interface
//! may carry several IPv4 addresses (the ioctls see only the first, or
//! need `eth0:1` aliases), IPv6 addresses and routes have no ioctl that
//! can list them, and rtnetlink is in every 2.6 kernel.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL, NLM_F_REPLACE,
    NLM_F_REQUEST,
};
use netlink_packet_route::address::{AddressAttribute, AddressMessage, AddressScope};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteProtocol, RouteScope, RouteType,
};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use crate::config::types::IpNet;
use crate::seam::netif::RouteEntry;

/// A bound rtnetlink socket.
pub struct Rtnl {
    sock: Socket,
    seq: u32,
    buf: Vec<u8>,
}

impl Rtnl {
    pub fn open() -> io::Result<Rtnl> {
        let mut sock = Socket::new(NETLINK_ROUTE)?;
        sock.bind_auto()?;
        sock.connect(&SocketAddr::new(0, 0))?;
        Ok(Rtnl { sock, seq: 0, buf: vec![0; 64 * 1024] })
    }

    fn send(&mut self, msg: RouteNetlinkMessage, flags: u16) -> io::Result<u32> {
        self.seq = self.seq.wrapping_add(1);
        let mut hdr = NetlinkHeader::default();
        hdr.flags = flags;
        hdr.sequence_number = self.seq;
        let mut packet = NetlinkMessage::new(hdr, NetlinkPayload::from(msg));
        packet.finalize();
        let mut out = vec![0u8; packet.buffer_len()];
        packet.serialize(&mut out);
        self.sock.send(&out, 0)?;
        Ok(self.seq)
    }

    /// Receive the answers to request `seq`, handing each inner message to
    /// `each`, until NLMSG_DONE (dumps) or the ACK (requests).
    fn receive(&mut self, seq: u32, mut each: impl FnMut(RouteNetlinkMessage)) -> io::Result<()> {
        loop {
            let n = self.sock.recv(&mut &mut self.buf[..], 0)?.min(self.buf.len());
            let mut off = 0;
            while off + 16 <= n {
                let len = u32::from_ne_bytes(self.buf[off..off + 4].try_into().expect("4 bytes")) as usize;
                if len < 16 || off + len > n {
                    return Err(io::Error::other("truncated netlink message"));
                }
                let this_seq = u32::from_ne_bytes(self.buf[off + 8..off + 12].try_into().expect("4 bytes"));
                let parsed = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&self.buf[off..off + len]);
                off += (len + 3) & !3;
                if this_seq != seq {
                    continue;
                }
                match parsed {
                    Ok(m) => match m.payload {
                        NetlinkPayload::Done(_) => return Ok(()),
                        NetlinkPayload::Error(e) => {
                            return match e.code {
                                None => Ok(()),
                                Some(code) => Err(io::Error::from_raw_os_error(-code.get())),
                            }
                        }
                        NetlinkPayload::InnerMessage(inner) => each(inner),
                        _ => {}
                    },
                    // An attribute this parser does not know: skip the message.
                    Err(e) => log::debug!("rtnetlink: skipped a message: {e}"),
                }
            }
        }
    }

    fn dump(&mut self, msg: RouteNetlinkMessage, mut each: impl FnMut(RouteNetlinkMessage)) -> io::Result<()> {
        let seq = self.send(msg, NLM_F_REQUEST | NLM_F_DUMP)?;
        self.receive(seq, &mut each)
    }

    fn request(&mut self, msg: RouteNetlinkMessage, flags: u16) -> io::Result<()> {
        let seq = self.send(msg, NLM_F_REQUEST | NLM_F_ACK | flags)?;
        self.receive(seq, |_| {})
    }

    /// RTM_GETADDR dump, filtered to one interface.
    pub fn addresses(&mut self, index: u32) -> io::Result<Vec<IpNet>> {
        let mut out = Vec::new();
        self.dump(RouteNetlinkMessage::GetAddress(AddressMessage::default()), |m| {
            let RouteNetlinkMessage::NewAddress(a) = m else { return };
            if a.header.index != index {
                return;
            }
            let mut local = None;
            let mut address = None;
            for attr in &a.attributes {
                match attr {
                    AddressAttribute::Local(ip) => local = Some(*ip),
                    AddressAttribute::Address(ip) => address = Some(*ip),
                    _ => {}
                }
            }
            // IPv4: IFA_LOCAL is the address (IFA_ADDRESS is the peer on
            // point-to-point links); IPv6 has only IFA_ADDRESS.
            if let Some(addr) = local.or(address) {
                out.push(IpNet { addr, prefix: a.header.prefix_len });
            }
        })?;
        Ok(out)
    }

    /// RTM_NEWADDR (create, exclusive).
    pub fn add_address(&mut self, index: u32, net: &IpNet) -> io::Result<()> {
        let mut m = AddressMessage::default();
        m.header.family = if net.is_v4() { AddressFamily::Inet } else { AddressFamily::Inet6 };
        m.header.prefix_len = net.prefix;
        m.header.scope = AddressScope::Universe;
        m.header.index = index;
        if net.is_v4() {
            m.attributes.push(AddressAttribute::Local(net.addr));
        }
        m.attributes.push(AddressAttribute::Address(net.addr));
        if let Some(b) = net.broadcast() {
            m.attributes.push(AddressAttribute::Broadcast(b));
        }
        self.request(RouteNetlinkMessage::NewAddress(m), NLM_F_CREATE | NLM_F_EXCL)
    }

    /// RTM_GETROUTE dump: unicast routes of the main table.
    pub fn routes(&mut self) -> io::Result<Vec<RouteEntry>> {
        let mut out = Vec::new();
        self.dump(RouteNetlinkMessage::GetRoute(RouteMessage::default()), |m| {
            let RouteNetlinkMessage::NewRoute(r) = m else { return };
            if let Some(e) = entry(&r) {
                out.push(e);
            }
        })?;
        Ok(out)
    }

    /// RTM_NEWROUTE with NLM_F_CREATE | NLM_F_REPLACE (`ip route replace`).
    pub fn replace_route(&mut self, r: &RouteEntry) -> io::Result<()> {
        let mut m = RouteMessage::default();
        let v4 = r.dst.is_v4();
        m.header.address_family = if v4 { AddressFamily::Inet } else { AddressFamily::Inet6 };
        m.header.destination_prefix_length = r.dst.prefix;
        m.header.table = RouteHeader::RT_TABLE_MAIN;
        m.header.protocol = RouteProtocol::Static;
        m.header.scope = if r.via.is_some() { RouteScope::Universe } else { RouteScope::Link };
        m.header.kind = RouteType::Unicast;
        if r.dst.prefix > 0 {
            m.attributes.push(RouteAttribute::Destination(r.dst.network().into()));
        }
        if let Some(via) = r.via {
            m.attributes.push(RouteAttribute::Gateway(via.into()));
        }
        m.attributes.push(RouteAttribute::Oif(r.oif));
        if r.metric != 0 {
            m.attributes.push(RouteAttribute::Priority(r.metric));
        }
        self.request(RouteNetlinkMessage::NewRoute(m), NLM_F_CREATE | NLM_F_REPLACE)
    }
}

fn ip(a: &RouteAddress) -> Option<IpAddr> {
    match a {
        RouteAddress::Inet(v4) => Some(IpAddr::V4(*v4)),
        RouteAddress::Inet6(v6) => Some(IpAddr::V6(*v6)),
        _ => None,
    }
}

/// A main-table unicast route as a [`RouteEntry`].
fn entry(r: &RouteMessage) -> Option<RouteEntry> {
    let v4 = match r.header.address_family {
        AddressFamily::Inet => true,
        AddressFamily::Inet6 => false,
        _ => return None,
    };
    let mut table = u32::from(r.header.table);
    let (mut dst, mut via, mut oif, mut metric) = (None, None, 0, 0);
    for a in &r.attributes {
        match a {
            RouteAttribute::Destination(d) => dst = ip(d),
            RouteAttribute::Gateway(g) => via = ip(g),
            RouteAttribute::Oif(i) => oif = *i,
            RouteAttribute::Priority(p) => metric = *p,
            RouteAttribute::Table(t) => table = *t,
            _ => {}
        }
    }
    if table != u32::from(RouteHeader::RT_TABLE_MAIN) || r.header.kind != RouteType::Unicast {
        return None;
    }
    let unspecified = if v4 { IpAddr::V4(Ipv4Addr::UNSPECIFIED) } else { IpAddr::V6(Ipv6Addr::UNSPECIFIED) };
    let dst = IpNet { addr: dst.unwrap_or(unspecified), prefix: r.header.destination_prefix_length };
    Some(RouteEntry { dst, via, oif, metric })
}
