//! Reset history and boot-loop backoff.
//!
//! `/var/lib/nasboot/resets` (paths::RESET_HISTORY) keeps the last
//! [`MAX_ENTRIES`] boots, one line each, replaced atomically through the
//! Files seam:
//!
//! ```text
//! # nasboot resets: boot_id unix_time cause end
//! 5d3c0a8e 1764441200 cardreset unclean
//! 0b1f22c4 1764441260 unknown running
//! ```
//!
//! `cause` is what the driver said about the start of that boot
//! (WDIOF_CARDRESET: `cardreset`, `normal`, or `unknown` when the driver
//! cannot tell, like softdog). `end` is how the boot ended: `running`
//! (still up, or it ended without a word), `clean` (the watchdog daemon
//! stopped in order: SIGTERM at shutdown), `gaveup` (a health check failed
//! for good and petting stopped). At the next boot a `running` entry becomes
//! `unclean`: the board was reset (by the watchdog, a crash or the power).
//!
//! Backoff: when the last [`boot_loop_resets`] boots all ended `unclean`
//! or `gaveup` within [`boot_loop_window`] seconds, the board comes up in
//! the safe profile ([`safe_profile`]): the firewall on with nothing open
//! to the WAN (LAN only, no forwarding), no NFS exports, the watchdog
//! still on but without health checks or repairs. A clean shutdown, or
//! the window passing, ends the backoff.
//!
//! [`boot_loop_resets`]: crate::config::watchdog::Watchdog::boot_loop_resets
//! [`boot_loop_window`]: crate::config::watchdog::Watchdog::boot_loop_window

use std::fmt::{self, Write as _};
use std::path::Path;

use crate::config::firewall::Profile as FwProfile;
use crate::config::Profile;
use crate::paths;
use crate::seam::Files;

/// Boots remembered.
pub(crate) const MAX_ENTRIES: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cause {
    CardReset,
    Normal,
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    Running,
    Clean,
    Unclean,
    GaveUp,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub boot_id: heapless::String<16>,
    pub time: u64,
    pub cause: Cause,
    pub end: End,
}

impl Entry {
    fn reset(&self) -> bool {
        matches!(self.end, End::Unclean | End::GaveUp)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct History {
    pub entries: heapless::Vec<Entry, MAX_ENTRIES>,
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cause::CardReset => "cardreset",
            Cause::Normal => "normal",
            Cause::Unknown => "unknown",
        })
    }
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            End::Running => "running",
            End::Clean => "clean",
            End::Unclean => "unclean",
            End::GaveUp => "gaveup",
        })
    }
}

impl History {
    /// Parse the file; lines that do not parse are dropped (the file is
    /// ours, a torn or hand-edited line must not stop the boot).
    pub(crate) fn parse(text: &str) -> History {
        let mut h = History::default();
        for line in text.lines() {
            let mut w = line.split_whitespace();
            let (Some(id), Some(time), Some(cause), Some(end)) = (w.next(), w.next(), w.next(), w.next()) else { continue };
            if id.starts_with('#') {
                continue;
            }
            let Ok(boot_id) = heapless::String::try_from(id) else { continue };
            let Ok(time) = time.parse() else { continue };
            let cause = match cause {
                "cardreset" => Cause::CardReset,
                "normal" => Cause::Normal,
                "unknown" => Cause::Unknown,
                _ => continue,
            };
            let end = match end {
                "running" => End::Running,
                "clean" => End::Clean,
                "unclean" => End::Unclean,
                "gaveup" => End::GaveUp,
                _ => continue,
            };
            h.push(Entry { boot_id, time, cause, end });
        }
        h
    }

    fn push(&mut self, e: Entry) {
        if self.entries.is_full() {
            self.entries.remove(0);
        }
        let _ = self.entries.push(e);
    }

    pub(crate) fn render(&self) -> String {
        let mut s = String::from("# nasboot resets: boot_id unix_time cause end\n");
        for e in &self.entries {
            let _ = writeln!(s, "{} {} {} {}", e.boot_id, e.time, e.cause, e.end);
        }
        s
    }

    /// Note this boot. A previous boot still `running` ended uncleanly.
    /// Nothing changes when this boot is already the last entry.
    pub(crate) fn begin(&mut self, boot_id: &str, now: u64) {
        let id: heapless::String<16> = boot_id.chars().filter(|c| c.is_ascii_alphanumeric()).take(16).collect();
        if self.entries.last().is_some_and(|e| e.boot_id == id) {
            return;
        }
        if let Some(last) = self.entries.last_mut() {
            if last.end == End::Running {
                last.end = End::Unclean;
            }
        }
        self.push(Entry { boot_id: id, time: now, cause: Cause::Unknown, end: End::Running });
    }

