//! The confirm journal: `apply --confirm SECS`, `confirm`, `rollback`.
//!
//! A candidate profile is applied only after this journal, on persistent
//! storage, says what to go back to: a byte copy of the last good profile,
//! the candidate's digest, the deadline and the state. It is written
//! through [`Files::replace`] (a temporary file, fsync, rename, fsync of
//! the directory) before the first change, so whatever kills nasboot
//! afterwards (`kill -9`, the OOM killer, the watchdog's reset, a power
//! cut), the next start of nasboot finds it and goes back.
//!
//! # Two files, one stat
//!
//! While a candidate is pending the journal is [`PENDING`]
//! (`/var/lib/nasboot/confirm.pending`); once it is settled (confirmed or
//! rolled back) the same text, with its new state, is written there and
//! renamed to [`SETTLED`] (`/var/lib/nasboot/confirm`). Every start of
//! `apply` and `run` pays one `stat` of [`PENDING`] ([`Files::exists`]),
//! and reads nothing more when it is absent. A crash between the write of
//! the settled state and the rename leaves [`PENDING`] holding a settled
//! state: the next start finishes the rename.
//!
//! # The deadline, in a clock that survives a reboot
//!
//! CLOCK_REALTIME is not used for the decision: on a board without an RTC
//! it starts at 1970 (or at the build's date) and jumps at the first NTP
//! sync, either way past any deadline or years before it. The deadline is
//! CLOCK_BOOTTIME in milliseconds (monotonic, counts suspend, never set
//! by anyone) together with this boot's id
//! (/proc/sys/kernel/random/boot_id). CLOCK_BOOTTIME restarts at each
//! boot, so the pair is compared only within one boot: a journal from
//! another boot is past its deadline, whatever the clocks say. A board
//! that rebooted inside the window (the watchdog, a power cut, a panic)
//! therefore never boots the unconfirmed candidate. The wall-clock time
//! of the deadline is kept too, for people only. A kernel without
//! CLOCK_BOOTTIME (before 2.6.39) gives CLOCK_MONOTONIC, which differs
//! only in not counting suspend (boards do not suspend).
//!
//! # Format
//!
//! ```text
//! nasboot confirm journal 1
//! state pending
//! profile /etc/nasboot.toml
//! candidate fnv1a64:0123456789abcdef
//! good fnv1a64:fedcba9876543210
//! boot 5d3c0a8e-...
//! deadline 123456
//! wall 1764441200
//! note -
//! observed 2
//! link eth1 up mtu 1500
//! addr eth1 192.168.10.1/24
//! bytes 123
//! <the last good profile's 123 bytes>
//! end
//! ```
//!
//! `observed` is the board as it was before the candidate (see
//! [`snapshot`]): after a revert the board is observed again and compared
//! with it, line by line. A file that does not parse whole (truncated,
//! hand-edited, another format) is an error that names the file and the
//! line; nothing is applied or reverted on its word.

pub(crate) mod snapshot;
#[cfg(test)]
mod tests;

use std::fmt::{self, Write as _};
use std::io;
use std::path::{Path, PathBuf};

use crate::seam::Files;

/// The journal while a candidate is pending.
pub(crate) const PENDING: &str = crate::paths::CONFIRM_PENDING;
/// The journal once settled (confirmed or rolled back).
pub(crate) const SETTLED: &str = crate::paths::CONFIRM_JOURNAL;

const MAGIC: &str = "nasboot confirm journal 1";

/// The head's keys after the magic line, in order, and the error when one
/// is not there.
const HEAD: [(&str, &str); 9] = [
    ("state", "`state` expected"),
    ("profile", "`profile` expected"),
    ("candidate", "`candidate` expected"),
    ("good", "`good` expected"),
    ("boot", "`boot` expected"),
    ("deadline", "`deadline` expected"),
    ("wall", "`wall` expected"),
    ("note", "`note` expected"),
    ("observed", "`observed` expected"),
];

/// Where a journal is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// The candidate is in force, not confirmed; reverted at the deadline.
    Pending,
    /// `nasboot confirm` kept it: it is now the last good profile.
    Confirmed,
    /// It was reverted (deadline, `rollback`, another boot).
    RolledBack,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Confirmed => "confirmed",
            State::RolledBack => "rolled-back",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile's identity: FNV-1a 64 of its bytes. Not a defence against an
