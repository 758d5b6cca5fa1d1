//! Process exit statuses. These are part of the interface: init scripts,
//! procd and image builders branch on them, and README.md documents them.

use std::fmt;

/// What a subcommand ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// 0: everything asked for was done (or, for `check`, the profile is valid).
    Ok,
    /// 1: a runtime failure: a tool, the kernel or a device refused, and the
    /// step could not be completed. The safe fallbacks (closed WAN) are in place.
    Failure,
    /// 2: bad usage or a bad profile. Nothing was applied.
    Usage,
    /// 3: applied partially: some knobs failed (each was reported with its
    /// interface and key), the rest of the boot carried on.
    Partial,
}

impl Status {
    /// The numeric exit status.
    pub fn code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Failure => 1,
            Status::Usage => 2,
            Status::Partial => 3,
        }
    }

    /// Combine the outcome of two steps: the worse one wins.
    pub fn worst(self, other: Status) -> Status {
        fn rank(s: Status) -> u8 {
            match s {
                Status::Ok => 0,
                Status::Partial => 1,
                Status::Failure => 2,
                Status::Usage => 3,
            }
        }
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self {
            Status::Ok => "ok",
            Status::Failure => "failure",
            Status::Usage => "usage or profile error",
            Status::Partial => "partial",
        };
        write!(f, "{} ({})", self.code(), word)
    }
}

/// The exit status an error ends a command with: 1 when the step could
/// not be done, 3 when the boot carried on without one knob.
pub(crate) trait ExitStatus {
    fn exit_status(&self) -> Status;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_ones() {
        assert_eq!(Status::Ok.code(), 0);
        assert_eq!(Status::Failure.code(), 1);
        assert_eq!(Status::Usage.code(), 2);
        assert_eq!(Status::Partial.code(), 3);
    }

    #[test]
    fn worst_prefers_the_more_serious() {
        assert_eq!(Status::Ok.worst(Status::Partial), Status::Partial);
        assert_eq!(Status::Failure.worst(Status::Partial), Status::Failure);
        assert_eq!(Status::Partial.worst(Status::Ok), Status::Partial);
    }
}
