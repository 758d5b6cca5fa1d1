//! ethtool policy over the netif seam's typed SIOCETHTOOL operations:
//! read-modify-write of rings and coalescing, pause frames, link modes
//! with their fallback, offloads as the profile names them. The ethtool
//! netlink API is 5.6+ only, so it is not used.
//!
//! - offloads: the ETH_SS_FEATURES table (names such as `rx-gro`) and
//!   ETHTOOL_SFEATURES (2.6.39+); older kernels fall back to the
//!   per-offload commands (G/STSO, G/SGSO, G/SGRO, G/SRXCSUM, G/STXCSUM,
//!   G/SSG);
//! - link modes: ETHTOOL_GLINKSETTINGS / SLINKSETTINGS (4.6+), falling
//!   back to the deprecated ETHTOOL_GSET / SSET.
//!
//! The structures are the kernel's ([`crate::sys::ethtool`]); the byte
//! buffers are the real seam's business (`seam::real::ethtool`).

use std::fmt;
use std::io;

use crate::config::net::Duplex;
use crate::config::types::IfName;
use crate::seam::netif::{EthtoolSet, Features, Netif};
use crate::sys::ethtool::{cmd, LinkSettings, PauseParam, SetFeaturesBlock, DUPLEX_FULL, DUPLEX_HALF, SPEED_UNKNOWN};

/// Whether an ethtool error means "this driver does not have that knob".
pub(crate) fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(code) if code == nix::libc::EOPNOTSUPP || code == nix::libc::ENOTSUP)
}

// ---------------------------------------------------------------- rings

/// Current and maximum ring sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rings {
    pub rx: u32,
    pub rx_max: u32,
    pub tx: u32,
    pub tx_max: u32,
}

pub(crate) fn get_rings(nif: &mut dyn Netif, name: &IfName) -> io::Result<Rings> {
    let r = nif.ethtool_rings(name)?;
    Ok(Rings { rx: r.rx_pending, rx_max: r.rx_max_pending, tx: r.tx_pending, tx_max: r.tx_max_pending })
}

/// Read-modify-write: the other rings (mini, jumbo) keep their values.
pub(crate) fn set_rings(nif: &mut dyn Netif, name: &IfName, rx: Option<u32>, tx: Option<u32>) -> io::Result<()> {
    let mut r = nif.ethtool_rings(name)?;
    if let Some(rx) = rx {
        r.rx_pending = rx;
    }
    if let Some(tx) = tx {
        r.tx_pending = tx;
    }
    nif.ethtool_set(name, &EthtoolSet::Rings(r))
}

// ------------------------------------------------------------ coalescing

/// rx-usecs and tx-usecs.
pub(crate) fn get_coalesce(nif: &mut dyn Netif, name: &IfName) -> io::Result<(u32, u32)> {
    let c = nif.ethtool_coalesce(name)?;
    Ok((c.rx_coalesce_usecs, c.tx_coalesce_usecs))
}

/// Read-modify-write: every other coalescing field keeps its value.
pub(crate) fn set_coalesce(nif: &mut dyn Netif, name: &IfName, rx: Option<u32>, tx: Option<u32>) -> io::Result<()> {
    let mut c = nif.ethtool_coalesce(name)?;
    if let Some(rx) = rx {
        c.rx_coalesce_usecs = rx;
    }
    if let Some(tx) = tx {
        c.tx_coalesce_usecs = tx;
    }
    nif.ethtool_set(name, &EthtoolSet::Coalesce(c))
}

// ----------------------------------------------------------------- pause

/// Pause-frame settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pause {
    pub autoneg: bool,
    pub rx: bool,
    pub tx: bool,
}

impl From<PauseParam> for Pause {
    fn from(p: PauseParam) -> Pause {
        Pause { autoneg: p.autoneg != 0, rx: p.rx_pause != 0, tx: p.tx_pause != 0 }
    }
}

impl From<Pause> for PauseParam {
    fn from(p: Pause) -> PauseParam {
        PauseParam { cmd: cmd::SPAUSEPARAM, autoneg: p.autoneg.into(), rx_pause: p.rx.into(), tx_pause: p.tx.into() }
    }
}

impl fmt::Display for Pause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |x| if x { "on" } else { "off" };
        write!(f, "autoneg {} rx {} tx {}", b(self.autoneg), b(self.rx), b(self.tx))
    }
}

pub(crate) fn get_pause(nif: &mut dyn Netif, name: &IfName) -> io::Result<Pause> {
    nif.ethtool_pause(name).map(Pause::from)
}

pub(crate) fn set_pause(nif: &mut dyn Netif, name: &IfName, p: Pause) -> io::Result<()> {
    nif.ethtool_set(name, &EthtoolSet::Pause(p.into()))
}

