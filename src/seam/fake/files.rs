//! The fake [`Files`]: files in memory, with `flock`'s answers. Replace
//! keeps the previous copy as `PATH.bak` and rename moves the bytes (the
//! source is gone), as the real seam does; `fail_writes` refuses every
//! write, rename included (ReadOnlyFilesystem as the kernel's EROFS, a
//! read-only /var/lib).

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use super::Journal;
use crate::seam::{Files, Lock, Replaced};

#[derive(Default)]
pub(crate) struct FakeFiles {
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    pub journal: Journal,
    /// Make writes and renames fail with this error (e.g. StorageFull for
    /// ENOSPC, ReadOnlyFilesystem for EROFS).
    pub fail_writes: Option<io::ErrorKind>,
    /// Every `exists` asked (a stat on a board), in order.
    pub stats: Vec<PathBuf>,
    /// Modification times (heartbeat files).
    /// Modification times since the epoch.
    pub mtimes: BTreeMap<PathBuf, std::time::Duration>,
    /// Behave like files under `--root`.
    pub relocated: bool,
    /// Files that exist but cannot be read (PermissionDenied), as
    /// /proc/net/ip_tables_names (mode 0440) for a user who is not root.
    pub unreadable: BTreeSet<PathBuf>,
    /// Locks another process holds. Like `flock`, a lock held elsewhere is
    /// `WouldBlock` without waiting; waiting for it takes it once the other
    /// process lets go, which the fake models as at once (it cannot block).
    /// Not modelled: two locks taken by the code under test itself, which
    /// `flock` would let deadlock.
    pub locked_elsewhere: BTreeSet<PathBuf>,
    /// Locks taken and released, apart from the journal (a lock changes
    /// nothing on the board), each with the journal's length at that
    /// moment: `lock PATH at N` (`lock PATH after waiting, at N`),
    /// `unlock PATH at N`.
    pub locks: Journal,
    /// Make `lock` fail with this error (e.g. a read-only /run).
    pub fail_lock: Option<io::ErrorKind>,
}

/// A fake lock: logs its release.
struct FakeLock {
    path: PathBuf,
    journal: Journal,
    locks: Journal,
}

impl Drop for FakeLock {
    fn drop(&mut self) {
        let at = self.journal.borrow().len();
        self.locks.borrow_mut().push(format!("unlock {} at {at}", self.path.display()));
    }
}

impl FakeFiles {
    fn refuse(&self) -> io::Result<()> {
        match self.fail_writes {
            Some(io::ErrorKind::ReadOnlyFilesystem) => Err(io::Error::from_raw_os_error(nix::libc::EROFS)),
            Some(kind) => Err(io::Error::from(kind)),
            None => Ok(()),
        }
    }
}

impl Files for FakeFiles {
    fn relocated(&self) -> bool {
        self.relocated
    }
    fn read(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        if self.unreadable.contains(path) {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        self.files.get(path).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn exists(&mut self, path: &Path) -> bool {
        self.stats.push(path.to_path_buf());
        // A directory is there when something is in it, as on a board.
        self.files.contains_key(path) || self.unreadable.contains(path) || self.files.keys().any(|f| f.starts_with(path))
    }
    fn is_dir(&mut self, path: &Path) -> bool {
        // A file is a key; a directory holds one.
        self.files.keys().any(|f| f.starts_with(path) && f.as_path() != path)
    }
    fn replace(&mut self, path: &Path, data: &[u8]) -> io::Result<Replaced> {
        self.refuse()?;
        let old = self.files.insert(path.to_path_buf(), data.to_vec());
        let how = match old {
            Some(o) if o == data => return Ok(Replaced::Unchanged),
            Some(o) => {
                let mut bak = path.as_os_str().to_os_string();
                bak.push(".bak");
                self.files.insert(PathBuf::from(bak), o);
                Replaced::BackedUp
            }
            None => Replaced::Created,
        };
        self.journal.borrow_mut().push(format!("replace {}", path.display()));
        Ok(how)
    }
    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        self.refuse()?;
        let data = self.files.remove(from).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        self.files.insert(to.to_path_buf(), data);
        self.journal.borrow_mut().push(format!("rename {} {}", from.display(), to.display()));
        Ok(())
    }
    fn write_kernel(&mut self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.refuse()?;
        // As the kernel's: a control file is never created by a write.
        if !self.files.contains_key(path) {
            return Err(io::Error::from_raw_os_error(nix::libc::ENOENT));
        }
        self.files.insert(path.to_path_buf(), data.to_vec());
        self.journal.borrow_mut().push(format!("write {} {}", path.display(), String::from_utf8_lossy(data).trim_end()));
        Ok(())
    }
    fn modified(&mut self, path: &Path) -> io::Result<std::time::Duration> {
        self.mtimes.get(path).copied().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn lock(&mut self, path: &Path, wait: bool) -> io::Result<Lock> {
        if let Some(kind) = self.fail_lock {
            return Err(io::Error::from(kind));
        }
        let held = self.locked_elsewhere.contains(path);
        if held && !wait {
            return Err(io::Error::from(io::ErrorKind::WouldBlock));
        }
        self.locked_elsewhere.remove(path);
        let after = if held { " after waiting," } else { "" };
        let at = self.journal.borrow().len();
        self.locks.borrow_mut().push(format!("lock {}{after} at {at}", path.display()));
        let (journal, locks) = (self.journal.clone(), self.locks.clone());
        Ok(Lock::holding(Box::new(FakeLock { path: path.to_path_buf(), journal, locks })))
    }
}
