//! The nftables renderer: the model as one `nft -f` file.
//!
//! The file replaces nasboot's own tables atomically and leaves every other
//! table alone: `table inet nasboot {}` (creates it if missing), then
//! `delete table inet nasboot`, then the new definition, all in one file,
//! which `nft -f` commits as one kernel transaction (nft(8), "nft -f").
//! The same is done for `table ip nasboot_nat`, which exists only with
//! `forward = true`. Priorities are numbers (raw -300, filter 0, srcnat
//! 100, dstnat -100) so that nft releases older than 0.9.1, which lack the
//! names, read the file too.
//!
//! Shape (see `firewall/mod.rs` for the reasons): an input chain with
//! policy drop; a LAN open to everything accepted by one compare rule
//! first (no set lookup); loopback; one verdict map on the input interface
//! for the other zones; per-zone chains with named port sets; no `ct`
//! expression, no NAT and no helper in the stateless profile. With
//! `hook = "ingress"` (stateless only) the per-zone chains are reached
//! from one ingress chain per interface instead, and a LAN open to
//! everything gets none: no input chain at all.

use std::fmt::{self, Write};

use super::model::{Dnat, Ifaces, Kind, Model, Ports, Zone, DHCP4, DHCP6, REPLY_UDP_SPORTS};
use crate::config::types::PortRange;

/// ICMP types a WAN (and a restricted LAN) accepts.
const ICMP4: &str = "echo-reply, destination-unreachable, time-exceeded";
/// ICMPv6 types: errors, and neighbour discovery (133-136).
const ICMP6: &str = "echo-reply, destination-unreachable, packet-too-big, time-exceeded, nd-router-solicit, nd-router-advert, nd-neighbor-solicit, nd-neighbor-advert";

fn iface_set(out: &mut String, ifaces: &Ifaces) -> fmt::Result {
    out.push_str("{ ");
    for (i, name) in ifaces.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write!(out, "\"{name}\"")?;
    }
    out.push_str(" }");
    Ok(())
}

fn port_list(out: &mut String, ports: &[u16]) -> fmt::Result {
    for (i, p) in ports.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write!(out, "{p}")?;
    }
    Ok(())
}

fn set(out: &mut String, name: &str, ports: &Ports) -> fmt::Result {
    if ports.is_empty() {
        return Ok(());
    }
    write!(out, "\tset {name} {{\n\t\ttype inet_service\n\t\telements = {{ ")?;
    port_list(out, ports)?;
    out.push_str(" }\n\t}\n");
    Ok(())
}

/// Rules that let replies to the box's own connections in without
/// connection tracking. The box's own connections use local ports from the
/// kernel's ephemeral range (`reply`), and no service nasboot configures
/// listens there (validation keeps the pinned ports below it), so:
/// TCP to that range without SYN-only (a segment there can open no
/// connection; ACK and FIN probes of a service port are dropped); UDP from
/// DNS and NTP servers to that range; DHCP and DHCPv6 server replies;
/// essential ICMP and ICMPv6. Every TCP and UDP rule reads the ports (and
/// TCP the flags) from the packet: a first fragment too short to hold
/// them matches none of them, and a non-first fragment has no transport
/// header to match (nft_payload refuses both).
fn stateless_replies(out: &mut String, reply: PortRange) -> fmt::Result {
    writeln!(out, "\t\ttcp dport {reply} tcp flags & (syn | ack) != syn accept")?;
    out.push_str("\t\tudp sport { ");
    port_list(out, &REPLY_UDP_SPORTS)?;
    writeln!(out, " }} udp dport {reply} accept")?;
    writeln!(out, "\t\tudp sport {} udp dport {} accept", DHCP4.0, DHCP4.1)?;
    writeln!(out, "\t\tudp sport {} udp dport {} accept", DHCP6.0, DHCP6.1)?;
    icmp(out)
}

fn icmp(out: &mut String) -> fmt::Result {
    writeln!(out, "\t\ticmp type {{ {ICMP4} }} accept")?;
    writeln!(out, "\t\ticmpv6 type {{ {ICMP6} }} accept")
}

fn zone_services(out: &mut String, zone: &str, z: &Zone) -> fmt::Result {
    if !z.tcp.is_empty() {
        writeln!(out, "\t\ttcp dport @{zone}_tcp accept")?;
    }
    if !z.udp.is_empty() {
        writeln!(out, "\t\tudp dport @{zone}_udp accept")?;
    }
    Ok(())
}

