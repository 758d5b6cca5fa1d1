//! What a firewall step fails with. The loader's own failure is a
//! [`LoadError`] (which tool, and why), kept as the source; this says
//! what nasboot did about it. Display is the line the log and the summary
//! show, once. Every one is fatal (exit 1) except a forwarding sysctl,
//! which is partial as any sysctl.

use std::fmt;
use std::io;

use super::load::{Joined, LoadError};
use super::Backend;
use crate::exit::{ExitStatus, Status};

/// A firewall step that failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// The rule set did not load; `then` says what is loaded now.
    Load { source: LoadError, then: Then },
    /// Neither backend loaded the emergency rule set (`lock-down`): why,
    /// per backend tried.
    Emergency { tried: Vec<LoadError> },
    /// `--confirm`: the current rule set could not be saved, so nothing
    /// was applied.
    Save { source: LoadError },
    /// `--confirm`: a file under /run/nasboot could not be written.
    Write { path: &'static str, source: io::Error },
    /// `--confirm`: not confirmed in time; the previous rule set is back.
    NotConfirmed { seconds: u32 },
    /// `--confirm`: not confirmed in time, and the previous rule set did
    /// not load back; `fallback`: the backend that loaded the fallback
    /// instead, or why neither did.
    Rollback { seconds: u32, source: LoadError, fallback: Result<Backend, Vec<LoadError>> },
    /// `firewall confirm` with no `firewall apply --confirm` waiting.
    NotWaiting,
    /// A forwarding sysctl, set after the rule set loaded.
    Sysctl(crate::sysctl::Error),
}

/// What is loaded after a rule set failed to load.
#[derive(Debug)]
pub(crate) enum Then {
    /// The tool is missing: nothing changed, the previous rule set is kept.
    KeptPrevious,
    /// No fallback was asked for (`profile = "off"`).
    NoFallback,
    /// The fallback (loopback and LAN only), with this backend.
    FellBack(Backend),
    /// The fallback did not load either: why, per backend tried.
    FallbackFailed(Vec<LoadError>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Load { source, then } => {
                write!(f, "{}: {source}", source.tool())?;
                match then {
                    Then::KeptPrevious => f.write_str("; the previous rule set is kept"),
                    Then::NoFallback => Ok(()),
                    Then::FellBack(b) => write!(f, "; loaded the fallback rule set instead ({b}: loopback and LAN only)"),
                    Then::FallbackFailed(why) => write!(f, "; the fallback did not load either: {}", Joined(why)),
                }
            }
            Error::Emergency { tried } => write!(f, "firewall: the emergency rule set did not load: {}", Joined(tried)),
            Error::Save { source } => {
                write!(f, "{}: cannot save the current rule set, so nothing was applied: {source}", source.tool())
            }
            Error::Write { path, source } => write!(f, "{path}: {source}"),
            Error::NotConfirmed { seconds } => {
                write!(f, "firewall: not confirmed within {seconds} s: the previous rule set is back")
            }
            Error::Rollback { seconds, source, fallback } => {
                write!(f, "{}: not confirmed within {seconds} s, and the previous rule set did not load back: {source}; ", source.tool())?;
                match fallback {
                    Ok(b) => write!(f, "loaded the fallback rule set ({b}: loopback and LAN only)"),
                    Err(why) => write!(f, "the fallback did not load either: {}", Joined(why)),
                }
            }
            Error::NotWaiting => f.write_str("firewall confirm: no `firewall apply --confirm` is waiting"),
            Error::Sysctl(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    /// The load that failed (its own source: the runner's error); a
    /// sysctl's cause. `Emergency` has one per backend, all in the message.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Load { source, .. } | Error::Save { source } | Error::Rollback { source, .. } => Some(source),
            Error::Write { source, .. } => Some(source),
            Error::Sysctl(e) => e.source(),
            Error::Emergency { .. } | Error::NotConfirmed { .. } | Error::NotWaiting => None,
        }
    }
}

impl ExitStatus for Error {
    /// 1: the rule set asked for is not in place (the fallback may be); a
    /// forwarding sysctl is partial (3) as any sysctl.
    fn exit_status(&self) -> Status {
        match self {
            Error::Sysctl(e) => e.exit_status(),
            _ => Status::Failure,
        }
    }
}

