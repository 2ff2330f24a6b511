//! The 27 MCP tools, called as an MCP client calls them, through the protocol
//! engine (`mcp_toolbelt::testing`: schema validation, permission filter,
//! dispatch, the result's wire form) against the real tracd servers of
//! `common`. Each test checks the effect in Trac.

mod common;

#[path = "tools/faults.rs"]
mod faults;
#[path = "tools/milestone.rs"]
mod milestone;
#[path = "tools/resources.rs"]
mod resources;
#[path = "tools/system.rs"]
mod system;
#[path = "tools/table.rs"]
mod table;
#[path = "tools/ticket.rs"]
mod ticket;
#[path = "tools/ticket_batch.rs"]
mod ticket_batch;
#[path = "tools/wiki.rs"]
mod wiki;
#[path = "tools/wiki_file.rs"]
mod wiki_file;

use mcp_toolbelt::server::Server;
use mcp_toolbelt::testing::{TestClient, ToolResultExt};
use mcp_toolbelt::{ErrorKind, ToolRegistry, ToolResult};
use serde_json::Value;
use trac_mcp::client::TracClient;

/// An MCP client of a server of every tool over one Trac client.
pub struct Tools {
    client: TestClient,
}

/// The text of a failed call, split up.
#[derive(Debug)]
pub struct Failure {
    /// The error kind.
    pub kind: ErrorKind,
    /// The whole `Error (kind): message\n\nAction: ...` text.
    pub text: String,
}

impl Failure {
    /// The `Action:` line.
    pub fn action(&self) -> &str {
        self.text
            .split_once("\n\nAction: ")
            .map_or("", |(_, action)| action)
    }
}

impl Tools {
    /// All tools over `client`, connected.
    pub async fn new(client: TracClient) -> Tools {
        let registry = ToolRegistry::builder()
            .state(client)
            .build()
            .expect("the registry builds");
        Tools {
            client: TestClient::connect(Server::new(registry)).await,
        }
    }

    /// All tools over the anonymous-admin server.
    pub async fn anon() -> Tools {
        Tools::new(common::servers().anon_client()).await
    }

    /// The MCP client, for what is not a tool call (resources, completion).
    pub fn client(&self) -> &TestClient {
        &self.client
    }

    /// Calls `tool`; panics if the server does not know it.
    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.client.call(tool, args).await
    }

    /// Calls `tool`, expects success and returns its structured content.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        self.call(tool, args).await.ok().clone()
    }

    /// Creates one more ticket, so that tickets created before it can be deleted
    /// without their numbers being reused: Trac on SQLite gives a new ticket
    /// the highest number + 1, so deleting the newest ticket frees its number
    /// for the next ticket any concurrent test creates.
    pub async fn guard_ticket_numbers(&self) {
        self.ok(
            "ticket_create",
            serde_json::json!({"summary": "keeps older ticket numbers unique"}),
        )
        .await;
    }

    /// Calls `tool`, expects an error result and returns it.
    pub async fn fail(&self, tool: &str, args: Value) -> Failure {
        let result = self.call(tool, args).await;
        Failure {
            kind: result.err_kind(),
            text: result.text_content(),
        }
    }
}
