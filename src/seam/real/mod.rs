//! The real Linux implementations of the seams.

pub(crate) mod ethtool;
pub(crate) mod files;
pub(crate) mod netif;
pub(crate) mod netlink;
pub(crate) mod nfnl;
pub(crate) mod runner;
pub(crate) mod spawn;
pub(crate) mod sysctl;
pub(crate) mod watchdog;

use std::path::{Path, PathBuf};

/// The receive buffer of both netlink sockets (rtnetlink's, nf_tables'):
/// 16 KiB, what the kernel expects a dump's reader to offer
/// (`netlink_dump`: "as large as max(min_dump_alloc, 16KiB)"). The kernel
/// sizes each datagram of a dump to the largest buffer the reader has
/// offered, up to 32 KiB: a larger buffer would have every dump's
/// datagrams allocated at 32 KiB, more kernel work a dump on a slow board
/// (scripts/bench-boot), and, being over 16 KiB, a mapping of its own
/// (`heap.rs`). A datagram cut short by a
/// smaller buffer would read as a malformed reply, never as a success.
/// It is reserved, never zeroed: only the pages a reply is written to
/// are touched (a page a process touches first is a page fault, slow on
/// a slow board).
pub(crate) const RECV_BUF: usize = 16 * 1024;

/// Where the board's file system is: `/`, or the `--root` directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Root(Option<PathBuf>);

impl Root {
    pub fn new(dir: Option<PathBuf>) -> Root {
        Root(dir)
    }

    /// Whether a `--root` is in effect.
    pub fn is_relocated(&self) -> bool {
        self.0.is_some()
    }

    /// The real path of a board path: `/etc/x` is `DIR/etc/x` under `--root DIR`.
    pub fn at(&self, path: &Path) -> PathBuf {
        match &self.0 {
            None => path.to_path_buf(),
            Some(dir) => dir.join(path.strip_prefix("/").unwrap_or(path)),
        }
    }

    /// Like [`Root::at`], borrowing the path (no allocation) without `--root`.
    pub fn resolve<'p>(&self, path: &'p Path) -> std::borrow::Cow<'p, Path> {
        match &self.0 {
            None => std::borrow::Cow::Borrowed(path),
            Some(_) => std::borrow::Cow::Owned(self.at(path)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_relocates_absolute_paths() {
        let r = Root::new(Some(PathBuf::from("/tmp/img")));
        assert_eq!(r.at(Path::new("/etc/exports")), PathBuf::from("/tmp/img/etc/exports"));
        assert_eq!(Root::default().at(Path::new("/etc/exports")), PathBuf::from("/etc/exports"));
    }
}
