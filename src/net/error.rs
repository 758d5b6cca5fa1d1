//! What a NIC step fails with: one variant per kind of step, each naming
//! the interface (and the knob) and keeping the kernel's error as its
//! source. Display is the line the log and the summary show, "eth0 mtu:
//! ..."; every one is partial (exit 3): the rest of the boot carries on.

use std::fmt;
use std::io;

use super::virt::Virt;
use super::{on_off, Shown};
use crate::config::types::{IfName, IpNet, MacAddr};
use crate::exit::{ExitStatus, Status};
use crate::seam::Ended;

/// A NIC step that failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// The profile names an interface the board does not have.
    Missing { name: IfName },
    /// One of its sysctls (accept_ra, `[interface.sysctl]`).
    Sysctl(crate::sysctl::Error),
    /// SIOCSIFFLAGS: administratively up (or down).
    Up { name: IfName, source: io::Error },
    /// SIOCSIFMTU.
    Mtu { name: IfName, to: u32, source: io::Error },
    /// SIOCSIFTXQLEN.
    TxQueueLen { name: IfName, to: u32, source: io::Error },
    /// SIOCSIFHWADDR.
    Mac { name: IfName, to: MacAddr, source: io::Error },
    /// SIOCSIFFLAGS: IFF_PROMISC.
    Promisc { name: IfName, on: bool, source: io::Error },
    /// SIOCETHTOOL refused a knob the driver has (one it lacks is only a
    /// warning); `knob` as the plan names it ("ring", "tso", "pause").
    Ethtool { name: IfName, knob: &'static str, source: io::Error },
    /// The interface disappeared during the carrier wait.
    Vanished { name: IfName },
    /// Its flags could not be read during the carrier wait.
    Carrier { name: IfName, source: io::Error },
    /// No carrier within `carrier_timeout` (`secs`).
    NoCarrier { name: IfName, secs: u32 },
    /// RTM_NEWADDR.
    Address { name: IfName, addr: IpNet, source: io::Error },
    /// RTM_NEWROUTE: a route to `dst`, or (`gateway`) a default route.
    Route { name: IfName, dst: IpNet, gateway: bool, source: io::Error },
    /// Neither DHCP client is on PATH.
    NoDhcpClient { name: IfName },
    /// The DHCP client could not be run.
    DhcpRun { name: IfName, source: io::Error },
    /// The DHCP client failed: its path, how it ended, what it said
    /// (trimmed).
    DhcpFailed { name: IfName, program: String, ended: Ended, stderr: String },
    /// RTM_NEWLINK: a bridge or VLAN could not be created.
    Create { name: IfName, what: Virt, source: io::Error },
    /// Another change to a bridge, a VLAN or a port (`name`).
    Virt { name: IfName, op: VirtOp, source: io::Error },
    /// The name is taken by a link nasboot did not create (`is`: its kind).
    Foreign { name: IfName, is: String },
    /// SQM cannot be set as the profile says (`why` names the key):
    /// nothing of it was applied.
    Sqm { name: IfName, why: String },
    /// The kernel refused an SQM change (`op`, in tc's words); what the
    /// step had set before it was taken back.
    Tc { name: IfName, op: String, source: io::Error },
}

/// A change to a nasboot link or a port, for [`Error::Virt`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum VirtOp {
    /// RTM_DELLINK of a link the profile no longer names.
    Remove,
    /// RTM_DELLINK before creating it again.
    RemoveOld,
    /// The bridge's STP.
    Stp,
    /// IFLA_MASTER: make it a port of `bridge`.
    Enslave { bridge: IfName },
    /// IFLA_MASTER 0: release it from `bridge`.
    Release { bridge: IfName },
    /// Up, as a port or a VLAN's lower device.
    Up,
}

impl fmt::Display for VirtOp {
    /// What could not be done: "cannot {op}".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VirtOp::Remove => f.write_str("remove it"),
            VirtOp::RemoveOld => f.write_str("remove the old link"),
            VirtOp::Stp => f.write_str("set stp"),
            VirtOp::Enslave { bridge } => write!(f, "make it a port of {bridge}"),
            VirtOp::Release { bridge } => write!(f, "release it from {bridge}"),
            VirtOp::Up => f.write_str("set it up"),
        }
    }
}

