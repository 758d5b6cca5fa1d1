//! Recording fakes for unit tests. Each keeps its state in memory and
//! appends every side effect to a shared journal, so a test can assert on
//! exactly what would have been done, or that nothing was.
//!
//! One file per seam, as under `real/`; this file only wires them and
//! re-exports each fake, so `seam::fake::FakeBoard` and the others keep
//! their paths.

mod board;
mod files;
mod netif;
mod nftables;
mod runner;
mod sysctl;
mod watchdog;

use std::cell::RefCell;
use std::rc::Rc;

// Every fake keeps its path `seam::fake::NAME`, whether a caller names
// it today or reaches it through a `FakeBoard` field.
pub(crate) use board::FakeBoard;
pub(crate) use files::FakeFiles;
#[allow(unused_imports)]
pub(crate) use netif::{FakeLink, FakeNetif, FakeNic};
pub(crate) use nftables::FakeNftables;
pub(crate) use runner::FakeRunner;
pub(crate) use sysctl::FakeSysctl;
#[allow(unused_imports)]
pub(crate) use watchdog::{FakeDriver, FakeWatchdog, FakeWatchdogPort, SharedDriver};

/// The journal of side effects, shared by all fakes of one board.
pub(crate) type Journal = Rc<RefCell<Vec<String>>>;
