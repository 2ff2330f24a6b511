//! Arguments that look like extractors but are not, and a long parameter list.

use mcp_toolbelt::{State as Shared, ToolContext, mcp_tool};

/// The user's own `State` type: an argument, not an extractor.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
enum State {
    Open,
    Closed,
}

/// A user type called `State<T>`, written with its path: an argument.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
struct Wrapper<T> {
    inner: T,
}

mod own {
    #[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
    pub struct State<T> {
        pub value: T,
    }
}

struct Db;

/// Set a ticket's state.
#[mcp_tool]
async fn ticket_set_state(
    db: mcp_toolbelt::State<Db>,
    ctx: ToolContext,
    state: State,
    wrapped: Wrapper<u8>,
    counter: own::State<u32>,
    #[arg(min_length = 1)] note: Option<String>,
) -> String {
    let _ = (db, ctx);
    format!("{state:?} {} {} {note:?}", wrapped.inner, counter.value)
}

/// A renamed import of the extractor is not recognised: `#[extract]` says so.
#[mcp_tool]
async fn ticket_count(#[extract] db: Shared<Db>) -> String {
    let _ = db;
    "0".into()
}

/// Eight arguments.
#[mcp_tool]
#[deny(clippy::all)]
async fn ticket_create(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    e: u8,
    f: u8,
    g: u8,
    h: u8,
) -> String {
    format!("{}", a + b + c + d + e + f + g + h)
}

fn main() {
    let _ = (TICKET_SET_STATE_TOOL, TICKET_COUNT_TOOL, TICKET_CREATE_TOOL);
}
