//! ksmbd, the kernel's SMB3 server, configured through ksmbd-tools'
//! /etc/ksmbd/ksmbd.conf (paths::KSMBD_CONF), which nasboot renders whole
//! from `[samba]`, following ksmbd.conf(5) of ksmbd-tools 3.4.7:
//!
//! - `bind interfaces only = yes` and `interfaces = <LAN interfaces>`:
//!   the interface list reaches the kernel only with both set (otherwise
//!   ksmbd listens on every interface, the WAN's included). No `lo`.
//! - `workgroup` when the profile sets one; `map to guest = bad user`
//!   when a share allows guests (ksmbd's default, `never`, would refuse
//!   them).
//! - One section per share: `comment`, `path`, `read only`, `guest ok`,
//!   `valid users`.
//!
//! Everything else keeps ksmbd's defaults. ksmbd.conf's `;` and `#` start
//! a comment only at the start of a line, so a path holding them is
//! written as it is.
//!
//! # Users and passwords
//!
//! Passwords are never in the profile. The profile names users
//! (`valid_users`); the operator provisions each beforehand with
//! `ksmbd.adduser -a USER` (3.4.7; it asks for the password twice, or
//! takes `-p`), which writes ksmbdpwd.db (paths::KSMBD_PWDDB: one
//! `USER:BASE64(NT hash)` line each). nasboot only reads the names in it:
//! a user named in the profile and missing there refuses the SMB step by
//! name, and nothing of ksmbd's is written or reloaded.
//!
//! # Reload or restart
//!
//! ksmbd.mountd re-reads the shares and users on `ksmbd.control --reload`
//! (SIGHUP to the pid in /run/ksmbd.lock). Global settings take effect
//! only when ksmbd restarts: `ksmbd.control --shutdown`, then
//! `ksmbd.mountd` again. So when the file changes and ksmbd.mountd runs,
//! the plan reloads it if the `[global]` section is unchanged, else
//! restarts it; [`change`] decides. A ksmbd.mountd that is not running
//! reads the file when it starts.

use std::fmt::Write as _;

use crate::config::nfs::Samba;
use crate::config::Profile;
use crate::paths;

/// What a running ksmbd needs after ksmbd.conf changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// Shares or users changed: `ksmbd.control --reload`.
    Reload,
    /// Global settings changed: `ksmbd.control --shutdown`, `ksmbd.mountd`.
    Restart,
}

/// ksmbd.conf for the profile's shares.
pub(crate) fn render(p: &Profile, s: &Samba) -> String {
    let mut out = String::new();
    out.push_str("; Written by nasboot from its profile; changes here are overwritten.\n");
    let _ = writeln!(
        out,
        "; Users: provision each with `ksmbd.adduser -a USER` ({}).\n[global]\n\tbind interfaces only = yes\n\tinterfaces = {}",
        paths::KSMBD_PWDDB,
        super::samba::Interfaces(p, s)
    );
    if let Some(w) = &s.workgroup {
        let _ = writeln!(out, "\tworkgroup = {}", w.get_ref());
    }
    if s.share.iter().any(|sh| sh.guest_ok) {
        out.push_str("\tmap to guest = bad user\n");
    }
    super::samba::shares(&mut out, s, "\t");
    out
}

/// The `[global]` section of a ksmbd.conf, as its settings: each
/// uncommented `key = value` line before the first other section, the key
/// lower-cased and spaces trimmed (ksmbd reads keys without case). In the
/// file's order: [`same`] compares them in any order.
fn globals(text: &str) -> Vec<(String, String)> {
    let mut section = String::from("global");
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            continue;
        }
        if let Some(name) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            section = name.trim().to_ascii_lowercase();
        } else if section == "global" {
            if let Some((k, v)) = t.split_once('=') {
                out.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
    }
    out
}

/// Whether two `[global]` sections hold the same settings, in any order
/// (a handful of keys: counted, not sorted, which would link a sort of
/// pairs for this alone).
fn same(a: &[(String, String)], b: &[(String, String)]) -> bool {
    let count = |l: &[(String, String)], x: &(String, String)| l.iter().filter(|y| *y == x).count();
    a.len() == b.len() && a.iter().all(|x| count(a, x) == count(b, x))
}

/// What replacing `old` (None: no file) with `new` needs of a running
/// ksmbd; None when the text is the same.
pub(crate) fn change(old: Option<&str>, new: &str) -> Option<Change> {
    match old {
        Some(o) if o == new => None,
        Some(o) if same(&globals(o), &globals(new)) => Some(Change::Reload),
        _ => Some(Change::Restart),
    }
}

/// The users the profile names, each once, with the key naming it.
pub(crate) fn users(s: &Samba) -> Vec<(&str, String)> {
    let mut out: Vec<(&str, String)> = Vec::new();
    for (i, sh) in s.share.iter().enumerate() {
        for u in &sh.valid_users {
            if !out.iter().any(|(n, _)| *n == u.as_str()) {
                out.push((u.as_str(), format!("samba.share[{i}].valid_users")));
            }
        }
    }
    out
}

/// Whether ksmbdpwd.db has a password for `user` (a `USER:` line).
pub(crate) fn provisioned(db: &str, user: &str) -> bool {
    db.lines().any(|l| l.split_once(':').is_some_and(|(name, hash)| name == user && !hash.trim().is_empty()))
}

/// The pid in ksmbd.mountd's lock file.
pub(crate) fn lock_pid(text: &str) -> Option<u32> {
    text.trim().parse().ok().filter(|p| *p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "[global]\n\tbind interfaces only = yes\n\tinterfaces = eth1\n\n[media]\n\tpath = /srv/media\n";

    #[test]
    fn a_share_change_reloads_and_a_global_change_restarts() {
        let shares = OLD.replace("/srv/media", "/srv/films");
        assert_eq!(change(Some(OLD), &shares), Some(Change::Reload));
        let more = format!("{OLD}\n[pub]\n\tpath = /srv/pub\n\tvalid users = bob\n");
        assert_eq!(change(Some(OLD), &more), Some(Change::Reload));
        let bound = OLD.replace("eth1", "eth1 eth2");
        assert_eq!(change(Some(OLD), &bound), Some(Change::Restart));
        let guests = OLD.replace("[media]", "\tmap to guest = bad user\n[media]");
        assert_eq!(change(Some(OLD), &guests), Some(Change::Restart));
        assert_eq!(change(None, OLD), Some(Change::Restart), "ksmbd ran on its defaults");
        assert_eq!(change(Some(OLD), OLD), None);
        // Comments, key case, spacing and order are not a change of settings.
        let same = "; mine\n[Global]\n  Interfaces=eth1\n  BIND INTERFACES ONLY = yes\n[media]\n\tpath = /srv/media\n";
        assert_eq!(change(Some(OLD), same), Some(Change::Reload));
    }

    #[test]
    fn users_are_found_by_name_in_the_password_database() {
        let db = "bob:qO3dYwAAZFhUcQeYUq/v0Q==\nalice:\n";
        assert!(provisioned(db, "bob"));
        assert!(!provisioned(db, "alice"), "no hash: no password");
        assert!(!provisioned(db, "bo"));
        assert!(!provisioned("", "bob"));
        assert_eq!(lock_pid("1234\n"), Some(1234));
        assert_eq!(lock_pid(""), None);
        assert_eq!(lock_pid("0"), None);
    }
}
