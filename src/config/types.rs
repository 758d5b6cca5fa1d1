//! Newtypes that validate at the edge. Everything past the parser trusts
//! these types: an `IfName` fits IFNAMSIZ, a `Port` is 1..=65535, an
//! `AbsPath` is absolute and has no control characters, and so on.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

pub(crate) use super::client::Client;

use super::decode::{self as dec, decode_from_str, Decode, Value};

/// Why a profile value is not one of these types, with the text it was
/// given. Shown once, in a [`ConfigError`](super::ConfigError) with the
/// file, line and key.
#[derive(Clone, PartialEq, Eq)]
pub enum ParseError {
    IfNameEmpty,
    /// Longer than IFNAMSIZ - 1.
    IfNameTooLong(String),
    IfNameInvalid(String),
    NoPrefix(String),
    NotAnAddress(String),
    PrefixOutOfRange {
        prefix: String,
        addr: String,
        max: u8,
    },
    NotAMac(String),
    BroadcastMac(String),
    MulticastMac(String),
    ZeroMac(String),
    NotAbsolute(String),
    ControlCharacter {
        path: String,
        c: char,
    },
    DotDot(String),
    PathTooLong(usize),
    NameLength(String),
    NameCharacters(String),
    NotASysctlKey(String),
    SysctlKeyTooLong(String),
    NotASysctlValue(String),
    SysctlValueTooLong(usize),
    NotAClient(String),
    /// Not `LOW-HIGH`.
    NotAPortRange(String),
    /// A range starting below 1024 (the kernel's `ip_unprivileged_port_start`).
    PortRangeTooLow(u16),
    /// LOW above HIGH.
    EmptyPortRange(u16, u16),
    /// Not `A.B.C.D:PORT`.
    NotAnEndpoint(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ParseError::*;
        match self {
            IfNameEmpty => f.write_str("an interface name cannot be empty"),
            IfNameTooLong(s) => write!(f, "interface name `{s}` is {} bytes; the kernel allows 15 (IFNAMSIZ)", s.len()),
            IfNameInvalid(s) => write!(f, "`{}` is not a valid interface name", s.escape_debug()),
            NoPrefix(s) => write!(f, "`{s}` needs a prefix length, e.g. 192.168.1.2/24"),
            NotAnAddress(a) => write!(f, "`{a}` is not an IP address"),
            PrefixOutOfRange { prefix, addr, max } => write!(f, "prefix /{prefix} is out of range for {addr} (0 to {max})"),
            NotAMac(s) => write!(f, "`{s}` is not a MAC address like 02:00:00:00:00:01"),
            BroadcastMac(s) => write!(f, "`{s}` is the broadcast address, not an interface address"),
            MulticastMac(s) => write!(f, "`{s}` is a multicast address (low bit of the first octet set)"),
            ZeroMac(s) => write!(f, "`{s}` is all zeros"),
            NotAbsolute(s) => write!(f, "`{}` is not an absolute path", s.escape_debug()),
            ControlCharacter { path, c } => {
                write!(f, "path `{}` contains the control character '{}'", path.escape_debug(), c.escape_debug())
            }
            DotDot(s) => write!(f, "path `{s}` contains `..`"),
            PathTooLong(n) => write!(f, "path is {n} bytes; at most 255 are allowed"),
            NameLength(s) => write!(f, "`{s}` must be 1 to 31 bytes"),
            NameCharacters(s) => write!(f, "`{}` may only hold letters, digits, `_`, `.` and `-`", s.escape_debug()),
            NotASysctlKey(s) => write!(f, "`{}` is not a sysctl name like net.core.rmem_max", s.escape_debug()),
            SysctlKeyTooLong(s) => write!(f, "sysctl name `{s}` is longer than 63 bytes"),
            NotASysctlValue(s) => write!(f, "`{}` is not a sysctl value", s.escape_debug()),
            SysctlValueTooLong(n) => write!(f, "sysctl value is {n} bytes; at most 63"),
            NotAClient(s) => {
                write!(f, "`{}` is not a host, an address, a network with a prefix, a wildcard or *", s.escape_debug())
            }
            NotAPortRange(s) => write!(f, "`{}` is not a port range like 32768-60999", s.escape_debug()),
            PortRangeTooLow(lo) => write!(f, "the range starts at {lo}; the kernel's local ports start at 1024 or above"),
            EmptyPortRange(lo, hi) => write!(f, "the range {lo}-{hi} is empty: {lo} is above {hi}"),
            NotAnEndpoint(s) => write!(f, "`{}` is not an IPv4 address and port like 192.168.1.10:22", s.escape_debug()),
        }
    }
}

