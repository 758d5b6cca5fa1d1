//! The watchdog ioctl request numbers (include/uapi/linux/watchdog.h),
//! computed per architecture with const fns.
//!
//! The `_IOC` encoding differs between architectures
//! (include/uapi/asm-generic/ioctl.h against arch/{powerpc,mips,sparc}/
//! include/uapi/asm/ioctl.h): x86, ARM and most others use 2 direction bits
//! at bit 30 (none 0, write 1, read 2) and a 14-bit size; powerpc, mips and
//! sparc use 3 direction bits at bit 29 (none 1, read 2, write 4) and a
//! 13-bit size. nix's ioctl macros pick the second encoding for mips*,
//! powerpc* and sparc64 but not for 32-bit `sparc`, so these numbers are
//! computed here instead, and a unit test compares every one of them with
//! the table in the kernel documentation for the target it runs on.

/// Whether this target uses the 3-direction-bit encoding.
pub(crate) const THREE_DIR_BITS: bool = cfg!(any(
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "mips32r6",
    target_arch = "mips64r6",
    target_arch = "sparc",
    target_arch = "sparc64",
));

const DIR_SHIFT: u32 = if THREE_DIR_BITS { 29 } else { 30 };
const SIZE_BITS: u32 = if THREE_DIR_BITS { 13 } else { 14 };
const READ: u32 = 2;
const WRITE: u32 = if THREE_DIR_BITS { 4 } else { 1 };

/// `_IOC(dir, type, nr, size)`.
pub(crate) const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    assert!(size < (1 << SIZE_BITS), "ioctl argument too large for the size field");
    (dir << DIR_SHIFT) | ((size as u32) << 16) | ((ty as u32) << 8) | nr as u32
}

/// `_IOR(type, nr, T)`: the kernel writes a T.
pub(crate) const fn ior(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(READ, ty, nr, size)
}

/// `_IOWR(type, nr, T)`.
pub(crate) const fn iowr(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(READ | WRITE, ty, nr, size)
}

/// `struct watchdog_info { __u32 options; __u32 firmware_version; __u8 identity[32]; }`
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WatchdogInfo {
    pub options: u32,
    pub firmware_version: u32,
    pub identity: [u8; 32],
}

const INT: usize = core::mem::size_of::<core::ffi::c_int>();

pub(crate) const WDIOC_GETSUPPORT: u32 = ior(b'W', 0, core::mem::size_of::<WatchdogInfo>());
#[allow(dead_code)] // the header's, in the table tested below; nasboot does not send it
pub(crate) const WDIOC_GETSTATUS: u32 = ior(b'W', 1, INT);
pub(crate) const WDIOC_GETBOOTSTATUS: u32 = ior(b'W', 2, INT);
#[allow(dead_code)] // the header's, in the table tested below; nasboot does not send it
pub(crate) const WDIOC_GETTEMP: u32 = ior(b'W', 3, INT);
/// Read direction in the header, although the kernel reads the caller's int.
pub(crate) const WDIOC_SETOPTIONS: u32 = ior(b'W', 4, INT);
pub(crate) const WDIOC_KEEPALIVE: u32 = ior(b'W', 5, INT);
pub(crate) const WDIOC_SETTIMEOUT: u32 = iowr(b'W', 6, INT);
pub(crate) const WDIOC_GETTIMEOUT: u32 = ior(b'W', 7, INT);
#[allow(dead_code)] // the header's, in the table tested below; nasboot does not send it
pub(crate) const WDIOC_SETPRETIMEOUT: u32 = iowr(b'W', 8, INT);
#[allow(dead_code)] // the header's, in the table tested below; nasboot does not send it
pub(crate) const WDIOC_GETPRETIMEOUT: u32 = ior(b'W', 9, INT);
#[allow(dead_code)] // the header's, in the table tested below; nasboot does not send it
pub(crate) const WDIOC_GETTIMELEFT: u32 = ior(b'W', 10, INT);

/// `watchdog_info.options` and boot status bits.
pub(crate) const WDIOF_OVERHEAT: u32 = 0x0001;
pub(crate) const WDIOF_FANFAULT: u32 = 0x0002;
pub(crate) const WDIOF_EXTERN1: u32 = 0x0004;
pub(crate) const WDIOF_EXTERN2: u32 = 0x0008;
pub(crate) const WDIOF_POWERUNDER: u32 = 0x0010;
pub(crate) const WDIOF_CARDRESET: u32 = 0x0020;
pub(crate) const WDIOF_POWEROVER: u32 = 0x0040;
pub(crate) const WDIOF_SETTIMEOUT: u32 = 0x0080;
pub(crate) const WDIOF_MAGICCLOSE: u32 = 0x0100;
pub(crate) const WDIOF_PRETIMEOUT: u32 = 0x0200;
pub(crate) const WDIOF_ALARMONLY: u32 = 0x0400;
pub(crate) const WDIOF_KEEPALIVEPING: u32 = 0x8000;

