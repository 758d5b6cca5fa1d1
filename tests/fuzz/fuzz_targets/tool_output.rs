#![no_main]
// See nasboot::fuzzing::tool_output for what this target asserts.
libfuzzer_sys::fuzz_target!(|data: &[u8]| nasboot::fuzzing::tool_output(data));