// ------------------------------------------------------------ link modes

/// Speed (Mb/s, SPEED_UNKNOWN when there is no link), duplex, autoneg.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LinkMode {
    pub speed: u32,
    pub duplex: u8,
    pub autoneg: bool,
}

impl From<&LinkSettings> for LinkMode {
    fn from(h: &LinkSettings) -> LinkMode {
        LinkMode { speed: h.speed, duplex: h.duplex, autoneg: h.autoneg != 0 }
    }
}

impl fmt::Display for LinkMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.speed == SPEED_UNKNOWN || self.speed == 0 {
            f.write_str("speed unknown")?;
        } else {
            write!(f, "{} Mb/s", self.speed)?;
        }
        let d = match self.duplex {
            DUPLEX_HALF => "half",
            DUPLEX_FULL => "full",
            _ => "unknown",
        };
        write!(f, " {d} duplex, autoneg {}", if self.autoneg { "on" } else { "off" })
    }
}

fn fallback_to_gset(e: &io::Error) -> bool {
    unsupported(e) || e.raw_os_error() == Some(nix::libc::EINVAL)
}

pub(crate) fn get_link_mode(nif: &mut dyn Netif, name: &IfName) -> io::Result<LinkMode> {
    match nif.ethtool_link_settings(name) {
        Ok(l) => Ok(LinkMode::from(&l.settings)),
        Err(e) if fallback_to_gset(&e) => {
            let c = nif.ethtool_legacy_settings(name)?;
            let speed = (u32::from(c.speed_hi) << 16) | u32::from(c.speed);
            let speed = if speed == 0xffff || speed == 0xffff_ffff { SPEED_UNKNOWN } else { speed };
            Ok(LinkMode { speed, duplex: c.duplex, autoneg: c.autoneg != 0 })
        }
        Err(e) => Err(e),
    }
}

/// Change what is given, keep the rest (and the advertised modes).
pub(crate) fn set_link_mode(
    nif: &mut dyn Netif,
    name: &IfName,
    speed: Option<u32>,
    duplex: Option<Duplex>,
    autoneg: Option<bool>,
) -> io::Result<()> {
    let dup = duplex.map(|d| if d == Duplex::Full { DUPLEX_FULL } else { DUPLEX_HALF });
    match nif.ethtool_link_settings(name) {
        Ok(mut l) => {
            let h = &mut l.settings;
            if let Some(s) = speed {
                h.speed = s;
            }
            if let Some(d) = dup {
                h.duplex = d;
            }
            if let Some(a) = autoneg {
                h.autoneg = a.into();
            }
            nif.ethtool_set(name, &EthtoolSet::LinkSettings(l))
        }
        Err(e) if fallback_to_gset(&e) => {
            let mut c = nif.ethtool_legacy_settings(name)?;
            if let Some(s) = speed {
                c.speed = (s & 0xffff) as u16;
                c.speed_hi = (s >> 16) as u16;
            }
            if let Some(d) = dup {
                c.duplex = d;
            }
            if let Some(a) = autoneg {
                c.autoneg = a.into();
            }
            nif.ethtool_set(name, &EthtoolSet::LegacySettings(c))
        }
        Err(e) => Err(e),
    }
}

// -------------------------------------------------------------- offloads

/// The offloads a profile can switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Offload {
    Tso,
    Gso,
    Gro,
    RxChecksum,
    TxChecksum,
    Sg,
}

impl Offload {
    pub(crate) const ALL: [Offload; 6] = [Offload::Tso, Offload::Gso, Offload::Gro, Offload::RxChecksum, Offload::TxChecksum, Offload::Sg];