/// A zone's chain on one interface's ingress hook (the `inet` family's,
/// Linux 5.10): it sees that interface's IPv4 and IPv6 packets only (ARP
/// and the rest pass), before routing and before reassembly.
fn ingress_chain(out: &mut String, zone: &str, i: usize, name: &str) -> fmt::Result {
    writeln!(
        out,
        "\tchain {zone}_in{i} {{\n\t\ttype filter hook ingress device \"{name}\" priority 0; policy accept;\n\t\tjump {zone}\n\t}}"
    )
}

/// Non-first fragments, after every other rule (so unfragmented packets
/// never test them): they carry no transport header, so they are let
/// through to reassembly, which cannot complete a datagram whose first
/// fragment was dropped; the first fragment meets the rules above like any
/// packet. IPv6 fragments meet the input hook one by one too: without
/// connection tracking nothing reassembles them before it. On the ingress
/// hook (`ipv4`), IPv4 fragments are not reassembled yet either; there a
/// TCP fragment at offset 8 bytes, which could rewrite the flags of a
/// first fragment (RFC 1858 3.2), is dropped first.
fn fragments(out: &mut String, ipv4: bool) {
    if ipv4 {
        out.push_str("\t\tip protocol tcp ip frag-off & 0x1fff == 1 drop\n");
        out.push_str("\t\tip frag-off & 0x1fff != 0 accept\n");
    }
    out.push_str("\t\tfrag frag-off != 0 accept\n");
}

fn base_chain(out: &mut String, name: &str, hook: &str, priority: i32, policy: &str) -> fmt::Result {
    writeln!(out, "\tchain {name} {{\n\t\ttype filter hook {hook} priority {priority}; policy {policy};")
}

/// Render the rule set for `m` into `out`.
pub(crate) fn render(m: &Model, out: &mut String) -> fmt::Result {
    writeln!(out, "#!/usr/sbin/nft -f")?;
    let hook = if m.ingress { ", ingress hooks" } else { "" };
    writeln!(out, "# nasboot firewall: profile {}{hook} (nftables)", kind_name(m.kind))?;
    out.push_str("table inet nasboot {}\ndelete table inet nasboot\n");
    if m.kind != Kind::Off {
        out.push_str("table inet nasboot {\n");
        if m.forward && m.flowtable && !m.lan_ifaces.is_empty() {
            // The software fast path (nf_flow_table): once `flow add` has
            // seen a flow established, its packets go from the ingress hook
            // of these devices straight to the output device.
            out.push_str("\tflowtable ft {\n\t\thook ingress priority 0;\n\t\tdevices = ");
            let mut devs = m.lan_ifaces.clone();
            devs.extend(m.wan_ifaces.iter().cloned());
            iface_set(out, &devs)?;
            out.push_str(";\n\t}\n");
        }
        set(out, "lan_tcp", &m.lan.tcp)?;
        set(out, "lan_udp", &m.lan.udp)?;
        set(out, "wan_tcp", &m.wan.tcp)?;
        set(out, "wan_udp", &m.wan.udp)?;
        if m.notrack_lan() {
            // Storage traffic skips connection tracking; with forwarding,
            // only what is addressed to the box itself (LAN to WAN flows
            // need conntrack for the masquerade).
            base_chain(out, "raw_prerouting", "prerouting", -300, "accept")?;
            if m.reflection {
                // A LAN client's connection to a forwarded port at the WAN
                // address, and the target's replies to the box's LAN
                // address (masqueraded), are for the box: they must be
                // tracked to be NATed.
                for d in &m.dnat {
                    out.push_str("\t\tiifname ");
                    iface_set(out, &m.lan_ifaces)?;
                    writeln!(out, " {} dport {} accept", d.proto, d.wan_port)?;
                    out.push_str("\t\tiifname ");
                    iface_set(out, &m.lan_ifaces)?;
                    writeln!(out, " ip saddr {} {} sport {} accept", d.to.addr, d.proto, d.to.port)?;
                }
            }
            out.push_str("\t\tiifname ");
            iface_set(out, &m.lan_ifaces)?;
            out.push_str(if m.forward { " fib daddr type local notrack\n" } else { " notrack\n" });
            out.push_str("\t}\n");
            base_chain(out, "raw_output", "output", -300, "accept")?;
            out.push_str("\t\toifname ");
            iface_set(out, &m.lan_ifaces)?;
            out.push_str(" notrack\n\t}\n");
        }
        if m.ingress {
            for (i, name) in m.wan_ifaces.iter().enumerate() {
                ingress_chain(out, "wan", i, name.as_str())?;
            }
            if !m.lan.all {
                for (i, name) in m.lan_ifaces.iter().enumerate() {
                    ingress_chain(out, "lan", i, name.as_str())?;
                }
            }
        } else {
            base_chain(out, "input", "input", 0, "drop")?;
            if m.lan.all {
                for name in &m.lan_ifaces {
                    writeln!(out, "\t\tiifname \"{name}\" accept")?;
                }
            }
            out.push_str("\t\tiif lo accept\n");
            let lan_verdict = if m.lan.all { "accept" } else { "jump lan" };
            let lan_in_map = if m.lan.all { &m.lan_ifaces[..0] } else { &m.lan_ifaces[..] };
            if !lan_in_map.is_empty() || !m.wan_ifaces.is_empty() {
                out.push_str("\t\tiifname vmap { ");
                let lan = lan_in_map.iter().map(|n| (n, lan_verdict));
                let wan = m.wan_ifaces.iter().map(|n| (n, "jump wan"));
                for (i, (name, verdict)) in lan.chain(wan).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write!(out, "\"{name}\" : {verdict}")?;
                }
                out.push_str(" }\n");
            }
            out.push_str("\t}\n");
        }
        base_chain(out, "forward", "forward", 0, "drop")?;
        if m.forward && !m.lan_ifaces.is_empty() {
            forward_rules(m, out)?;
        }
        out.push_str("\t}\n");
        if !m.lan.all {
            // A LAN limited to services: the services, the LAN's own pings,
            // and (stateless, as LAN traffic is never tracked) replies.
            out.push_str("\tchain lan {\n");
            zone_services(out, "lan", &m.lan)?;
            out.push_str("\t\ticmp type echo-request accept\n\t\ticmpv6 type echo-request accept\n");
            stateless_replies(out, m.reply_ports)?;
            fragments(out, m.ingress);
            out.push_str("\t\tdrop\n\t}\n");
        }
        out.push_str("\tchain wan {\n");
        if m.kind == Kind::Stateful {
            out.push_str("\t\tct state established,related accept\n\t\tct state invalid drop\n");
            zone_services(out, "wan", &m.wan)?;
            icmp(out)?;
        } else {
            zone_services(out, "wan", &m.wan)?;
            stateless_replies(out, m.reply_ports)?;
            fragments(out, m.ingress);
        }
        if let Some(rate) = m.log_rate {
            writeln!(out, "\t\tlimit rate {rate}/minute burst 5 packets log prefix \"nasboot-wan-drop: \"")?;
        }
        out.push_str("\t\tdrop\n\t}\n}\n");
    }
    out.push_str("table ip nasboot_nat {}\ndelete table ip nasboot_nat\n");
    if m.forward && m.kind != Kind::Off && !m.wan_ifaces.is_empty() {
        nat_table(m, out)?;
    }
    Ok(())
}

