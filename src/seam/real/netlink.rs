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

use netlink_packet_core::{Emitable, Parseable, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL, NLM_F_REPLACE, NLM_F_REQUEST};
use netlink_packet_route::address::{AddressAttribute, AddressMessage, AddressScope};
use netlink_packet_route::route::{RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteProtocol, RouteScope, RouteType};
use netlink_packet_route::AddressFamily;
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use crate::config::types::{IfName, IpNet};
use crate::seam::netif::{Kind, LinkInfo, NewLink, RouteEntry, OURS};
use crate::sys::rtnl::{
    self, IFLA_BR_STP_STATE, IFLA_IFALIAS, IFLA_IFNAME, IFLA_INFO_DATA, IFLA_INFO_KIND, IFLA_LINK, IFLA_LINKINFO, IFLA_MASTER, IFLA_VLAN_ID,
};

// Message types (include/uapi/linux/netlink.h, rtnetlink.h). Only the
// address and route messages are parsed, each with its own parser: going
// through netlink-packet-route's RouteNetlinkMessage would link the
// parsers of every rtnetlink family (links, tc, neighbours...), some
// 300 KiB of code nasboot never runs.
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const RTM_NEWADDR: u16 = 20;
const RTM_GETADDR: u16 = 22;
const RTM_NEWROUTE: u16 = 24;
const RTM_GETROUTE: u16 = 26;
/// sizeof(struct nlmsghdr).
const NLMSG_HDRLEN: usize = 16;

/// A message built by hand (`crate::sys::rtnl`): an ifinfomsg and its
/// attributes.
struct Raw(Vec<u8>);

impl Emitable for Raw {
    fn buffer_len(&self) -> usize {
        self.0.len()
    }
    fn emit(&self, buffer: &mut [u8]) {
        buffer[..self.0.len()].copy_from_slice(&self.0);
    }
}

/// A bound rtnetlink socket.
pub(crate) struct Rtnl {
    sock: Socket,
    seq: u32,
    buf: Vec<u8>,
}

impl Rtnl {
    pub(crate) fn open() -> io::Result<Rtnl> {
        let mut sock = Socket::new(NETLINK_ROUTE)?;
        sock.bind_auto()?;
        sock.connect(&SocketAddr::new(0, 0))?;
        Ok(Rtnl { sock, seq: 0, buf: vec![0; 64 * 1024] })
    }

    /// Send one message: struct nlmsghdr (native endian), then the payload.
    fn send(&mut self, kind: u16, flags: u16, payload: &dyn Emitable) -> io::Result<u32> {
        self.seq = self.seq.wrapping_add(1);
        let len = NLMSG_HDRLEN + payload.buffer_len();
        let mut out = vec![0u8; (len + 3) & !3];
        out[0..4].copy_from_slice(&(len as u32).to_ne_bytes());
        out[4..6].copy_from_slice(&kind.to_ne_bytes());
        out[6..8].copy_from_slice(&flags.to_ne_bytes());
        out[8..12].copy_from_slice(&self.seq.to_ne_bytes());
        payload.emit(&mut out[NLMSG_HDRLEN..len]);
        self.sock.send(&out[..len], 0)?;
        Ok(self.seq)
    }

    /// Receive the answers to request `seq`, handing each message to
    /// `each(type, payload)`, until NLMSG_DONE (dumps) or the ACK (requests).
    fn receive(&mut self, seq: u32, mut each: impl FnMut(u16, &[u8])) -> io::Result<()> {
        loop {
            let n = self.sock.recv(&mut &mut self.buf[..], 0)?.min(self.buf.len());
            if let Some(end) = walk(&self.buf[..n], seq, &mut each) {
                return end;
            }
        }
    }

    fn dump(&mut self, kind: u16, payload: &dyn Emitable, each: impl FnMut(u16, &[u8])) -> io::Result<()> {
        let seq = self.send(kind, NLM_F_REQUEST | NLM_F_DUMP, payload)?;
        self.receive(seq, each)
    }