    /// The profile key under `[interface.ethtool]`.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Offload::Tso => "tso",
            Offload::Gso => "gso",
            Offload::Gro => "gro",
            Offload::RxChecksum => "rx_checksum",
            Offload::TxChecksum => "tx_checksum",
            Offload::Sg => "sg",
        }
    }

    /// The kernel's ETH_SS_FEATURES names this offload switches together
    /// (as `ethtool -K` does: "tso" is every TCP segmentation feature,
    /// "tx" every transmit checksum feature; accecn is new in 6.18).
    pub(crate) fn features(self) -> &'static [&'static str] {
        match self {
            Offload::Tso => &[
                "tx-tcp-segmentation",
                "tx-tcp-ecn-segmentation",
                "tx-tcp-mangleid-segmentation",
                "tx-tcp6-segmentation",
                "tx-tcp-accecn-segmentation",
            ],
            Offload::Gso => &["tx-generic-segmentation"],
            Offload::Gro => &["rx-gro"],
            Offload::RxChecksum => &["rx-checksum"],
            Offload::TxChecksum => {
                &["tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6", "tx-checksum-fcoe-crc", "tx-checksum-sctp"]
            }
            Offload::Sg => &["tx-scatter-gather"],
        }
    }

    /// The legacy get and set commands.
    pub(crate) fn legacy(self) -> (u32, u32) {
        match self {
            Offload::Tso => (cmd::GTSO, cmd::STSO),
            Offload::Gso => (cmd::GGSO, cmd::SGSO),
            Offload::Gro => (cmd::GGRO, cmd::SGRO),
            Offload::RxChecksum => (cmd::GRXCSUM, cmd::SRXCSUM),
            Offload::TxChecksum => (cmd::GTXCSUM, cmd::STXCSUM),
            Offload::Sg => (cmd::GSG, cmd::SSG),
        }
    }

    /// The wanted value in a profile's ethtool table.
    pub(crate) fn wanted(self, e: &crate::config::net::Ethtool) -> Option<bool> {
        match self {
            Offload::Tso => e.tso,
            Offload::Gso => e.gso,
            Offload::Gro => e.gro,
            Offload::RxChecksum => e.rx_checksum,
            Offload::TxChecksum => e.tx_checksum,
            Offload::Sg => e.sg,
        }
    }
}

impl fmt::Display for Offload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Where an offload stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OffloadState {
    /// Some(x) when every changeable feature of the group (or, when none
    /// is, every present one) is x; None when mixed.
    pub on: Option<bool>,
    /// Whether the driver lets any feature of the group change.
    pub changeable: bool,
}

/// Whether feature `i` is available and active.
fn bit(f: &Features, i: usize) -> (bool, bool) {
    let b = f.blocks.get(i / 32).copied().unwrap_or_default();
    let m = 1 << (i % 32);
    (b.available & m != 0, b.active & m != 0)
}

/// The indexes of the features an offload covers that this kernel has.
fn indexes(f: &Features, off: Offload) -> Vec<usize> {
    let want = off.features();
    f.names.iter().enumerate().filter(|(_, n)| want.contains(&n.as_str())).map(|(i, _)| i).collect()
}

/// None when the kernel has none of the offload's features.
fn state(f: &Features, off: Offload) -> Option<OffloadState> {
    let idx = indexes(f, off);
    if idx.is_empty() {
        return None;
    }
    let changeable = idx.iter().any(|&i| bit(f, i).0);
    // Features fixed by the driver cannot follow; judge by the others.
    let judged: Vec<usize> = if changeable { idx.into_iter().filter(|&i| bit(f, i).0).collect() } else { idx };
    let active: Vec<bool> = judged.iter().map(|&i| bit(f, i).1).collect();
    let on = if active.iter().all(|a| *a) {
        Some(true)
    } else if active.iter().all(|a| !*a) {
        Some(false)
    } else {
        None
    };
    Some(OffloadState { on, changeable })
}

/// The feature table (EOPNOTSUPP before 2.6.39).
pub(crate) fn get_features(nif: &mut dyn Netif, name: &IfName) -> io::Result<Features> {
    nif.ethtool_features(name)
}

/// ETHTOOL_SFEATURES for the changeable features of one offload.
fn set_features(nif: &mut dyn Netif, name: &IfName, f: &Features, off: Offload, on: bool) -> io::Result<()> {
    let mut set = vec![SetFeaturesBlock::default(); f.blocks.len()];
    let mut any = false;
    for i in indexes(f, off) {
        if bit(f, i).0 {
            let m = 1 << (i % 32);
            set[i / 32].valid |= m;
            if on {
                set[i / 32].requested |= m;
            }
            any = true;
        }
    }
    if !any {
        return Err(io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP));
    }
    nif.ethtool_set(name, &EthtoolSet::Features(set))
}

/// An offload's state: through the feature table when the kernel has one,
/// else the legacy command. `Ok(None)`: the kernel knows no such feature.
pub(crate) fn get_offload(nif: &mut dyn Netif, name: &IfName, table: Option<&Features>, off: Offload) -> io::Result<Option<OffloadState>> {
    match table {
        Some(f) => Ok(state(f, off)),
        None => {
            let on = nif.ethtool_offload(name, off.legacy().0)?;
            Ok(Some(OffloadState { on: Some(on), changeable: true }))
        }
    }
}

/// Switch an offload: ETHTOOL_SFEATURES when the kernel has it, else the
/// legacy command.
pub(crate) fn set_offload(nif: &mut dyn Netif, name: &IfName, off: Offload, on: bool) -> io::Result<()> {
    match get_features(nif, name) {
        Ok(f) => set_features(nif, name, &f, off, on),
        Err(e) if unsupported(&e) => nif.ethtool_set(name, &EthtoolSet::Offload { set: off.legacy().1, on }),
        Err(e) => Err(e),
    }
}
