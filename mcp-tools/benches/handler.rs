//! One `tools/call` through the protocol handler, ours beside rmcp's, for the same tool
//! and the same arguments: `echo {"message": "hello"}` → one text block.
//!
//! - `mcp_toolbelt`: [`McpHandler::call_tool`](mcp_toolbelt::server::McpHandler) of a quickstart
//!   style registry (`#[mcp_tool]`): lookup in the caller's view, schema validation,
//!   deserialization, middleware (span, statistics, panic capture, time budget), the
//!   result conversion.
//! - `rmcp_tool_router`: an rmcp 3.11 server written the way rmcp's documentation shows
//!   (`#[tool_router]`, `#[tool]`, `#[tool_handler]`): its `ServerHandler::call_tool`, i.e.
//!   `ToolRouter::call` (lookup, deserialization, the call, `IntoCallToolResult`).
//!
//! Both get the same `CallToolRequestParams` and a `RequestContext` of one real rmcp session
//! (served over an in-memory pipe), so neither pays for transport or JSON-RPC framing here;
//! `stdio-load` measures those.
//!
//! Run: `cargo bench -p mcp-toolbelt --bench handler`.

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_toolbelt::server::rmcp::model::{
    CallToolRequestParams, CallToolResponse, NumberOrString, RequestId,
};
use mcp_toolbelt::server::rmcp::service::{Peer, RequestContext, RoleServer};
use mcp_toolbelt::server::rmcp::{ServerHandler, ServiceExt};
use mcp_toolbelt::{ToolRegistry, mcp_tool};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Echo the message back unchanged.
#[mcp_tool(name = "echo")]
async fn echo(
    /// The text to send back
    message: String,
) -> String {
    message
}

// The peer: `rmcp-echo`'s own server, shared with that binary.
#[path = "../../tests/src/bin/rmcp_echo/server.rs"]
mod rmcp_echo;

use rmcp_echo::EchoServer as RmcpEcho;

/// The peer handle of one initialized rmcp session over an in-memory pipe (the client
/// side sends `initialize` and then keeps reading until the pipe closes).
async fn session_peer() -> Peer<RoleServer> {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (read, mut write) = tokio::io::split(client);
    write
        .write_all(
            concat!(
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
                r#""capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    tokio::spawn(async move {
        let _keep_open = write;
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(_)) = lines.next_line().await {}
    });
    let running = RmcpEcho::new().serve(server).await.expect("handshake");
    let peer = running.peer().clone();
    // The session lives as long as the bench (the process).
    std::mem::forget(running);
    peer
}

fn params() -> CallToolRequestParams {
    let arguments: Map<String, Value> = json!({"message": "hello"}).as_object().cloned().unwrap();
    CallToolRequestParams::new("echo").with_arguments(arguments)
}

fn context(peer: &Peer<RoleServer>) -> RequestContext<RoleServer> {
    RequestContext::new(RequestId::from(NumberOrString::Number(1)), peer.clone())
}

fn succeeded(reply: &CallToolResponse) -> bool {
    matches!(reply, CallToolResponse::Complete(result) if result.is_error != Some(true))
}

fn call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let peer = runtime.block_on(session_peer());
    // The registry of this bench binary's linked tools: `echo` alone.
    let ours =
        mcp_toolbelt::server::Server::new(ToolRegistry::builder().build().unwrap()).handler();
    let rmcp_echo = RmcpEcho::new();
    let mut group = c.benchmark_group("handler_call_tool");
    group.bench_function("mcp_toolbelt", |b| {
        b.to_async(&runtime).iter(|| async {
            let reply = ours.call_tool(params(), context(&peer)).await.unwrap();
            assert!(succeeded(&reply));
            reply
        })
    });
    group.bench_function("rmcp_tool_router", |b| {
        b.to_async(&runtime).iter(|| async {
            let reply = rmcp_echo.call_tool(params(), context(&peer)).await.unwrap();
            assert!(succeeded(&reply));
            reply
        })
    });
    group.finish();
}

criterion_group!(benches, call);
criterion_main!(benches);
