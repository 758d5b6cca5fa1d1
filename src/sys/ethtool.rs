//! SIOCETHTOOL's command structures (include/uapi/linux/ethtool.h), which
//! every kernel since 2.4 has: ring sizes, offloads, interrupt coalescing,
//! pause frames, speed/duplex/autonegotiation, the feature tables.
//!
//! The structures are `#[repr(C)]` with native-endian fields, exactly as
//! the kernel lays them out on every architecture (the unit tests check
//! sizes and offsets; they run on powerpc, mips and sparc under qemu-user
//! too). [`Fixed`] says which commands take which fixed-size structure, so
//! that the caller of the ioctl can refuse a mismatch.

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
    /// The legacy per-offload commands, (get, set), each taking a
    /// `struct ethtool_value`.
    pub(crate) const LEGACY_OFFLOADS: [(u32, u32); 6] =
        [(GTSO, STSO), (GGSO, SGSO), (GGRO, SGRO), (GRXCSUM, SRXCSUM), (GTXCSUM, STXCSUM), (GSG, SSG)];
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
pub struct RingParam {
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
pub struct Coalesce {
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
pub struct PauseParam {
    pub cmd: u32,
    pub autoneg: u32,
    pub rx_pause: u32,
    pub tx_pause: u32,
}

/// struct ethtool_cmd (ETHTOOL_GSET/SSET, deprecated since 4.6 but the
/// only way on older kernels).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegacyCmd {
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
pub struct LinkSettings {
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
pub struct GetFeaturesBlock {
    pub available: u32,
    pub requested: u32,
    pub active: u32,
    pub never_changed: u32,
}

/// struct ethtool_set_features_block.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetFeaturesBlock {
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

/// A fixed-size command structure and the ETHTOOL_* commands that take
/// it: the kernel reads and writes exactly `size_of::<Self>()` bytes for
/// these (the variable-length commands, GSTRINGS, G/SFEATURES and
/// G/SLINKSETTINGS, are not `Fixed`).
pub(crate) trait Fixed: Pod {
    const COMMANDS: &'static [u32];
}

/// Every command of [`cmd::LEGACY_OFFLOADS`], get and set.
const VALUE_COMMANDS: [u32; 12] = {
    let mut out = [0; 12];
    let mut i = 0;
    while i < cmd::LEGACY_OFFLOADS.len() {
        (out[2 * i], out[2 * i + 1]) = cmd::LEGACY_OFFLOADS[i];
        i += 1;
    }
    out
};

impl Fixed for Value {
    const COMMANDS: &'static [u32] = &VALUE_COMMANDS;
}
impl Fixed for RingParam {
    const COMMANDS: &'static [u32] = &[cmd::GRINGPARAM, cmd::SRINGPARAM];
}
impl Fixed for Coalesce {
    const COMMANDS: &'static [u32] = &[cmd::GCOALESCE, cmd::SCOALESCE];
}
impl Fixed for PauseParam {
    const COMMANDS: &'static [u32] = &[cmd::GPAUSEPARAM, cmd::SPAUSEPARAM];
}
impl Fixed for LegacyCmd {
    const COMMANDS: &'static [u32] = &[cmd::GSET, cmd::SSET];
}
impl Fixed for SsetInfo {
    const COMMANDS: &'static [u32] = &[cmd::GSSET_INFO];
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
