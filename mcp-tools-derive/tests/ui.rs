//! Compile-fail tests: every misuse of `#[mcp_tool]` is an error at the user's span with a
//! message saying how to fix it. Run `TRYBUILD=overwrite cargo test -p mcp-toolbelt-derive`
//! after an intended message change, and review the `.stderr` diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/pass/*.rs");
}
