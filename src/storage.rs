//! Block devices: /sys/block/DEV/queue/read_ahead_kb, the most the page
//! cache reads ahead of a sequential reader (nfsd, smbd and ksmbd all read
//! through it; scripts/bench-nfs measures NFS reads).
//!
//! A device can go between `plan` and `apply` (a USB disk pulled): its
//! sysfs directory goes with it, and the write fails with ENOENT (or
//! ENODEV/ENXIO while it is being torn down). That is a note, not a
//! failure: nothing else of the apply is stopped, and the next apply (the
//! hotplug handler's, or the next boot's) sets it when it is back.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::config::Profile;
use crate::exit::{ExitStatus, Status};
use crate::paths;
use crate::seam::Seams;

/// Set a device's read-ahead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
    pub device: String,
    pub read_ahead_kb: u32,
    pub from: Option<u32>,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} read_ahead_kb = {}", self.device, self.read_ahead_kb)?;
        if let Some(old) = self.from {
            write!(f, " (now {old})")?;
        }
        Ok(())
    }
}

fn knob(device: &str) -> PathBuf {
    PathBuf::from(format!("{}/{}/queue/read_ahead_kb", paths::SYS_BLOCK, device))
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub read_ahead_kb: Vec<(String, Option<u32>)>,
}

pub(crate) fn observe(p: &Profile, seams: &mut Seams<'_>) -> Observed {
    let read_ahead_kb = p
        .storage
        .iter()
        .map(|s| {
            let dev = s.device.get_ref().to_string();
            let now = seams.files.read(&knob(&dev)).ok().and_then(|b| String::from_utf8_lossy(&b).trim().parse().ok());
            (dev, now)
        })
        .collect();
    Observed { read_ahead_kb }
}

pub(crate) fn plan(p: &Profile, now: &Observed) -> Vec<Action> {
    p.storage
        .iter()
        .filter_map(|s| {
            let kb = s.read_ahead_kb?;
            let device = s.device.get_ref().to_string();
            let from = now.read_ahead_kb.iter().find(|(d, _)| *d == device).and_then(|(_, v)| *v);
            (from != Some(kb)).then_some(Action { device, read_ahead_kb: kb, from })
        })
        .collect()
}

/// Why a block device's knob did not take.
#[derive(Debug)]
pub(crate) enum Error {
    /// The kernel refused the device's read_ahead_kb.
    ReadAhead { device: String, source: io::Error },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ReadAhead { device, source } => write!(f, "{device} read_ahead_kb: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::ReadAhead { source, .. } => Some(source),
        }
    }
}

impl ExitStatus for Error {
    /// A knob: the boot carries on (3).
    fn exit_status(&self) -> Status {
        Status::Partial
    }
}

/// Whether a write failed because the device is gone.
fn gone(e: &io::Error) -> bool {
    use nix::libc::{ENODEV, ENOENT, ENXIO};
    e.kind() == io::ErrorKind::NotFound || matches!(e.raw_os_error(), Some(ENOENT | ENODEV | ENXIO))
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    let value = format!("{}\n", a.read_ahead_kb);
    match seams.files.write_kernel(&knob(&a.device), value.as_bytes()) {
        Err(e) if gone(&e) => {
            log::warn!(
                "note: {}: no such block device now (removed?): read_ahead_kb {} not set; the next apply sets it",
                a.device,
                a.read_ahead_kb
            );
            Ok(())
        }
        r => r.map_err(|source| Error::ReadAhead { device: a.device.clone(), source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seam::fake::FakeBoard;

    #[test]
    fn a_refused_read_ahead_names_the_device_and_keeps_the_cause() {
        let mut b = FakeBoard::new();
        b.files.fail_writes = Some(io::ErrorKind::PermissionDenied);
        let a = Action { device: "sda".into(), read_ahead_kb: 1024, from: Some(128) };
        let e = apply(&a, &mut b.seams()).unwrap_err();
        let Error::ReadAhead { device, source } = &e;
        assert_eq!((device.as_str(), source.kind()), ("sda", io::ErrorKind::PermissionDenied));
        assert_eq!(e.to_string(), "sda read_ahead_kb: permission denied");
        assert_eq!(e.exit_status(), Status::Partial);
    }

    #[test]
    fn a_device_gone_since_the_plan_is_a_note_and_the_apply_goes_on() {
        use crate::plan::{Action as Step, Plan};
        let mut b = FakeBoard::new();
        b.files.files.insert("/sys/block/sdb/queue/read_ahead_kb".into(), b"128\n".to_vec());
        b.files.files.insert("/proc/sys/vm/swappiness".into(), b"60\n".to_vec());
        b.sysctl.values.insert("vm.swappiness".into(), "60".into());
        // Planned while sdb was there; pulled before the apply.
        let plan = Plan {
            actions: vec![
                Step::Storage(Action { device: "sdb".into(), read_ahead_kb: 1024, from: Some(128) }),
                Step::Storage(Action { device: "sda".into(), read_ahead_kb: 4096, from: None }),
            ],
            notes: Vec::new(),
        };
        b.files.files.remove(std::path::Path::new("/sys/block/sdb/queue/read_ahead_kb"));
        b.files.files.insert("/sys/block/sda/queue/read_ahead_kb".into(), b"128\n".to_vec());
        let report = crate::apply::apply(&plan, &mut b.seams());
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert_eq!(report.status, Status::Ok);
        // The next device is still set.
        assert_eq!(b.files.files.get(std::path::Path::new("/sys/block/sda/queue/read_ahead_kb")).map(Vec::as_slice), Some(&b"4096\n"[..]));
        // ENODEV and ENXIO (a device being torn down) likewise; EINVAL is not.
        assert!(gone(&io::Error::from_raw_os_error(nix::libc::ENODEV)) && gone(&io::Error::from_raw_os_error(nix::libc::ENXIO)));
        assert!(!gone(&io::Error::from_raw_os_error(nix::libc::EINVAL)));
    }
}
