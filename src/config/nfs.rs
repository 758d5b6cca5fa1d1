//! `[nfs]` and `[[nfs.export]]`: the export set and nfsd knobs.

use super::decode::{self as dec, decode_enum, Decode, Error, Fields, Value};
use super::{List, Spanned};

use super::net::Role;
use super::types::{AbsPath, IfName, IpNet, Name};
use super::Profile;

/// Exports per profile, clients per export.
pub(crate) const MAX_EXPORTS: usize = 16;
pub(crate) const MAX_CLIENTS: usize = 8;

/// NFS protocol versions nfsd may offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NfsVersion {
    V3,
    V4,
    V4_1,
    V4_2,
}

decode_enum!(NfsVersion { "3" => V3, "4" => V4, "4.1" => V4_1, "4.2" => V4_2 });

/// Squashing of remote users.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Squash {
    /// root_squash (the safe default).
    #[default]
    Root,
    /// all_squash.
    All,
    /// no_root_squash.
    None,
}

decode_enum!(Squash { "root" => Root, "all" => All, "none" => None });

/// `fsid=`: a number (kernels up to 2.6.20 need a small one) or `root`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsid {
    Num(u32),
    Root,
}

impl Decode for Fsid {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        const EXPECTED: &str = "a small integer or \"root\"";
        match v.get_ref() {
            crate::config::document::Item::String(s) if s == "root" => Ok(Fsid::Root),
            crate::config::document::Item::String(s) => Err(Error::msg(format!("fsid is a number or \"root\", not `{s}`"))),
            _ => {
                let n = dec::int(v, &EXPECTED)?;
                u32::try_from(n).map(Fsid::Num).map_err(|_| Error::msg(format!("fsid {n} is out of range (0 to 4294967295)")))
            }
        }
    }
}

/// One `[[nfs.export]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Export {
    pub path: Spanned<AbsPath>,
    /// Hosts, CIDRs, wildcards or "*". Default: the LAN subnets.
    pub clients: List<Spanned<heapless::String<63>>, MAX_CLIENTS>,
    pub rw: bool,
    /// sync (default) or async; async risks data loss if the server crashes.
    pub sync: bool,
    pub squash: Squash,
    pub anonuid: Option<u32>,
    pub anongid: Option<u32>,
    pub secure: bool,
    pub subtree_check: bool,
    /// fsid=N, or "root".
    pub fsid: Option<Fsid>,
    pub crossmnt: bool,
    pub no_wdelay: bool,
}

/// Shipped NFS presets (see `share::nfsd` for the trade-offs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NfsPreset {
    /// For 32 to 256 MB single-core boards: NFSv3 only (no NFSv4 state,
    /// no idmapping, less kernel memory), half the default thread count,
    /// no_subtree_check (already the default) kept explicit.
    SlowCpu,
}

decode_enum!(NfsPreset { "slow-cpu" => SlowCpu });

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Nfs {
    /// A shipped preset; explicit keys win over it.
    pub preset: Option<NfsPreset>,
    /// Treat NFS warnings (an export path that does not exist) as errors,
    /// as `--strict` does for the whole profile.
    pub strict: bool,
    /// nfsd threads; sized from RAM and CPUs when unset.
    pub threads: Option<u16>,
    /// Versions to offer, e.g. ["3"]. Only settable while nfsd is stopped.
    pub versions: Option<heapless::Vec<NfsVersion, 4>>,
    /// nfsd max_block_size in bytes. Only settable while nfsd is stopped.
    pub max_block_size: Option<u32>,
    /// Write /etc/exports.d/nasboot.exports instead of /etc/exports.
    pub exports_d: bool,
    pub export: List<Export, MAX_EXPORTS>,
}

/// Samba shares per profile.
pub(crate) const MAX_SHARES: usize = 8;
/// Users per share.
pub(crate) const MAX_USERS: usize = 8;

/// Which server serves the `[samba]` shares (see `share::smb`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SmbBackend {
    /// smbd where it is installed, else ksmbd where the kernel has it.
    #[default]
    Auto,
    /// Samba's smbd, through the smb.conf include.
    Smbd,
    /// The kernel's ksmbd, through /etc/ksmbd/ksmbd.conf.
    Ksmbd,
}

decode_enum!(SmbBackend { "auto" => Auto, "smbd" => Smbd, "ksmbd" => Ksmbd });

