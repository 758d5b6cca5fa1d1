//! ethtool through the SIOCETHTOOL ioctl (include/uapi/linux/ethtool.h),
//! which every kernel since 2.4 has: ring sizes, offloads, interrupt
//! coalescing, pause frames, speed/duplex/autonegotiation. The ethtool
//! netlink API is 5.6+ only, so it is not used.
//!
//! The command structures are `#[repr(C)]` with native-endian fields,
//! exactly as the kernel lays them out on every architecture (the unit
//! tests check sizes and offsets; they run on powerpc, mips and sparc
//! under qemu-user too). Each call goes through the seam's single raw
//! `ethtool(name, bytes)` operation; the handshakes and fallbacks live
//! here:
//!
//! - offloads: ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS (the ETH_SS_FEATURES
//!   names such as `rx-gro`), then ETHTOOL_GFEATURES / SFEATURES (2.6.39+);
//!   older kernels fall back to the per-offload commands (G/STSO, G/SGSO,
//!   G/SGRO, G/SRXCSUM, G/STXCSUM, G/SSG);
//! - link modes: ETHTOOL_GLINKSETTINGS with the negative
//!   `link_mode_masks_nwords` handshake (4.6+), falling back to the
//!   deprecated ETHTOOL_GSET / SSET.

use std::fmt;
use std::io;

use crate::config::net::Duplex;
use crate::config::types::IfName;
use crate::seam::netif::Netif;

/// The socket ioctl (include/uapi/linux/sockios.h).
pub(crate) const SIOCETHTOOL: u32 = 0x8946;

/// ETHTOOL_* command numbers.
pub(crate) mod cmd {
    pub(crate) const GSET: u32 = 0x01;
    pub(crate) const SSET: u32 = 0x02;
    pub(crate) const GCOALESCE: u32 = 0x0e;
    pub(crate) const SCOALESCE: u32 = 0x0f;
    pub(crate) const GRINGPARAM: u32 = 0x10;
    pub(crate) const SRINGPARAM: u32 = 0x11;
    pub(crate) const GPAUSEPARAM: u32 = 0x12;
    pub(crate) const SPAUSEPARAM: u32 = 0x13;
    pub(crate) const GRXCSUM: u32 = 0x14;
    pub(crate) const SRXCSUM: u32 = 0x15;
    pub(crate) const GTXCSUM: u32 = 0x16;
    pub(crate) const STXCSUM: u32 = 0x17;
    pub(crate) const GSG: u32 = 0x18;
    pub(crate) const SSG: u32 = 0x19;
    pub(crate) const GSTRINGS: u32 = 0x1b;
    pub(crate) const GTSO: u32 = 0x1e;
    pub(crate) const STSO: u32 = 0x1f;
    pub(crate) const GGSO: u32 = 0x23;
    pub(crate) const SGSO: u32 = 0x24;
    pub(crate) const GGRO: u32 = 0x2b;
    pub(crate) const SGRO: u32 = 0x2c;
    pub(crate) const GSSET_INFO: u32 = 0x37;
    pub(crate) const GFEATURES: u32 = 0x3a;
    pub(crate) const SFEATURES: u32 = 0x3b;
    pub(crate) const GLINKSETTINGS: u32 = 0x4c;
    pub(crate) const SLINKSETTINGS: u32 = 0x4d;