/// ICMPv6 a router passes from the WAN to the LAN unasked (RFC 4890
/// 4.3.1: errors, and echo for reachability): destination unreachable,
/// packet too big, time exceeded, parameter problem, echo request and reply.
const ICMP6_FORWARD: &str = "destination-unreachable, packet-too-big, time-exceeded, parameter-problem, echo-request, echo-reply";

/// The forward chain of a router: the fast path, MSS clamping, replies,
/// LAN to WAN, port forwards, and the ICMPv6 a router must pass.
fn forward_rules(m: &Model, out: &mut String) -> fmt::Result {
    if m.flowtable {
        // Only established flows are offloaded (nft_flow_offload skips
        // new and related ones and TCP with SYN, FIN or RST set).
        out.push_str("\t\tmeta l4proto { tcp, udp } flow add @ft\n");
    }
    // Both directions' SYNs (the SYN-ACK comes back established), as
    // fw4 does for its WAN zone: a PPPoE or tunnel WAN has a smaller MTU
    // than the LAN hosts believe.
    out.push_str("\t\ttcp flags & (syn | rst) == syn tcp option maxseg size set rt mtu\n");
    out.push_str("\t\tct state established,related accept\n");
    // Invalid packets are not NATed: leaving on the WAN they would carry
    // LAN addresses (fw4's "Prevent NAT leakage").
    out.push_str("\t\tct state invalid drop\n");
    let pair = |out: &mut String, from: &Ifaces, to: &Ifaces, tail: &str| -> fmt::Result {
        out.push_str("\t\tiifname ");
        iface_set(out, from)?;
        out.push_str(" oifname ");
        iface_set(out, to)?;
        writeln!(out, " {tail}")
    };
    pair(out, &m.lan_ifaces, &m.wan_ifaces, "accept")?;
    // Between the LAN's interfaces (and back out of the one it came in
    // on, as reflected connections do), as fw4's lan zone forwards.
    pair(out, &m.lan_ifaces, &m.lan_ifaces, "accept")?;
    if !m.dnat.is_empty() {
        pair(out, &m.wan_ifaces, &m.lan_ifaces, "ct status dnat accept")?;
    }
    pair(out, &m.wan_ifaces, &m.lan_ifaces, &format!("icmpv6 type {{ {ICMP6_FORWARD} }} accept"))
}