/// As Display: a derived Debug would be a second copy of every message
/// shape in the binary, for `expect` and tests only.
impl fmt::Debug for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for ParseError {}

/// A network interface name: 1 to 15 bytes (the kernel's IFNAMSIZ is 16
/// with the terminating NUL, include/uapi/linux/if.h), no '/', ':' or
/// white space, and not "." or "..".
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IfName(heapless::String<15>);

impl IfName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for IfName {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        if s.is_empty() {
            return Err(ParseError::IfNameEmpty);
        }
        if s.len() > 15 {
            return Err(ParseError::IfNameTooLong(s.into()));
        }
        if s == "." || s == ".." || s.chars().any(|c| c == '/' || c == ':' || c.is_whitespace() || c.is_control()) {
            return Err(ParseError::IfNameInvalid(s.into()));
        }
        Ok(IfName(heapless::String::try_from(s).expect("length checked")))
    }
}
decode_from_str!(IfName, "an interface name of at most 15 bytes");

impl fmt::Display for IfName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An address with its prefix length, IPv4 or IPv6: `192.168.1.2/24`,
/// `fd00::1/64`. The prefix is checked against the family (at most 32 or 128).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IpNet {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl IpNet {
    pub fn is_v4(&self) -> bool {
        self.addr.is_ipv4()
    }

    /// The network address (host bits cleared).
    pub fn network(&self) -> IpAddr {
        match self.addr {
            IpAddr::V4(a) => {
                let bits = u32::from(a) & mask_v4(self.prefix);
                IpAddr::V4(Ipv4Addr::from(bits))
            }
            IpAddr::V6(a) => {
                let bits = u128::from(a) & mask_v6(self.prefix);
                IpAddr::V6(Ipv6Addr::from(bits))
            }
        }
    }

    /// The IPv4 broadcast address of this network (None for IPv6 and /31, /32).
    pub fn broadcast(&self) -> Option<Ipv4Addr> {
        match self.addr {
            IpAddr::V4(a) if self.prefix < 31 => Some(Ipv4Addr::from(u32::from(a) | !mask_v4(self.prefix))),
            _ => None,
        }
    }

    /// Whether `ip` is inside this network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let m = mask_v4(self.prefix);
                u32::from(n) & m == u32::from(a) & m
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let m = mask_v6(self.prefix);
                u128::from(n) & m == u128::from(a) & m
            }
            _ => false,
        }
    }
}

/// The netmask for an IPv4 prefix length (0..=32).
pub(crate) fn mask_v4(prefix: u8) -> u32 {
    if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix))
    }
}

fn mask_v6(prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(prefix))
    }
}

impl FromStr for IpNet {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let (a, p) = s.split_once('/').ok_or_else(|| ParseError::NoPrefix(s.into()))?;
        let addr: IpAddr = a.parse().map_err(|_| ParseError::NotAnAddress(a.into()))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix: u8 =
            p.parse().ok().filter(|n| *n <= max).ok_or_else(|| ParseError::PrefixOutOfRange { prefix: p.into(), addr: a.into(), max })?;
        Ok(IpNet { addr, prefix })
    }
}
decode_from_str!(IpNet, "an address with a prefix, such as 192.168.1.2/24");

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// A TCP or UDP port, 1..=65535.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Port(u16);

impl Port {
    pub const fn new(n: u16) -> Option<Port> {
        if n == 0 {
            None
        } else {
            Some(Port(n))
        }
    }
    pub fn get(self) -> u16 {
        self.0
    }
}

