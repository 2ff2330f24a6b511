#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_toolbelt_tests::fuzz::permissions_file(data));