fn dnat_rule(out: &mut String, d: &Dnat) -> fmt::Result {
    writeln!(out, " {} dport {} dnat to {}", d.proto, d.wan_port, d.to)
}

/// IPv4 NAT: port forwards (and their reflection) before routing,
/// masquerade on the WAN after it.
fn nat_table(m: &Model, out: &mut String) -> fmt::Result {
    // Kernels before 4.18 need both NAT hooks registered.
    out.push_str("table ip nasboot_nat {\n\tchain prerouting {\n\t\ttype nat hook prerouting priority -100; policy accept;\n");
    for d in &m.dnat {
        out.push_str("\t\tiifname ");
        iface_set(out, &m.wan_ifaces)?;
        dnat_rule(out, d)?;
    }
    if m.reflection {
        // A LAN client that uses an address of the box other than its
        // LAN network's (the WAN address) for a forwarded port.
        for d in &m.dnat {
            out.push_str("\t\tiifname ");
            iface_set(out, &m.lan_ifaces)?;
            write!(out, " fib daddr type local ip daddr != {}", d.lan_net)?;
            dnat_rule(out, d)?;
        }
    }
    out.push_str("\t}\n\tchain postrouting {\n\t\ttype nat hook postrouting priority 100; policy accept;\n\t\toifname ");
    iface_set(out, &m.wan_ifaces)?;
    out.push_str(" masquerade\n");
    if m.reflection {
        // The reflected connection's replies must come back through the
        // box, not straight from the LAN host to the client.
        for d in &m.dnat {
            writeln!(
                out,
                "\t\tip saddr {net} ip daddr {addr} {proto} dport {port} ct status dnat masquerade",
                net = d.lan_net,
                addr = d.to.addr,
                proto = d.proto,
                port = d.to.port
            )?;
        }
    }
    out.push_str("\t}\n}\n");
    Ok(())
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Stateless => "stateless",
        Kind::Stateful => "stateful",
        Kind::Off => "off",
    }
}

/// The fallback when the configured rule set does not load: loopback and
/// the LAN interfaces accepted, everything else dropped, nothing forwarded.
pub(crate) fn render_fallback(lan: &Ifaces, out: &mut String) -> fmt::Result {
    out.push_str("# nasboot firewall: fallback (the configured rule set did not load)\n");
    out.push_str("table inet nasboot {}\ndelete table inet nasboot\ntable inet nasboot {\n");
    base_chain(out, "input", "input", 0, "drop")?;
    out.push_str("\t\tiif lo accept\n");
    if !lan.is_empty() {
        out.push_str("\t\tiifname ");
        iface_set(out, lan)?;
        out.push_str(" accept\n");
    }
    out.push_str("\t}\n");
    base_chain(out, "forward", "forward", 0, "drop")?;
    out.push_str("\t}\n}\ntable ip nasboot_nat {}\ndelete table ip nasboot_nat\n");
    Ok(())
}

/// The emergency rule set for a board whose profile cannot be read, so
/// that no interface is known to be LAN: loopback, replies to connections
/// the box opened (this engages conntrack, which is acceptable in an
/// emergency), essential ICMP and ICMPv6 (neighbour discovery), and
/// nothing else. The serial console is the way in.
pub(crate) fn render_emergency(out: &mut String) -> fmt::Result {
    out.push_str("# nasboot firewall: emergency (the profile could not be read)\n");
    out.push_str("table inet nasboot {}\ndelete table inet nasboot\ntable inet nasboot {\n");
    base_chain(out, "input", "input", 0, "drop")?;
    out.push_str("\t\tiif lo accept\n\t\tct state established,related accept\n");
    icmp(out)?;
    out.push_str("\t}\n");
    base_chain(out, "forward", "forward", 0, "drop")?;
    out.push_str("\t}\n}\ntable ip nasboot_nat {}\ndelete table ip nasboot_nat\n");
    Ok(())
}
