//! Shared fixture: one pair of real tracd servers per test binary, from
//! `trac_mcp::testing` (started on first use, stopped when the process exits).
#![allow(dead_code, unused_imports)] // each test binary uses a different part of the fixture

use std::path::Path;

pub use trac_mcp::testing::{PASSWORD, TracServers, USER, run_script, unique};

/// The servers of this test binary, started on first use.
pub fn servers() -> &'static TracServers {
    trac_mcp::testing::shared(Path::new(env!("CARGO_TARGET_TMPDIR")))
}
