//! Profile parsing: good profiles, and a table of bad ones. Every bad
//! profile must give the file, line, column and key, and nothing else.

use super::*;

fn parse_str(text: &str) -> Result<Loaded, ConfigError> {
    parse_bytes("test.toml", text.as_bytes())
}

const MINIMAL: &str = "[board]\nname = \"t\"\n";

#[test]
fn minimal_profile_defaults_to_a_stateless_firewall() {
    let l = parse_str(MINIMAL).unwrap();
    assert_eq!(l.profile.firewall.profile, firewall::Profile::Stateless);
    assert!(l.profile.interface.is_empty());
    assert!(l.profile.watchdog.is_none());
    assert!(l.warnings.is_empty());
}

#[test]
fn line_and_column_are_one_based() {
    let src = Source { file: "f", text: "ab\ncd\n" };
    assert_eq!(src.line_col(0), (1, 1));
    assert_eq!(src.line_col(4), (2, 2));
}

/// (name, profile text, line, column, key, part of the message)
pub(crate) const BAD: &[(&str, &str, usize, usize, &str, &str)] = &[
    ("ifname 16 bytes", "[board]\nname = \"t\"\n[[interface]]\nname = \"abcdefghijklmnop\"\nrole = \"lan\"\n", 4, 8, "interface[0].name", "16 bytes"),
    ("prefix /33", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\naddress = [\"10.0.0.1/33\"]\n", 6, 12, "interface[0].address[0]", "/33"),
    ("port 70000", "[board]\nname = \"t\"\n[firewall]\nlan_tcp_ports = [22, 70000]\n", 4, 22, "firewall.lan_tcp_ports[1]", "70000"),
    ("port 0", "[board]\nname = \"t\"\n[firewall]\nwan_tcp_ports = [0]\n", 4, 18, "firewall.wan_tcp_ports[0]", "port 0"),
    ("relative export path", "[board]\nname = \"t\"\n[[nfs.export]]\npath = \"srv/nfs\"\n", 4, 8, "nfs.export[0].path", "absolute"),
    ("newline in export path", "[board]\nname = \"t\"\n[[nfs.export]]\npath = \"/srv/a\\nb\"\n", 4, 8, "nfs.export[0].path", "control character"),
    ("duplicate interface", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\n[[interface]]\nname = \"eth0\"\nrole = \"wan\"\n", 7, 8, "interface[1].name", "already defined"),
    ("unknown key (typo)", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\nmtuu = 1500\n", 6, 1, "interface[0].mtuu", "unknown field `mtuu`"),
    ("unknown section", "[board]\nname = \"t\"\n[firewal]\nprofile = \"off\"\n", 3, 2, "firewal", "unknown field `firewal`"),
    ("wrong type", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\nmtu = \"big\"\n", 6, 7, "interface[0].mtu", "expected an integer from 68 to 65535"),
    ("empty file", "", 1, 1, "board", "missing field `board`"),
    ("syntax error", "[board]\nname = \"t\"\nmtu = = 3\n", 3, 7, "mtu", ""),
    ("mtu below 68", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\nmtu = 67\n", 6, 7, "interface[0].mtu", "68 to 65535"),
    ("malformed MAC", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\nmac = \"00:11:22:33:44\"\n", 6, 7, "interface[0].mac", "not a MAC"),
    ("multicast MAC", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\nmac = \"01:00:5e:00:00:01\"\n", 6, 7, "interface[0].mac", "multicast"),
    ("duplicate address", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\naddress = [\"10.0.0.1/24\", \"10.0.0.1/16\"]\n", 6, 27, "interface[0].address[1]", "assigned twice"),
    ("gateway unreachable", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"wan\"\naddress = [\"10.0.0.2/24\"]\ngateway = \"10.9.9.1\"\n", 7, 11, "interface[0].gateway", "unreachable"),
    ("route via unreachable", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\naddress = [\"10.0.0.2/24\"]\nroute = [{ to = \"10.8.0.0/16\", via = \"10.7.0.1\" }]\n", 7, 38, "interface[0].route[0].via", "unreachable"),
    ("interface in no zone", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\n", 4, 8, "interface[0].role", "no zone"),
    ("unknown service", "[board]\nname = \"t\"\n[firewall]\nlan_services = [\"ssh\", \"telnet\"]\n", 4, 24, "firewall.lan_services[1]", "unknown variant `telnet`"),
    ("same export twice", "[board]\nname = \"t\"\n[[nfs.export]]\npath = \"/srv\"\nclients = [\"10.0.0.0/24\"]\n[[nfs.export]]\npath = \"/srv\"\nclients = [\"10.0.0.0/24\"]\n", 8, 12, "nfs.export[1].clients[0]", "twice"),
    ("export client /33", "[board]\nname = \"t\"\n[[nfs.export]]\npath = \"/srv\"\nclients = [\"10.0.0.0/33\"]\n", 5, 12, "nfs.export[0].clients[0]", "/33"),
    ("watchdog timeout 0", "[board]\nname = \"t\"\n[watchdog]\ntimeout = 0\n", 4, 11, "watchdog.timeout", "out of range"),
    ("interval over timeout", "[board]\nname = \"t\"\n[watchdog]\ntimeout = 10\ninterval = 20\n", 5, 1, "watchdog.interval", "not shorter"),
    ("too many interfaces", "[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n[[interface]]\nname = \"a0\"\n[[interface]]\nname = \"a1\"\n[[interface]]\nname = \"a2\"\n[[interface]]\nname = \"a3\"\n[[interface]]\nname = \"a4\"\n[[interface]]\nname = \"a5\"\n[[interface]]\nname = \"a6\"\n[[interface]]\nname = \"a7\"\n[[interface]]\nname = \"a8\"\n", 5, 1, "interface", "9 entries; at most 8"),
    ("interface name nft cannot quote", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth\\\"0\"\nrole = \"lan\"\n", 4, 8, "interface[0].name", "cannot match literally"),
    ("iptables wildcard in interface name", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth+\"\nrole = \"wan\"\n", 4, 8, "interface[0].name", "cannot match literally"),
    ("wan service all", "[board]\nname = \"t\"\n[firewall]\nwan_services = [\"all\"]\n", 4, 1, "firewall.wan_services", "LAN only"),
    ("forward without WAN", "[board]\nname = \"t\"\n[firewall]\nforward = true\n", 4, 1, "firewall.forward", "needs a WAN"),
    ("log_rate 0", "[board]\nname = \"t\"\n[firewall]\nlog_rate = 0\n", 4, 1, "firewall.log_rate", "1 to 6000"),
    ("unknown wan service", "[board]\nname = \"t\"\n[firewall]\nwan_services = [\"ftp\"]\n", 4, 17, "firewall.wan_services[0]", "unknown variant `ftp`"),
    ("mountd port 65536", "[board]\nname = \"t\"\n[firewall]\nmountd_port = 65536\n", 4, 15, "firewall.mountd_port", "65536"),
    ("unknown backend", "[board]\nname = \"t\"\n[firewall]\nbackend = \"pf\"\n", 4, 11, "firewall.backend", "unknown variant `pf`"),
    ("missing board name", "[board]\n", 1, 1, "board.name", "missing field `name`"),
    ("ingress hook with iptables", "[board]\nname = \"t\"\n[firewall]\nhook = \"ingress\"\nbackend = \"iptables\"\n", 4, 1, "firewall.hook", "iptables has no ingress hook"),
    ("ingress hook when stateful", "[board]\nname = \"t\"\n[firewall]\nprofile = \"stateful\"\nhook = \"ingress\"\n", 5, 1, "firewall.hook", "stateless profile on nftables"),
    ("port range below 1024", "[board]\nname = \"t\"\n[firewall]\nlocal_port_range = \"100-60999\"\n", 4, 20, "firewall.local_port_range", "start at 1024 or above"),
    ("empty port range", "[board]\nname = \"t\"\n[firewall]\nlocal_port_range = \"40000-30000\"\n", 4, 20, "firewall.local_port_range", "40000 is above 30000"),
    ("port range not a range", "[board]\nname = \"t\"\n[firewall]\nlocal_port_range = \"32768\"\n", 4, 20, "firewall.local_port_range", "not a port range like 32768-60999"),
    ("port range as an array", "[board]\nname = \"t\"\n[firewall]\nlocal_port_range = [32768, 60999]\n", 4, 20, "firewall.local_port_range", "a port range like 32768-60999"),
    ("mountd inside the range", "[board]\nname = \"t\"\n[firewall]\nmountd_port = 40000\n", 4, 1, "firewall.mountd_port", "port 40000 lies in local_port_range 32768-60999"),
    ("statd inside a wider range", "[board]\nname = \"t\"\n[firewall]\nlocal_port_range = \"10000-60999\"\nmountd_port = 4002\nlockd_port = 4001\n", 3, 1, "firewall.statd_port", "port 32765 lies in local_port_range 10000-60999"),
    ("nfsd inside the range", "[board]\nname = \"t\"\n[firewall]\nlocal_port_range = \"2000-60999\"\nmountd_port = 1999\nstatd_port = 1998\nlockd_port = 1997\n", 4, 1, "firewall.local_port_range", "port 2049 lies in local_port_range"),
    ("a LAN-only port inside the range", "[board]\nname = \"t\"\n[firewall]\nlan_services = [\"ssh\"]\nlan_udp_ports = [5353, 40000]\n", 5, 1, "firewall.lan_udp_ports", "port 40000 lies in local_port_range"),
    ("lockd on mountd's port", "[board]\nname = \"t\"\n[firewall]\nlockd_port = 32767\n", 4, 1, "firewall.lockd_port", "already firewall.mountd_port"),
    ("statd on nfsd's port", "[board]\nname = \"t\"\n[firewall]\nstatd_port = 2049\n", 4, 1, "firewall.statd_port", "fixed NFS port"),
    ("the local port range set as a sysctl", "[board]\nname = \"t\"\n[sysctl.set]\n\"net.ipv4.ip_local_port_range\" = \"1024 65535\"\n", 4, 1, "sysctl.set.\"net.ipv4.ip_local_port_range\"", "set firewall.local_port_range instead"),
];

#[test]
fn the_stateful_profile_keeps_pinned_ports_where_the_user_wants_them() {
    // Only the stateless profile lets replies in by port range.
    parse_str("[board]\nname = \"t\"\n[firewall]\nprofile = \"stateful\"\nmountd_port = 40000\n").unwrap();
}

#[test]
fn bad_profiles_name_file_line_column_and_key() {
    assert!(BAD.len() >= 20);
    for (name, text, line, column, key, msg) in BAD {
        let e = match parse_str(text) {
            Ok(_) => panic!("{name}: accepted"),
            Err(e) => e,
        };
        assert_eq!(e.file, "test.toml", "{name}");
        assert_eq!((e.line, e.column), (*line, *column), "{name}: {e}");
        assert_eq!(e.key, *key, "{name}: {e}");
        assert!(e.message.contains(msg), "{name}: `{}` lacks `{msg}`", e.message);
        let shown = e.to_string();
        assert!(shown.starts_with(&format!("test.toml:{line}:{column}: {key}: ")), "{name}: {shown}");
    }
}

#[test]
fn binary_garbage_is_refused_with_its_offset() {
    let e = parse_bytes("g.toml", b"[board]\nname = \"t\"\n\xff\xfe\x00junk").unwrap_err();
    assert_eq!((e.line, e.column), (3, 1), "{e}");
    assert!(e.message.contains("not UTF-8"), "{e}");
    let e = parse_bytes("g.toml", b"[board]\x00\n").unwrap_err();
    assert!(e.message.contains("NUL"), "{e}");
    assert_eq!((e.line, e.column), (1, 8));
}

#[test]
fn warning_for_lan_all_with_other_services() {
    let l = parse_str("[board]\nname = \"t\"\n[firewall]\nlan_services = [\"all\", \"ssh\"]\n").unwrap();
    let w: Vec<String> = l.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(w, ["test.toml:4:1: firewall.lan_services: \"all\" already lets the LAN reach everything; the other services listed add nothing (warning)"]);
}

#[test]
fn warnings_for_async_and_squashed_rw() {
    let l =
        parse_str("[board]\nname = \"t\"\n[[nfs.export]]\npath = \"/srv\"\nclients = [\"*\"]\nrw = true\nsquash = \"all\"\nsync = false\n")
            .unwrap();
    let keys: Vec<&str> = l.warnings.iter().map(|w| w.0.key.as_str()).collect();
    assert_eq!(keys, ["nfs.export[0].anonuid", "nfs.export[0].sync"]);
}

/// Where errors inside arrays of tables, inline tables and enums point:
/// the key path is collected as the error unwinds (config/decode.rs).
#[test]
fn nested_errors_name_the_right_key() {
    let head = "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\n";
    for (tail, at, key, msg) in [
        // A field missing from the second table of an array.
        ("[[interface]]\nrole = \"lan\"\n", (5, 1), "interface[1].name", "missing field `name`"),
        // An enum is a string; a table or an array there is the enum's error.
        ("role = { a = 1 }\n", (5, 8), "interface[0].role", "invalid type: map"),
        ("[[interface.role]]\n", (5, 1), "interface[0].role", "invalid type: sequence"),
        (
            "role = \"lan\"\nroute = [{ to = \"10.8.0.0/16\", via = 7 }]\n",
            (6, 38),
            "interface[0].route[0].via",
            "invalid type: integer `7`",
        ),
        ("role = \"lan\"\nmtu = 99999999999999999999\n", (6, 7), "interface[0].mtu", "too large"),
        ("role = \"lan\"\nmtu = 1979-05-27\n", (6, 7), "interface[0].mtu", "invalid type: date-time"),
    ] {
        let e = parse_str(&format!("{head}{tail}")).unwrap_err();
        assert_eq!(((e.line, e.column), e.key.as_str()), (at, key), "{tail:?}: {e}");
        assert!(e.message.contains(msg), "{tail:?}: `{}` lacks `{msg}`", e.message);
    }
    let e = parse_str("[[board]]\nname = \"t\"\n").unwrap_err();
    assert_eq!(((e.line, e.column), e.key.as_str()), ((1, 1), "board"), "{e}");
    assert!(e.message.contains("invalid type: sequence"), "{e}");
}

#[test]
fn load_limits_are_floats_or_integers_in_hundredths() {
    let l = parse_str("[board]\nname = \"t\"\n[watchdog]\ntimeout = 30\nmax_load1 = 4.5\nmax_load5 = 2\nmax_load15 = 0.01\n").unwrap();
    let w = l.profile.watchdog.unwrap();
    assert_eq!((w.max_load1, w.max_load5, w.max_load15), (Some(watchdog::Load(450)), Some(watchdog::Load(200)), Some(watchdog::Load(1))));
    for (value, msg) in [("0.001", "out of range (0.01 to 1000)"), ("1e9", "out of range"), ("\"4.5\"", "invalid type: string")] {
        let e = parse_str(&format!("[board]\nname = \"t\"\n[watchdog]\ntimeout = 30\nmax_load1 = {value}\n")).unwrap_err();
        assert_eq!(((e.line, e.column), e.key.as_str()), ((5, 13), "watchdog.max_load1"), "{e}");
        assert!(e.message.contains(msg), "{value}: {e}");
    }
    // A float where no float belongs: refused, not printed.
    let e = parse_str("[board]\nname = \"t\"\n[sysctl.set]\n\"vm.swappiness\" = 1.5\n").unwrap_err();
    assert!(e.message.contains("invalid type: floating-point number"), "{e}");
}

/// A router: a WAN NIC and a LAN bridge over two ports. The rows of
/// `BAD_ROUTER` append to it.
pub(crate) const ROUTER: &str = "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"wan\"\n[[interface]]\nname = \"br-lan\"\nkind = \"bridge\"\nports = [\"eth1\", \"eth2\"]\nrole = \"lan\"\naddress = [\"192.168.1.1/24\"]\n";

/// (name, text after `ROUTER` or a whole profile when it starts with
/// `[board]`, line, column, key, part of the message)
pub(crate) const BAD_ROUTER: &[(&str, &str, usize, usize, &str, &str)] = &[
    ("bridge port that is a bridge", "[[interface]]\nname = \"br1\"\nkind = \"bridge\"\nports = [\"br-lan\"]\nrole = \"lan\"\n", 15, 10, "interface[2].ports[0]", "a bridge cannot be a port"),
    ("bridge port named twice", "[[interface]]\nname = \"br1\"\nkind = \"bridge\"\nports = [\"eth2\"]\nrole = \"lan\"\n", 15, 10, "interface[2].ports[0]", "already a port of `br-lan`"),
    ("bridge port twice in one bridge", "[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n[[interface]]\nname = \"br0\"\nkind = \"bridge\"\nports = [\"eth1\", \"eth1\"]\n", 8, 18, "interface[0].ports[1]", "already a port of `br0`"),
    ("bridge port with an address", "[[interface]]\nname = \"eth1\"\naddress = [\"10.0.0.1/24\"]\n", 9, 10, "interface[1].ports[0]", "cannot have addresses"),
    ("bridge port with a role", "[[interface]]\nname = \"eth2\"\nrole = \"lan\"\n", 9, 18, "interface[1].ports[1]", "cannot have a role"),
    ("ports on a nic", "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\nports = [\"eth1\"]\n", 6, 10, "interface[0].ports", "only kind = \"bridge\" has ports"),
    ("vlan id 0", "[[interface]]\nname = \"eth0.0\"\nkind = \"vlan\"\nlink = \"eth0\"\nid = 0\nrole = \"wan\"\n", 16, 6, "interface[2].id", "VLAN id 0 is out of range (1 to 4094)"),
    ("vlan id 4095", "[[interface]]\nname = \"eth0.4095\"\nkind = \"vlan\"\nlink = \"eth0\"\nid = 4095\nrole = \"wan\"\n", 16, 6, "interface[2].id", "VLAN id 4095 is out of range"),
    ("vlan on itself", "[[interface]]\nname = \"eth0.2\"\nkind = \"vlan\"\nlink = \"eth0.2\"\nid = 2\nrole = \"wan\"\n", 15, 8, "interface[2].link", "tagged on itself"),
    ("vlan without an id", "[[interface]]\nname = \"eth0.2\"\nkind = \"vlan\"\nlink = \"eth0\"\nrole = \"wan\"\n", 13, 8, "interface[2].id", "needs `id`"),
    ("the same vlan twice", "[[interface]]\nname = \"eth0.2\"\nkind = \"vlan\"\nlink = \"eth0\"\nid = 2\nrole = \"wan\"\n[[interface]]\nname = \"wan2\"\nkind = \"vlan\"\nlink = \"eth0\"\nid = 2\nrole = \"wan\"\n", 22, 6, "interface[3].id", "already interface[2]"),
    ("stp on a vlan", "[[interface]]\nname = \"eth0.2\"\nkind = \"vlan\"\nlink = \"eth0\"\nid = 2\nstp = true\nrole = \"wan\"\n", 13, 8, "interface[2].stp", "only kind = \"bridge\" has `stp`"),
    ("sqm on the LAN", "[interface.sqm]\negress_kbit = 1000\n", 13, 15, "interface[1].sqm", "`br-lan` is not a WAN"),
    ("sqm rate 0", "[[interface]]\nname = \"wan2\"\nrole = \"wan\"\n[interface.sqm]\negress_kbit = 0\n", 16, 15, "interface[2].sqm.egress_kbit", "rate (kbit/s) 0 is out of range (8 to 10000000)"),
    ("sqm overhead out of range", "[[interface]]\nname = \"wan2\"\nrole = \"wan\"\n[interface.sqm]\negress_kbit = 1000\noverhead = 300\n", 17, 12, "interface[2].sqm.overhead", "overhead 300 is out of range (-64 to 256)"),
    ("sqm unknown qdisc", "[[interface]]\nname = \"wan2\"\nrole = \"wan\"\n[interface.sqm]\negress_kbit = 1000\nqdisc = \"sfq\"\n", 17, 9, "interface[2].sqm.qdisc", "unknown variant"),
    ("sqm without a rate", "[[interface]]\nname = \"wan2\"\nrole = \"wan\"\n[interface.sqm]\ningress_kbit = 1000\n", 15, 1, "interface[2].sqm.egress_kbit", "missing field `egress_kbit`"),
    ("port forward outside the LAN", "[firewall]\nforward = true\n[[firewall.port_forward]]\nproto = \"tcp\"\nwan_port = 2222\nto = \"10.9.9.9:22\"\n", 17, 6, "firewall.port_forward[0].to", "in no LAN subnet"),
    ("WAN port forwarded twice", "[firewall]\nforward = true\n[[firewall.port_forward]]\nproto = \"tcp\"\nwan_port = 2222\nto = \"192.168.1.10:22\"\n[[firewall.port_forward]]\nproto = \"tcp\"\nwan_port = 2222\nto = \"192.168.1.11:22\"\n", 20, 12, "firewall.port_forward[1].wan_port", "tcp port 2222 is already forwarded by firewall.port_forward[0]"),
    ("port forward without forwarding", "[[firewall.port_forward]]\nproto = \"tcp\"\nwan_port = 2222\nto = \"192.168.1.10:22\"\n", 14, 12, "firewall.port_forward[0].wan_port", "needs forward = true"),
    ("port forward to a bad endpoint", "[firewall]\nforward = true\n[[firewall.port_forward]]\nproto = \"tcp\"\nwan_port = 2222\nto = \"192.168.1.10\"\n", 17, 6, "firewall.port_forward[0].to", "not an IPv4 address and port"),
    ("port forward of an unknown protocol", "[firewall]\nforward = true\n[[firewall.port_forward]]\nproto = \"sctp\"\nwan_port = 2222\nto = \"192.168.1.10:22\"\n", 15, 9, "firewall.port_forward[0].proto", "unknown variant `sctp`"),
];

#[test]
fn bad_router_profiles_name_file_line_column_and_key() {
    for (name, tail, line, column, key, msg) in BAD_ROUTER {
        let text = if tail.starts_with("[board]") { tail.to_string() } else { format!("{ROUTER}{tail}") };
        let e = match parse_str(&text) {
            Ok(_) => panic!("{name}: accepted"),
            Err(e) => e,
        };
        assert_eq!((e.line, e.column, e.key.as_str()), (*line, *column, *key), "{name}: {e}");
        assert!(e.message.contains(msg), "{name}: `{}` lacks `{msg}`", e.message);
    }
}

#[test]
fn a_router_profile_parses() {
    let text = format!(
        "{ROUTER}[[interface]]\nname = \"eth0.2\"\nkind = \"vlan\"\nlink = \"eth0\"\nid = 2\nrole = \"wan\"\n\
         [firewall]\nforward = true\n[[firewall.port_forward]]\nproto = \"tcp\"\nwan_port = 2222\nto = \"192.168.1.10:22\"\n"
    );
    let l = parse_str(&text).unwrap();
    let br = &l.profile.interface[1];
    assert_eq!(br.kind, net::LinkKind::Bridge);
    assert_eq!(br.ports.len(), 2);
    let v = &l.profile.interface[2];
    assert_eq!((v.kind, v.id.as_ref().map(|i| i.get_ref().get())), (net::LinkKind::Vlan, Some(2)));
    assert_eq!(l.profile.firewall.port_forward[0].to.get_ref().to_string(), "192.168.1.10:22");
    assert_eq!(l.profile.firewall.flow_offload, firewall::FlowOffload::Auto);
    assert!(l.profile.firewall.nat_reflection);
}
