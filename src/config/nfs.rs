//! `[nfs]` and `[[nfs.export]]`: the export set and nfsd knobs.

use serde::Deserialize;
use toml::Spanned;

use super::types::AbsPath;

/// Exports per profile, clients per export.
pub const MAX_EXPORTS: usize = 16;
pub const MAX_CLIENTS: usize = 8;

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

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nfs {
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