    fn request(&mut self, kind: u16, flags: u16, payload: &dyn Emitable) -> io::Result<()> {
        let seq = self.send(kind, NLM_F_REQUEST | NLM_F_ACK | flags, payload)?;
        self.receive(seq, |_, _| {})
    }

    /// RTM_GETADDR dump, filtered to one interface.
    pub(crate) fn addresses(&mut self, index: u32) -> io::Result<Vec<IpNet>> {
        let mut out = Vec::new();
        self.dump(RTM_GETADDR, &AddressMessage::default(), |kind, payload| {
            if kind != RTM_NEWADDR {
                return;
            }
            if let Some(net) = address(payload, index) {
                out.push(net);
            }
        })?;
        Ok(out)
    }

    /// RTM_NEWADDR (create, exclusive).
    pub(crate) fn add_address(&mut self, index: u32, net: &IpNet) -> io::Result<()> {
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
        self.request(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &m)
    }

    /// RTM_GETROUTE dump: unicast routes of the main table.
    pub(crate) fn routes(&mut self) -> io::Result<Vec<RouteEntry>> {
        let mut out = Vec::new();
        self.dump(RTM_GETROUTE, &RouteMessage::default(), |kind, payload| {
            if kind != RTM_NEWROUTE {
                return;
            }
            if let Some(e) = route(payload) {
                out.push(e);
            }
        })?;
        Ok(out)
    }

    /// RTM_NEWROUTE with NLM_F_CREATE | NLM_F_REPLACE (`ip route replace`).
    pub(crate) fn replace_route(&mut self, r: &RouteEntry) -> io::Result<()> {
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
        self.request(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, &m)
    }
}

impl Rtnl {
    /// RTM_GETLINK dump: every interface's name, kind, master and alias.
    pub(crate) fn link_infos(&mut self) -> io::Result<Vec<LinkInfo>> {
        let mut req = Vec::with_capacity(rtnl::IFINFOMSG_LEN);
        rtnl::ifinfomsg(&mut req, 0);
        let mut out = Vec::new();
        self.dump(rtnl::RTM_GETLINK, &Raw(req), |kind, payload| {
            if kind != rtnl::RTM_NEWLINK {
                return;
            }
            match link_info(payload) {
                Some(l) => out.push(l),
                None => log::debug!("rtnetlink: skipped a link without a usable name"),
            }
        })?;
        Ok(out)
    }

    /// RTM_NEWLINK with NLM_F_CREATE | NLM_F_EXCL, then the alias (the
    /// kernel sets IFLA_IFALIAS on existing links only).
    /// `lower`: the VLAN's lower device's index (0 for a bridge).
    pub(crate) fn create_link(&mut self, link: &NewLink, lower: u32) -> io::Result<()> {
        let mut m = Vec::with_capacity(96);
        rtnl::ifinfomsg(&mut m, 0);
        let name = match link {
            NewLink::Bridge { name, .. } | NewLink::Vlan { name, .. } => name,
        };
        rtnl::attr_str(&mut m, IFLA_IFNAME, name.as_str());
        if let NewLink::Vlan { .. } = link {
            rtnl::attr(&mut m, IFLA_LINK, &lower.to_ne_bytes());
        }
        let info = rtnl::begin_nest(&mut m, IFLA_LINKINFO);
        match link {
            NewLink::Bridge { stp, .. } => {
                rtnl::attr_str(&mut m, IFLA_INFO_KIND, "bridge");
                let data = rtnl::begin_nest(&mut m, IFLA_INFO_DATA);
                rtnl::attr(&mut m, IFLA_BR_STP_STATE, &u32::from(*stp).to_ne_bytes());
                rtnl::end_nest(&mut m, data);
            }
            NewLink::Vlan { id, .. } => {
                rtnl::attr_str(&mut m, IFLA_INFO_KIND, "vlan");
                let data = rtnl::begin_nest(&mut m, IFLA_INFO_DATA);
                rtnl::attr(&mut m, IFLA_VLAN_ID, &id.to_ne_bytes());
                rtnl::end_nest(&mut m, data);
            }
        }
        rtnl::end_nest(&mut m, info);
        self.request(rtnl::RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &Raw(m))?;
        let mut m = Vec::with_capacity(48);
        rtnl::ifinfomsg(&mut m, 0);
        rtnl::attr_str(&mut m, IFLA_IFNAME, name.as_str());
        rtnl::attr_str(&mut m, IFLA_IFALIAS, OURS);
        self.request(rtnl::RTM_NEWLINK, 0, &Raw(m))
    }