impl Decode for Port {
    fn decode(v: &Value<'_>) -> Result<Self, dec::Error> {
        dec::int_in_range(v, 1, 65535, "port").map(|n| Port(n as u16))
    }
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A range of local ports, `LOW-HIGH` (as the kernel's
/// `net.ipv4.ip_local_port_range`, which also governs IPv6): LOW at least
/// 1024 (the kernel refuses a range below `ip_unprivileged_port_start`),
/// LOW no greater than HIGH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortRange {
    lo: u16,
    hi: u16,
}

impl PortRange {
    /// The kernel's default range (include/net/ip.h, inet_init_net).
    pub const LINUX_DEFAULT: PortRange = PortRange { lo: 32768, hi: 60999 };

    pub fn lo(self) -> u16 {
        self.lo
    }
    pub fn hi(self) -> u16 {
        self.hi
    }
    pub fn contains(self, port: u16) -> bool {
        (self.lo..=self.hi).contains(&port)
    }
}

impl FromStr for PortRange {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let bad = || ParseError::NotAPortRange(s.to_string());
        let (a, b) = s.split_once('-').ok_or_else(bad)?;
        let lo: u16 = a.trim().parse().map_err(|_| bad())?;
        let hi: u16 = b.trim().parse().map_err(|_| bad())?;
        if lo < 1024 {
            return Err(ParseError::PortRangeTooLow(lo));
        }
        if lo > hi {
            return Err(ParseError::EmptyPortRange(lo, hi));
        }
        Ok(PortRange { lo, hi })
    }
}

decode_from_str!(PortRange, "a port range like 32768-60999");

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.lo, self.hi)
    }
}

/// An Ethernet MAC address for an interface: six octets, colon separated,
/// unicast (not multicast, not broadcast) and not all zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MacAddr(pub [u8; 6]);

impl FromStr for MacAddr {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let bad = || ParseError::NotAMac(s.into());
        let mut out = [0u8; 6];
        let mut parts = s.split(':');
        for byte in out.iter_mut() {
            let p = parts.next().ok_or_else(bad)?;
            if p.len() != 2 {
                return Err(bad());
            }
            *byte = u8::from_str_radix(p, 16).map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        if out == [0xff; 6] {
            return Err(ParseError::BroadcastMac(s.into()));
        }
        if out[0] & 1 == 1 {
            return Err(ParseError::MulticastMac(s.into()));
        }
        if out == [0; 6] {
            return Err(ParseError::ZeroMac(s.into()));
        }
        Ok(MacAddr(out))
    }
}
decode_from_str!(MacAddr, "a MAC address like 02:00:00:00:00:01");

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

/// An absolute path with no control characters (newlines included), at
/// most 255 bytes. Used for export paths, devices and pidfiles.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AbsPath(heapless::String<255>);

impl AbsPath {
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn as_path(&self) -> &std::path::Path {
        std::path::Path::new(self.0.as_str())
    }
}

impl FromStr for AbsPath {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        if !s.starts_with('/') {
            return Err(ParseError::NotAbsolute(s.into()));
        }
        if let Some(c) = s.chars().find(|c| c.is_control()) {
            return Err(ParseError::ControlCharacter { path: s.into(), c });
        }
        if s.split('/').any(|part| part == "..") {
            return Err(ParseError::DotDot(s.into()));
        }
        heapless::String::try_from(s).map(AbsPath).map_err(|_| ParseError::PathTooLong(s.len()))
    }
}
decode_from_str!(AbsPath, "an absolute path");

impl fmt::Display for AbsPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A short name: a label, a block device, a board name. 1 to 31 bytes of
/// [A-Za-z0-9_.-].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(heapless::String<31>);

impl Name {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Name {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        if s.is_empty() || s.len() > 31 {
            return Err(ParseError::NameLength(s.into()));
        }
        if !s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')) || s == "." || s == ".." {
            return Err(ParseError::NameCharacters(s.into()));
        }
        Ok(Name(heapless::String::try_from(s).expect("length checked")))
    }
}
decode_from_str!(Name, "a short name of letters, digits, `_`, `.` and `-`");

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A sysctl name in dotted form, such as `net.core.rmem_max`. Up to 63
/// bytes of [a-z0-9_.-]; maps to a file under /proc/sys.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SysctlKey(heapless::String<63>);

