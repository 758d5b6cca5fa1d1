//! rtnetlink (rtnetlink(7)) for addresses and routes, on a blocking
//! netlink socket: one request, read until the ACK or NLMSG_DONE. No
//! async runtime. Messages are built and parsed here (`crate::sys::rtnl`
//! holds the structs and attributes); netlink-sys is only the socket.
//!
//! Why netlink rather than the SIOCSIFADDR family of ioctls: an interface
//! may carry several IPv4 addresses (the ioctls see only the first, or
//! need `eth0:1` aliases), IPv6 addresses and routes have no ioctl that
//! can list them, and rtnetlink is in every 2.6 kernel.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use netlink_packet_core::{Emitable, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL, NLM_F_REPLACE, NLM_F_REQUEST};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use crate::config::types::{IfName, IpNet};
use crate::seam::netif::{Kind, LinkInfo, LinkState, NewLink, Qdisc, RouteEntry, TcList, TcObject, TcOp, OURS};
use crate::sys::rtnl::{
    self, IFA_ADDRESS, IFA_BROADCAST, IFA_LOCAL, IFLA_ADDRESS, IFLA_BR_STP_STATE, IFLA_IFALIAS, IFLA_IFNAME, IFLA_INFO_DATA,
    IFLA_INFO_KIND, IFLA_LINK, IFLA_LINKINFO, IFLA_MASTER, IFLA_MTU, IFLA_TXQLEN, IFLA_VLAN_ID, RTA_DST, RTA_GATEWAY, RTA_OIF,
    RTA_PRIORITY, RTA_TABLE,
};
use crate::sys::tc;

use super::RECV_BUF;

