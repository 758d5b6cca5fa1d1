//! sysctls through /proc/sys (relocated under `--root`).

use std::io;
use std::path::Path;

use super::files::RealFiles;
use crate::paths;
use crate::seam::{Files, Sysctl};

/// Real /proc/sys.
pub struct RealSysctl {
    files: RealFiles,
}

impl RealSysctl {
    pub fn new(root: super::Root) -> RealSysctl {
        RealSysctl { files: RealFiles::new(root) }
    }
}

/// `/proc/sys/net/core/rmem_max` for `net.core.rmem_max`. As in
/// sysctl(8), a `/` in a dotted key stands for a dot in the path (an
/// interface name such as eth0.2): the two are swapped.
pub(crate) fn proc_path(key: &str) -> String {
    let rel: String = key
        .chars()
        .map(|c| match c {
            '.' => '/',
            '/' => '.',
            c => c,
        })
        .collect();
    format!("{}/{}", paths::PROC_SYS, rel)
}

impl Sysctl for RealSysctl {
    fn get(&mut self, key: &str) -> io::Result<String> {
        // The running kernel's release is uname(2)'s: one system call where
        // the file takes an open, two reads and a close (system calls are
        // slow on a slow board: scripts/bench-boot). Under `--root` the
        // file there is read, as for
        // every key: the release of the board image, not of this kernel.
        if key == "kernel.osrelease" && !self.files.relocated() {
            return crate::sys::kernel_release().ok_or_else(io::Error::last_os_error);
        }
        let bytes = self.files.read(Path::new(&proc_path(key)))?;
        Ok(String::from_utf8_lossy(&bytes).trim().to_string())
    }

    fn set(&mut self, key: &str, value: &str) -> io::Result<()> {
        let mut line = String::with_capacity(value.len() + 1);
        line.push_str(value);
        line.push('\n');
        self.files.write_kernel(Path::new(&proc_path(key)), line.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_release_is_the_files_where_not_relocated() {
        use crate::seam::Sysctl;
        let mut s = super::RealSysctl::new(super::super::Root::new(None));
        let file = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        assert_eq!(s.get("kernel.osrelease").unwrap(), file.trim());
    }

    #[test]
    fn dotted_names_map_to_proc_sys() {
        assert_eq!(super::proc_path("net.ipv4.conf.eth0.rp_filter"), "/proc/sys/net/ipv4/conf/eth0/rp_filter");
        assert_eq!(super::proc_path("net.ipv4.conf.eth0/2.rp_filter"), "/proc/sys/net/ipv4/conf/eth0.2/rp_filter");
    }
}
