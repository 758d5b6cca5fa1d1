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
    fn dotted_names_map_to_proc_sys() {
        assert_eq!(super::proc_path("net.ipv4.conf.eth0.rp_filter"), "/proc/sys/net/ipv4/conf/eth0/rp_filter");
        assert_eq!(super::proc_path("net.ipv4.conf.eth0/2.rp_filter"), "/proc/sys/net/ipv4/conf/eth0.2/rp_filter");
    }
}
