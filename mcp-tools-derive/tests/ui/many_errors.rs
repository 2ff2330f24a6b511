/// Every problem of one fn is reported in one compile, and uses of the name constant add
/// none: a bad key does not hide the signature's errors.
#[mcp_toolbelt::mcp_tool(name = "lookup", permision = ["X"], timeout_ms = "soon")]
fn lookup(#[arg(minimum = 1)] text: String, key: &str) -> String {
    format!("{text}{key}")
}
fn main() {
    let _ = LOOKUP_TOOL;
}
