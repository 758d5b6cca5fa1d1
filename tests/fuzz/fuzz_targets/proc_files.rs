#![no_main]
// See nasboot::fuzzing::proc_files for what this target asserts.
libfuzzer_sys::fuzz_target!(|data: &[u8]| nasboot::fuzzing::proc_files(data));