/// attacker (whoever can write the profile owns the board): it tells the
/// candidate from the last good profile and from a later edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Digest(pub u64);

impl Digest {
    pub(crate) fn of(bytes: &[u8]) -> Digest {
        Digest(crate::digest::fnv(crate::digest::FNV_START, bytes))
    }

    fn parse(s: &str) -> Option<Digest> {
        u64::from_str_radix(s.strip_prefix("fnv1a64:")?, 16).ok().map(Digest)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fnv1a64:{:016x}", self.0)
    }
}

/// A point in time as the deadline counts it: this boot, and
/// CLOCK_BOOTTIME in milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Now {
    pub boot: String,
    pub ms: u64,
    /// CLOCK_REALTIME in seconds, for people (0: unknown).
    pub wall: u64,
}

/// The journal's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Journal {
    pub state: State,
    /// The profile file it is for (as the command line names it).
    pub profile: PathBuf,
    pub candidate: Digest,
    /// The last good profile, byte for byte.
    pub good: Vec<u8>,
    pub boot: String,
    /// CLOCK_BOOTTIME, ms, in `boot`.
    pub deadline_ms: u64,
    /// The deadline in CLOCK_REALTIME seconds, for people only.
    pub deadline_wall: u64,
    /// What the last transition found (a revert's check); one line.
    pub note: String,
    /// The board before the candidate (`snapshot`).
    pub observed: Vec<String>,
}

/// Why a transition is refused. Pure: no file named (the caller's
/// [`Error`] does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// `begin` while another candidate is pending.
    AlreadyPending,
    /// `confirm` or `reject` with nothing pending.
    NothingPending,
}

impl Journal {
    /// Transition: none (or settled) -> pending. `good` is the profile in
    /// force, `candidate` the one about to be applied.
    pub(crate) fn begin(
        before: Option<&Journal>,
        profile: &Path,
        good: Vec<u8>,
        candidate: &[u8],
        now: &Now,
        secs: u32,
        observed: Vec<String>,
    ) -> Result<Journal, Refused> {
        if before.is_some_and(|j| j.state == State::Pending) {
            return Err(Refused::AlreadyPending);
        }
        let ms = u64::from(secs) * 1000;
        Ok(Journal {
            state: State::Pending,
            profile: profile.to_path_buf(),
            candidate: Digest::of(candidate),
            good,
            boot: now.boot.clone(),
            deadline_ms: now.ms + ms,
            deadline_wall: if now.wall == 0 { 0 } else { now.wall + u64::from(secs) },
            note: String::new(),
            observed,
        })
    }

    /// Whether the revert is due: pending, and the deadline passed in this
    /// boot, or the journal is from another boot (an unconfirmed candidate
    /// is never what a boot brings up).
    pub(crate) fn due(&self, now: &Now) -> bool {
        self.state == State::Pending && (self.boot != now.boot || now.ms >= self.deadline_ms)
    }

    /// Milliseconds left before the deadline (0 when due).
    pub(crate) fn left_ms(&self, now: &Now) -> u64 {
        if self.due(now) {
            0
        } else {
            self.deadline_ms - now.ms
        }
    }

    /// Transition: pending -> confirmed. The candidate is now the last
    /// good profile.
    pub(crate) fn confirm(&mut self, candidate: Vec<u8>) -> Result<(), Refused> {
        if self.state != State::Pending {
            return Err(Refused::NothingPending);
        }
        self.state = State::Confirmed;
        self.good = candidate;
        self.note = String::from("confirmed");
        Ok(())
    }

    /// Transition: pending -> rolled back, with what the revert found.
    pub(crate) fn reject(&mut self, note: &str) -> Result<(), Refused> {
        if self.state != State::Pending {
            return Err(Refused::NothingPending);
        }
        self.state = State::RolledBack;
        self.note = note.replace('\n', " ");
        Ok(())
    }

    pub(crate) fn good_digest(&self) -> Digest {
        Digest::of(&self.good)
    }