    /// A command's name for logs: "ETHTOOL_SRINGPARAM".
    pub(crate) fn name(c: u32) -> &'static str {
        match c {
            GSET => "ETHTOOL_GSET",
            SSET => "ETHTOOL_SSET",
            GCOALESCE => "ETHTOOL_GCOALESCE",
            SCOALESCE => "ETHTOOL_SCOALESCE",
            GRINGPARAM => "ETHTOOL_GRINGPARAM",
            SRINGPARAM => "ETHTOOL_SRINGPARAM",
            GPAUSEPARAM => "ETHTOOL_GPAUSEPARAM",
            SPAUSEPARAM => "ETHTOOL_SPAUSEPARAM",
            GRXCSUM => "ETHTOOL_GRXCSUM",
            SRXCSUM => "ETHTOOL_SRXCSUM",
            GTXCSUM => "ETHTOOL_GTXCSUM",
            STXCSUM => "ETHTOOL_STXCSUM",
            GSG => "ETHTOOL_GSG",
            SSG => "ETHTOOL_SSG",
            GSTRINGS => "ETHTOOL_GSTRINGS",
            GTSO => "ETHTOOL_GTSO",
            STSO => "ETHTOOL_STSO",
            GGSO => "ETHTOOL_GGSO",
            SGSO => "ETHTOOL_SGSO",
            GGRO => "ETHTOOL_GGRO",
            SGRO => "ETHTOOL_SGRO",
            GSSET_INFO => "ETHTOOL_GSSET_INFO",
            GFEATURES => "ETHTOOL_GFEATURES",
            SFEATURES => "ETHTOOL_SFEATURES",
            GLINKSETTINGS => "ETHTOOL_GLINKSETTINGS",
            SLINKSETTINGS => "ETHTOOL_SLINKSETTINGS",
            _ => "ETHTOOL_?",
        }
    }

    /// The commands that change something (for the dry-run seam).
    pub(crate) const SETTERS: [u32; 12] =
        [SSET, SCOALESCE, SRINGPARAM, SPAUSEPARAM, SRXCSUM, STXCSUM, SSG, STSO, SGSO, SGRO, SFEATURES, SLINKSETTINGS];
}

/// The string set of feature names (enum ethtool_stringset).
pub(crate) const ETH_SS_FEATURES: u32 = 4;
/// Length of one string in ETHTOOL_GSTRINGS.
pub(crate) const ETH_GSTRING_LEN: usize = 32;
/// ETHTOOL_SFEATURES result bit: some requested features cannot change.
pub(crate) const ETHTOOL_F_UNSUPPORTED: u32 = 1 << 0;
/// DUPLEX_HALF / DUPLEX_FULL / DUPLEX_UNKNOWN.
pub(crate) const DUPLEX_HALF: u8 = 0;
pub(crate) const DUPLEX_FULL: u8 = 1;
/// SPEED_UNKNOWN.
pub(crate) const SPEED_UNKNOWN: u32 = u32::MAX;

/// Plain old data: `#[repr(C)]`, no padding the kernel would not expect,
/// every bit pattern valid.
///
/// # Safety
/// Implement only for `#[repr(C)]` structs made of integers.
pub(crate) unsafe trait Pod: Copy + Default {}

/// The bytes of a command structure, for the seam.
pub(crate) fn bytes_mut<T: Pod>(t: &mut T) -> &mut [u8] {
    // SAFETY: T is Pod: plain integers, any bytes are a valid T.
    unsafe { std::slice::from_raw_parts_mut((t as *mut T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// A command structure read back from the front of a byte buffer.
pub(crate) fn read<T: Pod>(b: &[u8]) -> T {
    assert!(b.len() >= std::mem::size_of::<T>(), "ethtool buffer too short");
    // SAFETY: length checked; T is Pod; read_unaligned copes with any alignment.
    unsafe { std::ptr::read_unaligned(b.as_ptr().cast::<T>()) }
}

/// Write a command structure to the front of a byte buffer.
pub(crate) fn write<T: Pod>(b: &mut [u8], t: &T) {
    assert!(b.len() >= std::mem::size_of::<T>(), "ethtool buffer too short");
    // SAFETY: length checked; T is Pod.
    unsafe { std::ptr::write_unaligned(b.as_mut_ptr().cast::<T>(), *t) }
}

/// struct ethtool_value: the legacy per-offload commands.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Value {
    pub cmd: u32,
    pub data: u32,
}

/// struct ethtool_ringparam.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RingParam {
    pub cmd: u32,
    pub rx_max_pending: u32,
    pub rx_mini_max_pending: u32,
    pub rx_jumbo_max_pending: u32,
    pub tx_max_pending: u32,
    pub rx_pending: u32,
    pub rx_mini_pending: u32,
    pub rx_jumbo_pending: u32,
    pub tx_pending: u32,
}

/// struct ethtool_coalesce.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Coalesce {
    pub cmd: u32,
    pub rx_coalesce_usecs: u32,
    pub rx_max_coalesced_frames: u32,
    pub rx_coalesce_usecs_irq: u32,
    pub rx_max_coalesced_frames_irq: u32,
    pub tx_coalesce_usecs: u32,
    pub tx_max_coalesced_frames: u32,
    pub tx_coalesce_usecs_irq: u32,
    pub tx_max_coalesced_frames_irq: u32,
    pub stats_block_coalesce_usecs: u32,
    pub use_adaptive_rx_coalesce: u32,
    pub use_adaptive_tx_coalesce: u32,
    pub pkt_rate_low: u32,
    pub rx_coalesce_usecs_low: u32,
    pub rx_max_coalesced_frames_low: u32,
    pub tx_coalesce_usecs_low: u32,
    pub tx_max_coalesced_frames_low: u32,
    pub pkt_rate_high: u32,
    pub rx_coalesce_usecs_high: u32,
    pub rx_max_coalesced_frames_high: u32,
    pub tx_coalesce_usecs_high: u32,
    pub tx_max_coalesced_frames_high: u32,
    pub rate_sample_interval: u32,
}

/// struct ethtool_pauseparam.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PauseParam {
    pub cmd: u32,
    pub autoneg: u32,
    pub rx_pause: u32,
    pub tx_pause: u32,
}

