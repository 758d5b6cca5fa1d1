//! The files the board's own NFS init scripts read, so that a restart of
//! nfs-kernel-server starts the thread count, versions and mountd port
//! nasboot chose. nasboot owns a few keys, never the files:
//!
//! - `/etc/default/nfs-kernel-server` (Debian; only when it exists):
//!   `RPCNFSDCOUNT`, and inside `RPCMOUNTDOPTS` the `--manage-gids` and
//!   `--port N` options (N = `firewall.mountd_port`). Every other line,
//!   comment and mountd option stays as it was; a missing key is appended.
//! - nfs.conf: when `/etc/nfs.conf.d` exists (nfs-utils 2.5 and later;
//!   Debian 12 ships it), nasboot writes its own drop-in
//!   `/etc/nfs.conf.d/nasboot.conf`, which nfs-utils reads after
//!   `/etc/nfs.conf` so its values win, and leaves `/etc/nfs.conf` alone.
//!   Otherwise, when `/etc/nfs.conf` exists, only `[nfsd] threads`, the
//!   `vers*` keys (when the profile sets versions), `[mountd] port` and
//!   `manage-gids`, `[statd] port` and `[lockd] port` and `udp-port` are
//!   rewritten in place; comments and other keys stay.
//!   Without either file (BusyBox or OpenWrt images) nothing is written.
//!
//! On Debian the count in /etc/default wins over nfs.conf (it reaches
//! rpc.nfsd on the command line), so both are kept in agreement.

use crate::config::nfs::NfsVersion;

use super::nfsd::version_flags;

/// What the init script files should say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    pub threads: u16,
    /// None: leave the versions to nfs-utils' defaults.
    pub versions: Option<Vec<NfsVersion>>,
    pub mountd_port: u16,
    /// rpc.statd's port (`[statd] port`) and lockd's, TCP and UDP
    /// (`[lockd] port`, `udp-port`, which rpc.statd writes to the kernel):
    /// pinned like mountd, below the kernel's ephemeral range.
    pub statd_port: u16,
    pub lockd_port: u16,
}

/// The lines of a file as written, each without its `\n` but with any
/// `\r` it has: `str::lines` drops the `\r` of a `\r\n` but keeps a bare
/// one at the very end, so a rewrite joined with `\n` would read back
/// differently and the next apply would rewrite it again (found by the
/// board_configs fuzz target).
fn file_lines(text: &str) -> impl Iterator<Item = &str> {
    text.strip_suffix('\n').unwrap_or(text).split('\n').filter(move |_| !text.is_empty())
}