impl SysctlKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for SysctlKey {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let ok_chars = s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '-'));
        if s.is_empty() || !ok_chars || s.split('.').any(str::is_empty) {
            return Err(ParseError::NotASysctlKey(s.into()));
        }
        heapless::String::try_from(s).map(SysctlKey).map_err(|_| ParseError::SysctlKeyTooLong(s.into()))
    }
}
decode_from_str!(SysctlKey, "a sysctl name like net.core.rmem_max");

impl fmt::Display for SysctlKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A sysctl value: an integer, or up to 63 bytes of printable text
/// (several numbers separated by spaces, as tcp_rmem takes).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SysctlValue(heapless::String<63>);

impl SysctlValue {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for SysctlValue {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        if s.is_empty() || s.chars().any(|c| c.is_control()) {
            return Err(ParseError::NotASysctlValue(s.into()));
        }
        heapless::String::try_from(s).map(SysctlValue).map_err(|_| ParseError::SysctlValueTooLong(s.len()))
    }
}

/// An integer or a boolean (1 or 0) is written as its digits.
impl Decode for SysctlValue {
    fn decode(v: &Value<'_>) -> Result<Self, dec::Error> {
        let digits;
        let s = match v.get_ref() {
            crate::config::document::Item::String(s) => s.as_ref(),
            crate::config::document::Item::Boolean(b) => {
                if *b {
                    "1"
                } else {
                    "0"
                }
            }
            crate::config::document::Item::Integer(_) => {
                digits = dec::int(v, &"an integer or a string")?.to_string();
                &digits
            }
            _ => return Err(dec::wrong(v, &"an integer or a string")),
        };
        s.parse().map_err(dec::Error::parse)
    }
}

impl fmt::Display for SysctlValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A VLAN id, 1 to 4094 (802.1Q: 0 means "priority tag only" and 4095
/// is reserved).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VlanId(u16);

impl VlanId {
    pub const fn new(n: u16) -> Option<VlanId> {
        if n >= 1 && n <= 4094 {
            Some(VlanId(n))
        } else {
            None
        }
    }
    pub fn get(self) -> u16 {
        self.0
    }
}

impl Decode for VlanId {
    fn decode(v: &Value<'_>) -> Result<Self, dec::Error> {
        dec::int_in_range(v, 1, 4094, "VLAN id").map(|n| VlanId(n as u16))
    }
}

impl fmt::Display for VlanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// An IPv4 address and a port, `192.168.1.10:22`: where a port forward
/// sends its connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub addr: Ipv4Addr,
    pub port: Port,
}