    /// RTM_NEWLINK on `index` with IFLA_MASTER.
    pub(crate) fn set_master(&mut self, index: u32, master: u32) -> io::Result<()> {
        let mut m = Vec::with_capacity(24);
        rtnl::ifinfomsg(&mut m, index);
        rtnl::attr(&mut m, IFLA_MASTER, &master.to_ne_bytes());
        self.request(rtnl::RTM_NEWLINK, 0, &Raw(m))
    }

    /// RTM_NEWLINK on bridge `index` with IFLA_BR_STP_STATE.
    pub(crate) fn set_bridge_stp(&mut self, index: u32, on: bool) -> io::Result<()> {
        let mut m = Vec::with_capacity(48);
        rtnl::ifinfomsg(&mut m, index);
        let info = rtnl::begin_nest(&mut m, IFLA_LINKINFO);
        rtnl::attr_str(&mut m, IFLA_INFO_KIND, "bridge");
        let data = rtnl::begin_nest(&mut m, IFLA_INFO_DATA);
        rtnl::attr(&mut m, IFLA_BR_STP_STATE, &u32::from(on).to_ne_bytes());
        rtnl::end_nest(&mut m, data);
        rtnl::end_nest(&mut m, info);
        self.request(rtnl::RTM_NEWLINK, 0, &Raw(m))
    }

    /// RTM_DELLINK.
    pub(crate) fn delete_link(&mut self, index: u32) -> io::Result<()> {
        let mut m = Vec::with_capacity(rtnl::IFINFOMSG_LEN);
        rtnl::ifinfomsg(&mut m, index);
        self.request(rtnl::RTM_DELLINK, 0, &Raw(m))
    }
}

/// One RTM_NEWLINK payload as a [`LinkInfo`].
fn link_info(payload: &[u8]) -> Option<LinkInfo> {
    let index = rtnl::ifinfomsg_index(payload)?;
    let (mut name, mut link, mut master, mut alias) = (None, 0, None, None);
    let mut kind = Kind::Device;
    for (k, v) in rtnl::attrs(payload.get(rtnl::IFINFOMSG_LEN..)?) {
        match k {
            IFLA_IFNAME => name = rtnl::str_value(v).parse::<IfName>().ok(),
            IFLA_LINK => link = rtnl::u32_value(v).unwrap_or(0),
            IFLA_MASTER => master = rtnl::u32_value(v).filter(|m| *m != 0),
            IFLA_IFALIAS => alias = Some(rtnl::str_value(v).to_string()),
            IFLA_LINKINFO => kind = link_kind(v),
            _ => {}
        }
    }
    if let Kind::Vlan { link: l, .. } = &mut kind {
        *l = link;
    }
    let up = rtnl::ifinfomsg_flags(payload).is_some_and(|f| f & rtnl::IFF_UP != 0);
    Some(LinkInfo { index, name: name?, kind, up, master, alias })
}

