//! FNV-1a, 64 bits: the one digest nasboot keeps (the firewall's seal, the
//! confirm journal's profile digests). Not cryptographic: it tells one
//! rule set or profile from another, which is all either needs.

/// FNV-1a's offset basis: the digest of nothing.
pub(crate) const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// `bytes` added to the digest `h`.
pub(crate) fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3))
}
