//! Per-interface sysctls through `seams.sysctl`: `accept_ra` (as
//! net.ipv6.conf.IF.accept_ra) and the `[interface.sysctl]` map, whose
//! keys are relative to net.ipv4.conf.IF / net.ipv6.conf.IF
//! ("ipv4.rp_filter" = 1). They are set before the link comes up, so an
//! interface never takes router advertisements it was told to refuse.

use crate::config::net::Interface;
use crate::config::types::IfName;

/// The full key for a map key: "ipv4.rp_filter" on eth0 is
/// net.ipv4.conf.eth0.rp_filter (validation allows only ipv4.* and ipv6.*).
/// A dot inside the interface name (a VLAN such as eth0.2) is written as
/// `/`, as sysctl(8) does: net.ipv4.conf.eth0/2.rp_filter is
/// /proc/sys/net/ipv4/conf/eth0.2/rp_filter.
pub(crate) fn full_key(ifname: &IfName, rel: &str) -> String {
    let (family, knob) = rel.split_once('.').unwrap_or(("ipv4", rel));
    let ifname = ifname.as_str().replace('.', "/");
    format!("net.{family}.conf.{ifname}.{knob}")
}

/// The wanted (key, value) pairs of an interface, in order.
pub(crate) fn wanted(iface: &Interface) -> Vec<(String, String)> {
    let name = iface.name.get_ref();
    let mut out: Vec<(String, String)> = iface.sysctl.iter().map(|(k, v)| (full_key(name, k.as_str()), v.to_string())).collect();
    if let Some(ra) = iface.accept_ra {
        let key = full_key(name, "ipv6.accept_ra");
        out.retain(|(k, _)| *k != key);
        out.push((key, ra.to_string()));
    }
    out
}
