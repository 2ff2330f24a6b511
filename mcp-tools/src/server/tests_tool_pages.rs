//! `tools/list` from pages serialized once (`tool_pages.rs`), checked against rmcp's own
//! service loop serving the same handler: every page, for every permission view, is the
//! same bytes on both, whether it came from the cache or not; a hidden tool never shows;
//! a runtime change is never answered from a page cached before it.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Server;
use super::drain::Drain;
use super::handler::McpHandler;
use super::state::Shared;
use super::stream::{StreamLimits, serve_stream};
use super::tests::{RawClient, registry, text_tool_builder};
use crate::definition::ToolDef;
use crate::{Caller, PermissionSet, ToolRegistry};

/// Seven tools: open ones, `READ` ones, `ADMIN` ones, and one whose output schema is not
/// an object (rmcp drops it for protocols before 2026-07-28, so the cached page must too).
fn tools() -> ToolRegistry {
    let tool = |name: &str, permissions: &[&'static str]| -> ToolDef {
        text_tool_builder(name)
            .permissions(permissions.iter().copied())
            .build()
            .unwrap()
    };
    let listing = text_tool_builder("listing")
        .output_schema(Some(
            serde_json::from_value(json!({"type": "array", "items": {"type": "string"}})).unwrap(),
        ))
        .build()
        .unwrap();
    registry([
        tool("alpha", &[]),
        tool("beta", &["READ"]),
        tool("gamma", &["ADMIN"]),
        listing,
        tool("epsilon", &["READ"]),
        tool("zeta", &["ADMIN"]),
        tool("eta", &[]),
    ])
}

/// A session served by our byte-stream stack (codec, bounded transport, direct replies).
fn ours(shared: &Arc<Shared>, caller: Option<Caller>) -> RawClient {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_end);
    let shared = shared.clone();
    let limits = StreamLimits {
        max_in_flight: 16,
        max_line_length: 1 << 20,
    };
    tokio::spawn(async move {
        let drain = Drain::start(CancellationToken::new(), Duration::from_secs(1));
        serve_stream(shared, read, write, caller, limits, &drain).await
    });
    RawClient::over(client_end)
}

/// A session of the same handler served by rmcp's own service loop and transport.
fn rmcps(shared: &Arc<Shared>, caller: Option<Caller>) -> RawClient {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_end);
    let handler = McpHandler::new_session_as(shared.clone(), caller);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve((read, write)).await {
            let _ = running.waiting().await;
        }
    });
    RawClient::over(client_end)
}

/// A client that sends a request and reads its reply (notifications skipped).
trait Asks {
    async fn ask(&mut self, request: Value) -> String;
}

impl Asks for RawClient {
    async fn ask(&mut self, request: Value) -> String {
        let id = request["id"].clone();
        self.send(request).await;
        loop {
            let line = self.next_line().await;
            if serde_json::from_str::<Value>(&line).unwrap().get("id") == Some(&id) {
                return line;
            }
        }
    }
}

/// Every `tools/list` reply line of one walk (first page, then each `nextCursor`), with
/// ids from `first_id` on (alternately numbers and strings).
async fn walk(client: &mut impl Asks, first_id: i64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cursor = Value::Null;
    for page in 0..100 {
        let n = first_id + page;
        let id = if n % 2 == 0 {
            json!(n)
        } else {
            json!(format!("p-{n}"))
        };
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let line = client
            .ask(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}))
            .await;
        let reply: Value = serde_json::from_str(&line).unwrap();
        lines.push(line);
        cursor = reply["result"]
            .get("nextCursor")
            .cloned()
            .unwrap_or(Value::Null);
        if cursor.is_null() {
            return lines;
        }
    }
    panic!("the walk did not end within 100 pages");
}