// Message types (include/uapi/linux/netlink.h, rtnetlink.h). Only the
// link, address and route messages are built and parsed, by hand: the
// parsers of netlink-packet-route cover every attribute of every
// rtnetlink family (its route attributes alone bring MPLS, lwtunnel and
// multipath) for the five attributes read here.
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const RTM_NEWADDR: u16 = 20;
const RTM_DELADDR: u16 = 21;
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
        Ok(Rtnl { sock, seq: 0, buf: Vec::with_capacity(RECV_BUF) })
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
            self.buf.clear();
            self.sock.recv(&mut self.buf, 0)?;
            if let Some(end) = walk(&self.buf, seq, &mut each) {
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

    /// RTM_GETADDR dump: every interface's addresses, with its index.
    pub(crate) fn addresses(&mut self) -> io::Result<Vec<(u32, IpNet)>> {
        let mut out = Vec::new();
        self.dump(RTM_GETADDR, &Raw(vec![0; rtnl::IFADDRMSG_LEN]), |kind, payload| {
            if kind != RTM_NEWADDR {
                return;
            }
            let Some(index) = rtnl::ifaddrmsg_index(payload) else { return };
            if let Some(net) = address(payload, index) {
                out.push((index, net));
            }
        })?;
        Ok(out)
    }

    /// RTM_NEWADDR (create, exclusive).
    pub(crate) fn add_address(&mut self, index: u32, net: &IpNet) -> io::Result<()> {
        self.request(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &Raw(new_address(index, net)))
    }

    /// RTM_DELADDR: the kernel finds the address by its ifaddrmsg and
    /// IFA_LOCAL / IFA_ADDRESS, as RTM_NEWADDR gives them.
    pub(crate) fn delete_address(&mut self, index: u32, net: &IpNet) -> io::Result<()> {
        self.request(RTM_DELADDR, 0, &Raw(new_address(index, net)))
    }

    /// RTM_GETROUTE dump: unicast routes of the main table.
    pub(crate) fn routes(&mut self) -> io::Result<Vec<RouteEntry>> {
        let mut out = Vec::new();
        self.dump(RTM_GETROUTE, &Raw(vec![0; rtnl::RTMSG_LEN]), |kind, payload| {
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
        self.request(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, &Raw(new_route(r)))
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
        let name = link.name();
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
            NewLink::Ifb { .. } => rtnl::attr_str(&mut m, IFLA_INFO_KIND, "ifb"),
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
    /// A traffic-control dump: every qdisc, or one device's classes or
    /// ingress filters.
    pub(crate) fn tc_list(&mut self, what: TcList) -> io::Result<Vec<TcObject>> {
        let (kind, index, parent) = match what {
            TcList::Qdiscs => (tc::RTM_GETQDISC, 0, 0),
            TcList::Classes(i) => (tc::RTM_GETTCLASS, i, 0),
            TcList::IngressFilters(i) => (tc::RTM_GETTFILTER, i, tc::INGRESS_HANDLE),
        };
        let mut req = Vec::with_capacity(tc::TCMSG_LEN);
        tc::tcmsg(&mut req, index, 0, parent, 0);
        let mut out = Vec::new();
        self.dump(kind, &Raw(req), |k, payload| {
            if let Some(o) = tc::object(payload, k == tc::RTM_NEWTCLASS) {
                out.push(o);
            }
        })?;
        Ok(out)
    }

    /// One traffic-control change; `index`, `to`: the devices' indices.
    pub(crate) fn tc_set(&mut self, op: &TcOp, index: u32, to: u32) -> io::Result<()> {
        let mut m = Vec::with_capacity(128);
        let (kind, flags) = match op {
            TcOp::Qdisc { parent, handle, qdisc, .. } => {
                tc::qdisc(&mut m, index, *parent, *handle, qdisc);
                let how = if *qdisc == Qdisc::Ingress { NLM_F_EXCL } else { NLM_F_REPLACE };
                (tc::RTM_NEWQDISC, NLM_F_CREATE | how)
            }
            TcOp::Delete { parent, handle, .. } => {
                tc::tcmsg(&mut m, index, *handle, *parent, 0);
                (tc::RTM_DELQDISC, 0)
            }
            TcOp::Class { parent, classid, rate, .. } => {
                tc::htb_class(&mut m, index, *parent, *classid, rate);
                (tc::RTM_NEWTCLASS, NLM_F_CREATE | NLM_F_REPLACE)
            }
            TcOp::Redirect { .. } => {
                tc::redirect(&mut m, index, to);
                (tc::RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL)
            }
        };
        self.request(kind, flags, &Raw(m))
    }
}

/// One RTM_NEWLINK payload as a [`LinkInfo`].
fn link_info(payload: &[u8]) -> Option<LinkInfo> {
    let index = rtnl::ifinfomsg_index(payload)?;
    let (mut name, mut link, mut master, mut alias) = (None, 0, None, None);
    let (mut mtu, mut txqueuelen, mut mac) = (0, 0, [0u8; 6]);
    let mut kind = Kind::Device;
    for (k, v) in rtnl::attrs(payload.get(rtnl::IFINFOMSG_LEN..)?) {
        match k {
            IFLA_IFNAME => name = rtnl::str_value(v).parse::<IfName>().ok(),
            IFLA_LINK => link = rtnl::u32_value(v).unwrap_or(0),
            IFLA_MASTER => master = rtnl::u32_value(v).filter(|m| *m != 0),
            IFLA_IFALIAS => alias = Some(rtnl::str_value(v).to_string()),
            IFLA_LINKINFO => kind = link_kind(v),
            IFLA_MTU => mtu = rtnl::u32_value(v).unwrap_or(0),
            IFLA_TXQLEN => txqueuelen = rtnl::u32_value(v).unwrap_or(0),
            IFLA_ADDRESS => {
                for (dst, src) in mac.iter_mut().zip(v) {
                    *dst = *src;
                }
            }
            _ => {}
        }
    }
    if let Kind::Vlan { link: l, .. } = &mut kind {
        *l = link;
    }
    let flags = rtnl::ifinfomsg_flags(payload).unwrap_or(0);
    let hwtype = rtnl::ifinfomsg_type(payload)?;
    let state = LinkState {
        index,
        up: flags & rtnl::IFF_UP != 0,
        carrier: flags & rtnl::IFF_RUNNING != 0,
        promisc: flags & rtnl::IFF_PROMISC != 0,
        mtu,
        txqueuelen,
        mac,
        hwtype,
    };
    Some(LinkInfo { name: name?, kind, state, master, alias })
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

/// The RTM_NEWADDR body for `net` on interface `index`: an ifaddrmsg
/// (universe scope), IFA_LOCAL (IPv4 only), IFA_ADDRESS and the IPv4
/// broadcast address.
fn new_address(index: u32, net: &IpNet) -> Vec<u8> {
    let mut m = Vec::with_capacity(40);
    rtnl::ifaddrmsg(&mut m, family(net.addr), net.prefix, rtnl::RT_SCOPE_UNIVERSE, index);
    if net.is_v4() {
        attr_ip(&mut m, IFA_LOCAL, net.addr);
    }
    attr_ip(&mut m, IFA_ADDRESS, net.addr);
    if let Some(b) = net.broadcast() {
        rtnl::attr(&mut m, IFA_BROADCAST, &b.octets());
    }
    m
}

/// The RTM_NEWROUTE body for `r`: a static unicast route of the main
/// table, link scope unless it has a gateway.
fn new_route(r: &RouteEntry) -> Vec<u8> {
    let mut m = Vec::with_capacity(48);
    let scope = if r.via.is_some() { rtnl::RT_SCOPE_UNIVERSE } else { rtnl::RT_SCOPE_LINK };
    rtnl::rtmsg(&mut m, family(r.dst.addr), r.dst.prefix, scope);
    if r.dst.prefix > 0 {
        attr_ip(&mut m, RTA_DST, r.dst.network());
    }
    if let Some(via) = r.via {
        attr_ip(&mut m, RTA_GATEWAY, via);
    }
    rtnl::attr(&mut m, RTA_OIF, &r.oif.to_ne_bytes());
    if r.metric != 0 {
        rtnl::attr(&mut m, RTA_PRIORITY, &r.metric.to_ne_bytes());
    }
    m
}

fn family(ip: IpAddr) -> u8 {
    if ip.is_ipv4() {
        rtnl::AF_INET
    } else {
        rtnl::AF_INET6
    }
}

/// An address attribute: its octets, network order.
fn attr_ip(out: &mut Vec<u8>, kind: u16, ip: IpAddr) {
    match ip {
        IpAddr::V4(a) => rtnl::attr(out, kind, &a.octets()),
        IpAddr::V6(a) => rtnl::attr(out, kind, &a.octets()),
    }
}

/// An address of either family, told by its length.
fn any_ip(v: &[u8]) -> Option<IpAddr> {
    Some(match v.len() {
        4 => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(v).ok()?)),
        16 => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(v).ok()?)),
        _ => return None,
    })
}

