//! A recording in-memory [`Files`] for the journal's tests: replace,
//! rename and read as the real seam does them (rename moves the bytes
//! and the source is gone), and a read-only switch that fails every
//! write with EROFS, as a read-only /var/lib does. Tests only.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::seam::{Files, Lock, Replaced};

#[derive(Default)]
pub(crate) struct MemFiles {
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    /// Every write, rename and stat, in order ("replace PATH", "rename A B", "stat PATH").
    pub ops: Vec<String>,
    pub read_only: bool,
}

impl MemFiles {
    fn refuse(&self) -> io::Result<()> {
        if self.read_only {
            return Err(io::Error::from_raw_os_error(nix::libc::EROFS));
        }
        Ok(())
    }
}

impl Files for MemFiles {
    fn read(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        self.files.get(path).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn exists(&mut self, path: &Path) -> bool {
        self.ops.push(format!("stat {}", path.display()));
        self.files.contains_key(path)
    }
    fn is_dir(&mut self, path: &Path) -> bool {
        // A file is a key; a directory holds one.
        self.files.keys().any(|f| f.starts_with(path) && f.as_path() != path)
    }
    fn replace(&mut self, path: &Path, data: &[u8]) -> io::Result<Replaced> {
        self.refuse()?;
        self.ops.push(format!("replace {}", path.display()));
        Ok(match self.files.insert(path.to_path_buf(), data.to_vec()) {
            None => Replaced::Created,
            Some(old) if old == data => Replaced::Unchanged,
            Some(_) => Replaced::BackedUp,
        })
    }
    fn write_kernel(&mut self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.replace(path, data).map(drop)
    }
    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        self.refuse()?;
        self.ops.push(format!("rename {} {}", from.display(), to.display()));
        let data = self.files.remove(from).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        self.files.insert(to.to_path_buf(), data);
        Ok(())
    }
    fn lock(&mut self, _: &Path, _: bool) -> io::Result<Lock> {
        Ok(Lock::none())
    }
}
