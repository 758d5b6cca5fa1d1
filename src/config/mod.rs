//! The profile: TOML parsed (`document`) and decoded by hand (`decode`) into a
//! validated model of bounded size. Unknown keys are rejected; every
//! error names the file, the line and column, and the key.
//!
//! Stages: `parse` (`document`, then each model type's `Decode`; newtypes
//! validate single values) then `validate` (rules that span several
//! values: duplicates, zones, reachability). Nothing here touches the
//! system.

mod client;
mod decode;
pub(crate) mod document;
pub(crate) mod firewall;
mod list;
pub(crate) mod net;
pub(crate) mod nfs;
mod spanned;
pub(crate) mod system;
pub(crate) mod types;
pub(crate) mod validate;
pub(crate) mod watchdog;

use std::fmt;
use std::ops::Range;

pub(crate) use list::List;
pub(crate) use spanned::Spanned;
pub(crate) use validate::Warning;

/// Interfaces per profile.
pub(crate) const MAX_INTERFACES: usize = 8;

/// `[board]`: which board this profile is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    /// Short name, e.g. "bubba2".
    pub name: types::Name,
    /// Free text for humans.
    pub description: Option<heapless::String<96>>,
    /// Every `apply` is a candidate with this many seconds to be
    /// confirmed (`apply --confirm`), for boards managed only remotely.
    pub confirm: Option<u32>,
}

/// A whole profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub board: Board,
    pub sysctl: system::Sysctl,
    /// The lists of large items are `List`s, as long as the profile
    /// writes them. The sections are boxed and each decoded in a frame of
    /// its own (`decode::boxed`): by value, or inlined into this struct's
    /// decoder, the small lists they hold inline would be on every frame
    /// that moves a profile, and the deepest of them sets the process's
    /// VmHWM (scripts/bench-watchdog reads it).
    pub interface: List<net::Interface, MAX_INTERFACES>,
    /// Absent means the default: the stateless profile.
    pub firewall: Box<firewall::Firewall>,
    pub nfs: Box<nfs::Nfs>,
    pub storage: heapless::Vec<system::Storage, { system::MAX_STORAGE }>,
    pub watchdog: Option<Box<watchdog::Watchdog>>,
    /// An smb.conf include for slow CPUs (optional).
    pub samba: Option<Box<nfs::Samba>>,
}

impl decode::Decode for Board {
    fn decode(v: &decode::Value<'_>) -> Result<Self, decode::Error> {
        let f = decode::Fields::new(v, "struct Board", &["name", "description", "confirm"])?;
        Ok(Board { name: f.req("name")?, description: f.opt("description")?, confirm: f.opt("confirm")? })
    }
}

impl decode::Decode for Profile {
    fn decode(v: &decode::Value<'_>) -> Result<Self, decode::Error> {
        let f =
            decode::Fields::new(v, "struct Profile", &["board", "sysctl", "interface", "firewall", "nfs", "storage", "watchdog", "samba"])?;
        Ok(Profile {
            board: f.req("board")?,
            sysctl: f.or_default("sysctl")?,
            interface: f.or_default("interface")?,
            firewall: decode::boxed(&f, "firewall")?,
            nfs: decode::boxed(&f, "nfs")?,
            storage: f.or_default("storage")?,
            watchdog: decode::boxed_some(&f, "watchdog")?,
            samba: decode::boxed_some(&f, "samba")?,
        })
    }
}

/// A profile error: where it is and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The key path, e.g. `interface[1].name`.
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.column, self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A parsed, validated profile and the warnings it raised.
#[derive(Debug)]
pub struct Loaded {
    pub profile: Profile,
    pub warnings: Vec<Warning>,
}

/// The text of a profile and the name to report it under.
pub(crate) struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    /// 1-based line and column of a byte offset.
    pub(crate) fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text.as_bytes()[..offset];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = before.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
        let column = self.text[line_start..offset].chars().count() + 1;
        (line, column)
    }

    /// An error at a span.
    pub(crate) fn error(&self, span: Option<Range<usize>>, key: &str, message: impl Into<String>) -> ConfigError {
        let (line, column) = span.map_or((1, 1), |s| self.line_col(s.start));
        ConfigError { file: self.file.to_string(), line, column, key: key.to_string(), message: message.into() }
    }

    /// The key written on the line at `offset`, for syntax errors that
    /// carry no key path: the text before `=`, or a `[table]` header.
    fn key_on_line(&self, offset: usize) -> String {
        let offset = offset.min(self.text.len());
        let start = self.text[..offset].rfind('\n').map_or(0, |p| p + 1);
        let end = self.text[start..].find('\n').map_or(self.text.len(), |p| start + p);
        let line = self.text[start..end].trim();
        let key = match line.split_once('=') {
            Some((k, _)) => k.trim(),
            None => line.trim_matches(|c| c == '[' || c == ']').trim(),
        };
        if key.is_empty() {
            "(top level)".to_string()
        } else {
            key.chars().take(40).collect()
        }
    }
}

/// Parse and validate a profile held in memory.
pub(crate) fn parse(src: &Source<'_>) -> Result<Loaded, ConfigError> {
    let doc = parse_document(src.text).map_err(|e| src.error(Some(e.span()), &src.key_on_line(e.at), e.message))?;
    let profile: Profile = decode::document(&doc).map_err(|inner| {
        let key = inner.key();
        let key = if key.is_empty() { "(top level)".to_string() } else { key };
        src.error(inner.span.clone(), &key, first_line(&inner.message))
    })?;
    let warnings = validate::validate(&profile, src)?;
    Ok(Loaded { profile, warnings })
}

/// The TOML parse, out of line (see `decode::document`).
#[inline(never)]
fn parse_document(text: &str) -> Result<document::Value<'_>, document::Error> {
    document::parse(text)
}

/// Parse raw bytes: the profile must be UTF-8 text.
pub fn parse_bytes(file: &str, bytes: &[u8]) -> Result<Loaded, ConfigError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = Source { file, text: std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid prefix") };
            let (line, column) = good.line_col(e.valid_up_to());
            return Err(ConfigError {
                file: file.to_string(),
                line,
                column,
                key: "(none)".to_string(),
                message: format!("not UTF-8 text (bad byte at offset {})", e.valid_up_to()),
            });
        }
    };
    if bytes.contains(&0) {
        let src = Source { file, text };
        let at = bytes.iter().position(|b| *b == 0).expect("contains");
        return Err(src.error(Some(at..at), "(none)", "a NUL byte: this is not a text profile"));
    }
    parse(&Source { file, text })
}

fn first_line(msg: &str) -> String {
    msg.lines().next().unwrap_or("").trim().to_string()
}

#[cfg(test)]
mod boards;
#[cfg(test)]
pub(crate) mod tests;