/// The tool names of a walk's pages, in order.
fn names(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .flat_map(|line| {
            let reply: Value = serde_json::from_str(line).unwrap();
            reply["result"]["tools"]
                .as_array()
                .unwrap_or_else(|| panic!("not a page: {line}"))
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Two walks of `ours`, each the same bytes as `by_rmcp`: the first caches each page once
/// (a miss), the second is served from the cache; the number of pages cached.
async fn walk_twice(shared: &Shared, ours: &mut impl Asks, by_rmcp: &[String]) -> usize {
    let cached = shared.tool_pages.size().0;
    let first = walk(ours, 10).await;
    assert_eq!(first, by_rmcp, "a page serialized on a miss");
    let added = shared.tool_pages.size().0 - cached;
    assert_eq!(added, first.len(), "each page cached once");
    let again = walk(ours, 10).await;
    assert_eq!(again, by_rmcp, "a page from the cache");
    assert_eq!(
        shared.tool_pages.size().0,
        cached + added,
        "served, not re-cached"
    );
    added
}

/// The callers of the tests: local (every tool), a reader, and a token granting nothing.
fn callers() -> [Option<Caller>; 3] {
    [
        None,
        Some(Caller::with_permissions(PermissionSet::new(["READ"]))),
        Some(Caller::with_permissions(PermissionSet::empty())),
    ]
}

async fn connected(shared: &Arc<Shared>, caller: &Option<Caller>) -> (RawClient, RawClient) {
    let mut ours = ours(shared, caller.clone());
    let mut rmcps = rmcps(shared, caller.clone());
    ours.initialize().await;
    rmcps.initialize().await;
    (ours, rmcps)
}

#[tokio::test]
async fn cached_pages_are_byte_for_byte_what_rmcp_sends_for_every_view() {
    let shared = Server::new(tools()).page_size(3).shared();
    let expected: [&[&str]; 3] = [
        &[
            "alpha", "beta", "epsilon", "eta", "gamma", "listing", "zeta",
        ],
        &["alpha", "beta", "epsilon", "eta", "listing"],
        &["alpha", "eta", "listing"],
    ];
    for (caller, expected) in callers().iter().zip(expected) {
        let (mut ours, mut rmcps) = connected(&shared, caller).await;
        let by_rmcp = walk(&mut rmcps, 10).await;
        assert_eq!(names(&by_rmcp), expected);
        walk_twice(&shared, &mut ours, &by_rmcp).await;
    }
    // One page of every tool; the output schema that is not an object is left out, as
    // rmcp leaves it out for this protocol.
    let whole = Server::new(tools()).shared();
    let (mut ours, mut rmcps) = connected(&whole, &None).await;
    let (mine, theirs) = (walk(&mut ours, 1).await, walk(&mut rmcps, 1).await);
    assert_eq!(mine, theirs);
    assert!(!mine[0].contains("outputSchema"), "{}", mine[0]);
}

#[tokio::test]
async fn a_runtime_change_is_never_answered_from_a_page_cached_before_it() {
    let registry = tools();
    let shared = Server::new(registry.clone()).page_size(3).shared();
    let reader = &callers()[1];
    let (mut ours, mut rmcps) = connected(&shared, reader).await;
    let before = walk(&mut ours, 10).await;
    assert_eq!(
        names(&before),
        ["alpha", "beta", "epsilon", "eta", "listing"]
    );
    let stale_cursor =
        serde_json::from_str::<Value>(&before[0]).unwrap()["result"]["nextCursor"].clone();

    registry.disable("beta").unwrap();
    let after = walk(&mut ours, 20).await;
    assert_eq!(after, walk(&mut rmcps, 20).await);
    assert_eq!(names(&after), ["alpha", "epsilon", "eta", "listing"]);
    let stale = ours
        .request(30, "tools/list", json!({"cursor": stale_cursor}))
        .await;
    assert_eq!(stale["error"]["code"], -32602, "{stale}");

    // A tool registered at run time shows at once; one the reader may not see never does.
    registry
        .register(text_tool_builder("delta").build().unwrap())
        .unwrap();
    registry
        .register(
            text_tool_builder("omega")
                .permissions(["ADMIN"])
                .build()
                .unwrap(),
        )
        .unwrap();
    registry.enable("beta").unwrap();
    let latest = walk(&mut ours, 40).await;
    assert_eq!(latest, walk(&mut rmcps, 40).await);
    assert_eq!(
        names(&latest),
        ["alpha", "beta", "delta", "epsilon", "eta", "listing"]
    );
    // Only pages of the current version are kept.
    assert_eq!(shared.tool_pages.size().0, latest.len());
}

/// Stateless streamable HTTP: `tools/list` through the direct path (pages serialized once,
/// shared with stdio) is byte for byte what rmcp's own stateless path answers, whether
/// the page came from the cache or not, for every view; a refused cursor gets rmcp's error.
#[cfg(feature = "http")]
mod over_http {
    use super::*;
    use crate::server::{HttpOptions, McpService};
    use http_body_util::BodyExt;
    use tower_service::Service;

    /// Stateless POSTs as `caller`; `direct`: with the plain `Accept` header the direct
    /// path serves, else with one only rmcp judges (a parameter in it).
    struct HttpClient {
        service: McpService,
        caller: Option<Caller>,
        direct: bool,
    }

    impl Asks for HttpClient {
        async fn ask(&mut self, request: Value) -> String {
            let accept = match self.direct {
                true => "application/json, text/event-stream",
                false => "application/json;q=1, text/event-stream",
            };
            let mut request = http::Request::post("/mcp")
                .header("host", "localhost")
                .header("content-type", "application/json")
                .header("accept", accept)
                .body(http_body_util::Full::new(bytes::Bytes::from(
                    request.to_string(),
                )))
                .unwrap();
            if let Some(caller) = &self.caller {
                request.extensions_mut().insert(caller.clone());
            }
            let response = self.service.call(request).await.unwrap();
            assert_eq!(response.status(), 200);
            let body = response.into_body().collect().await.unwrap().to_bytes();
            String::from_utf8(body.to_vec()).unwrap()
        }
    }

    #[tokio::test]
    async fn pages_over_http_are_byte_for_byte_what_rmcp_sends_for_every_view() {
        let registry = tools();
        let server = Server::new(registry.clone()).page_size(3);
        let shared = server.shared();
        let service = server.http_service(HttpOptions::default().stateless());
        let client = |caller: &Option<Caller>, direct| HttpClient {
            service: service.clone(),
            caller: caller.clone(),
            direct,
        };
        let mut pages_walked = 0;
        for caller in callers() {
            let by_rmcp = walk(&mut client(&caller, false), 10).await;
            assert_eq!(
                shared.tool_pages.size().0,
                pages_walked,
                "rmcp caches nothing"
            );
            pages_walked += walk_twice(&shared, &mut client(&caller, true), &by_rmcp).await;
            // The same pages over stdio come from the same cache.
            let (mut stdio, _) = connected(&shared, &caller).await;
            assert_eq!(names(&walk(&mut stdio, 10).await), names(&by_rmcp));
            assert_eq!(shared.tool_pages.size().0, pages_walked);
        }

        // A cursor the server never issued, and one from before a runtime change: rmcp's
        // error, the same bytes on both paths.
        let mut ours = client(&None, true);
        let stale = serde_json::from_str::<Value>(&walk(&mut ours, 1).await[0]).unwrap()["result"]
            ["nextCursor"]
            .clone();
        registry.disable("beta").unwrap();
        for cursor in [json!("garbage"), stale] {
            let request = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list",
                                 "params": {"cursor": cursor}});
            let refused = ours.ask(request.clone()).await;
            assert_eq!(refused, client(&None, false).ask(request).await);
            let refused: Value = serde_json::from_str(&refused).unwrap();
            assert_eq!(refused["error"]["code"], -32602, "{refused}");
        }
        let after = walk(&mut ours, 20).await;
        assert_eq!(after, walk(&mut client(&None, false), 20).await);
        assert!(!names(&after).contains(&"beta".to_string()));
    }
}