/// `[samba]`: the SMB shares, served by smbd (an smb.conf include,
/// paths::SMB_INCLUDE, tuned for slow CPUs) or by ksmbd (paths::KSMBD_CONF),
/// bound to the LAN either way. See `share::samba` and `share::ksmbd` for
/// what each key renders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Samba {
    /// The server: "auto" (default), "smbd" or "ksmbd".
    pub backend: SmbBackend,
    /// Interfaces smbd listens on besides `lo`. Default: the role = "lan" ones.
    pub interfaces: List<Spanned<IfName>, { super::MAX_INTERFACES }>,
    /// NetBIOS workgroup (1 to 15 bytes). Unset: Samba's default.
    pub workgroup: Option<Spanned<heapless::String<15>>>,
    /// `use sendfile`: read data goes from the page cache to the socket
    /// without a copy through smbd (not on signed or encrypted sessions).
    pub sendfile: bool,
    /// `aio read size` in bytes: 1 (Samba's default) makes every read
    /// asynchronous, 0 turns aio off.
    pub aio_read_size: u32,
    /// `aio write size`, likewise.
    pub aio_write_size: u32,
    /// `min receivefile size` in bytes: writes at least this large are
    /// spliced from the socket (not on signed sessions). 0 turns it off;
    /// Samba caps it at 128 KiB, so larger values are refused.
    pub min_receivefile_size: u32,
    pub share: List<Share, MAX_SHARES>,
}

/// One `[[samba.share]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    /// The share name: letters, digits, `_`, `.`, `-`.
    pub name: Spanned<Name>,
    pub path: Spanned<AbsPath>,
    pub read_only: bool,
    pub guest_ok: bool,
    pub comment: Option<Spanned<heapless::String<63>>>,
    /// `valid users`; empty means any authenticated user. Under ksmbd each
    /// must have a password in ksmbdpwd.db (`ksmbd.adduser`) beforehand.
    pub valid_users: heapless::Vec<Name, MAX_USERS>,
}

impl Decode for Export {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(
            v,
            "struct Export",
            &["path", "clients", "rw", "sync", "squash", "anonuid", "anongid", "secure", "subtree_check", "fsid", "crossmnt", "no_wdelay"],
        )?;
        Ok(Export {
            path: f.req("path")?,
            clients: f.or_default("clients")?,
            rw: f.or_default("rw")?,
            sync: f.or("sync", true)?,
            squash: f.or_default("squash")?,
            anonuid: f.opt("anonuid")?,
            anongid: f.opt("anongid")?,
            secure: f.or("secure", true)?,
            subtree_check: f.or_default("subtree_check")?,
            fsid: f.opt("fsid")?,
            crossmnt: f.or_default("crossmnt")?,
            no_wdelay: f.or_default("no_wdelay")?,
        })
    }
}

impl Decode for Nfs {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let mut nfs = Nfs::default();
        Self::decode_into(&mut nfs, v)?;
        Ok(nfs)
    }

    /// In place: `export` holds its capacity inline (see `Profile`).
    fn decode_into(nfs: &mut Self, v: &Value<'_>) -> Result<(), Error> {
        let f = Fields::new(v, "struct Nfs", &["preset", "strict", "threads", "versions", "max_block_size", "exports_d", "export"])?;
        nfs.preset = f.opt("preset")?;
        nfs.strict = f.or_default("strict")?;
        nfs.threads = f.opt("threads")?;
        nfs.versions = f.opt("versions")?;
        nfs.max_block_size = f.opt("max_block_size")?;
        nfs.exports_d = f.or_default("exports_d")?;
        f.fill("export", &mut nfs.export)
    }
}

impl Decode for Samba {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(
            v,
            "struct Samba",
            &["backend", "interfaces", "workgroup", "sendfile", "aio_read_size", "aio_write_size", "min_receivefile_size", "share"],
        )?;
        Ok(Samba {
            backend: f.or_default("backend")?,
            interfaces: f.or_default("interfaces")?,
            workgroup: f.opt("workgroup")?,
            sendfile: f.or("sendfile", true)?,
            aio_read_size: f.or("aio_read_size", one())?,
            aio_write_size: f.or("aio_write_size", one())?,
            min_receivefile_size: f.or("min_receivefile_size", receivefile_default())?,
            share: f.or_default("share")?,
        })
    }
}

impl Decode for Share {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(v, "struct Share", &["name", "path", "read_only", "guest_ok", "comment", "valid_users"])?;
        Ok(Share {
            name: f.req("name")?,
            path: f.req("path")?,
            read_only: f.or("read_only", true)?,
            guest_ok: f.or_default("guest_ok")?,
            comment: f.opt("comment")?,
            valid_users: f.or_default("valid_users")?,
        })
    }
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