/// `WDIOC_SETOPTIONS` values.
pub(crate) const WDIOS_DISABLECARD: u32 = 0x0001;
pub(crate) const WDIOS_ENABLECARD: u32 = 0x0002;
#[allow(dead_code)] // the header's, in the table tested below; nasboot does not send it
pub(crate) const WDIOS_TEMPPANIC: u32 = 0x0004;

/// Names of the option bits, for logs.
pub(crate) const OPTION_NAMES: [(u32, &str); 12] = [
    (WDIOF_OVERHEAT, "OVERHEAT"),
    (WDIOF_FANFAULT, "FANFAULT"),
    (WDIOF_EXTERN1, "EXTERN1"),
    (WDIOF_EXTERN2, "EXTERN2"),
    (WDIOF_POWERUNDER, "POWERUNDER"),
    (WDIOF_CARDRESET, "CARDRESET"),
    (WDIOF_POWEROVER, "POWEROVER"),
    (WDIOF_SETTIMEOUT, "SETTIMEOUT"),
    (WDIOF_MAGICCLOSE, "MAGICCLOSE"),
    (WDIOF_PRETIMEOUT, "PRETIMEOUT"),
    (WDIOF_ALARMONLY, "ALARMONLY"),
    (WDIOF_KEEPALIVEPING, "KEEPALIVEPING"),
];

/// The option bits as names separated by `|` (e.g. `SETTIMEOUT|MAGICCLOSE`).
pub(crate) fn option_names(bits: u32, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
    let mut first = true;
    for (bit, name) in OPTION_NAMES {
        if bits & bit != 0 {
            if !first {
                f.write_str("|")?;
            }
            f.write_str(name)?;
            first = false;
        }
    }
    if first {
        f.write_str("none")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (name, ours, x86/ARM, powerpc/mips/sparc): watchdog.md's table,
    /// computed from the kernel headers.
    const TABLE: [(&str, u32, u32, u32); 11] = [
        ("GETSUPPORT", WDIOC_GETSUPPORT, 0x8028_5700, 0x4028_5700),
        ("GETSTATUS", WDIOC_GETSTATUS, 0x8004_5701, 0x4004_5701),
        ("GETBOOTSTATUS", WDIOC_GETBOOTSTATUS, 0x8004_5702, 0x4004_5702),
        ("GETTEMP", WDIOC_GETTEMP, 0x8004_5703, 0x4004_5703),
        ("SETOPTIONS", WDIOC_SETOPTIONS, 0x8004_5704, 0x4004_5704),
        ("KEEPALIVE", WDIOC_KEEPALIVE, 0x8004_5705, 0x4004_5705),
        ("SETTIMEOUT", WDIOC_SETTIMEOUT, 0xC004_5706, 0xC004_5706),
        ("GETTIMEOUT", WDIOC_GETTIMEOUT, 0x8004_5707, 0x4004_5707),
        ("SETPRETIMEOUT", WDIOC_SETPRETIMEOUT, 0xC004_5708, 0xC004_5708),
        ("GETPRETIMEOUT", WDIOC_GETPRETIMEOUT, 0x8004_5709, 0x4004_5709),
        ("GETTIMELEFT", WDIOC_GETTIMELEFT, 0x8004_570A, 0x4004_570A),
    ];

    #[test]
    fn request_numbers_match_the_kernel_for_this_target() {
        let arch = std::env::consts::ARCH;
        for (name, ours, x86, ppc) in TABLE {
            let want = if THREE_DIR_BITS { ppc } else { x86 };
            assert_eq!(ours, want, "WDIOC_{name} on {arch}: {ours:#010x}, the kernel's is {want:#010x}");
        }
    }

    #[test]
    fn the_encoding_follows_the_architecture() {
        let three =
            matches!(std::env::consts::ARCH, "powerpc" | "powerpc64" | "mips" | "mips64" | "mips32r6" | "mips64r6" | "sparc" | "sparc64");
        assert_eq!(THREE_DIR_BITS, three, "{}", std::env::consts::ARCH);
    }

    #[test]
    fn watchdog_info_is_40_bytes() {
        assert_eq!(core::mem::size_of::<WatchdogInfo>(), 40);
    }
}
