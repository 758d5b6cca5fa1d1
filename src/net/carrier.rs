//! Waiting for carrier after a link comes up (`carrier_timeout`): poll
//! IFF_RUNNING through SIOCGIFFLAGS. The wait is cut into steps of at
//! most [`STEP_SECS`] so the apply loop pets the watchdog between them;
//! no single step blocks longer than that.

use std::fmt;
use std::time::{Duration, Instant};

use crate::config::net::Interface;
use crate::config::types::IfName;
use crate::seam::netif::LinkState;
use crate::seam::Seams;

use super::Error;

/// The longest single wait, in seconds.
pub(crate) const STEP_SECS: u32 = 1;
/// How often the flags are polled.
const POLL: Duration = Duration::from_millis(50);

/// Wait up to `secs` for carrier; the last part of a wait reports failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
    pub name: IfName,
    pub secs: u32,
    /// 1-based part of the whole wait, and how many parts there are.
    pub part: u32,
    pub parts: u32,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.part == 1 {
            write!(f, "{}: wait for carrier (up to {} s)", self.name, self.parts * STEP_SECS)
        } else {
            write!(f, "{}: still waiting for carrier ({}/{})", self.name, self.part, self.parts)
        }
    }
}

/// A wait when the link is wanted up with a timeout and has no carrier
/// now (or is about to be bounced).
pub(crate) fn plan(iface: &Interface, now: &LinkState, bounced: bool) -> Vec<Action> {
    let Some(total) = iface.carrier_timeout.filter(|t| *t > 0) else { return Vec::new() };
    if !iface.up || (now.up && now.carrier && !bounced) {
        return Vec::new();
    }
    let parts = total.div_ceil(STEP_SECS);
    (1..=parts)
        .map(|part| Action { name: iface.name.get_ref().clone(), secs: STEP_SECS.min(total - (part - 1) * STEP_SECS), part, parts })
        .collect()
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    let deadline = Instant::now() + Duration::from_secs(a.secs.into());
    loop {
        match seams.netif.link(&a.name) {
            Ok(Some(s)) if s.carrier => return Ok(()),
            Ok(Some(_)) => {}
            Ok(None) => return Err(Error::Vanished { name: a.name.clone() }),
            Err(source) => return Err(Error::Carrier { name: a.name.clone(), source }),
        }
        if Instant::now() >= deadline {
            return if a.part == a.parts { Err(Error::NoCarrier { name: a.name.clone(), secs: a.parts * STEP_SECS }) } else { Ok(()) };
        }
        std::thread::sleep(POLL);
    }
}
