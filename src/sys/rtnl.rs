//! rtnetlink's messages (include/uapi/linux/rtnetlink.h, if_link.h,
//! if_addr.h): `struct ifinfomsg` and the few `IFLA_*` attributes nasboot
//! reads and writes to create bridges and VLANs, enslave ports and find
//! its own links again; `struct ifaddrmsg` and `struct rtmsg` with the
//! `IFA_*` and `RTA_*` attributes of its addresses and routes. Attributes
//! are type-length-value records, 4-byte aligned, in the host's byte
//! order (netlink(7)); nested ones hold records; addresses are in network
//! order.
//!
//! netlink-packet-route's message types are not used: its parsers link
//! the decoders of every attribute of every kind the kernel knows, for
//! the few read here, which the binary's size budget has no room for.

/// Message types.
pub(crate) const RTM_NEWLINK: u16 = 16;
pub(crate) const RTM_DELLINK: u16 = 17;
pub(crate) const RTM_GETLINK: u16 = 18;

/// sizeof(struct ifinfomsg): family u8, pad u8, type u16, index i32,
/// flags u32, change u32.
pub(crate) const IFINFOMSG_LEN: usize = 16;
/// sizeof(struct nlattr).
pub(crate) const NLA_HDRLEN: usize = 4;

// IFLA_* (enum in if_link.h).
pub(crate) const IFLA_ADDRESS: u16 = 1;
pub(crate) const IFLA_IFNAME: u16 = 3;
pub(crate) const IFLA_MTU: u16 = 4;
pub(crate) const IFLA_LINK: u16 = 5;
pub(crate) const IFLA_MASTER: u16 = 10;
pub(crate) const IFLA_TXQLEN: u16 = 13;
pub(crate) const IFLA_LINKINFO: u16 = 18;
pub(crate) const IFLA_IFALIAS: u16 = 20;
// IFLA_INFO_* inside IFLA_LINKINFO.
pub(crate) const IFLA_INFO_KIND: u16 = 1;
pub(crate) const IFLA_INFO_DATA: u16 = 2;
/// IFLA_VLAN_ID inside a VLAN's IFLA_INFO_DATA (u16).
pub(crate) const IFLA_VLAN_ID: u16 = 1;
/// IFLA_BR_STP_STATE inside a bridge's IFLA_INFO_DATA (u32).
pub(crate) const IFLA_BR_STP_STATE: u16 = 5;
/// sizeof(struct ifaddrmsg): family u8, prefixlen u8, flags u8, scope u8,
/// index u32.
pub(crate) const IFADDRMSG_LEN: usize = 8;
/// sizeof(struct rtmsg): family, dst_len, src_len, tos, table, protocol,
/// scope, type (u8 each), flags u32.
pub(crate) const RTMSG_LEN: usize = 12;
// IFA_* (if_addr.h).
pub(crate) const IFA_ADDRESS: u16 = 1;
pub(crate) const IFA_LOCAL: u16 = 2;
pub(crate) const IFA_BROADCAST: u16 = 4;
// RTA_* (rtnetlink.h).
pub(crate) const RTA_DST: u16 = 1;
pub(crate) const RTA_OIF: u16 = 4;
pub(crate) const RTA_GATEWAY: u16 = 5;
pub(crate) const RTA_PRIORITY: u16 = 6;
pub(crate) const RTA_TABLE: u16 = 15;
/// Address families (linux/socket.h).
pub(crate) const AF_INET: u8 = 2;
pub(crate) const AF_INET6: u8 = 10;
/// rtmsg fields: the main table, static protocol, scopes, unicast type.
pub(crate) const RT_TABLE_MAIN: u8 = 254;
const RTPROT_STATIC: u8 = 4;
pub(crate) const RT_SCOPE_UNIVERSE: u8 = 0;
pub(crate) const RT_SCOPE_LINK: u8 = 253;
pub(crate) const RTN_UNICAST: u8 = 1;
/// The high bits of nla_type: nested and byte-order flags.
const NLA_TYPE_MASK: u16 = 0x3fff;

/// A `struct ifinfomsg` for interface `index` (0: by name or new), family
/// AF_UNSPEC, no flag changes.
pub(crate) fn ifinfomsg(out: &mut Vec<u8>, index: u32) {
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&index.to_ne_bytes());
    out.extend_from_slice(&[0; 8]);
}

/// The interface index of an ifinfomsg payload.
pub(crate) fn ifinfomsg_index(payload: &[u8]) -> Option<u32> {
    payload.get(4..8).and_then(u32_value)
}

/// The link type (ARPHRD_*, host order) of an ifinfomsg payload.
pub(crate) fn ifinfomsg_type(payload: &[u8]) -> Option<u16> {
    payload.get(2..4).map(|b| u16::from_ne_bytes([b[0], b[1]]))
}

/// The interface flags (IFF_*) of an ifinfomsg payload.
pub(crate) fn ifinfomsg_flags(payload: &[u8]) -> Option<u32> {
    payload.get(8..12).and_then(u32_value)
}

/// A `struct ifaddrmsg`: no flags.
pub(crate) fn ifaddrmsg(out: &mut Vec<u8>, family: u8, prefix: u8, scope: u8, index: u32) {
    out.extend_from_slice(&[family, prefix, 0, scope]);
    out.extend_from_slice(&index.to_ne_bytes());
}

/// The interface index of an ifaddrmsg payload.
pub(crate) fn ifaddrmsg_index(payload: &[u8]) -> Option<u32> {
    payload.get(4..8).and_then(u32_value)
}

