#![no_main]
// See nasboot::fuzzing::export_path for what this target asserts.
libfuzzer_sys::fuzz_target!(|data: &[u8]| nasboot::fuzzing::export_path(data));
