//! Interfaces through socket ioctls (netdevice(7)), which every kernel
//! since 2.x has: SIOCGIFFLAGS/SIOCSIFFLAGS, SIOCGIFMTU, SIOCGIFTXQLEN,
//! SIOCGIFHWADDR, SIOCGIFINDEX.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use nix::libc;
use nix::sys::socket::{socket, AddressFamily, SockFlag, SockType};

use crate::config::types::IfName;
use crate::seam::netif::{LinkState, Netif};

/// The kernel's interfaces, through one datagram socket.
/// The socket is opened on first use, so commands that never touch an
/// interface (check, plan of a file-only profile) never need one.
#[derive(Default)]
pub struct RealNetif {
    sock: Option<OwnedFd>,
}

impl RealNetif {
    pub fn new() -> RealNetif {
        RealNetif::default()
    }

    fn sock(&mut self) -> io::Result<i32> {
        if self.sock.is_none() {
            self.sock = Some(socket(AddressFamily::Inet, SockType::Datagram, SockFlag::SOCK_CLOEXEC, None)?);
        }
        Ok(self.sock.as_ref().expect("opened").as_raw_fd())
    }

    fn ifreq(name: &IfName) -> libc::ifreq {
        // SAFETY: ifreq is plain old data; all zeros is a valid value.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, src) in req.ifr_name.iter_mut().zip(name.as_str().bytes()) {
            *dst = src as libc::c_char;
        }
        req
    }

    fn ioctl(&mut self, request: libc::c_ulong, req: &mut libc::ifreq) -> io::Result<()> {
        let fd = self.sock()?;
        // SAFETY: the request numbers used here all take a struct ifreq.
        let rc = unsafe { libc::ioctl(fd, request as _, req as *mut libc::ifreq) };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

impl Netif for RealNetif {
    fn link(&mut self, name: &IfName) -> io::Result<Option<LinkState>> {
        let mut req = Self::ifreq(name);
        match self.ioctl(libc::SIOCGIFFLAGS as _, &mut req) {
            Err(e) if e.raw_os_error() == Some(libc::ENODEV) => return Ok(None),
            other => other?,
        }
        // SAFETY: SIOCGIFFLAGS filled the flags member.
        let flags = unsafe { req.ifr_ifru.ifru_flags } as i32;
        let mut state = LinkState {
            up: flags & libc::IFF_UP != 0,
            carrier: flags & libc::IFF_RUNNING != 0,
            promisc: flags & libc::IFF_PROMISC != 0,
            ..LinkState::default()
        };
        let mut req = Self::ifreq(name);
        self.ioctl(libc::SIOCGIFMTU as _, &mut req)?;
        // SAFETY: SIOCGIFMTU filled the mtu member.
        state.mtu = unsafe { req.ifr_ifru.ifru_mtu } as u32;
        let mut req = Self::ifreq(name);
        self.ioctl(libc::SIOCGIFINDEX as _, &mut req)?;
        // SAFETY: SIOCGIFINDEX filled the ifindex member.
        state.index = unsafe { req.ifr_ifru.ifru_ifindex } as u32;
        let mut req = Self::ifreq(name);
        self.ioctl(libc::SIOCGIFHWADDR as _, &mut req)?;
        // SAFETY: SIOCGIFHWADDR filled the hwaddr member.
        let hw = unsafe { req.ifr_ifru.ifru_hwaddr };
        for (dst, src) in state.mac.iter_mut().zip(hw.sa_data.iter()) {
            *dst = *src as u8;
        }
        Ok(Some(state))
    }

    fn set_up(&mut self, name: &IfName, up: bool) -> io::Result<()> {
        let mut req = Self::ifreq(name);
        self.ioctl(libc::SIOCGIFFLAGS as _, &mut req)?;
        // SAFETY: flags member, filled above.
        let mut flags = unsafe { req.ifr_ifru.ifru_flags };
        if up {
            flags |= libc::IFF_UP as libc::c_short;
        } else {
            flags &= !(libc::IFF_UP as libc::c_short);
        }
        req.ifr_ifru.ifru_flags = flags;
        self.ioctl(libc::SIOCSIFFLAGS as _, &mut req)
    }
}
