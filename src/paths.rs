//! Every absolute path nasboot touches, in one place. The seams relocate
//! them under `--root`; nothing else builds absolute paths.

/// The profile read when `--config` is not given.
pub(crate) const DEFAULT_CONFIG: &str = "/etc/nasboot.toml";
/// Where sysctls live.
pub(crate) const PROC_SYS: &str = "/proc/sys";
/// Block devices' queue settings (read_ahead_kb).
pub(crate) const SYS_BLOCK: &str = "/sys/block";
/// The NFS export table.
pub(crate) const EXPORTS: &str = "/etc/exports";
/// nfsd's control files.
pub(crate) const PROC_NFSD: &str = "/proc/fs/nfsd";
/// Debian's nfs-kernel-server defaults.
pub(crate) const DEFAULT_NFS_KERNEL_SERVER: &str = "/etc/default/nfs-kernel-server";
/// nfs-utils' configuration.
pub(crate) const NFS_CONF: &str = "/etc/nfs.conf";
/// The Samba include nasboot renders.
pub(crate) const SMB_INCLUDE: &str = "/etc/samba/nasboot.conf";
/// Watchdog devices, in the order tried when the profile names none.
pub(crate) const WATCHDOG_DEVICES: [&str; 2] = ["/dev/watchdog0", "/dev/watchdog"];
/// The watchdog class in sysfs (min/max timeout on newer kernels).
pub(crate) const SYS_CLASS_WATCHDOG: &str = "/sys/class/watchdog";
/// The kernel's socket tables (firewall::listeners).
pub(crate) const PROC_NET_TCP: &str = "/proc/net/tcp";
pub(crate) const PROC_NET_TCP6: &str = "/proc/net/tcp6";
pub(crate) const PROC_NET_UDP: &str = "/proc/net/udp";
pub(crate) const PROC_NET_UDP6: &str = "/proc/net/udp6";
/// Loaded (and some built-in) kernel modules, one directory each.
pub(crate) const SYS_MODULE: &str = "/sys/module";
/// The loaded modules; there only where the kernel has modules at all.
pub(crate) const PROC_MODULES: &str = "/proc/modules";
/// Kernel modules, one directory per release.
pub(crate) const LIB_MODULES: &str = "/lib/modules";
/// The connection tracking table (`status` counts offloaded flows).
pub(crate) const PROC_NF_CONNTRACK: &str = "/proc/net/nf_conntrack";
/// The kernel's loaded iptables tables (one name a line).
pub(crate) const IP_TABLES_NAMES: &str = "/proc/net/ip_tables_names";
pub(crate) const IP6_TABLES_NAMES: &str = "/proc/net/ip6_tables_names";
/// Held by every command that changes the board (`apply`, `run` until its
/// apply is done, `firewall apply`), so that two of them never interleave.
pub(crate) const APPLY_LOCK: &str = "/run/nasboot/apply.lock";
/// `firewall apply --confirm`: the rule set to roll back to.
pub(crate) const FIREWALL_PREVIOUS: &str = "/run/nasboot/firewall.previous";
/// `firewall apply --confirm`: the token of the apply waiting for a confirm
/// (empty when none waits).
pub(crate) const FIREWALL_PENDING: &str = "/run/nasboot/firewall.pending";
/// `firewall confirm` writes the waiting token here.
pub(crate) const FIREWALL_CONFIRM: &str = "/run/nasboot/firewall.confirm";
/// nfs-utils' drop-in directory (nfs-utils 2.5 and later read it after
/// NFS_CONF; later values win).
pub(crate) const NFS_CONF_D: &str = "/etc/nfs.conf.d";
/// ksmbd-tools' configuration, which nasboot renders whole.
pub(crate) const KSMBD_CONF: &str = "/etc/ksmbd/ksmbd.conf";
/// ksmbd-tools' user database (`ksmbd.adduser` writes it; nasboot reads it).
pub(crate) const KSMBD_PWDDB: &str = "/etc/ksmbd/ksmbdpwd.db";
/// ksmbd.mountd's lock file: its pid while it runs.
pub(crate) const KSMBD_LOCK: &str = "/run/ksmbd.lock";
/// Samba's main configuration, checked for the include line.
pub(crate) const SMB_CONF: &str = "/etc/samba/smb.conf";
/// RAM size (MemTotal), for sizing nfsd.
pub(crate) const PROC_MEMINFO: &str = "/proc/meminfo";
/// Online CPUs, e.g. "0-1".
pub(crate) const SYS_CPU_ONLINE: &str = "/sys/devices/system/cpu/online";
/// Run-time files of other daemons (DHCP client pidfiles).
pub(crate) const RUN: &str = "/run";
/// The reset history (watchdog::history); persistent state, must survive a reboot.
pub(crate) const RESET_HISTORY: &str = "/var/lib/nasboot/resets";
/// The confirm journal while a candidate is pending (confirm); persistent.
pub(crate) const CONFIRM_PENDING: &str = "/var/lib/nasboot/confirm.pending";
/// The confirm journal once settled: confirmed or rolled back (confirm).
pub(crate) const CONFIRM_JOURNAL: &str = "/var/lib/nasboot/confirm";
/// This boot's id: a deadline from another boot has passed (confirm).
pub(crate) const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";
