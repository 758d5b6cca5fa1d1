//! sysctls under /proc/sys, in two scopes: [`global`] (the presets and
//! the profile's `[sysctl]`) and [`interface`] (`accept_ra` and each
//! `[interface.sysctl]` map, set before the link comes up).

pub(crate) mod global;
pub(crate) mod interface;
