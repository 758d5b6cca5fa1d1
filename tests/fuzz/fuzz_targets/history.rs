#![no_main]
// See nasboot::fuzzing::history for what this target asserts.
libfuzzer_sys::fuzz_target!(|data: &[u8]| nasboot::fuzzing::history(data));
