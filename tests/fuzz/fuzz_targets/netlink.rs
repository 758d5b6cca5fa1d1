#![no_main]
// See nasboot::fuzzing::netlink for what this target asserts.
libfuzzer_sys::fuzz_target!(|data: &[u8]| nasboot::fuzzing::netlink(data));
