//! Files on the board, relocated under `--root`.
//!
//! `replace` never leaves a half-written file: it writes `PATH.nasboot-tmp`,
//! fsyncs it, keeps the old file as `PATH.bak` (a hard link, so the old
//! inode is untouched), renames the new file over `PATH` and fsyncs the
//! directory. On any error before the rename, the old file is intact.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use super::Root;
use crate::seam::{Files, Lock, Replaced};

/// Real files.
pub struct RealFiles {
    root: Root,
}

impl RealFiles {
    pub fn new(root: Root) -> RealFiles {
        RealFiles { root }
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Read a whole file into `buf` in as few system calls as a slow board
/// allows: open, the reads, close. `fs::read` and `File::read_to_end` also
/// stat the file to size the buffer, and start a file that reports size 0
/// (every /proc and /sys file) with a 32-byte probe read; most of what
/// nasboot reads is such a file, and on a slow board each system call is
/// a measurable part of the observation (scripts/bench-boot). A new
/// buffer gets 1 KiB of room for the first read, enough
/// for the /proc and /sys values; a full buffer doubles.
///
/// A sysctl (/proc/sys) or sysfs attribute (/sys) gives its whole value to
/// the first read that has room for it (proc_sys_call_handler and
/// sysfs_kf_read format the value at once, up to a page), so a shorter
/// read there is the end: one read(2), not a second that returns 0. Any
/// other file is read until read(2) returns 0 (a seq_file in /proc/net
/// gives a page at a time).
pub(crate) fn read_into(path: &Path, buf: &mut Vec<u8>) -> io::Result<()> {
    use nix::libc;
    use std::os::fd::AsRawFd;
    buf.clear();
    // A caller's own buffer (the health check's, reused every pet) keeps
    // its size.
    if buf.capacity() < 64 {
        buf.reserve(1024);
    }
    let whole_at_once = path.starts_with("/proc/sys") || path.starts_with("/sys");
    let file = open_read(path)?;
    loop {
        if buf.len() == buf.capacity() {
            buf.reserve(buf.capacity());
        }
        let room = buf.capacity() - buf.len();
        // SAFETY: the spare capacity is `room` writable bytes; read(2)
        // writes at most that many, and only those it reports are kept.
        let n = unsafe { libc::read(file.as_raw_fd(), buf.as_mut_ptr().add(buf.len()).cast(), room) };
        match n {
            0 => return Ok(()),
            n if n > 0 => {
                // SAFETY: read(2) initialised these n bytes.
                unsafe { buf.set_len(buf.len() + n as usize) };
                if whole_at_once && (n as usize) < room {
                    return Ok(());
                }
            }
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// Open `path` for reading in one system call. musl's open(3) follows
/// every O_CLOEXEC open with fcntl(F_SETFD), for kernels before 2.6.23
/// that ignored the flag: a second system call for each of the 30 or so
/// files an observation reads. Here the flag goes to openat(2) alone. On
/// such a kernel the descriptor lacks close-on-exec until `read_into`
/// closes it a few reads later, and nasboot, on its one thread, starts no
/// process meanwhile.
fn open_read(path: &Path) -> io::Result<fs::File> {
    open_at(path, nix::libc::O_RDONLY, 0)
}

/// openat(2) of `path` with `flags` (and O_CLOEXEC, O_LARGEFILE), `mode`
/// for a file it creates, in one system call (`open_read` says why).
fn open_at(path: &Path, flags: nix::libc::c_int, mode: nix::libc::mode_t) -> io::Result<fs::File> {
    use nix::libc;
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let mut c = [0u8; 256];
    if bytes.len() >= c.len() || bytes.contains(&0) {
        // std's own checks and messages.
        return fs::OpenOptions::new().read(true).custom_flags(flags).mode(mode).open(path);
    }
    c[..bytes.len()].copy_from_slice(bytes);
    // SAFETY: `c` is NUL-terminated; openat(2) reads only the path.
    let fd = unsafe {
        libc::syscall(libc::SYS_openat, libc::AT_FDCWD, c.as_ptr(), flags | libc::O_CLOEXEC | libc::O_LARGEFILE, libc::c_uint::from(mode))
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    Ok(unsafe { fs::File::from_raw_fd(fd as libc::c_int) })
}

/// `read_into` a new buffer.
pub(crate) fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    read_into(path, &mut buf)?;
    Ok(buf)
}

/// Atomically replace `path` (a real path) with `data`.
pub(crate) fn replace_atomically(path: &Path, data: &[u8]) -> io::Result<Replaced> {
    let old = match fs::read(path) {
        Ok(old) => Some(old),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if old.as_deref() == Some(data) {
        return Ok(Replaced::Unchanged);
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = with_suffix(path, ".nasboot-tmp");
    let result = (|| {
        let mut f = fs::OpenOptions::new().write(true).create(true).truncate(true).open(&tmp)?;
        let mode = fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o644);
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        f.write_all(data)?;
        f.sync_all()?;
        if old.is_some() {
            let bak = with_suffix(path, ".bak");
            match fs::remove_file(&bak) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            if fs::hard_link(path, &bak).is_err() {
                fs::copy(path, &bak)?;
            }
        }
        fs::rename(&tmp, path)?;
        fs::File::open(dir)?.sync_all()
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(if old.is_some() { Replaced::BackedUp } else { Replaced::Created })
}

impl Files for RealFiles {
    fn read(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        read(&self.root.resolve(path))
    }

    fn read_into(&mut self, path: &Path, buf: &mut Vec<u8>) -> io::Result<()> {
        read_into(&self.root.resolve(path), buf)
    }

    fn exists(&mut self, path: &Path) -> bool {
        self.root.resolve(path).exists()
    }

    fn is_dir(&mut self, path: &Path) -> bool {
        self.root.resolve(path).is_dir()
    }

    fn replace(&mut self, path: &Path, data: &[u8]) -> io::Result<Replaced> {
        let real = self.root.at(path);
        if let Some(dir) = real.parent() {
            fs::create_dir_all(dir)?;
        }
        replace_atomically(&real, data)
    }

    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let to = self.root.at(to);
        fs::rename(self.root.at(from), &to)?;
        let dir = to.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fs::File::open(dir)?.sync_all()
    }

    fn write_kernel(&mut self, path: &Path, data: &[u8]) -> io::Result<()> {
        let mut f = fs::OpenOptions::new().write(true).open(self.root.at(path))?;
        f.write_all(data)
    }

    fn relocated(&self) -> bool {
        self.root.is_relocated()
    }

    fn modified(&mut self, path: &Path) -> io::Result<std::time::Duration> {
        crate::sys::time::modified(&self.root.resolve(path))
    }

    fn lock(&mut self, path: &Path, wait: bool) -> io::Result<Lock> {
        let real = self.root.at(path);
        // Close-on-exec: the tools nasboot runs never hold it. Its
        // directory is made only when it is missing (once a boot, on a
        // tmpfs /run): one openat(2) on every later run, where mkdir(2),
        // statx(2), open(2) and musl's fcntl(F_SETFD) were four.
        let open = || open_at(&real, nix::libc::O_RDWR | nix::libc::O_CREAT, 0o600);
        let mut f = match open() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(dir) = real.parent() {
                    fs::create_dir_all(dir)?;
                }
                open()?
            }
            other => other?,
        };
        // Unlocked explicitly when dropped (Flock's LOCK_UN): on a kernel
        // before 2.6.23, which ignores O_CLOEXEC, a tool started during the
        // apply (a DHCP client that lives on) shares the descriptor, and
        // must not keep the lock held.
        let how = if wait { FlockArg::LockExclusive } else { FlockArg::LockExclusiveNonblock };
        loop {
            match Flock::lock(f, how) {
                Ok(held) => return Ok(Lock::holding(Box::new(held))),
                Err((back, nix::errno::Errno::EINTR)) => f = back,
                // EWOULDBLOCK reads as io::ErrorKind::WouldBlock.
                Err((_, errno)) => return Err(errno.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("nasboot-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn read_gets_every_byte_of_empty_small_big_and_proc_files() {
        let d = scratch("read");
        for n in [0, 1, 1023, 1024, 1025, 70_000] {
            let p = d.join(format!("f{n}"));
            let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            fs::write(&p, &data).unwrap();
            assert_eq!(read(&p).unwrap(), data, "{n} bytes");
        }
        // A file that reports size 0 and is generated as it is read.
        let stat = read(Path::new("/proc/self/stat")).unwrap();
        assert!(stat.ends_with(b"\n") && stat.len() > 50, "{}", String::from_utf8_lossy(&stat));
        // A sysctl and a sysfs attribute, in one read each, whole.
        for p in ["/proc/sys/kernel/osrelease", "/proc/sys/net/ipv4/ip_local_port_range", "/sys/kernel/mm/transparent_hugepage/enabled"] {
            if let Ok(want) = fs::read(p) {
                assert_eq!(read(Path::new(p)).unwrap(), want, "{p}");
            }
        }
        // A seq_file of many pages (a page per read(2)) is read to its end.
        let maps = read(Path::new("/proc/self/smaps")).unwrap();
        assert!(maps.len() > 8192 && maps.ends_with(b"\n"), "{}", maps.len());
        let mut buf = b"old".to_vec();
        read_into(Path::new("/proc/self/comm"), &mut buf).unwrap();
        assert!(!buf.starts_with(b"old") && buf.ends_with(b"\n"));
        assert_eq!(read(&d.join("absent")).unwrap_err().kind(), io::ErrorKind::NotFound);
        // Close-on-exec, as std's opens are.
        let f = open_read(&d.join("f1")).unwrap();
        // SAFETY: F_GETFD on a descriptor this test owns.
        let flags = unsafe { nix::libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&f), nix::libc::F_GETFD) };
        assert_eq!(flags & nix::libc::FD_CLOEXEC, nix::libc::FD_CLOEXEC);
        // A path too long for the stack copy goes through std's open.
        let long = d.join("x".repeat(250));
        fs::write(&long, b"z").unwrap();
        assert!(long.as_os_str().len() > 256);
        assert_eq!(read(&long).unwrap(), b"z");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn creates_then_replaces_with_backup_then_skips_identical() {
        let d = scratch("replace");
        let p = d.join("exports");
        assert_eq!(replace_atomically(&p, b"one\n").unwrap(), Replaced::Created);
        assert_eq!(replace_atomically(&p, b"two\n").unwrap(), Replaced::BackedUp);
        assert_eq!(fs::read(&p).unwrap(), b"two\n");
        assert_eq!(fs::read(d.join("exports.bak")).unwrap(), b"one\n");
        let before = fs::metadata(&p).unwrap().modified().unwrap();
        assert_eq!(replace_atomically(&p, b"two\n").unwrap(), Replaced::Unchanged);
        assert_eq!(fs::metadata(&p).unwrap().modified().unwrap(), before);
        assert!(!d.join("exports.nasboot-tmp").exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn read_into_replaces_the_buffer_and_keeps_its_capacity() {
        let d = scratch("read-into");
        fs::write(d.join("a"), b"long first content\n").unwrap();
        fs::write(d.join("b"), b"2\n").unwrap();
        let mut f = RealFiles::new(Root::new(Some(d.clone())));
        let mut buf = Vec::with_capacity(256);
        let cap = buf.capacity();
        f.read_into(Path::new("/a"), &mut buf).unwrap();
        assert_eq!(buf, b"long first content\n");
        f.read_into(Path::new("/b"), &mut buf).unwrap();
        assert_eq!(buf, b"2\n");
        assert_eq!(buf.capacity(), cap);
        assert_eq!(f.read_into(Path::new("/none"), &mut buf).unwrap_err().kind(), io::ErrorKind::NotFound);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn failure_leaves_the_old_file_intact() {
        let d = scratch("fail");
        let p = d.join("exports");
        fs::write(&p, b"keep me\n").unwrap();
        // A directory where the temporary file would go makes the write fail.
        fs::create_dir(d.join("exports.nasboot-tmp")).unwrap();
        let e = replace_atomically(&p, b"new\n").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory, "{e}");
        assert_eq!(fs::read(&p).unwrap(), b"keep me\n");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn root_relocates() {
        let d = scratch("root");
        let mut f = RealFiles::new(Root::new(Some(d.clone())));
        f.replace(Path::new("/etc/exports"), b"x\n").unwrap();
        assert_eq!(fs::read(d.join("etc/exports")).unwrap(), b"x\n");
        assert_eq!(f.read(Path::new("/etc/exports")).unwrap(), b"x\n");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn lock_excludes_another_holder_until_dropped() {
        // flock(2) locks belong to an open file description, so two opens in
        // one process exclude each other as two processes would.
        let d = scratch("lock");
        let mut f = RealFiles::new(Root::new(Some(d.clone())));
        let path = Path::new("/run/nasboot/apply.lock");
        let held = f.lock(path, false).expect("a free lock");
        assert!(d.join("run/nasboot/apply.lock").exists(), "created, with its directory");
        let e = f.lock(path, false).err().expect("a held lock");
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock, "{e}");
        drop(held);
        let again = f.lock(path, true).expect("free again once dropped");
        drop(again);
        fs::remove_dir_all(&d).unwrap();
    }
}
