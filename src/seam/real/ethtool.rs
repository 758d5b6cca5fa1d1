//! SIOCETHTOOL for [`RealNetif`]: the typed operations of the netif seam
//! turned into the kernel's buffers (include/uapi/linux/ethtool.h,
//! net/ethtool/ioctl.c). Every buffer handed to the kernel is built here
//! for its command: a whole [`Fixed`] structure whose command is checked
//! to take it, or a header and the trailing array the header announces.
//!
//! - ETHTOOL_GLINKSETTINGS: the first call asks with
//!   `link_mode_masks_nwords` 0 and the kernel answers -N; the second
//!   passes N and gets the header and 3 * N mask words;
//! - the feature table: ETHTOOL_GSSET_INFO for the ETH_SS_FEATURES count,
//!   ETHTOOL_GSTRINGS for the names (count * ETH_GSTRING_LEN bytes), then
//!   ETHTOOL_GFEATURES (one block per 32 features).

use std::io;
use std::mem::size_of;

use super::netif::RealNetif;
use crate::config::types::IfName;
use crate::seam::netif::{EthtoolSet, Features, LinkModes};
use crate::sys::ethtool::{self as et, cmd, Fixed};

/// The most link-mode words the kernel can ask for (nwords is an s8).
const MAX_NWORDS: usize = 127;

fn einval() -> io::Error {
    io::Error::from_raw_os_error(nix::libc::EINVAL)
}

impl RealNetif {
    /// One fixed-size command: `command` must be one that takes a `T`
    /// (EINVAL otherwise, before anything reaches the kernel).
    pub(super) fn ethtool_fixed<T: Fixed>(&mut self, name: &IfName, command: u32, mut t: T) -> io::Result<T> {
        self.fixed_bytes(name, command, T::COMMANDS, et::bytes_mut(&mut t))?;
        Ok(t)
    }

    /// [`Self::ethtool_fixed`] without the type, so that it is in the
    /// binary once: `bytes` is the whole structure the `commands` take.
    fn fixed_bytes(&mut self, name: &IfName, command: u32, commands: &[u32], bytes: &mut [u8]) -> io::Result<()> {
        if !commands.contains(&command) {
            return Err(einval());
        }
        bytes[..4].copy_from_slice(&command.to_ne_bytes());
        // SAFETY: `bytes` is a whole structure of the type `command` takes
        // (checked above): the kernel reads and writes within it.
        unsafe { self.siocethtool(name, bytes.as_mut_ptr()) }.map(drop)
    }

    /// ETHTOOL_GLINKSETTINGS with the nwords handshake.
    pub(super) fn ethtool_glinksettings(&mut self, name: &IfName) -> io::Result<LinkModes> {
        let ask = |nwords: i8| et::LinkSettings { cmd: cmd::GLINKSETTINGS, link_mode_masks_nwords: nwords, ..et::LinkSettings::default() };
        let mut buf = link_settings_buf(&ask(0), &[]);
        // SAFETY: nwords 0: the header alone, which `buf` holds.
        unsafe { self.siocethtool(name, buf.as_mut_ptr()) }?;
        let h: et::LinkSettings = et::read(&buf);
        let n = h.link_mode_masks_nwords;
        if n >= 0 {
            // A kernel that skips the handshake answered outright.
            return Ok(LinkModes { settings: h, masks: Vec::new() });
        }
        let nwords = usize::from(n.unsigned_abs()).min(MAX_NWORDS);
        let mut buf = link_settings_buf(&ask(nwords as i8), &vec![0; 3 * nwords]);
        // SAFETY: `buf` holds the header and the 3 * nwords mask words it announces.
        unsafe { self.siocethtool(name, buf.as_mut_ptr()) }?;
        let h: et::LinkSettings = et::read(&buf);
        if h.link_mode_masks_nwords <= 0 {
            return Err(io::Error::other("ETHTOOL_GLINKSETTINGS handshake failed"));
        }
        let hdr = size_of::<et::LinkSettings>();
        let masks = (0..3 * nwords).map(|w| et::read::<u32>(&buf[hdr + 4 * w..])).collect();
        Ok(LinkModes { settings: h, masks })
    }

