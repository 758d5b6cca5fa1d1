//! The export table in exports(5) form: one line per export, the path,
//! then each client immediately followed by its `(options)`.
//!
//! Paths: nfs-utils reads a path as one white-space separated token, in
//! which `"` toggles quoting and a backslash with three octal digits
//! (`\040`) stands for that byte (support/nfs/xio.c, `xgettok`). nasboot
//! writes every byte that could change the meaning of the line as `\ooo`:
//! white space, `"`, `\`, `#`, `(`, `)`, `,`, and control characters
//! (the profile already refuses these). nfs-utils decodes in place, so a
//! decoded backslash followed by three octal digits would be decoded a
//! second time; octal digits within three bytes after a backslash are
//! therefore escaped too. [`unescape`] is the reader's rule, for the
//! round-trip test. (exportfs itself then writes such a path to etab with
//! only the backslash escaped and misreads it from there, so the profile
//! refuses a backslash followed by three octal digits.)
//!
//! exportfs' line numbers do not count comment lines (nfs-utils skips a
//! comment without counting its newline), so an error it reports for
//! a file with comments points that many lines too high; nasboot passes
//! its words on unchanged.
//!
//! Options: every export states ro/rw, sync/async, its squashing,
//! secure/insecure and subtree_check/no_subtree_check explicitly, so the
//! table reads the same whatever the nfs-utils defaults of the board
//! (exportfs warns when neither subtree option is given).

use std::fmt::{self, Write as _};

use crate::config::nfs::{Export, Fsid, Squash};
use crate::config::Profile;

use crate::config::types::Client;

/// Whether byte `b` is written as `\ooo`.
fn needs_escape(b: u8) -> bool {
    b.is_ascii_control() || b == b' ' || matches!(b, b'"' | b'\\' | b'#' | b'(' | b')' | b',')
}

/// A path as one exports(5) token.
pub(crate) fn escape_path(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = String::with_capacity(path.len() + 8);
    for (i, c) in path.char_indices() {
        let escape = c.is_ascii() && {
            let b = c as u8;
            let after_backslash = bytes[i.saturating_sub(3)..i].contains(&b'\\');
            needs_escape(b) || (after_backslash && (b'0'..=b'7').contains(&b))
        };
        if escape {
            let _ = write!(out, "\\{:03o}", c as u8);
        } else {
            out.push(c);
        }
    }
    out
}

/// How nfs-utils reads a path token back (xgettok): `"` toggles quoting
/// and is dropped; each time a byte is appended and the last four read
/// `\ooo` (value below 256), they become that byte.
#[cfg(any(test, feature = "fuzz"))]
pub(crate) fn unescape(token: &str) -> Vec<u8> {
    let octal = |b: u8| (b'0'..=b'7').contains(&b);
    let mut tok: Vec<u8> = Vec::with_capacity(token.len());
    for &b in token.as_bytes() {
        if b == b'"' {
            continue;
        }
        tok.push(b);
        let n = tok.len();
        if n >= 4 && tok[n - 4] == b'\\' && tok[n - 3..].iter().all(|d| octal(*d)) {
            let v = tok[n - 3..].iter().fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
            if v < 256 {
                tok.truncate(n - 4);
                tok.push(v as u8);
            }
        }
    }
    tok
}

/// The option list of an export, in a fixed order.
pub(crate) fn options(e: &Export) -> String {
    let mut o: Vec<String> = Vec::with_capacity(10);
    o.push(if e.rw { "rw" } else { "ro" }.into());
    o.push(if e.sync { "sync" } else { "async" }.into());
    if e.no_wdelay {
        o.push("no_wdelay".into());
    }
    o.push(
        match e.squash {
            Squash::Root => "root_squash",
            Squash::All => "all_squash",
            Squash::None => "no_root_squash",
        }
        .into(),
    );
    if let Some(uid) = e.anonuid {
        o.push(format!("anonuid={uid}"));
    }
    if let Some(gid) = e.anongid {
        o.push(format!("anongid={gid}"));
    }
    o.push(if e.secure { "secure" } else { "insecure" }.into());
    o.push(if e.subtree_check { "subtree_check" } else { "no_subtree_check" }.into());
    match e.fsid {
        Some(Fsid::Num(n)) => o.push(format!("fsid={n}")),
        Some(Fsid::Root) => o.push("fsid=root".into()),
        None => {}
    }
    if e.crossmnt {
        o.push("crossmnt".into());
    }
    o.join(",")
}

/// The clients of an export: its own list, or the LAN subnets. The
/// profile validation guarantees one of them is non-empty and parses.
pub(crate) fn clients(p: &Profile, e: &Export) -> Vec<Client> {
    if e.clients.is_empty() {
        crate::config::nfs::lan_networks(p).into_iter().map(Client::Net).collect()
    } else {
        e.clients.iter().filter_map(|c| Client::parse(c.get_ref()).ok()).collect()
    }
}

