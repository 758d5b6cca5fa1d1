//! The network interface seam: interface ioctls and rtnetlink.
//!
//! Narrow on purpose: the planner asks for the current state of a link and
//! the applier sends single changes. See `seam::real::netif` for the kernel
//! side and the fakes for tests.

use std::io;

use crate::config::types::IfName;

/// What the kernel says about a link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkState {
    pub index: u32,
    pub up: bool,
    pub carrier: bool,
    pub promisc: bool,
    pub mtu: u32,
    pub txqueuelen: u32,
    pub mac: [u8; 6],
}

/// Interface operations.
pub trait Netif {
    /// The link's state; `Ok(None)` when there is no such interface.
    fn link(&mut self, name: &IfName) -> io::Result<Option<LinkState>>;
    /// Set the administrative state.
    fn set_up(&mut self, name: &IfName, up: bool) -> io::Result<()>;
}