impl Error {
    /// What the line starts with: the interface, the knob (" mtu") and,
    /// for addresses and routes, the network. None for a sysctl's, which
    /// has its own.
    fn subject(&self) -> Option<(&IfName, &'static str, &dyn fmt::Display)> {
        Some(match self {
            Error::Sysctl(_) => return None,
            Error::Missing { name } | Error::Create { name, .. } | Error::Virt { name, .. } | Error::Foreign { name, .. } => {
                (name, "", &"")
            }
            Error::Sqm { name, .. } | Error::Tc { name, .. } => (name, " sqm", &""),
            Error::Up { name, .. } => (name, " up", &""),
            Error::Mtu { name, .. } => (name, " mtu", &""),
            Error::TxQueueLen { name, .. } => (name, " txqueuelen", &""),
            Error::Mac { name, .. } => (name, " mac", &""),
            Error::Promisc { name, .. } => (name, " promisc", &""),
            Error::Ethtool { name, knob, .. } => (name, " ", knob),
            Error::Vanished { name } | Error::Carrier { name, .. } | Error::NoCarrier { name, .. } => (name, " carrier", &""),
            Error::Address { name, addr, .. } => (name, " address ", addr),
            Error::Route { name, gateway: true, .. } => (name, " gateway", &""),
            Error::Route { name, dst, .. } => (name, " route ", dst),
            Error::NoDhcpClient { name } | Error::DhcpRun { name, .. } | Error::DhcpFailed { name, .. } => (name, " dhcp", &""),
        })
    }
}

impl fmt::Display for Error {
    /// The subject, then what went wrong: written in pieces, so that the
    /// variants share the subject's formatting.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some((name, knob, more)) = self.subject() else {
            return match self {
                Error::Sysctl(e) => e.fmt(f),
                _ => Ok(()),
            };
        };
        write!(f, "{name}{knob}{more}: ")?;
        let errno = |e: &io::Error| e.raw_os_error();
        match self {
            Error::Sysctl(_) => Ok(()),
            Error::Missing { .. } => f.write_str("no such interface; nothing was applied to it"),
            Error::Up { source, .. } | Error::Carrier { source, .. } | Error::Address { source, .. } | Error::DhcpRun { source, .. } => {
                source.fmt(f)
            }
            Error::Mtu { to, source, .. } if errno(source) == Some(nix::libc::EINVAL) => {
                write!(f, "the kernel refused {to} ({source}): below the minimum or above the driver's maximum")
            }
            Error::Mtu { to, source, .. } | Error::TxQueueLen { to, source, .. } => write!(f, "cannot set {to}: {source}"),
            Error::Mac { to, source, .. } if errno(source) == Some(nix::libc::EBUSY) => {
                write!(f, "cannot set {to}: the driver needs the link down ({source})")
            }
            Error::Mac { to, source, .. } => write!(f, "cannot set {to}: {source}"),
            Error::Promisc { on, source, .. } => write!(f, "cannot turn it {}: {source}", on_off(*on)),
            Error::Ethtool { source, .. } if errno(source) == Some(nix::libc::ENOSYS) => {
                write!(f, "SIOCETHTOOL is not available ({}); under qemu-user, this ethtool command is not translated", Shown(source))
            }
            Error::Ethtool { source, .. } => Shown(source).fmt(f),
            Error::Vanished { .. } => f.write_str("the interface disappeared"),
            Error::NoCarrier { secs, .. } => write!(f, "no carrier after {secs} s"),
            Error::Route { source, .. } => {
                source.fmt(f)?;
                match errno(source) {
                    Some(nix::libc::ENETUNREACH) => f.write_str(": the gateway is not on any of this interface's networks"),
                    Some(nix::libc::ENETDOWN) => f.write_str(": the link is down"),
                    _ => Ok(()),
                }
            }
            // dhcp::CLIENTS, as the plan names them.
            Error::NoDhcpClient { .. } => f.write_str("no DHCP client (udhcpc or dhclient) on PATH"),
            Error::DhcpFailed { program, ended, stderr, .. } => write!(f, "{program} {ended}: {stderr}"),
            Error::Create { what, source, .. } => {
                write!(f, "cannot create the {what}: {source}")?;
                match (errno(source), what) {
                    (Some(nix::libc::EOPNOTSUPP), _) => f.write_str("; the kernel lacks the driver (CONFIG_BRIDGE, CONFIG_VLAN_8021Q)"),
                    (Some(nix::libc::EEXIST), _) => f.write_str("; the name, or this VLAN id on that device, is taken"),
                    (Some(nix::libc::ENODEV), Virt::Vlan { link, .. }) => write!(f, "; there is no {link}"),
                    _ => Ok(()),
                }
            }
            Error::Virt { op, source, .. } => write!(f, "cannot {op}: {source}"),
            Error::Foreign { is, .. } => write!(f, "exists as {is}, which nasboot did not create; nothing was applied to it"),
            Error::Sqm { why, .. } => write!(f, "{why}; no shaping was applied"),
            Error::Tc { op, source, .. } => {
                write!(f, "the kernel refused `{op}`: {}", Shown(source))?;
                if errno(source) == Some(nix::libc::ENOENT) && op.contains(" qdisc replace ") {
                    f.write_str(" (the kernel lacks this qdisc: set [interface.sqm] qdisc to one it has)")?;
                }
                f.write_str("; the step's other changes were taken back, the link is not shaped")
            }
        }
    }
}