    /// The file's text.
    pub(crate) fn render(&self) -> Vec<u8> {
        // One format for the head: each `writeln!` is code of its own.
        let mut s = format!(
            "{MAGIC}\nstate {}\nprofile {}\ncandidate {}\ngood {}\nboot {}\ndeadline {}\nwall {}\nnote {}\nobserved {}\n",
            self.state,
            self.profile.display(),
            self.candidate,
            self.good_digest(),
            self.boot,
            self.deadline_ms,
            self.deadline_wall,
            if self.note.is_empty() { "-" } else { &self.note },
            self.observed.len()
        );
        for l in &self.observed {
            s.push_str(l);
            s.push('\n');
        }
        let _ = writeln!(s, "bytes {}", self.good.len());
        let mut out = s.into_bytes();
        out.extend_from_slice(&self.good);
        out.extend_from_slice(b"\nend\n");
        out
    }

    /// Parse a journal file's bytes; the error says which line is wrong.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Journal, Corrupt> {
        let mut r = Reader { bytes, at: 0, line: 0 };
        if r.line()? != MAGIC {
            return Err(r.bad("not a nasboot confirm journal (or another version)"));
        }
        // The head's lines, `KEY VALUE` in this order, read whole before
        // their values are (the head's line i is line i + 2).
        let mut v = [""; HEAD.len()];
        for (i, (key, expected)) in HEAD.iter().enumerate() {
            v[i] = r.field(key, expected)?;
        }
        let at = |i: usize, what| Corrupt { line: i + 2, what };
        let num = |i: usize| v[i].parse::<u64>().map_err(|_| at(i, "not a number"));
        let state = match v[0] {
            "pending" => State::Pending,
            "confirmed" => State::Confirmed,
            "rolled-back" => State::RolledBack,
            _ => return Err(at(0, "state is none of pending, confirmed, rolled-back")),
        };
        let candidate = Digest::parse(v[2]).ok_or(at(2, "candidate is not a digest"))?;
        let good_digest = Digest::parse(v[3]).ok_or(at(3, "good is not a digest"))?;
        let (deadline_ms, deadline_wall) = (num(5)?, num(6)?);
        let note = if v[7] == "-" { String::new() } else { v[7].to_string() };
        let (profile, boot) = (PathBuf::from(v[1]), v[4].to_string());
        let n = num(8)?;
        let mut observed = Vec::new();
        for _ in 0..n {
            observed.push(r.line()?.to_string());
        }
        let len = usize::try_from(r.number("bytes", "`bytes` expected")?).map_err(|_| r.bad("bytes is too large"))?;
        let good = r.take(len)?.to_vec();
        if r.rest() != b"\nend\n" {
            return Err(r.bad("the profile's bytes are not followed by `end`: truncated or changed"));
        }
        if Digest::of(&good) != good_digest {
            return Err(r.bad("the last good profile's bytes do not match its digest"));
        }
        Ok(Journal { state, profile, candidate, good, boot, deadline_ms, deadline_wall, note, observed })
    }
}

/// A journal that does not parse: the line (1-based) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Corrupt {
    pub line: usize,
    pub what: &'static str,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
}

impl<'a> Reader<'a> {
    fn bad(&self, what: &'static str) -> Corrupt {
        Corrupt { line: self.line.max(1), what }
    }

    fn line(&mut self) -> Result<&'a str, Corrupt> {
        self.line += 1;
        let rest = &self.bytes[self.at..];
        let end = rest.iter().position(|&b| b == b'\n').ok_or(Corrupt { line: self.line, what: "truncated" })?;
        self.at += end + 1;
        std::str::from_utf8(&rest[..end]).map_err(|_| Corrupt { line: self.line, what: "not UTF-8" })
    }

    /// The value of the line `KEY VALUE`; else `expected` ("`KEY` expected").
    fn field(&mut self, key: &str, expected: &'static str) -> Result<&'a str, Corrupt> {
        let l = self.line()?;
        match l.split_once(' ') {
            Some((k, v)) if k == key => Ok(v),
            _ => Err(Corrupt { line: self.line, what: expected }),
        }
    }

    fn number(&mut self, key: &str, expected: &'static str) -> Result<u64, Corrupt> {
        let v = self.field(key, expected)?;
        v.parse().map_err(|_| Corrupt { line: self.line, what: "not a number" })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Corrupt> {
        let rest = &self.bytes[self.at..];
        if rest.len() < n {
            return Err(Corrupt { line: self.line + 1, what: "truncated: fewer bytes than `bytes` says" });
        }
        self.at += n;
        Ok(&rest[..n])
    }

    fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at..]
    }
}