/// struct ethtool_cmd (ETHTOOL_GSET/SSET, deprecated since 4.6 but the
/// only way on older kernels).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LegacyCmd {
    pub cmd: u32,
    pub supported: u32,
    pub advertising: u32,
    pub speed: u16,
    pub duplex: u8,
    pub port: u8,
    pub phy_address: u8,
    pub transceiver: u8,
    pub autoneg: u8,
    pub mdio_support: u8,
    pub maxtxpkt: u32,
    pub maxrxpkt: u32,
    pub speed_hi: u16,
    pub eth_tp_mdix: u8,
    pub eth_tp_mdix_ctrl: u8,
    pub lp_advertising: u32,
    pub reserved: [u32; 2],
}

/// struct ethtool_link_settings, without the trailing
/// `link_mode_masks[3 * nwords]` (u32 each).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LinkSettings {
    pub cmd: u32,
    pub speed: u32,
    pub duplex: u8,
    pub port: u8,
    pub phy_address: u8,
    pub autoneg: u8,
    pub mdio_support: u8,
    pub eth_tp_mdix: u8,
    pub eth_tp_mdix_ctrl: u8,
    pub link_mode_masks_nwords: i8,
    pub transceiver: u8,
    pub master_slave_cfg: u8,
    pub master_slave_state: u8,
    pub rate_matching: u8,
    pub reserved: [u32; 7],
}

/// struct ethtool_sset_info, with room for one answer (one bit asked).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SsetInfo {
    pub cmd: u32,
    pub reserved: u32,
    pub sset_mask: u64,
    pub data: [u32; 1],
}

/// struct ethtool_gstrings header; `len * ETH_GSTRING_LEN` bytes follow.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GStrings {
    pub cmd: u32,
    pub string_set: u32,
    pub len: u32,
}

/// struct ethtool_gfeatures / ethtool_sfeatures header; `size` blocks follow.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FeaturesHeader {
    pub cmd: u32,
    pub size: u32,
}

/// struct ethtool_get_features_block.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GetFeaturesBlock {
    pub available: u32,
    pub requested: u32,
    pub active: u32,
    pub never_changed: u32,
}

/// struct ethtool_set_features_block.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SetFeaturesBlock {
    pub valid: u32,
    pub requested: u32,
}

// SAFETY: all of these are integers or #[repr(C)] structs of integers.
unsafe impl Pod for u32 {}
unsafe impl Pod for Value {}
unsafe impl Pod for RingParam {}
unsafe impl Pod for Coalesce {}
unsafe impl Pod for PauseParam {}
unsafe impl Pod for LegacyCmd {}
unsafe impl Pod for LinkSettings {}
unsafe impl Pod for SsetInfo {}
unsafe impl Pod for GStrings {}
unsafe impl Pod for FeaturesHeader {}
unsafe impl Pod for GetFeaturesBlock {}
unsafe impl Pod for SetFeaturesBlock {}