impl std::error::Error for Error {
    /// The kernel's (or the runner's) error; a sysctl's is its own source.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Sysctl(e) => e.source(),
            Error::Up { source, .. }
            | Error::Mtu { source, .. }
            | Error::TxQueueLen { source, .. }
            | Error::Mac { source, .. }
            | Error::Promisc { source, .. }
            | Error::Ethtool { source, .. }
            | Error::Carrier { source, .. }
            | Error::Address { source, .. }
            | Error::Route { source, .. }
            | Error::DhcpRun { source, .. }
            | Error::Create { source, .. }
            | Error::Virt { source, .. }
            | Error::Tc { source, .. } => Some(source),
            Error::Missing { .. }
            | Error::Vanished { .. }
            | Error::NoCarrier { .. }
            | Error::NoDhcpClient { .. }
            | Error::DhcpFailed { .. }
            | Error::Foreign { .. }
            | Error::Sqm { .. } => None,
        }
    }
}

impl ExitStatus for Error {
    /// Partial (3): one interface or knob, the rest carries on.
    fn exit_status(&self) -> Status {
        match self {
            Error::Sysctl(e) => e.exit_status(),
            _ => Status::Partial,
        }
    }
}

impl From<crate::sysctl::Error> for Error {
    fn from(e: crate::sysctl::Error) -> Error {
        Error::Sysctl(e)
    }
}

#[cfg(test)]
mod tests {
    use nix::libc::{EBUSY, EEXIST, EINVAL, ENETDOWN, ENETUNREACH, ENODEV, ENOENT, ENOSYS, EOPNOTSUPP, EPERM};

    use super::super::Errno;
    use super::*;

    fn n(s: &str) -> IfName {
        s.parse().unwrap()
    }
    fn os(errno: i32) -> io::Error {
        io::Error::from_raw_os_error(errno)
    }
    fn e(errno: i32) -> String {
        os(errno).to_string()
    }

    /// Each case's message is what the log and the summary show, and what
    /// the shell suites and users' log filters look for: word for word.
    fn reads(cases: Vec<(Error, String)>) {
        for (err, want) in cases {
            assert_eq!(err.to_string(), want);
            assert_eq!(err.exit_status(), Status::Partial, "{err}");
        }
    }

    #[test]
    fn link_messages_read_word_for_word() {
        let mac: MacAddr = "02:00:00:00:00:01".parse().unwrap();
        reads(vec![
            (Error::Missing { name: n("eth7") }, "eth7: no such interface; nothing was applied to it".into()),
            (Error::Up { name: n("eth0"), source: os(EPERM) }, format!("eth0 up: {}", e(EPERM))),
            (
                Error::Mtu { name: n("eth0"), to: 9000, source: os(EINVAL) },
                format!("eth0 mtu: the kernel refused 9000 ({}): below the minimum or above the driver's maximum", e(EINVAL)),
            ),
            (Error::Mtu { name: n("eth0"), to: 9000, source: os(EPERM) }, format!("eth0 mtu: cannot set 9000: {}", e(EPERM))),
            (Error::TxQueueLen { name: n("eth0"), to: 64, source: os(EPERM) }, format!("eth0 txqueuelen: cannot set 64: {}", e(EPERM))),
            (
                Error::Mac { name: n("eth0"), to: mac, source: os(EBUSY) },
                format!("eth0 mac: cannot set {mac}: the driver needs the link down ({})", e(EBUSY)),
            ),
            (Error::Mac { name: n("eth0"), to: mac, source: os(EPERM) }, format!("eth0 mac: cannot set {mac}: {}", e(EPERM))),
            (Error::Promisc { name: n("eth0"), on: true, source: os(EPERM) }, format!("eth0 promisc: cannot turn it on: {}", e(EPERM))),
            (
                Error::Ethtool { name: n("eth0"), knob: "tso", source: os(ENOSYS) },
                format!(
                    "eth0 tso: SIOCETHTOOL is not available ({}); under qemu-user, this ethtool command is not translated",
                    Errno(ENOSYS)
                ),
            ),
            (Error::Ethtool { name: n("eth0"), knob: "ring", source: os(EINVAL) }, format!("eth0 ring: {}", Errno(EINVAL))),
            (Error::Ethtool { name: n("eth0"), knob: "pause", source: io::Error::other("odd") }, "eth0 pause: odd".into()),
            (Error::Vanished { name: n("eth0") }, "eth0 carrier: the interface disappeared".into()),
            (Error::Carrier { name: n("eth0"), source: os(ENODEV) }, format!("eth0 carrier: {}", e(ENODEV))),
            (Error::NoCarrier { name: n("eth0"), secs: 10 }, "eth0 carrier: no carrier after 10 s".into()),
        ]);
    }

