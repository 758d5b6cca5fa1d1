#![no_main]
// See nasboot::fuzzing::toml for what this target asserts.
libfuzzer_sys::fuzz_target!(|data: &[u8]| nasboot::fuzzing::toml(data));
