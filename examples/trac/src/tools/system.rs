//! `ping` and `get_server_time`: is Trac there, and what time is it there.
//! No permission needed: every agent may check its connection.

use chrono::{DateTime, Utc};
use mcp_toolbelt::{Json, State, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::Serialize;

use crate::client::{ServerInfo, TracClient};

/// Check that the Trac server answers: one round trip to its XML-RPC API. Returns the
/// endpoint, the user this server logs in as (null: anonymous), the RPC API version and
/// the server's clock. Call it first when other tools report upstream errors.
#[mcp_tool(name = "ping", category = "system", read_only, idempotent)]
pub async fn ping(trac: State<TracClient>) -> Result<Json<ServerInfo>, ToolError> {
    Ok(Json(trac.ping().await?))
}

/// The Trac server's clock.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ServerTime {
    /// The server's current time (UTC, whole seconds).
    pub server_time: DateTime<Utc>,
    /// The same instant as seconds since 1970-01-01 UTC.
    pub unix_seconds: i64,
    /// The RPC endpoint that answered.
    pub endpoint: String,
}

/// The current date and time on the Trac server (UTC), e.g. to compute "since" dates for
/// wiki_recent_changes or milestone due dates relative to the server's clock.
#[mcp_tool(name = "get_server_time", category = "system", read_only)]
pub async fn get_server_time(trac: State<TracClient>) -> Result<Json<ServerTime>, ToolError> {
    let now = trac.server_time().await?;
    Ok(Json(ServerTime {
        server_time: now,
        unix_seconds: now.timestamp(),
        endpoint: trac.endpoint().to_string(),
    }))
}