    #[test]
    fn address_route_and_dhcp_messages_read_word_for_word() {
        let net = |s: &str| -> IpNet { s.parse().unwrap() };
        reads(vec![
            (
                Error::Address { name: n("eth0"), addr: net("10.0.0.2/24"), source: os(EPERM) },
                format!("eth0 address 10.0.0.2/24: {}", e(EPERM)),
            ),
            (
                Error::Route { name: n("eth0"), dst: net("0.0.0.0/0"), gateway: true, source: os(ENETUNREACH) },
                format!("eth0 gateway: {}: the gateway is not on any of this interface's networks", e(ENETUNREACH)),
            ),
            (
                Error::Route { name: n("eth0"), dst: net("10.1.0.0/16"), gateway: false, source: os(ENETDOWN) },
                format!("eth0 route 10.1.0.0/16: {}: the link is down", e(ENETDOWN)),
            ),
            (
                Error::Route { name: n("eth0"), dst: net("10.1.0.0/16"), gateway: false, source: os(EPERM) },
                format!("eth0 route 10.1.0.0/16: {}", e(EPERM)),
            ),
            (
                Error::NoDhcpClient { name: n("eth0") },
                format!("eth0 dhcp: no DHCP client ({}) on PATH", super::super::dhcp::CLIENTS.join(" or ")),
            ),
            (Error::DhcpRun { name: n("eth0"), source: os(ENOENT) }, format!("eth0 dhcp: {}", e(ENOENT))),
            (
                Error::DhcpFailed {
                    name: n("eth0"),
                    program: "/sbin/udhcpc".into(),
                    ended: Ended { code: Some(1), timed_out: false },
                    stderr: "no lease".into(),
                },
                "eth0 dhcp: /sbin/udhcpc exit status 1: no lease".into(),
            ),
        ]);
    }

    #[test]
    fn bridge_and_vlan_messages_read_word_for_word() {
        let vlan = Virt::Vlan { link: n("eth0"), id: 5 };
        let (eth0, br0) = (n("eth0"), n("br0"));
        reads(vec![
            (
                Error::Create { name: br0.clone(), what: Virt::Bridge { stp: false }, source: os(EOPNOTSUPP) },
                format!(
                    "br0: cannot create the bridge (stp off): {}; the kernel lacks the driver (CONFIG_BRIDGE, CONFIG_VLAN_8021Q)",
                    e(EOPNOTSUPP)
                ),
            ),
            (
                Error::Create { name: n("eth0.5"), what: vlan.clone(), source: os(EEXIST) },
                format!("eth0.5: cannot create the vlan 5 on eth0: {}; the name, or this VLAN id on that device, is taken", e(EEXIST)),
            ),
            (
                Error::Create { name: n("eth0.5"), what: vlan, source: os(ENODEV) },
                format!("eth0.5: cannot create the vlan 5 on eth0: {}; there is no eth0", e(ENODEV)),
            ),
            (
                Error::Create { name: br0.clone(), what: Virt::Bridge { stp: true }, source: os(ENODEV) },
                format!("br0: cannot create the bridge (stp on): {}", e(ENODEV)),
            ),
            (Error::Virt { name: br0.clone(), op: VirtOp::Remove, source: os(EPERM) }, format!("br0: cannot remove it: {}", e(EPERM))),
            (
                Error::Virt { name: br0.clone(), op: VirtOp::RemoveOld, source: os(EPERM) },
                format!("br0: cannot remove the old link: {}", e(EPERM)),
            ),
            (Error::Virt { name: br0.clone(), op: VirtOp::Stp, source: os(EPERM) }, format!("br0: cannot set stp: {}", e(EPERM))),
            (
                Error::Virt { name: eth0.clone(), op: VirtOp::Enslave { bridge: br0.clone() }, source: os(EBUSY) },
                format!("eth0: cannot make it a port of br0: {}", e(EBUSY)),
            ),
            (
                Error::Virt { name: eth0.clone(), op: VirtOp::Release { bridge: br0.clone() }, source: os(EPERM) },
                format!("eth0: cannot release it from br0: {}", e(EPERM)),
            ),
            (Error::Virt { name: eth0, op: VirtOp::Up, source: os(EPERM) }, format!("eth0: cannot set it up: {}", e(EPERM))),
            (
                Error::Foreign { name: br0, is: "a bridge".into() },
                "br0: exists as a bridge, which nasboot did not create; nothing was applied to it".into(),
            ),
        ]);
    }

    #[test]
    fn the_kernel_error_is_the_source() {
        let err = Error::Mtu { name: n("eth0"), to: 9000, source: os(EINVAL) };
        let source = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<io::Error>());
        assert_eq!(source.and_then(io::Error::raw_os_error), Some(EINVAL));
        assert!(std::error::Error::source(&Error::NoCarrier { name: n("eth0"), secs: 1 }).is_none());
    }
}
