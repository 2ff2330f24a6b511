#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    a: i64,
}
/// Mixes an args struct and a plain argument.
#[mcp_toolbelt::mcp_tool]
async fn add(#[args] args: Args, b: i64) -> String {
    (args.a + b).to_string()
}
fn main() {}
