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
    /// Modification times (heartbeat files).
    pub mtimes: BTreeMap<PathBuf, std::time::SystemTime>,
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
    fn modified(&mut self, path: &Path) -> io::Result<std::time::SystemTime> {
        self.mtimes.get(path).copied().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
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

/// How a fake watchdog driver behaves (default: like softdog).
#[derive(Clone, Debug)]
pub struct FakeDriver {
    pub support: super::watchdog::Support,
    pub bootstatus: u32,
    /// SETTIMEOUT outside min..=max gives EINVAL.
    pub min_timeout: u32,
    pub max_timeout: u32,
    /// The timeout in use.
    pub timeout: u32,
    /// Every ioctl fails with this errno (ENOSYS under qemu-user, ENOTTY
    /// for a file that is no watchdog).
    pub ioctl_errno: Option<i32>,
    /// write() fails with this errno.
    pub write_errno: Option<i32>,
    /// Stopped by DISABLECARD or by a close after 'V'.
    pub stopped: bool,
    /// A 'V' was the last byte written.
    pub expect_close: bool,
    /// Pets so far (KEEPALIVE or write).
    pub pets: u32,
}

impl Default for FakeDriver {
    fn default() -> Self {
        let mut identity = [0u8; 32];
        identity[..17].copy_from_slice(b"Software Watchdog");
        FakeDriver {
            support: super::watchdog::Support { options: 0x8180, firmware_version: 0, identity },
            bootstatus: 0,
            min_timeout: 1,
            max_timeout: 65535,
            timeout: 60,
            ioctl_errno: None,
            write_errno: None,
            stopped: false,
            expect_close: false,
            pets: 0,
        }
    }
}

pub type SharedDriver = Rc<RefCell<FakeDriver>>;

#[derive(Default)]
pub struct FakeWatchdogPort {
    /// Devices that exist.
    pub devices: BTreeSet<PathBuf>,
    pub journal: Journal,
    /// The driver behind every device.
    pub driver: SharedDriver,
    /// Opening gives EBUSY; `holder` names this process.
    pub busy: Option<(u32, String)>,
    /// Descriptors that `adopt` accepts.
    pub inherited: BTreeSet<i32>,
}

pub struct FakeWatchdog {
    pub path: PathBuf,
    pub journal: Journal,
    pub driver: SharedDriver,
}

impl FakeWatchdog {
    fn ioctl(&self) -> io::Result<std::cell::RefMut<'_, FakeDriver>> {
        let d = self.driver.borrow_mut();
        match d.ioctl_errno {
            Some(e) => Err(io::Error::from_raw_os_error(e)),
            None => Ok(d),
        }
    }
    fn log(&self, what: String) {
        self.journal.borrow_mut().push(what);
    }
}

impl WatchdogDevice for FakeWatchdog {
    fn get_support(&mut self) -> io::Result<super::watchdog::Support> {
        Ok(self.ioctl()?.support)
    }
    fn get_bootstatus(&mut self) -> io::Result<u32> {
        Ok(self.ioctl()?.bootstatus)
    }
    fn set_timeout(&mut self, secs: u32) -> io::Result<u32> {
        let mut d = self.ioctl()?;
        if secs < d.min_timeout || secs > d.max_timeout {
            drop(d);
            self.log(format!("settimeout {} {secs} EINVAL", self.path.display()));
            return Err(io::Error::from_raw_os_error(nix::libc::EINVAL));
        }
        d.timeout = secs;
        d.pets += 1;
        drop(d);
        self.log(format!("settimeout {} {secs}", self.path.display()));
        Ok(secs)
    }
    fn get_timeout(&mut self) -> io::Result<u32> {
        Ok(self.ioctl()?.timeout)
    }
    fn set_options(&mut self, options: u32) -> io::Result<()> {
        let mut d = self.ioctl()?;
        if options & 1 != 0 {
            d.stopped = true;
        }
        if options & 2 != 0 {
            d.stopped = false;
        }
        drop(d);
        self.log(format!("setoptions {} {options}", self.path.display()));
        Ok(())
    }
    fn keepalive(&mut self) -> io::Result<()> {
        self.ioctl()?.pets += 1;
        self.log(format!("pet {}", self.path.display()));
        Ok(())
    }
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut d = self.driver.borrow_mut();
        if let Some(e) = d.write_errno {
            return Err(io::Error::from_raw_os_error(e));
        }
        d.pets += 1;
        d.expect_close = bytes.last() == Some(&b'V');
        drop(d);
        self.log(format!("write {} {:?}", self.path.display(), String::from_utf8_lossy(bytes)));
        Ok(())
    }
    fn exec_handover(&mut self, argv: &[&str]) -> io::Error {
        self.log(format!("exec WDTFD=3 {}", argv.join(" ")));
        io::Error::from_raw_os_error(nix::libc::ENOENT)
    }
}

impl Drop for FakeWatchdog {
    fn drop(&mut self) {
        let mut d = self.driver.borrow_mut();
        if d.expect_close {
            d.stopped = true;
        }
        drop(d);
        self.log(format!("close {}", self.path.display()));
    }
}

impl WatchdogPort for FakeWatchdogPort {
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn WatchdogDevice>> {
        if !self.devices.contains(path) {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        if self.busy.is_some() {
            return Err(io::Error::from_raw_os_error(nix::libc::EBUSY));
        }
        self.journal.borrow_mut().push(format!("open {}", path.display()));
        self.driver.borrow_mut().stopped = false;
        Ok(Box::new(FakeWatchdog { path: path.to_path_buf(), journal: self.journal.clone(), driver: self.driver.clone() }))
    }
    fn adopt(&mut self, fd: i32) -> io::Result<Box<dyn WatchdogDevice>> {
        if !self.inherited.contains(&fd) {
            return Err(io::Error::from_raw_os_error(nix::libc::EBADF));
        }
        self.journal.borrow_mut().push(format!("adopt {fd}"));
        Ok(Box::new(FakeWatchdog {
            path: PathBuf::from(format!("fd{fd}")),
            journal: self.journal.clone(),
            driver: self.driver.clone(),
        }))
    }
    fn holder(&mut self, _path: &Path) -> Option<(u32, String)> {
        self.busy.clone()
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
