//! sysctls under /proc/sys, in two scopes: [`global`] (the presets and
//! the profile's `[sysctl]`) and [`interface`] (`accept_ra` and each
//! `[interface.sysctl]` map, set before the link comes up). Each scope
//! says which (key, value) pairs it wants; reading them, the diff and the
//! writes are the same for both, here. Only values that differ are
//! written.

pub(crate) mod global;
pub(crate) mod interface;

use std::fmt;
use std::io;

use crate::config::types::IfName;
use crate::exit::{ExitStatus, Status};
use crate::seam::Seams;

/// Where a sysctl applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    Global,
    /// A per-interface key (net.ipv4.conf.IF.*, net.ipv6.conf.IF.*).
    Interface(IfName),
}

/// Set one sysctl.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
    pub scope: Scope,
    /// The full dotted key: net.core.rmem_max, net.ipv6.conf.eth0.accept_ra.
    pub key: String,
    pub value: String,
    /// The current value, if it could be read.
    pub from: Option<String>,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.scope, &self.from) {
            (Scope::Global, Some(old)) => write!(f, "{} = {} (now {})", self.key, self.value, old),
            (Scope::Global, None) => write!(f, "{} = {}", self.key, self.value),
            (Scope::Interface(name), Some(old)) => write!(f, "{name}: {} {} -> {}", self.key, old, self.value),
            (Scope::Interface(name), None) => write!(f, "{name}: {} = {}", self.key, self.value),
        }
    }
}

/// Current values of the wanted keys (None when unreadable).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub values: Vec<(String, Option<String>)>,
}

/// Read the wanted keys.
pub(crate) fn observe(wanted: &[(String, String)], seams: &mut Seams<'_>) -> Observed {
    Observed { values: wanted.iter().map(|(k, _)| (k.clone(), seams.sysctl.get(k).ok())).collect() }
}

/// Kernel values use tabs or runs of spaces between numbers.
fn same(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// The wanted values that differ from what was read.
pub(crate) fn plan(scope: &Scope, wanted: Vec<(String, String)>, now: &Observed) -> Vec<Action> {
    wanted
        .into_iter()
        .filter_map(|(key, value)| {
            let from = now.values.iter().find(|(k, _)| *k == key).and_then(|(_, v)| v.clone());
            match &from {
                Some(cur) if same(cur, &value) => None,
                _ => Some(Action { scope: scope.clone(), key, value, from }),
            }
        })
        .collect()
}

/// Why a sysctl did not take.
#[derive(Debug)]
pub(crate) enum Error {
    /// /proc/sys refused the value, or has no such key.
    Set { scope: Scope, key: String, source: io::Error },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Set { scope: Scope::Global, key, source } => write!(f, "sysctl {key}: {source}"),
            Error::Set { scope: Scope::Interface(name), key, source } => write!(f, "{name} sysctl {key}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Set { source, .. } => Some(source),
        }
    }
}

impl ExitStatus for Error {
    /// A knob: the boot carries on (3).
    fn exit_status(&self) -> Status {
        Status::Partial
    }
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    seams.sysctl.set(&a.key, &a.value).map_err(|source| Error::Set { scope: a.scope.clone(), key: a.key.clone(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_sysctl_names_its_scope_and_key() {
        let mut b = crate::seam::fake::FakeBoard::new();
        let a = Action {
            scope: Scope::Interface("eth0".parse().unwrap()),
            key: "net.ipv6.conf.eth0.bogus".into(),
            value: "1".into(),
            from: None,
        };
        let e = apply(&a, &mut b.seams()).unwrap_err();
        assert!(
            matches!(&e, Error::Set { scope: Scope::Interface(n), key, .. } if n.as_str() == "eth0" && key == "net.ipv6.conf.eth0.bogus"),
            "{e}"
        );
        assert!(e.to_string().starts_with("eth0 sysctl net.ipv6.conf.eth0.bogus: "), "{e}");
        assert_eq!(e.exit_status(), Status::Partial);
        let a = Action { scope: Scope::Global, key: "net.core.bogus".into(), ..a };
        let e = apply(&a, &mut b.seams()).unwrap_err();
        assert!(e.to_string().starts_with("sysctl net.core.bogus: "), "{e}");
    }

    #[test]
    fn equal_values_with_other_spacing_are_not_rewritten() {
        assert!(same("4096\t87380\t1048576", "4096 87380 1048576"));
        assert!(!same("4096 87380 6291456", "4096 87380 1048576"));
    }
}
