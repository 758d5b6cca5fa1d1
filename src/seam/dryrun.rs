//! Dry-run seams: read the real system, change nothing, and print each
//! change they would make (`--dry-run`).

use std::io;
use std::path::{Path, PathBuf};

use super::netif::{EthtoolSet, Features, LinkInfo, LinkModes, LinkState, Netif, NewLink, RouteEntry, TcList, TcObject, TcOp};
use super::nftables::{CommitError, Nftables, Tables};
use super::real::{files::RealFiles, netif::RealNetif, nfnl::RealNftables, runner::RealRunner, sysctl::RealSysctl, Root};
use super::watchdog::{WatchdogDevice, WatchdogPort};
use super::{Cmd, Files, Output, Replaced, Runner, Sysctl};
use crate::config::types::{IfName, IpNet};
use crate::sys::ethtool::{Coalesce, LegacyCmd, PauseParam, RingParam};

/// One line on standard output; a closed pipe (`| head`) loses it quietly.
fn say(what: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(io::stdout().lock(), "dry-run: would {what}");
}

pub struct DryRunFiles {
    real: RealFiles,
}

impl DryRunFiles {
    pub fn new(root: Root) -> Self {
        DryRunFiles { real: RealFiles::new(root) }
    }
}

impl Files for DryRunFiles {
    fn read(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        self.real.read(path)
    }
    fn read_into(&mut self, path: &Path, buf: &mut Vec<u8>) -> io::Result<()> {
        self.real.read_into(path, buf)
    }
    fn exists(&mut self, path: &Path) -> bool {
        self.real.exists(path)
    }
    fn is_dir(&mut self, path: &Path) -> bool {
        self.real.is_dir(path)
    }
    fn replace(&mut self, path: &Path, data: &[u8]) -> io::Result<Replaced> {
        match self.real.read(path) {
            Ok(old) if old == data => Ok(Replaced::Unchanged),
            Ok(_) => {
                say(format_args!("replace {} ({} bytes), keeping {}.bak", path.display(), data.len(), path.display()));
                Ok(Replaced::BackedUp)
            }
            Err(_) => {
                say(format_args!("create {} ({} bytes)", path.display(), data.len()));
                Ok(Replaced::Created)
            }
        }
    }
    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        say(format_args!("rename {} to {}", from.display(), to.display()));
        Ok(())
    }
    fn write_kernel(&mut self, path: &Path, data: &[u8]) -> io::Result<()> {
        say(format_args!("write {:?} to {}", String::from_utf8_lossy(data).trim_end(), path.display()));
        Ok(())
    }
    fn relocated(&self) -> bool {
        self.real.relocated()
    }
    /// A dry run changes nothing, so it neither waits for a running apply
    /// nor makes one wait (nor creates the lock file).
    fn lock(&mut self, _: &Path, _: bool) -> io::Result<super::Lock> {
        Ok(super::Lock::none())
    }
    fn modified(&mut self, path: &Path) -> io::Result<std::time::Duration> {
        self.real.modified(path)
    }
}

pub struct DryRunSysctl {
    real: RealSysctl,
}

impl DryRunSysctl {
    pub fn new(root: Root) -> Self {
        DryRunSysctl { real: RealSysctl::new(root) }
    }
}

impl Sysctl for DryRunSysctl {
    fn get(&mut self, key: &str) -> io::Result<String> {
        self.real.get(key)
    }
    fn set(&mut self, key: &str, value: &str) -> io::Result<()> {
        say(format_args!("set sysctl {key} = {value}"));
        Ok(())
    }
}

#[derive(Default)]
pub struct DryRunRunner {
    real: RealRunner,
}

impl Runner for DryRunRunner {
    fn run(&mut self, cmd: &Cmd<'_>) -> io::Result<Output> {
        match cmd.stdin {
            Some(data) => say(format_args!("run {} with {} bytes on stdin", cmd.display(), data.len())),
            None => say(format_args!("run {}", cmd.display())),
        }
        Ok(Output { code: Some(0), ..Output::default() })
    }
    /// Said as a run: what a dry run shows is the argv.
    fn start(&mut self, cmd: &Cmd<'_>) -> io::Result<()> {
        self.run(cmd).map(drop)
    }
    fn which(&mut self, program: &str) -> Option<PathBuf> {
        self.real.which(program)
    }
    fn resolve(&mut self, program: &str) -> Option<PathBuf> {
        self.real.resolve(program)
    }
}

