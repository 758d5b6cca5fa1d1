//! A whole fake board: every fake seam sharing one journal.

use std::rc::Rc;

use super::{FakeFiles, FakeNetif, FakeNftables, FakeRunner, FakeSysctl, FakeWatchdogPort, Journal};
use crate::seam::Seams;

/// A whole fake board: every seam sharing one journal.
#[derive(Default)]
pub(crate) struct FakeBoard {
    pub journal: Journal,
    pub files: FakeFiles,
    pub sysctl: FakeSysctl,
    pub runner: FakeRunner,
    pub netif: FakeNetif,
    pub nft: FakeNftables,
    pub watchdog: FakeWatchdogPort,
}

impl FakeBoard {
    pub(crate) fn new() -> FakeBoard {
        let journal: Journal = Rc::default();
        FakeBoard {
            files: FakeFiles { journal: journal.clone(), ..FakeFiles::default() },
            sysctl: FakeSysctl { journal: journal.clone(), ..FakeSysctl::default() },
            runner: FakeRunner { journal: journal.clone(), ..FakeRunner::default() },
            netif: FakeNetif { journal: journal.clone(), ..FakeNetif::default() },
            nft: FakeNftables { journal: journal.clone(), ..FakeNftables::default() },
            watchdog: FakeWatchdogPort { journal: journal.clone(), ..FakeWatchdogPort::default() },
            journal,
        }
    }

    pub(crate) fn seams(&mut self) -> Seams<'_> {
        Seams {
            files: &mut self.files,
            sysctl: &mut self.sysctl,
            runner: &mut self.runner,
            netif: &mut self.netif,
            nft: &mut self.nft,
            watchdog: &mut self.watchdog,
        }
    }

    /// Every side effect so far.
    pub(crate) fn effects(&self) -> Vec<String> {
        self.journal.borrow().clone()
    }
}