/// `/etc/default/nfs-kernel-server` with nasboot's keys set in `existing`.
pub(crate) fn default_file(existing: &str, s: &Settings) -> String {
    let mut out = String::with_capacity(existing.len() + 64);
    let (mut count_done, mut mountd_done) = (false, false);
    for line in file_lines(existing) {
        match assignment(line) {
            Some((prefix, "RPCNFSDCOUNT", _)) => {
                out.push_str(&format!("{prefix}RPCNFSDCOUNT={}\n", s.threads));
                count_done = true;
            }
            Some((prefix, "RPCMOUNTDOPTS", value)) => {
                out.push_str(&format!("{prefix}RPCMOUNTDOPTS=\"{}\"\n", mountd_opts(value, s.mountd_port)));
                mountd_done = true;
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    if !count_done || !mountd_done {
        out.push_str("# Set by nasboot.\n");
    }
    if !count_done {
        out.push_str(&format!("RPCNFSDCOUNT={}\n", s.threads));
    }
    if !mountd_done {
        out.push_str(&format!("RPCMOUNTDOPTS=\"{}\"\n", mountd_opts("", s.mountd_port)));
    }
    out
}

/// A shell assignment `[export ]NAME=value`: (prefix, name, raw value).
fn assignment(line: &str) -> Option<(&str, &str, &str)> {
    let body = line.trim_start();
    let rest = body.strip_prefix("export ").map_or(body, str::trim_start);
    let (name, value) = rest.split_once('=')?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    Some((&line[..line.len() - rest.len()], name, value))
}

/// The mountd options: the user's, minus the ones nasboot owns, then
/// `--manage-gids --port N`.
fn mountd_opts(raw: &str, port: u16) -> String {
    let v = raw.trim();
    let v = v
        .strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
        .unwrap_or(v);
    let mut kept: Vec<&str> = Vec::new();
    let mut words = v.split_whitespace();
    while let Some(w) = words.next() {
        match w {
            "--manage-gids" | "-g" => {}
            "--port" | "-p" => {
                words.next();
            }
            _ if w.starts_with("--port=") => {}
            _ => kept.push(w),
        }
    }
    let port_opt = format!("--port {port}");
    kept.push("--manage-gids");
    kept.push(&port_opt);
    kept.join(" ")
}

/// The (section, key, value) triples nasboot owns in nfs.conf.
pub(crate) fn nfs_conf_keys(s: &Settings) -> Vec<(&'static str, String, String)> {
    let mut keys = vec![("nfsd", "threads".to_string(), s.threads.to_string())];
    if let Some(v) = &s.versions {
        for (name, on) in version_flags(v) {
            keys.push(("nfsd", format!("vers{name}"), if on { "y" } else { "n" }.to_string()));
        }
    }
    keys.push(("mountd", "manage-gids".to_string(), "y".to_string()));
    keys.push(("mountd", "port".to_string(), s.mountd_port.to_string()));
    keys.push(("statd", "port".to_string(), s.statd_port.to_string()));
    keys.push(("lockd", "port".to_string(), s.lockd_port.to_string()));
    keys.push(("lockd", "udp-port".to_string(), s.lockd_port.to_string()));
    keys
}

/// `/etc/nfs.conf.d/nasboot.conf`.
pub(crate) fn nfs_conf_drop_in(s: &Settings) -> String {
    let mut out = String::from("# Written by nasboot from its profile; changes here are overwritten.\n");
    out.push_str("# nfs-utils reads this after /etc/nfs.conf, so these values win.\n");
    let mut section = "";
    for (sec, key, value) in nfs_conf_keys(s) {
        if sec != section {
            out.push_str(&format!("[{sec}]\n"));
            section = sec;
        }
        out.push_str(&format!("{key}={value}\n"));
    }
    out
}

/// `existing` nfs.conf with nasboot's keys set in place.
pub(crate) fn nfs_conf_in_place(existing: &str, s: &Settings) -> String {
    set_ini_keys(existing, &nfs_conf_keys(s))
}

fn section_of(line: &str) -> Option<&str> {
    let t = line.trim();
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    Some(inner.trim())
}

fn key_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with(';') {
        return None;
    }
    Some(t.split_once('=')?.0.trim())
}

/// Set `key=value` in `[section]` for each triple: every uncommented
/// assignment of the key in that section is replaced; a missing key goes
/// right after the section header; a missing section is appended.
pub(crate) fn set_ini_keys(existing: &str, keys: &[(&str, String, String)]) -> String {
    let lines: Vec<&str> = file_lines(existing).collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + keys.len() + 2);
    let mut done = vec![false; keys.len()];
    let mut current = String::new();
    for line in &lines {
        if let Some(sec) = section_of(line) {
            current = sec.to_ascii_lowercase();
            out.push((*line).to_string());
            for (k, (s, key, value)) in keys.iter().enumerate() {
                if *s == current && !section_has(&lines, s, key) {
                    out.push(format!("{key}={value}"));
                    done[k] = true;
                }
            }
            continue;
        }
        let hit = key_of(line).and_then(|name| keys.iter().position(|(s, key, _)| *s == current && key.eq_ignore_ascii_case(name)));
        match hit {
            Some(k) => {
                out.push(format!("{}={}", keys[k].1, keys[k].2));
                done[k] = true;
            }
            None => out.push((*line).to_string()),
        }
    }
    let mut appended = String::new();
    for (k, (s, key, value)) in keys.iter().enumerate() {
        if done[k] {
            continue;
        }
        if appended != *s {
            out.push(format!("[{s}]"));
            appended = s.to_string();
        }
        out.push(format!("{key}={value}"));
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Whether `[section]` already assigns `key` (uncommented).
fn section_has(lines: &[&str], section: &str, key: &str) -> bool {
    let mut inside = false;
    for line in lines {
        if let Some(sec) = section_of(line) {
            inside = sec.eq_ignore_ascii_case(section);
        } else if inside && key_of(line).is_some_and(|k| k.eq_ignore_ascii_case(key)) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings { threads: 2, versions: Some(vec![NfsVersion::V3]), mountd_port: 32767, statd_port: 32765, lockd_port: 32764 }
    }

    #[test]
    fn rewrites_converge_whatever_the_line_ends() {
        // Fuzz regression (tests/fuzz/regressions/board_configs): a last
        // line ending in a bare \r was rewritten on every apply.
        for old in ["x\r", "a\r\nb\r\n", "[nfsd]\r\nthreads=8\r", "", "\n", "\r", "RPCNFSDCOUNT=8\r"] {
            let once = nfs_conf_in_place(old, &settings());
            assert_eq!(nfs_conf_in_place(&once, &settings()), once, "{old:?}");
            let once = default_file(old, &settings());
            assert_eq!(default_file(&once, &settings()), once, "{old:?}");
        }
        assert!(nfs_conf_in_place("a\r\n", &settings()).starts_with("a\r\n"), "CRLF lines are kept as they are");
    }

    #[test]
    fn default_file_keeps_other_lines_and_mountd_options() {
        let before =
            "# comment\nRPCNFSDCOUNT=8\nRPCNFSDPRIORITY=0\nRPCMOUNTDOPTS=\"--manage-gids --no-nfs-version 4 -p 999\"\nNEED_SVCGSSD=\"\"\n";
        let after = default_file(before, &settings());
        assert_eq!(
            after,
            "# comment\nRPCNFSDCOUNT=2\nRPCNFSDPRIORITY=0\nRPCMOUNTDOPTS=\"--no-nfs-version 4 --manage-gids --port 32767\"\nNEED_SVCGSSD=\"\"\n"
        );
        assert_eq!(default_file(&after, &settings()), after, "idempotent");
    }

    #[test]
    fn default_file_appends_missing_keys() {
        let after = default_file("NEED_SVCGSSD=\"\"\n", &settings());
        assert_eq!(after, "NEED_SVCGSSD=\"\"\n# Set by nasboot.\nRPCNFSDCOUNT=2\nRPCMOUNTDOPTS=\"--manage-gids --port 32767\"\n");
        assert_eq!(default_file(&after, &settings()), after, "idempotent");
        let exported = default_file("export RPCNFSDCOUNT='8'\nRPCMOUNTDOPTS='--port=1'\n", &settings());
        assert_eq!(exported, "export RPCNFSDCOUNT=2\nRPCMOUNTDOPTS=\"--manage-gids --port 32767\"\n");
    }

    #[test]
    fn nfs_conf_in_place_touches_only_owned_keys() {
        let before =
            "[general]\npipefs-directory=/run/rpc_pipefs\n[mountd]\nmanage-gids=y\n# port=0\n[nfsd]\n# threads=8\nThreads = 16\nudp=n\n";
        let after = nfs_conf_in_place(before, &settings());
        assert_eq!(
            after,
            "[general]\npipefs-directory=/run/rpc_pipefs\n[mountd]\nport=32767\nmanage-gids=y\n# port=0\n[nfsd]\nvers3=y\nvers4=n\n# threads=8\nthreads=2\nudp=n\n[statd]\nport=32765\n[lockd]\nport=32764\nudp-port=32764\n"
        );
        assert_eq!(nfs_conf_in_place(&after, &settings()), after, "idempotent");
    }

    #[test]
    fn nfs_conf_missing_sections_are_appended() {
        let after = nfs_conf_in_place("[general]\n", &Settings { versions: None, ..settings() });
        assert_eq!(
            after,
            "[general]\n[nfsd]\nthreads=2\n[mountd]\nmanage-gids=y\nport=32767\n[statd]\nport=32765\n[lockd]\nport=32764\nudp-port=32764\n"
        );
    }
}