impl From<crate::sysctl::Error> for Error {
    fn from(e: crate::sysctl::Error) -> Error {
        Error::Sysctl(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(tool: &'static str) -> LoadError {
        LoadError::Rejected { tool, detail: "Error: syntax error (line 5: `bogus`)".into() }
    }

    /// The text is an interface (the log, the summary, what the shell
    /// suites and users' log filters look for): each variant's, word for
    /// word as it was built with format!() before the variants existed.
    #[test]
    fn every_message_reads_as_before() {
        let enoent = || io::Error::from_raw_os_error(nix::libc::ENOENT);
        let cases: Vec<(Error, String)> = vec![
            (
                Error::Load { source: LoadError::Missing("nft"), then: Then::KeptPrevious },
                "nft: `nft` is not on PATH: nothing was loaded; the previous rule set is kept".into(),
            ),
            (
                Error::Load { source: LoadError::Run { tool: "nft", source: enoent() }, then: Then::NoFallback },
                format!("nft: nft could not run: {}", enoent()),
            ),
            (
                Error::Load { source: LoadError::TimedOut("iptables-restore"), then: Then::FellBack(Backend::Nftables) },
                "iptables-restore: iptables-restore did not finish within 60 s; \
                 loaded the fallback rule set instead (nftables: loopback and LAN only)"
                    .into(),
            ),
            (
                Error::Load {
                    source: LoadError::Killed("nft"),
                    then: Then::FallbackFailed(vec![rejected("nft"), LoadError::Missing("iptables-restore")]),
                },
                "nft: nft was killed by a signal before it finished (it crashed?); the fallback did not load either: \
                 nft rejected the rule set: Error: syntax error (line 5: `bogus`); `iptables-restore` is not on PATH: nothing was loaded"
                    .into(),
            ),
            (
                Error::Emergency { tried: vec![LoadError::Missing("nft"), rejected("iptables-restore")] },
                "firewall: the emergency rule set did not load: `nft` is not on PATH: nothing was loaded; \
                 iptables-restore rejected the rule set: Error: syntax error (line 5: `bogus`)"
                    .into(),
            ),
            (
                Error::Save { source: LoadError::List { family: "inet", name: "nasboot", stderr: "Error: permission denied".into() } },
                "nft: cannot save the current rule set, so nothing was applied: nft list table inet nasboot: Error: permission denied".into(),
            ),
            (
                Error::Save { source: LoadError::Save { tool: "ip6tables-save", stderr: "no kernel support".into() } },
                "ip6tables-save: cannot save the current rule set, so nothing was applied: ip6tables-save failed: no kernel support".into(),
            ),
            (
                Error::Write { path: crate::paths::FIREWALL_PENDING, source: enoent() },
                format!("/run/nasboot/firewall.pending: {}", enoent()),
            ),
            (Error::NotConfirmed { seconds: 30 }, "firewall: not confirmed within 30 s: the previous rule set is back".into()),
            (
                Error::Rollback { seconds: 30, source: rejected("nft"), fallback: Ok(Backend::Iptables) },
                "nft: not confirmed within 30 s, and the previous rule set did not load back: \
                 nft rejected the rule set: Error: syntax error (line 5: `bogus`); loaded the fallback rule set (iptables: loopback and LAN only)"
                    .into(),
            ),
            (
                Error::Rollback { seconds: 30, source: rejected("nft"), fallback: Err(vec![LoadError::Missing("nft"), LoadError::Missing("iptables-restore")]) },
                "nft: not confirmed within 30 s, and the previous rule set did not load back: \
                 nft rejected the rule set: Error: syntax error (line 5: `bogus`); the fallback did not load either: \
                 `nft` is not on PATH: nothing was loaded; `iptables-restore` is not on PATH: nothing was loaded"
                    .into(),
            ),
            (Error::NotWaiting, "firewall confirm: no `firewall apply --confirm` is waiting".into()),
        ];
        for (err, want) in cases {
            assert_eq!(err.to_string(), want);
            assert_eq!(err.exit_status(), Status::Failure, "{err}");
        }
    }

    #[test]
    fn the_runner_error_is_the_load_errors_source() {
        let err = Error::Load {
            source: LoadError::Run { tool: "nft", source: io::Error::from_raw_os_error(nix::libc::EACCES) },
            then: Then::NoFallback,
        };
        let load = std::error::Error::source(&err).expect("the load error");
        assert!(matches!(load.downcast_ref::<LoadError>(), Some(LoadError::Run { tool: "nft", .. })));
        let io = load.source().and_then(|s| s.downcast_ref::<io::Error>()).and_then(io::Error::raw_os_error);
        assert_eq!(io, Some(nix::libc::EACCES));
    }
}
