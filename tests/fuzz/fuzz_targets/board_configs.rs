#![no_main]
// See nasboot::fuzzing::board_configs for what this target asserts.
libfuzzer_sys::fuzz_target!(|data: &[u8]| nasboot::fuzzing::board_configs(data));