/// The address an RTM_NEWADDR payload carries, if it is of interface
/// `index`. A payload shorter than its ifaddrmsg, with a malformed
/// attribute record, or an IFA_LOCAL or IFA_ADDRESS neither 4 nor 16
/// bytes long is skipped. Pure (fuzzed).
pub(crate) fn address(payload: &[u8], index: u32) -> Option<IpNet> {
    let parsed = payload.get(rtnl::IFADDRMSG_LEN..).and_then(|attrs| {
        let (mut local, mut address) = (None, None);
        rtnl::attrs_strict(attrs, |kind, v| {
            match kind {
                IFA_LOCAL => local = Some(any_ip(v)?),
                IFA_ADDRESS => address = Some(any_ip(v)?),
                _ => {}
            }
            Some(())
        })?;
        Some((local, address))
    });
    let Some((local, address)) = parsed else {
        log::debug!("rtnetlink: skipped a malformed address message");
        return None;
    };
    if rtnl::ifaddrmsg_index(payload) != Some(index) {
        return None;
    }
    // IPv4: IFA_LOCAL is the address (IFA_ADDRESS is the peer on
    // point-to-point links); IPv6 has only IFA_ADDRESS.
    let addr = local.or(address)?;
    net(addr, payload[1])
}

/// An [`IpNet`], if the prefix fits the family: a reply is not trusted
/// to, and a prefix over 32 or 128 would overflow the masks.
fn net(addr: IpAddr, prefix: u8) -> Option<IpNet> {
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (prefix <= max).then_some(IpNet { addr, prefix })
}