fn link_kind(info: &[u8]) -> Kind {
    let mut kind = "";
    let mut data: &[u8] = &[];
    for (k, v) in rtnl::attrs(info) {
        match k {
            IFLA_INFO_KIND => kind = rtnl::str_value(v),
            IFLA_INFO_DATA => data = v,
            _ => {}
        }
    }
    let find = |want: u16| rtnl::attrs(data).find(|(k, _)| *k == want).map(|(_, v)| v);
    match kind {
        "bridge" => Kind::Bridge { stp: find(IFLA_BR_STP_STATE).and_then(rtnl::u32_value).is_some_and(|s| s != 0) },
        "vlan" => Kind::Vlan { link: 0, id: find(IFLA_VLAN_ID).and_then(rtnl::u16_value).unwrap_or(0) },
        "" => Kind::Device,
        other => Kind::Other(heapless::String::try_from(other.get(..other.len().min(16)).unwrap_or("?")).unwrap_or_default()),
    }
}

/// Walk one datagram of netlink messages (`buf`, as received), handing
/// each message of request `seq` to `each(type, payload)`. Some when the
/// answer ended: NLMSG_DONE or a zero NLMSG_ERROR (an ACK) is Ok, any
/// other NLMSG_ERROR its errno, a message whose length does not fit an
/// error. None: read the next datagram. Pure (fuzzed: tests/fuzz).
pub(crate) fn walk(buf: &[u8], seq: u32, each: &mut dyn FnMut(u16, &[u8])) -> Option<io::Result<()>> {
    let mut off = 0;
    while off + NLMSG_HDRLEN <= buf.len() {
        let b = &buf[off..];
        let len = u32::from_ne_bytes(b[0..4].try_into().expect("4 bytes")) as usize;
        if len < NLMSG_HDRLEN || len > b.len() {
            return Some(Err(io::Error::other("truncated netlink message")));
        }
        let kind = u16::from_ne_bytes(b[4..6].try_into().expect("2 bytes"));
        let this_seq = u32::from_ne_bytes(b[8..12].try_into().expect("4 bytes"));
        let payload = &b[NLMSG_HDRLEN..len];
        off += (len + 3) & !3;
        if this_seq != seq {
            continue;
        }
        match kind {
            NLMSG_DONE => return Some(Ok(())),
            NLMSG_ERROR => {
                let code = payload.get(0..4).map_or(-nix::libc::EIO, |c| i32::from_ne_bytes(c.try_into().expect("4 bytes")));
                // i32::MIN has no positive errno: report it as EIO.
                return Some(if code == 0 {
                    Ok(())
                } else {
                    Err(io::Error::from_raw_os_error(code.checked_neg().unwrap_or(nix::libc::EIO)))
                });
            }
            _ => each(kind, payload),
        }
    }
    None
}

/// The address an RTM_NEWADDR payload carries, if it is of interface
/// `index`. Pure (fuzzed).
pub(crate) fn address(payload: &[u8], index: u32) -> Option<IpNet> {
    let a = match AddressMessage::parse(payload) {
        Ok(a) => a,
        Err(e) => {
            log::debug!("rtnetlink: skipped an address: {e}");
            return None;
        }
    };
    if a.header.index != index {
        return None;
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
    let addr = local.or(address)?;
    net(addr, a.header.prefix_len)
}

/// An [`IpNet`], if the prefix fits the family: a reply is not trusted
/// to, and a prefix over 32 or 128 would overflow the masks.
fn net(addr: IpAddr, prefix: u8) -> Option<IpNet> {
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (prefix <= max).then_some(IpNet { addr, prefix })
}

/// The main-table unicast route an RTM_NEWROUTE payload carries. Pure
/// (fuzzed).
pub(crate) fn route(payload: &[u8]) -> Option<RouteEntry> {
    match RouteMessage::parse(payload) {
        Ok(r) => entry(&r),
        Err(e) => {
            log::debug!("rtnetlink: skipped a route: {e}");
            None
        }
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
    let dst = net(dst.unwrap_or(unspecified), r.header.destination_prefix_length)?;
    Some(RouteEntry { dst, via, oif, metric })
}