    /// What the driver says about this boot's start.
    pub(crate) fn set_cause(&mut self, card_reset: Option<bool>) {
        if let Some(last) = self.entries.last_mut() {
            last.cause = match card_reset {
                Some(true) => Cause::CardReset,
                Some(false) => Cause::Normal,
                None => Cause::Unknown,
            };
        }
    }

    /// How this boot ends.
    pub(crate) fn set_end(&mut self, end: End) {
        if let Some(last) = self.entries.last_mut() {
            last.end = end;
        }
    }

    /// Resets in a row, just before this boot, within `window` seconds of `now`.
    pub(crate) fn recent_resets(&self, now: u64, window: u32) -> u32 {
        let n = self.entries.len();
        self.entries
            .iter()
            .take(n.saturating_sub(1))
            .rev()
            .take_while(|e| e.reset() && now.saturating_sub(e.time) <= u64::from(window))
            .count() as u32
    }
}

/// The safe profile: LAN-only firewall (on even if the profile turns it
/// off), nothing open to the WAN, no forwarding, no NFS exports; the
/// watchdog stays on with its timeout but without checks or repairs.
pub(crate) fn safe_profile(mut s: Profile) -> Profile {
    let fw = &mut s.firewall;
    if fw.profile == FwProfile::Off {
        fw.profile = FwProfile::Stateless;
    }
    fw.wan_services.clear();
    fw.wan_tcp_ports.clear();
    fw.wan_udp_ports.clear();
    fw.forward = false;
    s.nfs.export.clear();
    if let Some(w) = s.watchdog.as_mut() {
        w.max_load1 = None;
        w.max_load5 = None;
        w.max_load15 = None;
        w.min_memory_kb = None;
        w.pidfiles.clear();
        w.heartbeat_file = None;
        w.heartbeat_max_age = None;
        w.rx_interface = None;
        w.temperature_sensor = None;
        w.max_temperature = None;
        w.test_command.clear();
        w.repair_command.clear();
    }
    s
}

/// Whether the board is in a boot loop: Some(resets) when it is.
pub(crate) fn boot_loop(p: &Profile, h: &History, now: u64) -> Option<u32> {
    let w = p.watchdog.as_ref()?;
    let limit = w.boot_loop_resets();
    let n = h.recent_resets(now, w.boot_loop_window());
    (limit > 0 && n >= limit).then_some(n)
}

/// This boot's id (/proc/sys/kernel/random/boot_id, first 8 hex digits).
pub(crate) fn boot_id(files: &mut dyn Files) -> String {
    files
        .read(Path::new("/proc/sys/kernel/random/boot_id"))
        .map(|b| String::from_utf8_lossy(&b).chars().filter(|c| c.is_ascii_hexdigit()).take(8).collect())
        .unwrap_or_default()
}

/// The history and the file's bytes as read (None: unreadable or absent).
fn load(files: &mut dyn Files) -> (History, Option<Vec<u8>>) {
    let text = files.read(Path::new(paths::RESET_HISTORY)).ok();
    let h = text.as_deref().map(|b| History::parse(&String::from_utf8_lossy(b))).unwrap_or_default();
    (h, text)
}

/// Write the history unless the file already holds it: a settled board's
/// every `apply` finds this boot recorded, and `replace` would read the
/// file a second time only to find it unchanged.
fn save(files: &mut dyn Files, h: &History, read: Option<&[u8]>) {
    let text = h.render();
    if read == Some(text.as_bytes()) {
        return;
    }
    if let Err(e) = files.replace(Path::new(paths::RESET_HISTORY), text.as_bytes()) {
        log::warn!("{}: cannot record the reset history: {e}", paths::RESET_HISTORY);
    }
}

/// Update one field of this boot's entry in the file.
pub(crate) fn update(files: &mut dyn Files, f: impl FnOnce(&mut History)) {
    let (mut h, read) = load(files);
    f(&mut h);
    save(files, &h, read.as_deref());
}

/// The profile to run with: the profile, or the safe profile in a boot loop.
pub(crate) struct Prepared {
    pub profile: Profile,
    /// In a boot loop: the safe profile was chosen.
    pub safe: bool,
}

