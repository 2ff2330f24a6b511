#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_tools_tests::fuzz::http_body(data));