/// The whole file. `drop_in`: the text goes to /etc/exports.d, so the
/// header says where the board's own exports stay.
pub(crate) fn render(p: &Profile, drop_in: bool) -> String {
    let mut out = String::new();
    out.push_str("# Written by nasboot from its profile; changes here are overwritten.\n");
    if drop_in {
        out.push_str("# Keep other exports in /etc/exports or another /etc/exports.d/*.exports file.\n");
    } else {
        out.push_str("# Keep other exports in /etc/exports.d/*.exports, or set exports_d = true.\n");
    }
    for e in &p.nfs.export {
        let opts = options(e);
        out.push_str(&escape_path(e.path.get_ref().as_str()));
        for c in clients(p, e) {
            let _ = write!(out, " {c}({opts})");
        }
        out.push('\n');
    }
    out
}

/// One problem exportfs reported about a file line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExportfsError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ExportfsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// The located lines of exportfs' standard error. nfs-utils prints
/// errors as `exportfs: FILE:LINE: MESSAGE` and warnings as
/// `exportfs: FILE [LINE]: MESSAGE` (support/nfs/exports.c).
pub(crate) fn parse_exportfs_stderr(stderr: &str) -> Vec<ExportfsError> {
    let mut out = Vec::new();
    for l in stderr.lines() {
        let rest = l.trim().strip_prefix("exportfs: ").unwrap_or(l.trim());
        if !rest.starts_with('/') {
            continue;
        }
        let located = rest.split_once(": ").and_then(|(head, msg)| {
            let (file, line) = match head.rsplit_once(" [") {
                Some((f, n)) => (f, n.strip_suffix(']')?),
                None => head.rsplit_once(':')?,
            };
            Some(ExportfsError { file: file.to_string(), line: line.trim().parse().ok()?, message: msg.trim().to_string() })
        });
        out.extend(located);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exportfs_errors_are_located() {
        let err = "exportfs: /etc/exports:3: unknown keyword \"bogus\"\n\
                   exportfs: /etc/exports [4]: Neither 'subtree_check' or 'no_subtree_check' specified\n\
                   exportfs: Failed to stat /srv/none: No such file or directory\n";
        let got = parse_exportfs_stderr(err);
        assert_eq!(
            got,
            vec![
                ExportfsError { file: "/etc/exports".into(), line: 3, message: "unknown keyword \"bogus\"".into() },
                ExportfsError {
                    file: "/etc/exports".into(),
                    line: 4,
                    message: "Neither 'subtree_check' or 'no_subtree_check' specified".into()
                },
            ]
        );
    }

    #[test]
    fn spaces_and_specials_are_octal() {
        assert_eq!(escape_path("/srv/My Music"), "/srv/My\\040Music");
        assert_eq!(escape_path("/srv/a\"b#c(d),e"), "/srv/a\\042b\\043c\\050d\\051\\054e");
        assert_eq!(escape_path("/srv/tab\there"), "/srv/tab\\011here");
        assert_eq!(escape_path("/srv/back\\slash"), "/srv/back\\134slash");
        assert_eq!(escape_path("/srv/café"), "/srv/café");
    }

    #[test]
    fn a_backslash_before_digits_is_not_decoded_twice() {
        // Naively "\134" then "123" would read back as "\123" = 'S'.
        let e = escape_path("/srv/a\\123");
        assert_eq!(e, "/srv/a\\134\\061\\062\\063");
        assert_eq!(unescape(&e), b"/srv/a\\123");
    }

    #[test]
    fn escaping_round_trips() {
        let cases = [
            "/srv/nfs",
            "/srv/My Music",
            "/srv/a  b\tc",
            "/srv/\"quoted\"",
            "/srv/#hash",
            "/srv/\\",
            "/srv/\\\\",
            "/srv/\\0",
            "/srv/\\01",
            "/srv/\\012",
            "/srv/\\0123",
            "/srv/\\\\777\\8",
            "/srv/x\\040y",
            "/srv/(a,b)",
            "/srv/ünïcödé 語",
            "/srv/trailing ",
        ];
        for path in cases {
            let token = escape_path(path);
            assert!(!token.bytes().any(|b| b.is_ascii_whitespace() || b == b'"'), "{path:?} -> {token:?}");
            assert_eq!(unescape(&token), path.as_bytes(), "{path:?} -> {token:?}");
        }
        // Every ASCII byte next to a backslash and digits.
        for b in 1u8..128 {
            let path = format!("/s/{}\\{}17{}", b as char, b as char, b as char);
            assert_eq!(unescape(&escape_path(&path)), path.as_bytes(), "byte {b}");
        }
    }

    #[test]
    fn reader_drops_quotes_like_nfs_utils() {
        assert_eq!(unescape("\"/srv/My Music\""), b"/srv/My Music");
        assert_eq!(unescape("/a\\400"), b"/a\\400", "values of 256 and up stay as text");
    }
}