/// The main-table unicast route an RTM_NEWROUTE payload carries. A
/// payload shorter than its rtmsg, with a malformed attribute record, or
/// (IPv4 and IPv6) an RTA_DST or RTA_GATEWAY not of its family's length
/// or an RTA_OIF, RTA_PRIORITY or RTA_TABLE not of 4 bytes is skipped.
/// Pure (fuzzed).
pub(crate) fn route(payload: &[u8]) -> Option<RouteEntry> {
    let Some(h) = payload.get(..rtnl::RTMSG_LEN) else {
        log::debug!("rtnetlink: skipped a malformed route message");
        return None;
    };
    // rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type.
    let v4 = match h[0] {
        rtnl::AF_INET => Some(true),
        rtnl::AF_INET6 => Some(false),
        _ => None,
    };
    let ip = |v: &[u8]| match (v4, v.len()) {
        (Some(true), 4) | (Some(false), 16) => any_ip(v).map(Some),
        (None, _) => Some(None),
        _ => None,
    };
    let u32_of = |v: &[u8]| <[u8; 4]>::try_from(v).ok().map(u32::from_ne_bytes);
    let mut table = u32::from(h[4]);
    let (mut dst, mut via, mut oif, mut metric) = (None, None, 0, 0);
    let ok = rtnl::attrs_strict(&payload[rtnl::RTMSG_LEN..], |kind, v| {
        match kind {
            RTA_DST => dst = ip(v)?,
            RTA_GATEWAY => via = ip(v)?,
            RTA_OIF => oif = u32_of(v)?,
            RTA_PRIORITY => metric = u32_of(v)?,
            RTA_TABLE => table = u32_of(v)?,
            _ => {}
        }
        Some(())
    });
    if ok.is_none() {
        log::debug!("rtnetlink: skipped a malformed route message");
        return None;
    }
    let v4 = v4?;
    if table != u32::from(rtnl::RT_TABLE_MAIN) || h[7] != rtnl::RTN_UNICAST {
        return None;
    }
    let unspecified = if v4 { IpAddr::V4(Ipv4Addr::UNSPECIFIED) } else { IpAddr::V6(Ipv6Addr::UNSPECIFIED) };
    let dst = net(dst.unwrap_or(unspecified), h[1])?;
    Some(RouteEntry { dst, via, oif, metric })
}

