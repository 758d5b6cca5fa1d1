#![no_main]
// See nasboot::fuzzing::profile for what this target asserts.
libfuzzer_sys::fuzz_target!(|data: &[u8]| nasboot::fuzzing::profile(data));