/// Whether an ethtool error means "this driver does not have that knob".
pub(crate) fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(code) if code == nix::libc::EOPNOTSUPP || code == nix::libc::ENOTSUP)
}

/// One fixed-size command: fill `cmd`, call, return the structure.
fn call<T: Pod>(nif: &mut dyn Netif, name: &IfName, mut t: T) -> io::Result<T> {
    nif.ethtool(name, bytes_mut(&mut t))?;
    Ok(t)
}

fn with_cmd<T: Pod>(cmd: u32) -> T {
    let mut t = T::default();
    write(bytes_mut(&mut t), &cmd);
    t
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
    let r: RingParam = call(nif, name, with_cmd(cmd::GRINGPARAM))?;
    Ok(Rings { rx: r.rx_pending, rx_max: r.rx_max_pending, tx: r.tx_pending, tx_max: r.tx_max_pending })
}

/// Read-modify-write: the other rings (mini, jumbo) keep their values.
pub(crate) fn set_rings(nif: &mut dyn Netif, name: &IfName, rx: Option<u32>, tx: Option<u32>) -> io::Result<()> {
    let mut r: RingParam = call(nif, name, with_cmd(cmd::GRINGPARAM))?;
    r.cmd = cmd::SRINGPARAM;
    if let Some(rx) = rx {
        r.rx_pending = rx;
    }
    if let Some(tx) = tx {
        r.tx_pending = tx;
    }
    call(nif, name, r).map(|_| ())
}

// ------------------------------------------------------------ coalescing

/// rx-usecs and tx-usecs.
pub(crate) fn get_coalesce(nif: &mut dyn Netif, name: &IfName) -> io::Result<(u32, u32)> {
    let c: Coalesce = call(nif, name, with_cmd(cmd::GCOALESCE))?;
    Ok((c.rx_coalesce_usecs, c.tx_coalesce_usecs))
}

pub(crate) fn set_coalesce(nif: &mut dyn Netif, name: &IfName, rx: Option<u32>, tx: Option<u32>) -> io::Result<()> {
    let mut c: Coalesce = call(nif, name, with_cmd(cmd::GCOALESCE))?;
    c.cmd = cmd::SCOALESCE;
    if let Some(rx) = rx {
        c.rx_coalesce_usecs = rx;
    }
    if let Some(tx) = tx {
        c.tx_coalesce_usecs = tx;
    }
    call(nif, name, c).map(|_| ())
}

// ----------------------------------------------------------------- pause

/// Pause-frame settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pause {
    pub autoneg: bool,
    pub rx: bool,
    pub tx: bool,
}

impl fmt::Display for Pause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |x| if x { "on" } else { "off" };
        write!(f, "autoneg {} rx {} tx {}", b(self.autoneg), b(self.rx), b(self.tx))
    }
}

pub(crate) fn get_pause(nif: &mut dyn Netif, name: &IfName) -> io::Result<Pause> {
    let p: PauseParam = call(nif, name, with_cmd(cmd::GPAUSEPARAM))?;
    Ok(Pause { autoneg: p.autoneg != 0, rx: p.rx_pause != 0, tx: p.tx_pause != 0 })
}

pub(crate) fn set_pause(nif: &mut dyn Netif, name: &IfName, p: Pause) -> io::Result<()> {
    let raw = PauseParam { cmd: cmd::SPAUSEPARAM, autoneg: p.autoneg.into(), rx_pause: p.rx.into(), tx_pause: p.tx.into() };
    call(nif, name, raw).map(|_| ())
}

// ------------------------------------------------------------ link modes

/// Speed (Mb/s, SPEED_UNKNOWN when there is no link), duplex, autoneg.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LinkMode {
    pub speed: u32,
    pub duplex: u8,
    pub autoneg: bool,
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

/// The most link-mode words the kernel can ask for (nwords is an s8).
const MAX_NWORDS: usize = 127;

