//! nasboot: NICs, a minimal firewall, NFS exports and the hardware watchdog
//! for slow NAS and router boards, from one TOML profile, in one statically
//! linked process. This is the design; what a user sets is in
//! `board/README.md` and `board/reference.toml`, how it is tested in
//! `tests/README.md`, the figures in `scripts/README.md`.
//!
//! # Stages
//!
//! A run goes parse, validate, plan, render, apply. Only the last has side
//! effects.
//!
//! - **Parse** (`src/config/`): `config/document` parses the TOML text
//!   into a tree of spanned values; each model type's hand-written `Decode` (`config/decode.rs`)
//!   reads its keys from that document, and every error gets its span and
//!   key path (`/etc/nasboot.toml:6:8: interface[1].name: ...`). Unknown keys
//!   are errors.
//! - **Validate** (`config/validate.rs`): the model is fixed-capacity
//!   newtypes (`heapless`) and lists of bounded length (`config::List`,
//!   as long as the profile writes them): interface names of at most 15 bytes (IFNAMSIZ),
//!   prefixes checked per family, ports 1 to 65535, absolute export paths
//!   without control characters; limits as listed at the top of
//!   `board/reference.toml`. A profile that fails changes nothing (exit 2).
//! - **Plan** (`src/plan.rs`): observe the board (reads only), then build
//!   the ordered actions purely from the profile and that snapshot. Each
//!   subsystem (`src/firewall/`, `src/net/`, `src/share/`, `src/watchdog/`,
//!   `src/sysctl/`, `src/storage.rs`) has the same shape: observe, plan,
//!   apply, and emits only what differs, so a re-apply on a board that
//!   matches changes nothing.
//! - **Render** (pure, golden-tested in `tests/golden/`): the rule sets for
//!   nftables and iptables-restore, /etc/exports, the nfsd and distro files,
//!   the smb.conf include.
//! - **Apply** (`src/apply.rs`): carries the plan out through the seams, in
//!   the order `nasboot plan` prints: the watchdog is opened first and
//!   petted between all later steps; sysctls; the firewall, before any link
//!   comes up, so the WAN is never open; links, addresses and routes;
//!   storage (read-ahead) and NFS. A step that fails is reported with its
//!   subject (interface and knob, file) and the rest carries on (exit 3).
//!
//! `src/cmd/` has one file per subcommand, and `background.rs`, the fork
//! of `run --background`; `main.rs` only wires the seams and the command
//! together.
//!
//! # Errors
//!
//! A profile that fails to parse or validate is one `config::ConfigError`
//! (file, line, column, key path), exit 2. At apply, each
//! subsystem has its own error enum: `net::Error` (`net/error.rs`),
//! `firewall::Error` (`firewall/error.rs`, over the loader's `LoadError`),
//! `share::Error`, `sysctl::Error`, `storage::Error`, `watchdog::Error`
//! (over the device's `OpenError`). A variant is one way a step fails and
//! keeps its context typed (the interface, the knob, the value, the file,
//! the tool) with the underlying error (`io::Error`, `OpenError`,
//! `LoadError`) as its `source()`; only what a tool printed is kept as
//! text, the rest is formatted when shown. Its `Display` is the one line
//! the log and the summary show, subject first (`eth0 mtu: the kernel
//! refused 9000 (Invalid argument (os error 22)): below the minimum or
//! above the driver's maximum`), and includes the cause's text, so it is
//! printed with `{}` alone, never by walking `source()`, and no `Debug` of
//! an error reaches a user. That text is an interface (the shell suites
//! and users' log filters look for it): `net/error.rs` and
//! `firewall/error.rs` pin every variant's.
//!
//! `apply.rs` collects the steps' failures as `apply::StepError`, one
//! variant per subsystem (with `From` for each), adding no text of its own;
//! `cmd::apply` shows each once. The module graph stays acyclic: a
//! subsystem knows only its own error (net and the firewall wrap
//! `sysctl::Error` for the sysctls they set), and only `cmd` (and the net
//! tests, which drive whole applies) imports `apply.rs`. One trait, `exit::ExitStatus`, gives each error its exit
//! status: 1 for a step that could not be done (a file not replaced, a rule
//! set not loaded, the watchdog not armed), 3 for a knob the boot carried
//! on without; a command ends with the worst. Tests match the variant, not
//! just any error.
//!
//! # Seams
//!
//! `src/seam/` has one trait per kind of side effect: files, /proc/sys,
//! running a tool (argv only, never a shell), interface ioctls and netlink,
//! the watchdog device. Each has three implementations: the real Linux one
//! (every path relocated under `--root`), a dry-run one that prints what it
//! would do, and recording fakes for the unit tests. The seams are passed in
//! from `main`; nothing below reaches the system any other way.
//!
//! Files are replaced atomically: a temporary file, fsync, rename, fsync of
//! the directory, with the previous copy kept as `PATH.bak`; a file whose
//! content would not change is not written at all.
//!
//! # Why no async, no threads, no globals
//!
//! nasboot does a short sequence of blocking steps and then waits on one
//! timer. An async runtime would add size and start-up work for no
//! concurrency it needs.
//!
//! - rtnetlink runs on a blocking netlink-sys socket.
//! - A tool runs without threads: one poll(2) loop feeds its stdin and
//!   drains its stdout and stderr (`seam/real/runner.rs`), so std's thread
//!   code and glibc's pthread_create are not linked, and a command's end
//!   is seen when it comes, not at a reader thread's next wake-up
//!   (scripts/bench-net-board times the commands on the emulated board).
//! - The watchdog daemon blocks its signals with sigprocmask and takes them
//!   with sigtimedwait, whose timeout is the time to the next pet: one
//!   wake-up per interval, no signal handlers, no globals.
//! - `carrier_timeout` waits for IFF_RUNNING in steps of at most one second,
//!   so the apply loop pets the watchdog between them.
//!
//! # Allocation and memory
//!
//! - The profile model has fixed capacities (`heapless`), and the profile is
//!   never cloned.
//! - The global allocator is nasboot's own (`heap.rs`): size classes on free
//!   lists that keep their memory for the next allocation, a mapping of its
//!   own for a block over 16 KiB. The musl builds give C's `malloc` and
//!   `free` to it too (`main.rs`), so musl's allocator is not linked.
//! - The watchdog's steady state allocates nothing per tick
//!   (`tests/alloc_tick.rs`: 1000 ticks, zero allocations, with the logger
//!   enabled).
//! - The logger (`src/logger.rs`) formats into a fixed buffer and writes one
//!   line with one write(2), ignoring errors.
//! - Parsing the profile touches most of the program and deep stack frames,
//!   so the parser runs out of line (also on SIGHUP) and its frames never
//!   become part of the loop's. After the first pet of the loop,
//!   `watchdog/memory.rs` gives those pages back: the heap's free pages,
//!   madvise(MADV_DONTNEED) on the dead part of the main stack and on the
//!   program text (clean, re-read from the file when needed), and only then
//!   applies `mlock` (mlockall(MCL_CURRENT|MCL_FUTURE)) and `rt_priority`
//!   (SCHED_RR), so the locked resident set is the loop's pages only
//!   (scripts/bench-watchdog and scripts/bench-soak read its VmRSS).
//!
//! # Process start-up and panics
//!
//! `main.rs` is `#![no_main]`: its C `main` replaces std's start-up, whose
//! main-thread stack guard asks glibc for the stack's bounds, which glibc
//! reads from /proc/self/maps with sscanf (that linked glibc's scanf and
//! strtod family). `main` does what that start-up did that nasboot needs:
//! fds 0-2 opened on /dev/null if closed, SIGPIPE ignored (children get the
//! default back), the command run, stdout flushed. All output and logs are
//! written without `println!`, so a closed pipe (`nasboot -n apply | head
//! -1`) is not a panic.
//!
//! Release builds abort on panic with std built for
//! `-Cpanic=immediate-abort`: a panic (always a bug) traps at once, with no
//! panic machinery or message strings in the binary. It ends the process
//! silently with SIGTRAP on mips and powerpc (status 133 in a shell); on
//! SPARC a `ta 5` trap instruction, which qemu-user reports as "Unhandled
//! trap: 0x105" with exit status 1 (the signal a real sparc64 kernel sends
//! is not verified), where the default strategy printed `thread 'main'
//! panicked at ...` and aborted with SIGABRT (134). Errors nasboot reports
//! itself (1, 2, 3) are not affected. Unit tests keep the default panic strategy.
//!
//! # Where the size goes
//!
//! The binary must fit 1.2 MiB with static glibc, and the mips musl
//! release one 600 KiB (`scripts/build` prints every target's size; the
//! build flags are in `scripts/README.md`).
//! Choices in the code made for that, each of which keeps a large piece
//! of code out of the binary:
//!
//! - The profile decoded by hand (`config/decode.rs`), without serde: each
//!   model type lists its keys in a short `impl Decode`; the table lookup,
//!   the kind checks, the enum name tables and serde's error wording are
//!   plain functions all of them share, and each error collects its key
//!   path as it unwinds (the parser's spans are kept). serde's derived code
//!   is generic per (type, visitor) pair, and a `deserialize_any` or a key
//!   path wrapper such as serde_path_to_error gets a copy for each pair.
//! - Our own `log` backend (`src/logger.rs`) instead of simple_logger, which
//!   prints with `eprintln!`: that panics when standard error is a pipe
//!   whose reader went away (procd's pipe to logd, `| logger`), and a lost
//!   log line must never kill the daemon that owns the hardware watchdog.
//!   Same line format, one write(2) per line, no allocation.
//! - rtnetlink messages built and read by hand (`sys/rtnl.rs`): links,
//!   addresses and routes, only the attributes nasboot reads or writes.
//!   netlink-packet-route's whole-family message enum links the parsers
//!   for links, tc and neighbours; even its address and route types alone
//!   bring every route attribute (MPLS, lwtunnel, multipath).
//! - The decoder's error is boxed: every `Result` the decoders pass around
//!   carries a pointer, not a message, a span and a key path, so the code
//!   that moves each `Result` stays small.
//! - Our own TOML parser (`config/document`) instead of the toml crate's:
//!   one pass, no token vector, tables as sorted `Vec`s, so less code and
//!   less work in the boot's parse (scripts/bench-boot). The crate stays
//!   as its oracle in the tests and the `toml` fuzz target.
//! - Our own `config::Spanned` instead of `toml::Spanned`: the decoder gives
//!   it the value's span, where toml's is a three-key map visitor per
//!   spanned type.
//! - Programs started with `posix_spawnp`/`execvpe` (`seam/real/spawn.rs`),
//!   step for step as `std::process::Command` does it, without its
//!   environment map and fork fallback.
//! - No 128-bit arithmetic (`Duration::as_micros`/`as_nanos`): a 32-bit
//!   board would link its division and printing. `invalid type` errors name a
//!   float's kind, not its value (`config/decode.rs`), which serde's
//!   `Unexpected` prints.
//! - Floats only for the one float field (load limits), converted by
//!   `config/decode.rs` from the parser's already checked literal (exact for literals
//!   of up to 15 digits and exponents within ±22) and never printed, so
//!   core's float parser and formatter are not linked.
//! - The links for `hook = "auto"` come from the RTM_GETLINK dump the
//!   network's observation makes anyway: `if_nameindex(3)` would pull in
//!   glibc's netlink code.
//!
//! # Kernel interfaces
//!
//! ## NICs
//!
//! Each `[[interface]]` is configured straight through the kernel, with no
//! `ip`, `ethtool`, `ifconfig` or shell:
//!
//! | what | kernel interface | why this one |
//! |---|---|---|
//! | admin up/down, promisc | SIOCGIFFLAGS / SIOCSIFFLAGS | every kernel since 2.x |
//! | MTU | SIOCSIFMTU | idem; the kernel checks the driver's maximum (EINVAL) |
//! | txqueuelen | SIOCSIFTXQLEN | idem |
//! | MAC | SIOCSIFHWADDR | idem; the link is taken down first only when the MAC differs |
//! | addresses (several per interface, IPv4 and IPv6) | rtnetlink RTM_GETADDR dump / RTM_NEWADDR | the ioctls see one IPv4 address per interface and no IPv6 |
//! | routes, gateways | rtnetlink RTM_GETROUTE dump / RTM_NEWROUTE (create + replace) | IPv6 routes have no listing ioctl |
//! | bridges, VLANs, bridge ports | rtnetlink RTM_GETLINK dump / RTM_NEWLINK / RTM_DELLINK (`net/virt.rs`; ifinfomsg and IFLA_* in `sys/rtnl.rs`) | no `ip`, `brctl` or `vconfig`; IFLA_IFALIAS `nasboot` marks the links nasboot made, so it removes only those |
//! | accept_ra, per-interface sysctls | /proc/sys/net/ipv{4,6}/conf/IF | set before the link comes up |
//! | rings, offloads, coalescing, pause, speed/duplex/autoneg | SIOCETHTOOL | the ethtool netlink API is 5.6+ only |
//! | DHCP | `udhcpc -i IF -f -p /run/udhcpc.IF.pid` started and not waited for (its own session, output to /dev/null), or `dhclient -nw -pf ... IF`, found on PATH, argv only | a client already running (pidfile, live pid) is left alone |
//!
//! `net::observe` reads each profile interface (flags, MTU, txqueuelen, MAC,
//! addresses, the main routing table, the sysctls it sets, the ethtool knobs
//! the profile sets); the plan emits only what differs, per interface in
//! this order: sysctls, [down, MAC], MTU, txqueuelen, promisc, ethtool knobs,
//! up, carrier wait, addresses, DHCP, routes and gateways. A re-apply on a
//! board that matches makes no ioctl that changes anything, no rtnetlink
//! event and no carrier change.
//!
//! ethtool:
//!
//! - Offloads go through ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS (the
//!   ETH_SS_FEATURES names) and ETHTOOL_GFEATURES / SFEATURES (2.6.39+),
//!   switching every feature of a group as `ethtool -K` does (`tso` is
//!   tx-tcp-segmentation, -ecn-, -mangleid-, tcp6- and, on 6.18+, -accecn-);
//!   features the driver fixes are not counted. Older kernels fall back to
//!   ETHTOOL_G/STSO, G/SGSO, G/SGRO, G/SRXCSUM, G/STXCSUM, G/SSG.
//! - Link modes: ETHTOOL_GLINKSETTINGS with the negative
//!   `link_mode_masks_nwords` handshake (4.6+), falling back to GSET/SSET.
//! - A knob the driver does not have (EOPNOTSUPP) is a note in the plan and
//!   a warning at apply, never a failure; ring sizes above the driver's
//!   maximum are clamped to it, with a note.
//! - The command structures are `#[repr(C)]` with native-endian fields;
//!   unit tests check their sizes and offsets against ethtool.h on every
//!   target (powerpc, mips, sparc64 under qemu-user).
//!
//! ## Watchdog
//!
//! The ioctl numbers live in the kernel-ABI leaf (`sys/watchdog.rs`,
//! unit-tested against the kernel's table for each target); `src/watchdog/`
//! holds the device policy over the device seam (`watchdog/device.rs`,
//! `watchdog::Device`; the seam is `seam/watchdog.rs`), the
//! daemon loop, health checks, reset history, signals and memory; the
//! `[watchdog]` keys are parsed in `config/watchdog.rs`.
//!
//! - The driver is asked WDIOC_GETSUPPORT (identity, options) and
//!   WDIOC_GETBOOTSTATUS; `CARDRESET` is logged as "the watchdog reset this
//!   board". sysfs (`/sys/class/watchdog/watchdogN/{bootstatus,nowayout,
//!   min_timeout,max_timeout}`) fills in what it has.
//! - WDIOC_SETTIMEOUT: the request is clamped to sysfs's min/max when
//!   present; on EINVAL nasboot steps through 1, 2, 3, 5, 10, 15, 20, 30,
//!   60, 120, 300 s, nearest first (ath79: at most ~21 s; mpc8xxx: not under
//!   its hardware period). The value the driver writes back is the timeout
//!   used, and the pet interval is at most half of it.
//! - Petting uses WDIOC_KEEPALIVE; on ENOTTY, ENOSYS or EINVAL it switches
//!   to write() for good and says so. Where the ioctls are not translated
//!   (qemu-user 7.2: ENOSYS) nasboot logs "the driver could not be queried",
//!   keeps the driver's timeout and pets with write().
//! - A file that is not a watchdog (WDIOC_GETSUPPORT gives ENOTTY natively)
//!   is refused: nothing is written to it.
//! - EBUSY: the holder is named when /proc tells
//!   (`/dev/watchdog0: busy: process 812 (watchdog) holds it open`).
//! - Arming clears the kernel's magic-character flag, which an earlier
//!   orderly stop (`nasboot apply`'s) leaves set: otherwise a crash of the
//!   next `nasboot run` would stop the watchdog silently instead of
//!   resetting the board.
//! - Orderly stop: 'V' (magic close), then WDIOS_DISABLECARD.
//! - Nothing is left half-armed: if setup fails after the open, the device
//!   is closed without petting only when it is not a watchdog; a watchdog
//!   that was opened is closed with the magic close before exiting.
//! - Hand-over (`WDTFD`, as OpenWrt procd does it): on SIGUSR2 nasboot pets
//!   once, clears FD_CLOEXEC on the device's descriptor and execs
//!   `handover_command` with `WDTFD=` the descriptor number in its
//!   environment; `nasboot watchdog` started with `WDTFD` set adopts that
//!   descriptor instead of opening the device.
//!
//! ## Firewall
//!
//! One model (`firewall/model.rs`) from the profile. For nftables the rule
//! set is built once as data (`firewall/rules.rs`: constant rule
//! templates that name the profile's values) and written out by two thin
//! emitters: the `nft -f` text (`firewall/nft.rs`, for `render`, `plan`
//! and the tool path) and one nf_tables batch (`firewall/netlink.rs`).
//! iptables-restore has its own renderer (`firewall/iptables.rs`). The
//! backend and the loader are chosen once (`firewall/backend.rs`), then the
//! rule set is loaded in one transaction, with the fallback and the
//! rollback (`firewall/load.rs`, `firewall/native.rs`).
//!
//! | what | kernel interface | why this one |
//! |---|---|---|
//! | load a rule set | NETLINK_NETFILTER: BATCH_BEGIN, NEWTABLE, DELTABLE, NEWTABLE, NEWCHAIN, NEWSET, NEWSETELEM, NEWFLOWTABLE, NEWRULE, BATCH_END in one `sendmsg`, then a GETGEN fence (`seam/real/nfnl.rs`; the encoding in `sys/nftnl.rs`) | no `nft` process, whose start is most of a tool load on a slow board (scripts/bench-fwload times both loaders); no nft on the board; the kernel commits all or nothing |
//! | is nasboot's table loaded; iptables-nft's tables | GETTABLE dump | no `nft list tables` |
//! | `--confirm`'s copy of what is loaded | GETCHAIN, GETSET, GETSETELEM, GETFLOWTABLE, GETRULE dumps, replayed as NEW* messages | no `nft list table`, and the copy loads back byte for byte |
//! | offloaded flows (`status`) | /proc/net/nf_conntrack (`[OFFLOAD]`) | |
//! | the rule set's modules, on a kernel that has not loaded them | /sys/module for the last module of each kind the batch needs (one to three `stat`s); where one is missing, one `modprobe -a -q --` of them all, the kernel's own modprobe (`kernel.modprobe`), before the batch (`firewall/modules.rs`) | the kernel would run one or two modprobes per module and replay the batch after each, a process per module on the first load (`scripts/bench-fwload --cold`); `finit_module` leaves dependencies and modprobe.d to user space |
//! | the tool path | `nft -f -`, iptables-restore | qemu-user refuses NETLINK_NETFILTER (EPROTONOSUPPORT); a kernel may lack nf_tables; `loader = "nft"` |
//!
//! The batch is the one nft 1.0.6 sends for the same text, byte for byte
//! (the netlink goldens, tests/golden/firewall/netlink-*.txt, in both
//! byte orders), set userdata included, so that `nft list ruleset` on a
//! board that has nft shows the rules as written. Host-order and
//! network-order fields are written per the kernel's reading of each
//! (`sys/nftnl.rs`): a shipped build has one byte order, its own; the unit
//! tests have both. A refused batch is traced back, by the sequence
//! number and the extended ack's attribute offset, to the rule (as
//! `render` prints it), its profile key and the missing expression.
//!
//! `firewall/listeners.rs` names, for `check` and `plan`, the sockets bound
//! inside the local port range that the stateless WAN chain lets replies
//! in to. `firewall::observe` asks nf_tables for its tables through
//! netlink once (not on a board that uses legacy iptables, where asking
//! could load nf_tables), takes the links (the network's RTM_GETLINK dump,
//! with each link's type) only for nftables, where `hook = "auto"` needs
//! them; the condition for the ingress hooks, stateless without
//! forwarding, is one function (`Firewall::ingress_fits`) for the model
//! and the observation. For a router (`forward = true`) it also asks the
//! kernel for nft_flow_offload and nf_nat (`kmod.rs`, shared with SQM's
//! qdiscs: /sys/module, the module files, then modules.builtin and
//! modules.dep), and reads the forwarding sysctls,
//! which the load action sets only after its rule set loaded.
//! `firewall/flows.rs` counts tracked and offloaded connections for
//! `status`.

