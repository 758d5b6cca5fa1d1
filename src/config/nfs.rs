//! `[nfs]` and `[[nfs.export]]`: the export set and nfsd knobs.

use super::Spanned;
use serde::Deserialize;

use super::net::Role;
use super::types::{AbsPath, IfName, IpNet, Name};
use super::Profile;

/// Exports per profile, clients per export.
pub(crate) const MAX_EXPORTS: usize = 16;
pub(crate) const MAX_CLIENTS: usize = 8;

/// NFS protocol versions nfsd may offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
pub enum NfsVersion {
    #[serde(rename = "3")]
    V3,
    #[serde(rename = "4")]
    V4,
    #[serde(rename = "4.1")]
    V4_1,
    #[serde(rename = "4.2")]
    V4_2,
}

/// Squashing of remote users.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Squash {
    /// root_squash (the safe default).
    #[default]
    Root,
    /// all_squash.
    All,
    /// no_root_squash.
    None,
}

/// `fsid=`: a number (kernels up to 2.6.20 need a small one) or `root`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsid {
    Num(u32),
    Root,
}

impl<'de> Deserialize<'de> for Fsid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Fsid;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a small integer or \"root\"")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Fsid, E> {
                u32::try_from(n).map(Fsid::Num).map_err(|_| E::custom(format!("fsid {n} is out of range (0 to 4294967295)")))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Fsid, E> {
                if s == "root" {
                    Ok(Fsid::Root)
                } else {
                    Err(E::custom(format!("fsid is a number or \"root\", not `{s}`")))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// One `[[nfs.export]]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Export {
    pub path: Spanned<AbsPath>,
    /// Hosts, CIDRs, wildcards or "*". Default: the LAN subnets.
    #[serde(default)]
    pub clients: heapless::Vec<Spanned<heapless::String<63>>, MAX_CLIENTS>,
    #[serde(default)]
    pub rw: bool,
    /// sync (default) or async; async risks data loss if the server crashes.
    #[serde(default = "yes")]
    pub sync: bool,
    #[serde(default)]
    pub squash: Squash,
    pub anonuid: Option<u32>,
    pub anongid: Option<u32>,
    #[serde(default = "yes")]
    pub secure: bool,
    #[serde(default)]
    pub subtree_check: bool,
    /// fsid=N, or "root".
    pub fsid: Option<Fsid>,
    #[serde(default)]
    pub crossmnt: bool,
    #[serde(default)]
    pub no_wdelay: bool,
}

/// Shipped NFS presets (see `share::nfsd` for the trade-offs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NfsPreset {
    /// For 32 to 256 MB single-core boards: NFSv3 only (no NFSv4 state,
    /// no idmapping, less kernel memory), half the default thread count,
    /// no_subtree_check (already the default) kept explicit.
    SlowCpu,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nfs {
    /// A shipped preset; explicit keys win over it.
    pub preset: Option<NfsPreset>,
    /// Treat NFS warnings (an export path that does not exist) as errors,
    /// as `--strict` does for the whole profile.
    #[serde(default)]
    pub strict: bool,
    /// nfsd threads; sized from RAM and CPUs when unset.
    pub threads: Option<u16>,
    /// Versions to offer, e.g. ["3"]. Only settable while nfsd is stopped.
    pub versions: Option<heapless::Vec<NfsVersion, 4>>,
    /// nfsd max_block_size in bytes. Only settable while nfsd is stopped.
    pub max_block_size: Option<u32>,
    /// Write /etc/exports.d/nasboot.exports instead of /etc/exports.
    #[serde(default)]
    pub exports_d: bool,
    #[serde(default)]
    pub export: heapless::Vec<Export, MAX_EXPORTS>,
}

fn yes() -> bool {
    true
}

/// Samba shares per profile.
pub(crate) const MAX_SHARES: usize = 8;
/// Users per share.
pub(crate) const MAX_USERS: usize = 8;

/// `[samba]`: an smb.conf include (paths::SMB_INCLUDE) tuned for slow
/// CPUs and bound to the LAN. See `share::samba` for what each key renders.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Samba {
    /// Interfaces smbd listens on besides `lo`. Default: the role = "lan" ones.
    #[serde(default)]
    pub interfaces: heapless::Vec<Spanned<IfName>, { super::MAX_INTERFACES }>,
    /// NetBIOS workgroup (1 to 15 bytes). Unset: Samba's default.
    pub workgroup: Option<Spanned<heapless::String<15>>>,
    /// `use sendfile`: read data goes from the page cache to the socket
    /// without a copy through smbd (not on signed or encrypted sessions).
    #[serde(default = "yes")]
    pub sendfile: bool,
    /// `aio read size` in bytes: 1 (Samba's default) makes every read
    /// asynchronous, 0 turns aio off.
    #[serde(default = "one")]
    pub aio_read_size: u32,
    /// `aio write size`, likewise.
    #[serde(default = "one")]
    pub aio_write_size: u32,
    /// `min receivefile size` in bytes: writes at least this large are
    /// spliced from the socket (not on signed sessions). 0 turns it off;
    /// Samba caps it at 128 KiB, so larger values are refused.
    #[serde(default = "receivefile_default")]
    pub min_receivefile_size: u32,
    #[serde(default)]
    pub share: heapless::Vec<Share, MAX_SHARES>,
}

/// One `[[samba.share]]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Share {
    /// The share name: letters, digits, `_`, `.`, `-`.
    pub name: Spanned<Name>,
    pub path: Spanned<AbsPath>,
    #[serde(default = "yes")]
    pub read_only: bool,
    #[serde(default)]
    pub guest_ok: bool,
    pub comment: Option<Spanned<heapless::String<63>>>,
    /// `valid users`; empty means any authenticated user.
    #[serde(default)]
    pub valid_users: heapless::Vec<Name, MAX_USERS>,
}

fn one() -> u32 {
    1
}

fn receivefile_default() -> u32 {
    16384
}

/// The networks of the static addresses on role = "lan" interfaces: the
/// default NFS clients.
pub(crate) fn lan_networks(p: &Profile) -> Vec<IpNet> {
    let mut out: Vec<IpNet> = Vec::new();
    for iface in p.interface.iter().filter(|i| i.role == Role::Lan) {
        for a in &iface.address {
            let net = IpNet { addr: a.get_ref().network(), prefix: a.get_ref().prefix };
            if !out.contains(&net) {
                out.push(net);
            }
        }
    }
    out
}