/// A GLINKSETTINGS buffer: the header and `3 * nwords` mask words.
fn link_settings_buf(nwords: usize) -> Vec<u8> {
    vec![0u8; std::mem::size_of::<LinkSettings>() + 3 * 4 * nwords]
}

/// ETHTOOL_GLINKSETTINGS with the handshake: the first call asks with
/// nwords 0 and the kernel answers with -N; the second call passes N.
/// Returns the whole buffer (header and masks) for a later SLINKSETTINGS.
fn glinksettings(nif: &mut dyn Netif, name: &IfName) -> io::Result<Vec<u8>> {
    let mut buf = link_settings_buf(0);
    write(&mut buf, &LinkSettings { cmd: cmd::GLINKSETTINGS, ..LinkSettings::default() });
    nif.ethtool(name, &mut buf)?;
    let h: LinkSettings = read(&buf);
    let n = h.link_mode_masks_nwords;
    if n >= 0 {
        // A kernel that skips the handshake answered outright.
        return Ok(buf);
    }
    let nwords = usize::from(n.unsigned_abs()).min(MAX_NWORDS);
    let mut buf = link_settings_buf(nwords);
    write(&mut buf, &LinkSettings { cmd: cmd::GLINKSETTINGS, link_mode_masks_nwords: nwords as i8, ..LinkSettings::default() });
    nif.ethtool(name, &mut buf)?;
    let h: LinkSettings = read(&buf);
    if h.link_mode_masks_nwords <= 0 {
        return Err(io::Error::other("ETHTOOL_GLINKSETTINGS handshake failed"));
    }
    Ok(buf)
}

fn fallback_to_gset(e: &io::Error) -> bool {
    unsupported(e) || e.raw_os_error() == Some(nix::libc::EINVAL)
}