/// At start (`run`, `apply`, `watchdog`): record this boot and, in a boot
/// loop, give the safe profile in place of `p`. Profiles without
/// `[watchdog]` keep no history.
pub(crate) fn prepare(p: Profile, files: &mut dyn Files, now: u64) -> Prepared {
    if p.watchdog.is_none() {
        return Prepared { profile: p, safe: false };
    }
    let (mut h, read) = load(files);
    let id = boot_id(files);
    let id = if id.is_empty() { now.to_string() } else { id };
    h.begin(&id, now);
    save(files, &h, read.as_deref());
    match boot_loop(&p, &h, now) {
        Some(n) => {
            log::error!(
                "boot loop: {n} resets in a row within {} s; coming up in the safe profile (LAN-only firewall, no exports, watchdog on, no health checks)",
                p.watchdog.as_ref().map_or(0, |w| w.boot_loop_window())
            );
            Prepared { profile: safe_profile(p), safe: true }
        }
        None => Prepared { profile: p, safe: false },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seam::fake::FakeBoard;

    const PROFILE: &str = "[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\nwan_services = [\"ssh\"]\n\
        [[nfs.export]]\npath = \"/srv\"\nclients = [\"192.168.10.0/24\"]\n\
        [watchdog]\ntimeout = 10\nmin_memory_kb = 1000\nboot_loop_resets = 2\nboot_loop_window = 600\n";

    fn profile() -> Profile {
        crate::config::parse_bytes("t.toml", PROFILE.as_bytes()).unwrap().profile
    }

    #[test]
    fn text_round_trips_and_drops_garbage() {
        let text = "# nasboot resets: boot_id unix_time cause end\naaaa 100 cardreset unclean\nbroken line\nbbbb 200 unknown running\n";
        let h = History::parse(text);
        assert_eq!(h.entries.len(), 2);
        assert_eq!(h.render(), text.replace("broken line\n", ""));
    }

    #[test]
    fn bounded_and_marks_the_previous_boot_unclean() {
        let mut h = History::default();
        for i in 0..20u64 {
            h.begin(&format!("id{i}"), 100 + i);
        }
        assert_eq!(h.entries.len(), MAX_ENTRIES);
        assert_eq!(h.entries.first().unwrap().boot_id.as_str(), "id4");
        assert!(h.entries.iter().take(MAX_ENTRIES - 1).all(|e| e.end == End::Unclean));
        // Same boot again (apply, then watchdog): no new entry.
        h.begin("id19", 500);
        assert_eq!(h.entries.len(), MAX_ENTRIES);
        assert_eq!(h.entries.last().unwrap().end, End::Running);
    }

    #[test]
    fn a_clean_stop_breaks_the_streak() {
        let mut h = History::default();
        h.begin("a", 100);
        h.begin("b", 110);
        h.set_end(End::Clean);
        h.begin("c", 120);
        h.begin("d", 130);
        assert_eq!(h.recent_resets(130, 600), 1);
        assert_eq!(h.recent_resets(1000, 600), 0, "outside the window");
    }

    #[test]
    fn safe_profile_closes_wan_and_exports_keeps_the_watchdog() {
        let s = safe_profile(profile());
        assert_eq!(s.firewall.profile, FwProfile::Stateless);
        assert!(s.firewall.wan_services.is_empty());
        assert!(s.nfs.export.is_empty());
        let w = s.watchdog.unwrap();
        assert_eq!(w.timeout.0, 10);
        assert!(!w.has_checks());
    }

    #[test]
    fn prepare_backs_off_after_n_resets_across_boots() {
        let mut b = FakeBoard::new();
        let p = profile();
        for (i, boot) in ["11111111", "22222222", "33333333"].iter().enumerate() {
            b.files.files.insert("/proc/sys/kernel/random/boot_id".into(), format!("{boot}-aaaa\n").into_bytes());
            let got = prepare(p.clone(), &mut b.files, 1000 + i as u64 * 10);
            let safe = i >= 2;
            assert_eq!(got.safe, safe, "boot {i}");
            assert_eq!(got.profile.nfs.export.is_empty(), safe, "boot {i}");
        }
        let text = String::from_utf8(b.files.files[Path::new(paths::RESET_HISTORY)].clone()).unwrap();
        assert_eq!(
            text,
            "# nasboot resets: boot_id unix_time cause end\n11111111 1000 unknown unclean\n22222222 1010 unknown unclean\n33333333 1020 unknown running\n"
        );
    }
}