    /// ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS and ETHTOOL_GFEATURES.
    pub(super) fn ethtool_gfeatures(&mut self, name: &IfName) -> io::Result<Features> {
        let ask = et::SsetInfo { sset_mask: 1 << et::ETH_SS_FEATURES, ..et::SsetInfo::default() };
        let info = self.ethtool_fixed(name, cmd::GSSET_INFO, ask)?;
        if info.sset_mask & (1 << et::ETH_SS_FEATURES) == 0 {
            return Err(io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP));
        }
        let count = info.data[0] as usize;
        if count == 0 || count > 4096 {
            return Err(io::Error::other(format!("ETH_SS_FEATURES has {count} strings")));
        }
        let hdr = size_of::<et::GStrings>();
        let mut buf = vec![0u8; hdr + count * et::ETH_GSTRING_LEN];
        et::write(&mut buf, &et::GStrings { cmd: cmd::GSTRINGS, string_set: et::ETH_SS_FEATURES, len: count as u32 });
        // SAFETY: `buf` holds the header and `count` strings, the count the
        // kernel gave for this string set just before (as ethtool(8) does).
        unsafe { self.siocethtool(name, buf.as_mut_ptr()) }?;
        let got: et::GStrings = et::read(&buf);
        let count = count.min(got.len as usize);
        let names: Vec<String> = buf[hdr..hdr + count * et::ETH_GSTRING_LEN]
            .chunks(et::ETH_GSTRING_LEN)
            .map(|s| {
                let end = s.iter().position(|b| *b == 0).unwrap_or(s.len());
                String::from_utf8_lossy(&s[..end]).into_owned()
            })
            .collect();
        let words = count.div_ceil(32);
        let hdr = size_of::<et::FeaturesHeader>();
        let block = size_of::<et::GetFeaturesBlock>();
        let mut buf = vec![0u8; hdr + words * block];
        et::write(&mut buf, &et::FeaturesHeader { cmd: cmd::GFEATURES, size: words as u32 });
        // SAFETY: `buf` holds the header and the `size` blocks it announces
        // (the kernel writes at most that many).
        unsafe { self.siocethtool(name, buf.as_mut_ptr()) }?;
        let blocks = (0..words).map(|w| et::read::<et::GetFeaturesBlock>(&buf[hdr + w * block..])).collect();
        Ok(Features { names, blocks })
    }

    /// A legacy per-offload read.
    pub(super) fn ethtool_value(&mut self, name: &IfName, get: u32) -> io::Result<bool> {
        if !cmd::LEGACY_OFFLOADS.iter().any(|(g, _)| *g == get) {
            return Err(einval());
        }
        self.ethtool_fixed(name, get, et::Value::default()).map(|v| v.data != 0)
    }

    /// One change.
    pub(super) fn ethtool_change(&mut self, name: &IfName, change: &EthtoolSet) -> io::Result<()> {
        match change {
            EthtoolSet::Rings(r) => self.ethtool_fixed(name, cmd::SRINGPARAM, *r).map(drop),
            EthtoolSet::Coalesce(c) => self.ethtool_fixed(name, cmd::SCOALESCE, *c).map(drop),
            EthtoolSet::Pause(p) => self.ethtool_fixed(name, cmd::SPAUSEPARAM, *p).map(drop),
            EthtoolSet::LegacySettings(c) => self.ethtool_fixed(name, cmd::SSET, *c).map(drop),
            EthtoolSet::Offload { set, on } => {
                if !cmd::LEGACY_OFFLOADS.iter().any(|(_, s)| s == set) {
                    return Err(einval());
                }
                self.ethtool_fixed(name, *set, et::Value { cmd: *set, data: (*on).into() }).map(drop)
            }
            EthtoolSet::LinkSettings(l) => {
                let nwords = usize::try_from(l.settings.link_mode_masks_nwords).map_err(|_| einval())?;
                if l.masks.len() != 3 * nwords {
                    return Err(einval());
                }
                let mut buf = link_settings_buf(&et::LinkSettings { cmd: cmd::SLINKSETTINGS, ..l.settings }, &l.masks);
                // SAFETY: `buf` holds the header and the 3 * nwords mask
                // words it announces (checked above).
                unsafe { self.siocethtool(name, buf.as_mut_ptr()) }.map(drop)
            }
            EthtoolSet::Features(blocks) => {
                let hdr = size_of::<et::FeaturesHeader>();
                let block = size_of::<et::SetFeaturesBlock>();
                let mut buf = vec![0u8; hdr + blocks.len() * block];
                let size = u32::try_from(blocks.len()).map_err(|_| einval())?;
                et::write(&mut buf, &et::FeaturesHeader { cmd: cmd::SFEATURES, size });
                for (w, s) in blocks.iter().enumerate() {
                    et::write(&mut buf[hdr + w * block..], s);
                }
                // SAFETY: `buf` holds the header and the `size` blocks it announces.
                let flags = unsafe { self.siocethtool(name, buf.as_mut_ptr()) }?;
                if flags & et::ETHTOOL_F_UNSUPPORTED != 0 {
                    return Err(io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP));
                }
                Ok(())
            }
        }
    }
}

/// A link-settings buffer: the header, then the mask words.
fn link_settings_buf(h: &et::LinkSettings, masks: &[u32]) -> Vec<u8> {
    let hdr = size_of::<et::LinkSettings>();
    let mut buf = vec![0u8; hdr + 4 * masks.len()];
    et::write(&mut buf, h);
    for (w, m) in masks.iter().enumerate() {
        et::write(&mut buf[hdr + 4 * w..], m);
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_with_the_wrong_structure_never_reaches_the_kernel() {
        let mut nif = RealNetif::new();
        let lo: IfName = "lo".parse().unwrap();
        let e = nif.ethtool_fixed(&lo, cmd::GCOALESCE, et::RingParam::default()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(nix::libc::EINVAL));
        let e = nif.ethtool_value(&lo, cmd::SGRO).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(nix::libc::EINVAL), "a set command is no read");
        let bad = LinkModes { settings: et::LinkSettings { link_mode_masks_nwords: 3, ..Default::default() }, masks: vec![0; 2] };
        let e = nif.ethtool_change(&lo, &EthtoolSet::LinkSettings(bad)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(nix::libc::EINVAL), "masks shorter than the header announces");
    }

    #[test]
    fn link_settings_buffers_carry_the_masks_after_the_header() {
        let h = et::LinkSettings { cmd: cmd::SLINKSETTINGS, link_mode_masks_nwords: 1, ..Default::default() };
        let buf = link_settings_buf(&h, &[1, 2, 3]);
        assert_eq!(buf.len(), 48 + 12);
        assert_eq!(&buf[48..52], &1u32.to_ne_bytes());
        assert_eq!(&buf[56..60], &3u32.to_ne_bytes());
    }
}