/// The messages built and read here against netlink-packet-route's, which
/// built and read them before (a dev-dependency only).
#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_core::Parseable;
    use netlink_packet_route::address::{AddressAttribute, AddressMessage, AddressScope, CacheInfo};
    use netlink_packet_route::route::{RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteProtocol, RouteScope, RouteType};
    use netlink_packet_route::AddressFamily;

    fn bytes(m: &dyn Emitable) -> Vec<u8> {
        let mut b = vec![0; m.buffer_len()];
        m.emit(&mut b);
        b
    }

    fn nets() -> Vec<IpNet> {
        ["192.168.1.2/24", "10.0.0.1/32", "10.1.2.3/31", "0.0.0.0/0", "fd00::1/64", "2001:db8::5/128", "::/0"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect()
    }

    /// What netlink-packet-route emitted for `add_address`.
    fn old_new_address(index: u32, net: &IpNet) -> Vec<u8> {
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
        bytes(&m)
    }

    /// What netlink-packet-route emitted for `replace_route`.
    fn old_new_route(r: &RouteEntry) -> Vec<u8> {
        let mut m = RouteMessage::default();
        m.header.address_family = if r.dst.is_v4() { AddressFamily::Inet } else { AddressFamily::Inet6 };
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
        bytes(&m)
    }

    fn routes() -> Vec<RouteEntry> {
        let mut out = Vec::new();
        for net in nets() {
            // As the kernel gives them back: the network address.
            let dst = IpNet { addr: net.network(), prefix: net.prefix };
            let via: [Option<IpAddr>; 2] =
                [None, Some(if dst.is_v4() { "192.168.1.1".parse().unwrap() } else { "fe80::1".parse().unwrap() })];
            for via in via {
                for metric in [0, 100] {
                    out.push(RouteEntry { dst, via, oif: 3, metric });
                }
            }
        }
        out
    }

    #[test]
    fn requests_are_byte_for_byte_what_netlink_packet_route_built() {
        assert_eq!(vec![0; rtnl::IFADDRMSG_LEN], bytes(&AddressMessage::default()));
        assert_eq!(vec![0; rtnl::RTMSG_LEN], bytes(&RouteMessage::default()));
        for net in nets() {
            assert_eq!(new_address(7, &net), old_new_address(7, &net), "{net:?}");
        }
        for r in routes() {
            assert_eq!(new_route(&r), old_new_route(&r), "{r:?}");
        }
    }

    /// The replies read as netlink-packet-route read them, with attributes
    /// nasboot ignores around the ones it reads.
    #[test]
    fn replies_read_as_netlink_packet_route_read_them() {
        for net in nets() {
            let mut m = AddressMessage::default();
            m.header.family = if net.is_v4() { AddressFamily::Inet } else { AddressFamily::Inet6 };
            m.header.prefix_len = net.prefix;
            m.header.index = 4;
            m.attributes.push(AddressAttribute::Label("eth0".into()));
            m.attributes.push(AddressAttribute::Address(net.addr));
            m.attributes.push(AddressAttribute::CacheInfo(CacheInfo::default()));
            let b = bytes(&m);
            assert_eq!(address(&b, 4), Some(net));
            assert_eq!(address(&b, 5), None);
            let peer: IpAddr = if net.is_v4() { "10.9.9.9" } else { "fd00::9" }.parse().unwrap();
            m.attributes.push(AddressAttribute::Local(peer));
            assert_eq!(address(&bytes(&m), 4).map(|n| n.addr), Some(peer));
            // The prefix must fit the family.
            m.header.prefix_len = 129;
            assert_eq!(address(&bytes(&m), 4), None);
        }
        for r in routes() {
            let b = old_new_route(&r);
            assert_eq!(route(&b), Some(r.clone()), "{r:?}");

            let mut m = RouteMessage::parse(&b).unwrap();
            m.attributes.insert(0, RouteAttribute::Table(u32::from(RouteHeader::RT_TABLE_MAIN)));
            m.attributes.push(RouteAttribute::PrefSource(RouteAddress::from(r.dst.addr)));
            assert_eq!(route(&bytes(&m)), Some(r.clone()));
            m.attributes.push(RouteAttribute::Table(255));
            assert_eq!(route(&bytes(&m)), None, "another table");
            m.attributes.pop();
            m.header.kind = RouteType::Local;
            assert_eq!(route(&bytes(&m)), None, "not unicast");
        }
        // Malformed: short headers, a record past the end, an address of
        // the wrong length, a u32 of 2 bytes.
        assert_eq!(address(&[2, 24, 0, 0], 0), None);
        assert_eq!(route(&[2; 11]), None);
        let mut b = old_new_route(&routes()[2]);
        let good = b.len();
        b.extend_from_slice(&[8, 0, 1, 0, 10, 0]);
        assert_eq!(route(&b), None);
        b.truncate(good);
        rtnl::attr(&mut b, RTA_GATEWAY, &[1, 2, 3]);
        assert_eq!(route(&b), None);
        b.truncate(good);
        rtnl::attr(&mut b, RTA_OIF, &[1, 2]);
        assert_eq!(route(&b), None);
        let mut a = new_address(1, &nets()[0]);
        rtnl::attr(&mut a, IFA_ADDRESS, &[1, 2, 3, 4, 5]);
        assert_eq!(address(&a, 1), None);
    }
}
