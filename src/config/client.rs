//! NFS client specifications as exports(5) reads them: a single host, an
//! IPv4 or IPv6 network with a prefix length, a wildcard, or `*`.

use std::fmt;
use std::net::IpAddr;

use super::types::{IpNet, ParseError};

/// One client of an export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Client {
    /// `*`: everyone.
    Anyone,
    /// An address or network, e.g. 192.168.1.0/24 or fd00::/64.
    Net(IpNet),
    /// A single address.
    Addr(IpAddr),
    /// A host name, possibly with `*` `?` `[...]` wildcards.
    Host(String),
}

impl Client {
    /// Parse one client. Host names follow RFC 1123 letters plus the
    /// exports(5) wildcards; anything with white space, parentheses or
    /// commas is refused since it would change the meaning of the line.
    pub(crate) fn parse(s: &str) -> Result<Client, ParseError> {
        if s == "*" {
            return Ok(Client::Anyone);
        }
        if s.contains('/') {
            return s.parse::<IpNet>().map(Client::Net);
        }
        if let Ok(a) = s.parse::<IpAddr>() {
            return Ok(Client::Addr(a));
        }
        let ok = !s.is_empty()
            && s.len() <= 63
            && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '*' | '?' | '[' | ']'));
        if ok {
            Ok(Client::Host(s.to_string()))
        } else {
            Err(ParseError::NotAClient(s.into()))
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Client::Anyone => f.write_str("*"),
            Client::Net(n) => write!(f, "{}/{}", n.network(), n.prefix),
            Client::Addr(a) => write!(f, "{a}"),
            Client::Host(h) => f.write_str(h),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(Client::parse("*").unwrap(), Client::Anyone);
        assert_eq!(Client::parse("192.168.1.9/24").unwrap().to_string(), "192.168.1.0/24");
        assert_eq!(Client::parse("fd00::1/64").unwrap().to_string(), "fd00::/64");
        assert_eq!(Client::parse("10.0.0.5").unwrap().to_string(), "10.0.0.5");
        assert_eq!(Client::parse("*.lan").unwrap().to_string(), "*.lan");
        assert!(Client::parse("10.0.0.0/33").unwrap_err().to_string().contains("/33"));
        assert_eq!(Client::parse("host(rw)"), Err(ParseError::NotAClient("host(rw)".into())));
        assert_eq!(Client::parse("a b"), Err(ParseError::NotAClient("a b".into())));
    }
}
