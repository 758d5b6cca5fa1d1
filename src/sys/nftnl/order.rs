//! The byte order of the fields netlink keeps in host order (see the
//! module above): the headers, and what meta, ct and fib load.

/// The byte order of host-order fields. A shipped build has one value,
/// the target's own (what its kernel reads), so every conversion is a
/// plain native-endian one; the unit tests and the fuzz targets have both
/// orders, to pin and read the bytes of either on any host.
#[cfg(any(test, feature = "fuzz"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    Little,
    Big,
}

#[cfg(any(test, feature = "fuzz"))]
impl Order {
    /// The order of the machine this runs on: what the kernel reads.
    pub(crate) const HOST: Order = if cfg!(target_endian = "big") { Order::Big } else { Order::Little };
    fn native(self) -> bool {
        self == Order::HOST
    }
}

/// The byte order of host-order fields: the target's own (see above).
#[cfg(not(any(test, feature = "fuzz")))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    Host,
}

#[cfg(not(any(test, feature = "fuzz")))]
impl Order {
    pub(crate) const HOST: Order = Order::Host;
    fn native(self) -> bool {
        true
    }
}

impl Order {
    pub(crate) fn u16(self, v: u16) -> [u8; 2] {
        if self.native() { v } else { v.swap_bytes() }.to_ne_bytes()
    }
    pub(crate) fn u32(self, v: u32) -> [u8; 4] {
        if self.native() { v } else { v.swap_bytes() }.to_ne_bytes()
    }
    pub(super) fn read_u16(self, b: &[u8]) -> u16 {
        let v = u16::from_ne_bytes([b[0], b[1]]);
        if self.native() {
            v
        } else {
            v.swap_bytes()
        }
    }
    pub(super) fn read_u32(self, b: &[u8]) -> u32 {
        let v = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
        if self.native() {
            v
        } else {
            v.swap_bytes()
        }
    }
}