pub(crate) fn get_link_mode(nif: &mut dyn Netif, name: &IfName) -> io::Result<LinkMode> {
    match glinksettings(nif, name) {
        Ok(buf) => {
            let h: LinkSettings = read(&buf);
            Ok(LinkMode { speed: h.speed, duplex: h.duplex, autoneg: h.autoneg != 0 })
        }
        Err(e) if fallback_to_gset(&e) => {
            let c: LegacyCmd = call(nif, name, with_cmd(cmd::GSET))?;
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
    match glinksettings(nif, name) {
        Ok(mut buf) => {
            let mut h: LinkSettings = read(&buf);
            h.cmd = cmd::SLINKSETTINGS;
            if let Some(s) = speed {
                h.speed = s;
            }
            if let Some(d) = dup {
                h.duplex = d;
            }
            if let Some(a) = autoneg {
                h.autoneg = a.into();
            }
            write(&mut buf, &h);
            nif.ethtool(name, &mut buf).map(|_| ())
        }
        Err(e) if fallback_to_gset(&e) => {
            let mut c: LegacyCmd = call(nif, name, with_cmd(cmd::GSET))?;
            c.cmd = cmd::SSET;
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
            call(nif, name, c).map(|_| ())
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

/// The generic feature table: ETH_SS_FEATURES names and their bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Features {
    pub names: Vec<String>,
    pub blocks: Vec<GetFeaturesBlock>,
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

impl Features {
    fn bit(&self, i: usize) -> (GetFeaturesBlock, u32) {
        (self.blocks.get(i / 32).copied().unwrap_or_default(), 1 << (i % 32))
    }

    /// The indexes of the features an offload covers that this kernel has.
    fn indexes(&self, off: Offload) -> Vec<usize> {
        let want = off.features();
        self.names.iter().enumerate().filter(|(_, n)| want.contains(&n.as_str())).map(|(i, _)| i).collect()
    }

    /// None when the kernel has none of the offload's features.
    pub(crate) fn state(&self, off: Offload) -> Option<OffloadState> {
        let idx = self.indexes(off);
        if idx.is_empty() {
            return None;
        }
        let changeable = idx.iter().any(|&i| {
            let (b, m) = self.bit(i);
            b.available & m != 0
        });
        // Features fixed by the driver cannot follow; judge by the others.
        let judged: Vec<usize> = if changeable {
            idx.into_iter()
                .filter(|&i| {
                    let (b, m) = self.bit(i);
                    b.available & m != 0
                })
                .collect()
        } else {
            idx
        };
        let active: Vec<bool> = judged
            .iter()
            .map(|&i| {
                let (b, m) = self.bit(i);
                b.active & m != 0
            })
            .collect();
        let on = if active.iter().all(|a| *a) {
            Some(true)
        } else if active.iter().all(|a| !*a) {
            Some(false)
        } else {
            None
        };
        Some(OffloadState { on, changeable })
    }
}

/// ETHTOOL_GSSET_INFO for the feature names, ETHTOOL_GSTRINGS, then
/// ETHTOOL_GFEATURES.
pub(crate) fn get_features(nif: &mut dyn Netif, name: &IfName) -> io::Result<Features> {
    let info: SsetInfo = call(nif, name, SsetInfo { cmd: cmd::GSSET_INFO, sset_mask: 1 << ETH_SS_FEATURES, ..SsetInfo::default() })?;
    if info.sset_mask & (1 << ETH_SS_FEATURES) == 0 {
        return Err(io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP));
    }
    let count = info.data[0] as usize;
    if count == 0 || count > 4096 {
        return Err(io::Error::other(format!("ETH_SS_FEATURES has {count} strings")));
    }
    let hdr = std::mem::size_of::<GStrings>();
    let mut buf = vec![0u8; hdr + count * ETH_GSTRING_LEN];
    write(&mut buf, &GStrings { cmd: cmd::GSTRINGS, string_set: ETH_SS_FEATURES, len: count as u32 });
    nif.ethtool(name, &mut buf)?;
    let got: GStrings = read(&buf);
    let count = count.min(got.len as usize);
    let names: Vec<String> = buf[hdr..hdr + count * ETH_GSTRING_LEN]
        .chunks(ETH_GSTRING_LEN)
        .map(|s| {
            let end = s.iter().position(|b| *b == 0).unwrap_or(s.len());
            String::from_utf8_lossy(&s[..end]).into_owned()
        })
        .collect();
    let words = count.div_ceil(32);
    let hdr = std::mem::size_of::<FeaturesHeader>();
    let block = std::mem::size_of::<GetFeaturesBlock>();
    let mut buf = vec![0u8; hdr + words * block];
    write(&mut buf, &FeaturesHeader { cmd: cmd::GFEATURES, size: words as u32 });
    nif.ethtool(name, &mut buf)?;
    let blocks = (0..words).map(|w| read::<GetFeaturesBlock>(&buf[hdr + w * block..])).collect();
    Ok(Features { names, blocks })
}

/// ETHTOOL_SFEATURES for the changeable features of one offload.
fn set_features(nif: &mut dyn Netif, name: &IfName, f: &Features, off: Offload, on: bool) -> io::Result<()> {
    let words = f.blocks.len();
    let mut set = vec![SetFeaturesBlock::default(); words];
    let mut any = false;
    for i in f.indexes(off) {
        let (b, m) = f.bit(i);
        if b.available & m != 0 {
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
    let hdr = std::mem::size_of::<FeaturesHeader>();
    let block = std::mem::size_of::<SetFeaturesBlock>();
    let mut buf = vec![0u8; hdr + words * block];
    write(&mut buf, &FeaturesHeader { cmd: cmd::SFEATURES, size: words as u32 });
    for (w, s) in set.iter().enumerate() {
        write(&mut buf[hdr + w * block..], s);
    }
    let flags = nif.ethtool(name, &mut buf)?;
    if flags & ETHTOOL_F_UNSUPPORTED != 0 {
        return Err(io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP));
    }
    Ok(())
}

/// An offload's state: through the feature table when the kernel has one,
/// else the legacy command. `Ok(None)`: the kernel knows no such feature.
pub(crate) fn get_offload(nif: &mut dyn Netif, name: &IfName, table: Option<&Features>, off: Offload) -> io::Result<Option<OffloadState>> {
    match table {
        Some(f) => Ok(f.state(off)),
        None => {
            let v: Value = call(nif, name, Value { cmd: off.legacy().0, data: 0 })?;
            Ok(Some(OffloadState { on: Some(v.data != 0), changeable: true }))
        }
    }
}

/// Switch an offload: ETHTOOL_SFEATURES when the kernel has it, else the
/// legacy command.
pub(crate) fn set_offload(nif: &mut dyn Netif, name: &IfName, off: Offload, on: bool) -> io::Result<()> {
    match get_features(nif, name) {
        Ok(f) => set_features(nif, name, &f, off, on),
        Err(e) if unsupported(&e) => call(nif, name, Value { cmd: off.legacy().1, data: on.into() }).map(|_| ()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::*;

    /// Sizes and offsets from include/uapi/linux/ethtool.h. These hold on
    /// every architecture the boards use (the u64 in sset_info sits at
    /// offset 8 either way); the suite runs under qemu-user for each.
    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(size_of::<Value>(), 8);
        assert_eq!(size_of::<RingParam>(), 36);
        assert_eq!(offset_of!(RingParam, rx_max_pending), 4);
        assert_eq!(offset_of!(RingParam, tx_max_pending), 16);
        assert_eq!(offset_of!(RingParam, rx_pending), 20);
        assert_eq!(offset_of!(RingParam, tx_pending), 32);
        assert_eq!(size_of::<Coalesce>(), 92);
        assert_eq!(offset_of!(Coalesce, rx_coalesce_usecs), 4);
        assert_eq!(offset_of!(Coalesce, tx_coalesce_usecs), 20);
        assert_eq!(offset_of!(Coalesce, rate_sample_interval), 88);
        assert_eq!(size_of::<PauseParam>(), 16);
        assert_eq!(offset_of!(PauseParam, tx_pause), 12);
        assert_eq!(size_of::<LegacyCmd>(), 44);
        assert_eq!(offset_of!(LegacyCmd, speed), 12);
        assert_eq!(offset_of!(LegacyCmd, duplex), 14);
        assert_eq!(offset_of!(LegacyCmd, autoneg), 18);
        assert_eq!(offset_of!(LegacyCmd, maxtxpkt), 20);
        assert_eq!(offset_of!(LegacyCmd, speed_hi), 28);
        assert_eq!(offset_of!(LegacyCmd, lp_advertising), 32);
        assert_eq!(size_of::<LinkSettings>(), 48);
        assert_eq!(offset_of!(LinkSettings, speed), 4);
        assert_eq!(offset_of!(LinkSettings, duplex), 8);
        assert_eq!(offset_of!(LinkSettings, autoneg), 11);
        assert_eq!(offset_of!(LinkSettings, link_mode_masks_nwords), 15);
        assert_eq!(offset_of!(LinkSettings, transceiver), 16);
        assert_eq!(offset_of!(LinkSettings, reserved), 20);
        assert_eq!(offset_of!(SsetInfo, sset_mask), 8);
        assert_eq!(offset_of!(SsetInfo, data), 16);
        assert_eq!(size_of::<SsetInfo>(), 24);
        assert_eq!(size_of::<GStrings>(), 12);
        assert_eq!(size_of::<FeaturesHeader>(), 8);
        assert_eq!(size_of::<GetFeaturesBlock>(), 16);
        assert_eq!(size_of::<SetFeaturesBlock>(), 8);
    }

    #[test]
    fn fields_are_native_endian() {
        let mut r = RingParam { cmd: cmd::GRINGPARAM, rx_pending: 0x0102_0304, ..RingParam::default() };
        let b = bytes_mut(&mut r);
        assert_eq!(&b[0..4], &cmd::GRINGPARAM.to_ne_bytes());
        assert_eq!(&b[20..24], &0x0102_0304u32.to_ne_bytes());
        let mut l = LinkSettings { link_mode_masks_nwords: -3, speed: 1000, ..LinkSettings::default() };
        let b = bytes_mut(&mut l);
        assert_eq!(b[15], 0xfd);
        assert_eq!(&b[4..8], &1000u32.to_ne_bytes());
    }
}