/// A journal that cannot be used, with its file.
#[derive(Debug)]
pub(crate) enum Error {
    /// It could not be read, written or renamed.
    Io { path: &'static str, op: &'static str, source: io::Error },
    /// It does not parse.
    Corrupt { path: &'static str, corrupt: Corrupt },
    /// It is for another profile file than the command's.
    OtherProfile { path: &'static str, profile: PathBuf },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, op, source } => write!(f, "{path}: cannot {op} the confirm journal: {source}"),
            Error::Corrupt { path, corrupt } => {
                write!(
                    f,
                    "{path}:{}: the confirm journal is unusable: {} (remove it once the board is as wanted)",
                    corrupt.line, corrupt.what
                )
            }
            Error::OtherProfile { path, profile } => {
                write!(f, "{path}: the confirm journal is for the profile {}, not this one", profile.display())
            }
        }
    }
}

/// Where a journal was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    Pending,
    Settled,
}

impl Place {
    pub(crate) fn path(self) -> &'static str {
        match self {
            Place::Pending => PENDING,
            Place::Settled => SETTLED,
        }
    }
}

/// Read the journal: the pending one if there is one, else the settled
/// one; None when there is neither. A pending file that holds a settled
/// state (a crash between its write and its rename) is settled here.
pub(crate) fn read(files: &mut dyn Files, profile: &Path) -> Result<Option<(Journal, Place)>, Error> {
    for place in [Place::Pending, Place::Settled] {
        let path = place.path();
        let bytes = match files.read(Path::new(path)) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(source) => return Err(Error::Io { path, op: "read", source }),
        };
        let j = Journal::parse(&bytes).map_err(|corrupt| Error::Corrupt { path, corrupt })?;
        if j.profile != profile {
            return Err(Error::OtherProfile { path, profile: j.profile });
        }
        if place == Place::Pending && j.state != State::Pending {
            settle_file(files)?;
            return Ok(Some((j, Place::Settled)));
        }
        return Ok(Some((j, place)));
    }
    Ok(None)
}

/// Write a pending journal (before the first change).
pub(crate) fn write_pending(files: &mut dyn Files, j: &Journal) -> Result<(), Error> {
    debug_assert_eq!(j.state, State::Pending);
    files.replace(Path::new(PENDING), &j.render()).map(drop).map_err(|source| Error::Io { path: PENDING, op: "write", source })
}

/// Write a settled journal: into the pending file first, then renamed
/// over the settled one, so that a crash in between is finished by the
/// next `read`.
pub(crate) fn write_settled(files: &mut dyn Files, j: &Journal) -> Result<(), Error> {
    debug_assert_ne!(j.state, State::Pending);
    let pending = files.exists(Path::new(PENDING));
    let path = if pending { PENDING } else { SETTLED };
    files.replace(Path::new(path), &j.render()).map_err(|source| Error::Io { path, op: "write", source })?;
    if pending {
        settle_file(files)
    } else {
        Ok(())
    }
}

/// The rename of a settled pending file. Any reader finishes it (`read`),
/// so the file may be gone by now: renamed by another nasboot, which is
/// as good.
fn settle_file(files: &mut dyn Files) -> Result<(), Error> {
    match files.rename(Path::new(PENDING), Path::new(SETTLED)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound && files.exists(Path::new(SETTLED)) => Ok(()),
        other => other.map_err(|source| Error::Io { path: SETTLED, op: "rename into", source }),
    }
}

/// This boot and CLOCK_BOOTTIME (CLOCK_MONOTONIC on a kernel without it).
pub(crate) fn now(files: &mut dyn Files) -> Now {
    use nix::time::{clock_gettime, ClockId};
    // Only its hex digits and dashes: the newline and anything else go.
    let mut boot = String::new();
    for b in files.read(Path::new(crate::paths::BOOT_ID)).unwrap_or_default() {
        if b.is_ascii_hexdigit() || b == b'-' {
            boot.push(char::from(b));
        }
    }
    let t = clock_gettime(ClockId::CLOCK_BOOTTIME).or_else(|_| clock_gettime(ClockId::CLOCK_MONOTONIC));
    let ms = t.map_or(0, |t| u64::try_from(t.tv_sec()).unwrap_or(0) * 1000 + u64::try_from(t.tv_nsec()).unwrap_or(0) / 1_000_000);
    Now { boot, ms, wall: crate::watchdog::unix_now() }
}
