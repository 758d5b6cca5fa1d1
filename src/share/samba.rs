//! An smb.conf include (paths::SMB_INCLUDE) for slow CPUs, following the
//! current smb.conf(5):
//!
//! - `use sendfile = yes`: file reads go from the page cache to the socket
//!   without a copy through smbd (Samba skips it on signed or encrypted
//!   sessions, which newer Windows clients may require).
//! - `aio read size` / `aio write size`: 1 (Samba's default, every request
//!   asynchronous) unless the profile says otherwise; 0 turns aio off,
//!   which on a single core saves the helper-thread hand-offs.
//! - `min receivefile size`: large writes are spliced from the socket
//!   into the file (not on signed sessions; Samba caps it at 128 KiB).
//! - No `socket options` with SO_RCVBUF/SO_SNDBUF: setting a buffer size
//!   on a socket turns off Linux's receive and send autotuning for it.
//!   Larger maxima belong in sysctl (the slow-cpu-nas preset).
//! - `interfaces = lo <LAN interfaces>` and `bind interfaces only = yes`:
//!   smbd and nmbd listen on the LAN only.
//!
//! The file starts with `[global]` and ends with the shares, so it is
//! meant to be the LAST line of smb.conf: `include = /etc/samba/nasboot.conf`.
//! Its global settings then win over earlier ones. `nasboot plan` notes
//! when smb.conf lacks that line. smbd picks up a changed file on its own
//! (it re-reads the configuration when it changes).

use std::fmt::{self, Write as _};

use crate::config::net::Role;
use crate::config::nfs::Samba;
use crate::config::Profile;
use crate::paths;

pub(crate) fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The interfaces smbd binds to besides lo, separated by spaces: `[samba]
/// interfaces`, else the LAN interfaces. Written where it is shown: no
/// list of Strings to build and join.
pub(crate) struct Interfaces<'a>(pub &'a Profile, pub &'a Samba);

impl fmt::Display for Interfaces<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Interfaces(p, s) = *self;
        let mut sep = "";
        let mut put = |name: &str| {
            let r = write!(f, "{sep}{name}");
            sep = " ";
            r
        };
        if s.interfaces.is_empty() {
            for i in p.interface.iter().filter(|i| i.role == Role::Lan) {
                put(i.name.get_ref().as_str())?;
            }
        } else {
            for i in &s.interfaces {
                put(i.get_ref().as_str())?;
            }
        }
        Ok(())
    }
}

/// The include file.
pub(crate) fn render(p: &Profile, s: &Samba) -> String {
    let mut out = String::new();
    out.push_str("# Written by nasboot from its profile; changes here are overwritten.\n");
    let _ = writeln!(out, "# Make `include = {}` the last line of smb.conf.", paths::SMB_INCLUDE);
    out.push_str("# No `socket options`: SO_RCVBUF/SO_SNDBUF would turn off TCP autotuning.\n");
    out.push_str("[global]\n");
    let _ = writeln!(out, "   interfaces = lo {}", Interfaces(p, s));
    out.push_str("   bind interfaces only = yes\n");
    if let Some(w) = &s.workgroup {
        let _ = writeln!(out, "   workgroup = {}", w.get_ref());
    }
    let _ = write!(
        out,
        "   use sendfile = {}\n   aio read size = {}\n   aio write size = {}\n   min receivefile size = {}\n",
        yes_no(s.sendfile),
        s.aio_read_size,
        s.aio_write_size,
        s.min_receivefile_size
    );
    shares(&mut out, s, "   ");
    out
}

/// One section per share, its keys indented by `indent`: the same keys
/// mean the same in smb.conf and ksmbd.conf.
pub(crate) fn shares(out: &mut String, s: &Samba, indent: &str) {
    for sh in &s.share {
        let _ = writeln!(out, "\n[{}]", sh.name.get_ref());
        if let Some(c) = &sh.comment {
            let _ = writeln!(out, "{indent}comment = {}", c.get_ref().trim());
        }
        let _ = write!(
            out,
            "{indent}path = {}\n{indent}read only = {}\n{indent}guest ok = {}\n",
            sh.path.get_ref(),
            yes_no(sh.read_only),
            yes_no(sh.guest_ok)
        );
        if !sh.valid_users.is_empty() {
            let _ = write!(out, "{indent}valid users =");
            for u in &sh.valid_users {
                out.push(' ');
                out.push_str(u.as_str());
            }
            out.push('\n');
        }
    }
}

/// Whether smb.conf includes nasboot's file (an uncommented
/// `include = PATH` line, spacing and case as Samba allows).
pub(crate) fn includes_us(smb_conf: &str) -> bool {
    smb_conf.lines().any(|l| {
        let t = l.trim();
        if t.starts_with('#') || t.starts_with(';') {
            return false;
        }
        match t.split_once('=') {
            Some((k, v)) => k.trim().eq_ignore_ascii_case("include") && v.trim() == paths::SMB_INCLUDE,
            None => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_line_is_recognised() {
        assert!(includes_us("[global]\n  Include = /etc/samba/nasboot.conf\n"));
        assert!(!includes_us("[global]\n# include = /etc/samba/nasboot.conf\n"));
        assert!(!includes_us("[global]\ninclude = /etc/samba/other.conf\n"));
    }
}