/// Reads the kernel's nf_tables tables; commits nothing.
#[derive(Default)]
pub struct DryRunNftables {
    real: RealNftables,
}

impl Nftables for DryRunNftables {
    fn tables(&mut self) -> io::Result<Tables> {
        self.real.tables()
    }
    fn dump(&mut self, kind: u8, family: u8, table: &str, set: Option<&str>, each: &mut dyn FnMut(u8, &[u8])) -> io::Result<()> {
        self.real.dump(kind, family, table, set, each)
    }
    fn generation(&mut self) -> io::Result<u32> {
        self.real.generation()
    }
    fn next_seq(&mut self) -> u32 {
        1
    }
    fn commit(&mut self, batch: &crate::sys::nftnl::Sent) -> Result<(), CommitError> {
        say(format_args!("commit one nf_tables batch of {} messages ({} bytes) through netlink", batch.starts.len(), batch.bytes.len()));
        Ok(())
    }
}

/// Reads real links, addresses, routes and ethtool values; changes none.
#[derive(Default)]
pub struct DryRunNetif {
    real: RealNetif,
}

impl Netif for DryRunNetif {
    fn link(&mut self, name: &IfName) -> io::Result<Option<LinkState>> {
        self.real.link(name)
    }
    fn set_up(&mut self, name: &IfName, up: bool) -> io::Result<()> {
        say(format_args!("set {name} {}", if up { "up" } else { "down" }));
        Ok(())
    }
    fn set_promisc(&mut self, name: &IfName, on: bool) -> io::Result<()> {
        say(format_args!("set {name} promisc {}", if on { "on" } else { "off" }));
        Ok(())
    }
    fn set_mtu(&mut self, name: &IfName, mtu: u32) -> io::Result<()> {
        say(format_args!("set {name} mtu {mtu}"));
        Ok(())
    }
    fn set_txqueuelen(&mut self, name: &IfName, len: u32) -> io::Result<()> {
        say(format_args!("set {name} txqueuelen {len}"));
        Ok(())
    }
    fn set_mac(&mut self, name: &IfName, mac: [u8; 6]) -> io::Result<()> {
        say(format_args!("set {name} address {}", crate::config::types::MacAddr(mac)));
        Ok(())
    }
    fn addresses(&mut self) -> io::Result<Vec<(u32, IpNet)>> {
        self.real.addresses()
    }
    fn add_address(&mut self, index: u32, addr: &IpNet) -> io::Result<()> {
        say(format_args!("add address {addr} to interface #{index}"));
        Ok(())
    }
    fn delete_address(&mut self, index: u32, addr: &IpNet) -> io::Result<()> {
        say(format_args!("delete address {addr} from interface #{index}"));
        Ok(())
    }
    fn routes(&mut self) -> io::Result<Vec<RouteEntry>> {
        self.real.routes()
    }
    fn replace_route(&mut self, r: &RouteEntry) -> io::Result<()> {
        let via = r.via.map(|v| format!(" via {v}")).unwrap_or_default();
        say(format_args!("replace route {}{via} dev #{} metric {}", r.dst, r.oif, r.metric));
        Ok(())
    }
    fn link_infos(&mut self) -> io::Result<Vec<LinkInfo>> {
        self.real.link_infos()
    }
    fn create_link(&mut self, link: &NewLink) -> io::Result<()> {
        match link {
            NewLink::Bridge { name, stp } => say(format_args!("create bridge {name} (stp {})", if *stp { "on" } else { "off" })),
            NewLink::Vlan { name, link, id } => say(format_args!("create vlan {name} id {id} on {link}")),
            NewLink::Ifb { name } => say(format_args!("create ifb {name}")),
        }
        Ok(())
    }
    fn set_master(&mut self, port: &IfName, bridge: Option<&IfName>) -> io::Result<()> {
        match bridge {
            None => say(format_args!("release {port} from its bridge")),
            Some(b) => say(format_args!("make {port} a port of {b}")),
        }
        Ok(())
    }
    fn set_bridge_stp(&mut self, bridge: &IfName, on: bool) -> io::Result<()> {
        say(format_args!("set stp {} on {bridge}", if on { "on" } else { "off" }));
        Ok(())
    }
    fn delete_link(&mut self, name: &IfName) -> io::Result<()> {
        say(format_args!("delete {name}"));
        Ok(())
    }
    fn tc_list(&mut self, what: TcList) -> io::Result<Vec<TcObject>> {
        self.real.tc_list(what)
    }
    fn tc_set(&mut self, op: &TcOp) -> io::Result<()> {
        say(format_args!("tc {op}"));
        Ok(())
    }
    fn ethtool_rings(&mut self, name: &IfName) -> io::Result<RingParam> {
        self.real.ethtool_rings(name)
    }
    fn ethtool_coalesce(&mut self, name: &IfName) -> io::Result<Coalesce> {
        self.real.ethtool_coalesce(name)
    }
    fn ethtool_pause(&mut self, name: &IfName) -> io::Result<PauseParam> {
        self.real.ethtool_pause(name)
    }
    fn ethtool_link_settings(&mut self, name: &IfName) -> io::Result<LinkModes> {
        self.real.ethtool_link_settings(name)
    }
    fn ethtool_legacy_settings(&mut self, name: &IfName) -> io::Result<LegacyCmd> {
        self.real.ethtool_legacy_settings(name)
    }
    fn ethtool_features(&mut self, name: &IfName) -> io::Result<Features> {
        self.real.ethtool_features(name)
    }
    fn ethtool_offload(&mut self, name: &IfName, get: u32) -> io::Result<bool> {
        self.real.ethtool_offload(name, get)
    }
    /// `dry-run: would send ETHTOOL_SRINGPARAM rx 512 tx 256 to eth0`.
    fn ethtool_set(&mut self, name: &IfName, change: &EthtoolSet) -> io::Result<()> {
        say(format_args!("send {change} to {name}"));
        Ok(())
    }
}

