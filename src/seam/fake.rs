//! Recording fakes for unit tests. Each keeps its state in memory and
//! appends every side effect to a shared journal, so a test can assert on
//! exactly what would have been done, or that nothing was.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::netif::{LinkState, Netif};
use super::watchdog::{WatchdogDevice, WatchdogPort};
use super::{Cmd, Files, Output, Replaced, Runner, Seams, Sysctl};
use crate::config::types::IfName;

/// The journal of side effects, shared by all fakes of one board.
pub type Journal = Rc<RefCell<Vec<String>>>;

#[derive(Default)]
pub struct FakeFiles {
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    pub journal: Journal,
    /// Make writes fail with this error (e.g. StorageFull for ENOSPC).
    pub fail_writes: Option<io::ErrorKind>,
}

impl Files for FakeFiles {
    fn read(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        self.files.get(path).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn exists(&mut self, path: &Path) -> bool {
        self.files.contains_key(path)
    }
    fn replace(&mut self, path: &Path, data: &[u8]) -> io::Result<Replaced> {
        if let Some(kind) = self.fail_writes {
            return Err(io::Error::from(kind));
        }
        let old = self.files.insert(path.to_path_buf(), data.to_vec());
        let how = match old {
            Some(o) if o == data => return Ok(Replaced::Unchanged),
            Some(o) => {
                let mut bak = path.as_os_str().to_os_string();
                bak.push(".bak");
                self.files.insert(PathBuf::from(bak), o);
                Replaced::Replaced
            }
            None => Replaced::Created,
        };
        self.journal.borrow_mut().push(format!("replace {}", path.display()));
        Ok(how)
    }
    fn write_kernel(&mut self, path: &Path, data: &[u8]) -> io::Result<()> {
        if let Some(kind) = self.fail_writes {
            return Err(io::Error::from(kind));
        }
        self.files.insert(path.to_path_buf(), data.to_vec());
        self.journal
            .borrow_mut()
            .push(format!("write {} {}", path.display(), String::from_utf8_lossy(data).trim_end()));
        Ok(())
    }
}

#[derive(Default)]
pub struct FakeSysctl {
    pub values: BTreeMap<String, String>,
    pub journal: Journal,
}

impl Sysctl for FakeSysctl {
    fn get(&mut self, key: &str) -> io::Result<String> {
        self.values.get(key).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn set(&mut self, key: &str, value: &str) -> io::Result<()> {
        if !self.values.contains_key(key) {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        self.values.insert(key.to_string(), value.to_string());
        self.journal.borrow_mut().push(format!("sysctl {key}={value}"));
        Ok(())
    }
}

#[derive(Default)]
pub struct FakeRunner {
    /// Programs that exist on the fake PATH.
    pub programs: BTreeSet<String>,
    /// Answers, in order; success with no output once they run out.
    pub answers: VecDeque<Output>,
    pub journal: Journal,
    /// Standard input of each run, in order.
    pub stdins: Vec<Vec<u8>>,
}

impl Runner for FakeRunner {
    fn run(&mut self, cmd: &Cmd<'_>) -> io::Result<Output> {
        if !self.programs.contains(cmd.program) {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{}: not found", cmd.program)));
        }
        self.journal.borrow_mut().push(format!("run {}", cmd.display()));
        self.stdins.push(cmd.stdin.unwrap_or_default().to_vec());
        Ok(self.answers.pop_front().unwrap_or(Output { code: Some(0), ..Output::default() }))
    }
    fn which(&mut self, program: &str) -> Option<PathBuf> {
        self.programs.contains(program).then(|| PathBuf::from("/usr/sbin").join(program))
    }
}

#[derive(Default)]
pub struct FakeNetif {
    pub links: BTreeMap<String, LinkState>,
    pub journal: Journal,
}

impl Netif for FakeNetif {
    fn link(&mut self, name: &IfName) -> io::Result<Option<LinkState>> {
        Ok(self.links.get(name.as_str()).cloned())
    }
    fn set_up(&mut self, name: &IfName, up: bool) -> io::Result<()> {
        let link = self.links.get_mut(name.as_str()).ok_or_else(|| io::Error::from_raw_os_error(19))?;
        link.up = up;
        self.journal.borrow_mut().push(format!("link {name} {}", if up { "up" } else { "down" }));
        Ok(())
    }
}

#[derive(Default)]
pub struct FakeWatchdogPort {
    /// Devices that exist.
    pub devices: BTreeSet<PathBuf>,
    pub journal: Journal,
}

struct FakeWatchdog {
    path: PathBuf,
    journal: Journal,
}

impl WatchdogDevice for FakeWatchdog {
    fn keepalive(&mut self) -> io::Result<()> {
        self.journal.borrow_mut().push(format!("pet {}", self.path.display()));
        Ok(())
    }
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.journal
            .borrow_mut()
            .push(format!("write {} {:?}", self.path.display(), String::from_utf8_lossy(bytes)));
        Ok(())
    }
}

impl WatchdogPort for FakeWatchdogPort {
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn WatchdogDevice>> {
        if !self.devices.contains(path) {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        self.journal.borrow_mut().push(format!("open {}", path.display()));
        Ok(Box::new(FakeWatchdog { path: path.to_path_buf(), journal: self.journal.clone() }))
    }
}

/// A whole fake board: every seam sharing one journal.
#[derive(Default)]
pub struct FakeBoard {
    pub journal: Journal,
    pub files: FakeFiles,
    pub sysctl: FakeSysctl,
    pub runner: FakeRunner,
    pub netif: FakeNetif,
    pub watchdog: FakeWatchdogPort,
}

impl FakeBoard {
    pub fn new() -> FakeBoard {
        let journal: Journal = Rc::default();
        FakeBoard {
            files: FakeFiles { journal: journal.clone(), ..FakeFiles::default() },
            sysctl: FakeSysctl { journal: journal.clone(), ..FakeSysctl::default() },
            runner: FakeRunner { journal: journal.clone(), ..FakeRunner::default() },
            netif: FakeNetif { journal: journal.clone(), ..FakeNetif::default() },
            watchdog: FakeWatchdogPort { journal: journal.clone(), ..FakeWatchdogPort::default() },
            journal,
        }
    }

    pub fn seams(&mut self) -> Seams<'_> {
        Seams {
            files: &mut self.files,
            sysctl: &mut self.sysctl,
            runner: &mut self.runner,
            netif: &mut self.netif,
            watchdog: &mut self.watchdog,
        }
    }

    /// Every side effect so far.
    pub fn effects(&self) -> Vec<String> {
        self.journal.borrow().clone()
    }
}