/// A `struct rtmsg` of a static unicast route in the main table to a
/// `prefix`-bit destination, no source prefix, TOS or flags.
pub(crate) fn rtmsg(out: &mut Vec<u8>, family: u8, prefix: u8, scope: u8) {
    out.extend_from_slice(&[family, prefix, 0, 0, RT_TABLE_MAIN, RTPROT_STATIC, scope, RTN_UNICAST]);
    out.extend_from_slice(&[0; 4]);
}

/// IFF_UP, IFF_RUNNING, IFF_PROMISC (include/uapi/linux/if.h).
pub(crate) const IFF_UP: u32 = 1;
pub(crate) const IFF_RUNNING: u32 = 0x40;
pub(crate) const IFF_PROMISC: u32 = 0x100;

fn align(n: usize) -> usize {
    (n + 3) & !3
}

/// Append one attribute.
pub(crate) fn attr(out: &mut Vec<u8>, kind: u16, value: &[u8]) {
    let len = NLA_HDRLEN + value.len();
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(value);
    out.resize(align(out.len()), 0);
}

/// A string attribute, NUL-terminated as the kernel's NLA_STRING wants.
pub(crate) fn attr_str(out: &mut Vec<u8>, kind: u16, s: &str) {
    let mut v = Vec::with_capacity(s.len() + 1);
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    attr(out, kind, &v);
}

/// Start a nested attribute; `end_nest` writes its length.
pub(crate) fn begin_nest(out: &mut Vec<u8>, kind: u16) -> usize {
    let at = out.len();
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&kind.to_ne_bytes());
    at
}

pub(crate) fn end_nest(out: &mut [u8], at: usize) {
    let len = (out.len() - at) as u16;
    out[at..at + 2].copy_from_slice(&len.to_ne_bytes());
}

/// The attributes in `buf`, as (type without flags, value). Stops at the
/// first malformed record.
pub(crate) fn attrs(mut buf: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let (kind, value, rest) = split_attr(buf)?;
        buf = rest;
        Some((kind, value))
    })
}

/// The first attribute record of `buf`: its type without flags, its
/// value and what follows it; None when the record is malformed (shorter
/// than its header, or its length below the header or past the buffer).
fn split_attr(buf: &[u8]) -> Option<(u16, &[u8], &[u8])> {
    if buf.len() < NLA_HDRLEN {
        return None;
    }
    let len = usize::from(u16::from_ne_bytes([buf[0], buf[1]]));
    let kind = u16::from_ne_bytes([buf[2], buf[3]]) & NLA_TYPE_MASK;
    if len < NLA_HDRLEN || len > buf.len() {
        return None;
    }
    Some((kind, &buf[NLA_HDRLEN..len], &buf[align(len).min(buf.len())..]))
}

/// Each attribute record in `buf` to `each(type without flags, value)`.
/// None when a record is malformed (`split_attr`) or `each` says None:
/// the caller drops the whole message.
pub(crate) fn attrs_strict<'a>(mut buf: &'a [u8], mut each: impl FnMut(u16, &'a [u8]) -> Option<()>) -> Option<()> {
    while !buf.is_empty() {
        let (kind, value, rest) = split_attr(buf)?;
        each(kind, value)?;
        buf = rest;
    }
    Some(())
}

/// A NUL-terminated string value.
pub(crate) fn str_value(v: &[u8]) -> &str {
    let end = v.iter().position(|b| *b == 0).unwrap_or(v.len());
    std::str::from_utf8(&v[..end]).unwrap_or("")
}

pub(crate) fn u32_value(v: &[u8]) -> Option<u32> {
    Some(u32::from_ne_bytes(v.get(..4)?.try_into().ok()?))
}

pub(crate) fn u16_value(v: &[u8]) -> Option<u16> {
    Some(u16::from_ne_bytes(v.get(..2)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_aligned_and_read_back() {
        let mut b = Vec::new();
        ifinfomsg(&mut b, 7);
        assert_eq!(b.len(), IFINFOMSG_LEN);
        assert_eq!(ifinfomsg_index(&b), Some(7));
        let mut a = Vec::new();
        attr_str(&mut a, IFLA_IFNAME, "br-lan");
        // 4 + 7 bytes, padded to 12.
        assert_eq!(a.len(), 12);
        assert_eq!(&a[..4], &[11u16.to_ne_bytes(), IFLA_IFNAME.to_ne_bytes()].concat()[..]);
        let n = begin_nest(&mut a, IFLA_LINKINFO);
        attr_str(&mut a, IFLA_INFO_KIND, "vlan");
        let d = begin_nest(&mut a, IFLA_INFO_DATA);
        attr(&mut a, IFLA_VLAN_ID, &2u16.to_ne_bytes());
        end_nest(&mut a, d);
        end_nest(&mut a, n);
        attr(&mut a, IFLA_MASTER, &3u32.to_ne_bytes());
        let got: Vec<(u16, usize)> = attrs(&a).map(|(k, v)| (k, v.len())).collect();
        assert_eq!(got, [(IFLA_IFNAME, 7), (IFLA_LINKINFO, 24), (IFLA_MASTER, 4)]);
        let (_, info) = attrs(&a).find(|(k, _)| *k == IFLA_LINKINFO).unwrap();
        let mut inner = attrs(info);
        assert_eq!(inner.next().map(|(k, v)| (k, str_value(v))), Some((IFLA_INFO_KIND, "vlan")));
        let (k, data) = inner.next().unwrap();
        assert_eq!(k, IFLA_INFO_DATA);
        assert_eq!(attrs(data).next().and_then(|(_, v)| u16_value(v)), Some(2));
        // A record longer than the buffer ends the walk.
        assert_eq!(attrs(&[200, 0, 3, 0, 1]).count(), 0);
    }
}