/// Never opens a device (opening one arms it): reports what it would do.
#[derive(Default)]
pub struct DryRunWatchdogPort;

struct DryRunWatchdog(PathBuf);

fn not_opened() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, "dry run: the device was not opened")
}

impl WatchdogDevice for DryRunWatchdog {
    fn get_support(&mut self) -> io::Result<super::watchdog::Support> {
        Err(not_opened())
    }
    fn get_bootstatus(&mut self) -> io::Result<u32> {
        Err(not_opened())
    }
    fn set_timeout(&mut self, secs: u32) -> io::Result<u32> {
        say(format_args!("set the timeout of {} to {secs} s", self.0.display()));
        Ok(secs)
    }
    fn get_timeout(&mut self) -> io::Result<u32> {
        Err(not_opened())
    }
    fn set_options(&mut self, options: u32) -> io::Result<()> {
        say(format_args!("set options {options:#x} on {}", self.0.display()));
        Ok(())
    }
    fn keepalive(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        say(format_args!("write {:?} to {}", String::from_utf8_lossy(bytes), self.0.display()));
        Ok(())
    }
    fn exec_handover(&mut self, argv: &[&str]) -> io::Error {
        say(format_args!("exec {} with WDTFD set", argv.join(" ")));
        not_opened()
    }
}

impl WatchdogPort for DryRunWatchdogPort {
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn WatchdogDevice>> {
        say(format_args!("open {}", path.display()));
        Ok(Box::new(DryRunWatchdog(path.to_path_buf())))
    }
    fn adopt(&mut self, fd: std::os::fd::RawFd) -> io::Result<Box<dyn WatchdogDevice>> {
        say(format_args!("adopt the watchdog descriptor {fd}"));
        Ok(Box::new(DryRunWatchdog(PathBuf::from(format!("fd {fd}")))))
    }
    fn holder(&mut self, _path: &Path) -> Option<(u32, String)> {
        None
    }
}