impl FromStr for Endpoint {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let bad = || ParseError::NotAnEndpoint(s.into());
        let (a, p) = s.rsplit_once(':').ok_or_else(bad)?;
        let addr: Ipv4Addr = a.parse().map_err(|_| bad())?;
        let port = p.parse::<u16>().ok().and_then(Port::new).ok_or_else(bad)?;
        Ok(Endpoint { addr, port })
    }
}
decode_from_str!(Endpoint, "an IPv4 address and port like 192.168.1.10:22");

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.addr, self.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ifname_bounds() {
        assert!("eth0".parse::<IfName>().is_ok());
        assert!("abcdefghijklmno".parse::<IfName>().is_ok());
        let e = "abcdefghijklmnop".parse::<IfName>().unwrap_err();
        assert_eq!(e, ParseError::IfNameTooLong("abcdefghijklmnop".into()));
        assert!(e.to_string().contains("16 bytes"), "{e}");
        assert_eq!("".parse::<IfName>(), Err(ParseError::IfNameEmpty));
        for bad in ["a/b", "a b", ".", "..", "eth0:1"] {
            assert_eq!(bad.parse::<IfName>(), Err(ParseError::IfNameInvalid(bad.into())), "{bad:?}");
        }
    }

    #[test]
    fn ipnet_prefix_checked_per_family() {
        assert_eq!("10.0.0.1/8".parse::<IpNet>().unwrap().prefix, 8);
        assert!("10.0.0.1/33".parse::<IpNet>().unwrap_err().to_string().contains("/33"));
        assert!("fd00::1/128".parse::<IpNet>().is_ok());
        let out_of_range = ParseError::PrefixOutOfRange { prefix: "129".into(), addr: "fd00::1".into(), max: 128 };
        assert_eq!("fd00::1/129".parse::<IpNet>(), Err(out_of_range));
        assert_eq!("10.0.0.1".parse::<IpNet>(), Err(ParseError::NoPrefix("10.0.0.1".into())));
    }

    #[test]
    fn ipnet_network_maths() {
        let n: IpNet = "192.168.10.7/24".parse().unwrap();
        assert_eq!(n.network().to_string(), "192.168.10.0");
        assert_eq!(n.broadcast().unwrap().to_string(), "192.168.10.255");
        assert!(n.contains("192.168.10.200".parse().unwrap()));
        assert!(!n.contains("192.168.11.1".parse().unwrap()));
        let z: IpNet = "0.0.0.0/0".parse().unwrap();
        assert!(z.contains("8.8.8.8".parse().unwrap()));
        let v6: IpNet = "fd00:1::5/64".parse().unwrap();
        assert!(v6.contains("fd00:1::9".parse().unwrap()));
    }

    #[test]
    fn mac_rules() {
        assert_eq!("02:00:00:00:00:01".parse::<MacAddr>().unwrap().to_string(), "02:00:00:00:00:01");
        assert!("ff:ff:ff:ff:ff:ff".parse::<MacAddr>().unwrap_err().to_string().contains("broadcast"));
        assert!("01:00:5e:00:00:01".parse::<MacAddr>().unwrap_err().to_string().contains("multicast"));
        for bad in ["02:00:00:00:00", "02:00:00:00:00:01:02", "zz:00:00:00:00:01", "2:0:0:0:0:1"] {
            assert_eq!(bad.parse::<MacAddr>(), Err(ParseError::NotAMac(bad.into())), "{bad}");
        }
    }

    #[test]
    fn abspath_rules() {
        assert!("/srv/nfs/share one".parse::<AbsPath>().is_ok());
        assert!("srv".parse::<AbsPath>().unwrap_err().to_string().contains("absolute"));
        let e = "/srv/a\nb".parse::<AbsPath>().unwrap_err();
        assert_eq!(e, ParseError::ControlCharacter { path: "/srv/a\nb".into(), c: '\n' });
        assert_eq!(e.to_string(), "path `/srv/a\\nb` contains the control character '\\n'");
        assert_eq!("/srv/../etc".parse::<AbsPath>(), Err(ParseError::DotDot("/srv/../etc".into())));
    }

    #[test]
    fn endpoint_and_vlan_rules() {
        let e: Endpoint = "192.168.1.10:22".parse().unwrap();
        assert_eq!((e.addr, e.port.get()), (Ipv4Addr::new(192, 168, 1, 10), 22));
        assert_eq!(e.to_string(), "192.168.1.10:22");
        for bad in ["192.168.1.10", "192.168.1.10:0", "192.168.1.10:65536", "[fd00::1]:22", "host:22", ":22"] {
            assert_eq!(bad.parse::<Endpoint>(), Err(ParseError::NotAnEndpoint(bad.into())), "{bad}");
        }
        assert_eq!(VlanId::new(0), None);
        assert_eq!(VlanId::new(4095), None);
        assert_eq!(VlanId::new(4094).map(VlanId::get), Some(4094));
    }

    #[test]
    fn sysctl_key_rules() {
        assert!("net.ipv4.conf.eth0.rp_filter".parse::<SysctlKey>().is_ok());
        assert_eq!("net..core".parse::<SysctlKey>(), Err(ParseError::NotASysctlKey("net..core".into())));
        assert_eq!("Net.Core".parse::<SysctlKey>(), Err(ParseError::NotASysctlKey("Net.Core".into())));
    }
}
