#![no_main]
// See nasboot::fuzzing::nf_tables for what this target asserts.
libfuzzer_sys::fuzz_target!(|data: &[u8]| nasboot::fuzzing::nf_tables(data));