#![warn(unreachable_pub)]

// Every module is private: the binary (src/main.rs) is the library's
// only user, so what it does not reach is dead code, and rustc says so.
mod apply;
mod cli;
mod cmd;
mod config;
mod confirm;
mod digest;
mod exit;
mod firewall;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzzing;
mod heap;
mod kmod;
mod logger;
mod net;
mod paths;
mod plan;
mod seam;
mod share;
mod storage;
mod sys;
mod sysctl;
mod watchdog;

// What src/main.rs wires together.
pub use cli::{parse as parse_args, Cli};
pub use cmd::{dispatch, Io};
pub use exit::Status;
pub use firewall::load::ignore_hangup;
pub use heap::{c_calloc, c_free, c_malloc, c_realloc, Global};
pub use logger::init as init_logger;
pub use logger::Lines;
pub use seam::dryrun::{DryRunFiles, DryRunNetif, DryRunNftables, DryRunRunner, DryRunSysctl, DryRunWatchdogPort};
pub use seam::real::{
    files::RealFiles, netif::RealNetif, nfnl::RealNftables, runner::RealRunner, sysctl::RealSysctl, watchdog::RealWatchdogPort, Root,
};
pub use seam::Seams;
pub use sys::kernel_release;
/// embedded-hal 0.2's watchdog traits for the Linux watchdog device.
#[cfg(feature = "embedded-hal")]
pub use watchdog::hal;

/// What tests/alloc_tick.rs drives: the watchdog daemon over a counting
/// device. It needs a global allocator of its own, so it is an
/// integration test and not a unit test.
#[doc(hidden)]
pub mod daemon_test {
    pub use crate::config::parse_bytes;
    pub use crate::config::watchdog::Watchdog as Config;
    pub use crate::seam::watchdog::{Support, WatchdogDevice};
    pub use crate::watchdog::daemon::{serve, Host, Outcome, Sig};
    pub use crate::watchdog::health::{Checker, Failure};
    pub use crate::watchdog::Device;
}
