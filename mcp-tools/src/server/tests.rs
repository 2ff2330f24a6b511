//! In-process protocol tests: a raw JSON-RPC client over an in-memory pipe, against the
//! real server stack (rmcp service, bounded transport, handler, registry).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::sync::Semaphore;

use super::{Server, ServerInfo};
use crate::definition::ToolDef;
use crate::{ToolRegistry, ToolResult};

/// A line-oriented JSON-RPC client; notifications seen while waiting are kept.
pub(super) struct RawClient {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    pub(super) notifications: Vec<Value>,
}

impl RawClient {
    /// Serve `server` on one end of a pipe and return a client on the other.
    pub(super) fn connect(server: Server) -> RawClient {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_end);
        tokio::spawn(async move { server.serve_io(server_read, server_write).await });
        RawClient::over(client_end)
    }

    /// A client on `client_end` of a pipe whose other end something serves.
    pub(super) fn over(client_end: DuplexStream) -> RawClient {
        let (read, write) = tokio::io::split(client_end);
        RawClient {
            write,
            lines: BufReader::new(read).lines(),
            notifications: Vec::new(),
        }
    }

    pub(super) async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// Send `line` as written (plus its newline): ids like `2.0` that `Value` rewrites.
    pub(super) async fn send_line(&mut self, line: &str) {
        self.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    pub(super) async fn next(&mut self) -> Value {
        serde_json::from_str(&self.next_line().await).unwrap()
    }

    /// The next line from the server, as sent (without its newline).
    pub(super) async fn next_line(&mut self) -> String {
        tokio::time::timeout(std::time::Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("no message from the server within 20 s")
            .unwrap()
            .expect("the server closed the pipe")
    }

    /// The reply to request `id`, keeping notifications that come first.
    pub(super) async fn reply(&mut self, id: i64) -> Value {
        loop {
            let message = self.next().await;
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            assert!(message.get("id").is_none(), "unexpected reply {message}");
            self.notifications.push(message);
        }
    }

    pub(super) async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.reply(id).await
    }

    pub(super) async fn initialize(&mut self) -> Value {
        let reply = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        reply
    }
}

fn text_tool(name: &str) -> ToolDef {
    text_tool_builder(name).build().unwrap()
}

/// A tool answering its own name, to be configured further.
pub(super) fn text_tool_builder(name: &str) -> crate::definition::ToolDefBuilder {
    let reply = name.to_string();
    ToolDef::builder(name.to_string())
        .description(format!("Answers {name}."))
        .handler(move |_args, _ctx| {
            let reply = reply.clone();
            async move { Ok(ToolResult::text(reply)) }
        })
}

/// A tool that waits for a permit from `gate`, recording how many calls run at once.
fn gated_tool(gate: Arc<Semaphore>, running: Arc<AtomicUsize>, peak: Arc<AtomicUsize>) -> ToolDef {
    ToolDef::builder("gated")
        .description("Waits for the test to open the gate.")
        .handler(move |_args, _ctx| {
            let (gate, running, peak) = (gate.clone(), running.clone(), peak.clone());
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                let _guard = Decrement(running);
                gate.acquire().await.unwrap().forget();
                Ok(ToolResult::text("through"))
            }
        })
        .build()
        .unwrap()
}

struct Decrement(Arc<AtomicUsize>);

impl Drop for Decrement {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

pub(super) fn registry(defs: impl IntoIterator<Item = ToolDef>) -> ToolRegistry {
    defs.into_iter()
        .fold(ToolRegistry::builder().include_linked(false), |b, d| {
            b.tool(d)
        })
        .build()
        .unwrap()
}

async fn wait_until(mut condition: impl FnMut() -> bool) {
    for _ in 0..2000 {
        if condition() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("condition not reached");
}

#[tokio::test]
async fn initialize_reports_the_servers_own_identity() {
    let server = Server::new(registry([text_tool("alpha")]))
        .info(ServerInfo::new("demo-server", "3.1.4"))
        .instructions("Call alpha.");
    let mut client = RawClient::connect(server);
    let reply = client.initialize().await;
    let result = &reply["result"];
    assert_eq!(result["serverInfo"]["name"], "demo-server");
    assert_eq!(result["serverInfo"]["version"], "3.1.4");
    assert_eq!(result["instructions"], "Call alpha.");
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert!(result["capabilities"]["logging"].is_object());
    let unknown = client.request(1, "no/such_method", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
    let malformed = client.request(2, "tools/call", json!({"name": 7})).await;
    assert_eq!(malformed["error"]["code"], -32602, "{malformed}");
    assert!(
        malformed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tools/call"),
        "{malformed}"
    );
}

#[tokio::test]
async fn pagination_walks_every_tool_once_and_refuses_stale_cursors() {
    let names = ["a1", "a2", "a3", "a4", "a5"];
    let registry = registry(names.map(text_tool));
    let mut client = RawClient::connect(Server::new(registry.clone()).page_size(2));
    client.initialize().await;
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    let mut first_cursor = None;
    loop {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let reply = client.request(10 + pages, "tools/list", params).await;
        let result = &reply["result"];
        let page: Vec<String> = result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        assert!(page.len() <= 2);
        seen.extend(page);
        pages += 1;
        cursor = result.get("nextCursor").cloned().unwrap_or(Value::Null);
        if first_cursor.is_none() {
            first_cursor = Some(cursor.clone());
        }
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(seen, names);
    assert_eq!(pages, 3);
    registry.disable("a1").unwrap();
    let stale = client
        .request(50, "tools/list", json!({"cursor": first_cursor.unwrap()}))
        .await;
    assert_eq!(stale["error"]["code"], -32602, "{stale}");
    let message = stale["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the tool list changed since it was issued"),
        "{stale}"
    );
    // Forged and garbled cursors, each in the compact shape a walk sends and spelled
    // otherwise: refused with the reason, the session serving on.
    for (id, params) in [
        (51, json!({"cursor": "0.1"})),
        (52, json!({"cursor": "99999999999999999999.0"})),
        (53, json!({"cursor": "x.1"})),
        (54, json!({"cursor": "1.2.3"})),
        (55, json!({"cursor": ""})),
        (56, json!({"cursor": "0.0", "_meta": null})),
        (57, json!({"cursor": "1.9"})),
    ] {
        let refused = client.request(id, "tools/list", params).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("invalid cursor")
                && message.ends_with("list again without a cursor"),
            "{refused}"
        );
    }
    let again = client.request(58, "tools/list", json!({})).await;
    assert_eq!(again["result"]["tools"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn in_flight_bound_holds_back_pipelined_calls() {
    let gate = Arc::new(Semaphore::new(0));
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let registry = registry([gated_tool(gate.clone(), running.clone(), peak.clone())]);
    let mut client = RawClient::connect(Server::new(registry).max_in_flight(4));
    client.initialize().await;
    for id in 1..=40 {
        client
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "gated", "arguments": {}}}))
            .await;
    }
    wait_until(|| running.load(Ordering::SeqCst) == 4).await;
    gate.add_permits(40);
    let mut answered = Vec::new();
    while answered.len() < 40 {
        let message = client.next().await;
        if let Some(id) = message.get("id").and_then(Value::as_i64) {
            assert_eq!(message["result"]["content"][0]["text"], "through");
            answered.push(id);
        }
    }
    answered.sort_unstable();
    assert_eq!(answered, (1..=40).collect::<Vec<_>>());
    assert_eq!(
        peak.load(Ordering::SeqCst),
        4,
        "more calls ran at once than the bound"
    );
}

#[tokio::test]
async fn a_request_id_reused_in_flight_is_refused() {
    let gate = Arc::new(Semaphore::new(0));
    let running = Arc::new(AtomicUsize::new(0));
    let registry = registry([
        gated_tool(gate.clone(), running.clone(), Arc::default()),
        text_tool("echo"),
    ]);
    let mut client = RawClient::connect(Server::new(registry));
    client.initialize().await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "gated", "arguments": {}}});
    client.send(call.clone()).await;
    wait_until(|| running.load(Ordering::SeqCst) == 1).await;
    client.send(call).await;
    let refused = client.next().await;
    assert_eq!(refused["id"], 7);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    gate.add_permits(1);
    let first = client.reply(7).await;
    assert_eq!(first["result"]["content"][0]["text"], "through");
}

#[tokio::test]
async fn a_notification_before_initialize_does_not_end_the_session() {
    let mut client = RawClient::connect(Server::new(registry([text_tool("alpha")])));
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let reply = client.initialize().await;
    assert!(reply["result"]["serverInfo"].is_object(), "{reply}");
    let call = client
        .request(1, "tools/call", json!({"name": "alpha", "arguments": {}}))
        .await;
    assert_eq!(call["result"]["content"][0]["text"], "alpha");
}

#[tokio::test]
async fn a_ping_before_initialize_does_not_let_a_notification_end_the_session() {
    let mut client = RawClient::connect(Server::new(registry([text_tool("alpha")])));
    let pong = client.request(7, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}), "{pong}");
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let reply = client.initialize().await;
    assert!(reply["result"]["serverInfo"].is_object(), "{reply}");
    let call = client
        .request(1, "tools/call", json!({"name": "alpha", "arguments": {}}))
        .await;
    assert_eq!(call["result"]["content"][0]["text"], "alpha");
}

#[tokio::test]
async fn cancelling_a_call_drops_it_and_frees_its_slot() {
    let gate = Arc::new(Semaphore::new(0));
    let running = Arc::new(AtomicUsize::new(0));
    let registry = registry([
        gated_tool(gate.clone(), running.clone(), Arc::default()),
        text_tool("echo"),
    ]);
    let mut client = RawClient::connect(Server::new(registry).max_in_flight(1));
    client.initialize().await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "gated", "arguments": {}}}))
        .await;
    wait_until(|| running.load(Ordering::SeqCst) == 1).await;
    client
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 1, "reason": "test"}}),
        )
        .await;
    // The only slot was the cancelled call's; echo is answered only if it was freed.
    let echo = client
        .request(2, "tools/call", json!({"name": "echo", "arguments": {}}))
        .await;
    assert_eq!(echo["result"]["content"][0]["text"], "echo");
    // The gated call's future was dropped (its guard ran) although the gate never opened.
    wait_until(|| running.load(Ordering::SeqCst) == 0).await;
}

#[tokio::test]
async fn list_changed_reaches_an_initialized_session() {
    let registry = registry([text_tool("alpha"), text_tool("beta")]);
    let mut client = RawClient::connect(Server::new(registry.clone()));
    client.initialize().await;
    // A round trip after `initialized`, so the session is registered before the change.
    client.request(1, "ping", json!({})).await;
    registry.disable("beta").unwrap();
    let notification = client.next().await;
    assert_eq!(notification["method"], "notifications/tools/list_changed");
    let listed = client.request(2, "tools/list", json!({})).await;
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 1);
    let hidden = client
        .request(3, "tools/call", json!({"name": "beta", "arguments": {}}))
        .await;
    assert_eq!(hidden["error"]["code"], -32602);
}

#[tokio::test]
async fn log_messages_follow_set_level() {
    let logging = ToolDef::builder("chatty")
        .description("Logs at info and error.")
        .handler(|_args, ctx: crate::ToolContext| async move {
            ctx.log(crate::context::LogLevel::Info, "info line").await;
            ctx.log(crate::context::LogLevel::Error, "error line").await;
            Ok(ToolResult::text("done"))
        })
        .build()
        .unwrap();
    let mut client = RawClient::connect(Server::new(registry([logging])));
    client.initialize().await;
    let call = json!({"name": "chatty", "arguments": {}});
    client.request(1, "tools/call", call.clone()).await;
    let levels = |client: &mut RawClient| -> Vec<String> {
        client
            .notifications
            .drain(..)
            .filter(|n| n["method"] == "notifications/message")
            .map(|n| n["params"]["level"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(levels(&mut client), ["info", "error"]);
    let set = client
        .request(2, "logging/setLevel", json!({"level": "warning"}))
        .await;
    assert!(set["result"].is_object(), "{set}");
    client.request(3, "tools/call", call).await;
    assert_eq!(levels(&mut client), ["error"]);
}

/// Issue 17: a tool the registry's filter excludes — left out at build, or registered and
/// "enabled" while the server runs — is never listed, never called, announces no change,
/// and a call to it gets exactly the error an unknown name gets.
#[tokio::test]
async fn a_tool_the_filter_excludes_stays_unreachable_over_the_protocol() {
    let with = |name: &str, permissions: &[&'static str], category: &str| {
        text_tool_builder(name)
            .permissions(permissions.iter().copied())
            .category(category.to_string())
            .build()
            .unwrap()
    };
    let registry = ToolRegistry::builder()
        .include_linked(false)
        .allowed_permissions(crate::PermissionSet::new(["READ"]))
        .categories(["docs"])
        .tool(with("reader", &["READ"], "docs"))
        .tool(with("built_admin", &["ADMIN"], "docs"))
        .tool(with("built_ops", &["READ"], "ops"))
        .build()
        .unwrap();
    let mut client = RawClient::connect(Server::new(registry.clone()));
    client.initialize().await;
    client.request(1, "ping", json!({})).await;

    registry
        .register(with("runtime_admin", &["ADMIN"], "docs"))
        .unwrap();
    registry
        .register(with("runtime_ops", &["READ"], "ops"))
        .unwrap();
    let excluded = ["built_admin", "built_ops", "runtime_admin", "runtime_ops"];
    for name in excluded {
        assert!(registry.enable(name).is_err(), "{name}");
    }
    client.request(2, "ping", json!({})).await;
    assert_eq!(
        client.notifications,
        Vec::<Value>::new(),
        "no change to announce"
    );
    let listed = client.request(3, "tools/list", json!({})).await;
    assert_eq!(
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["reader"],
        "{listed}"
    );
    let unknown = client
        .request(
            4,
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let blank = |reply: &Value, name: &str| {
        let mut reply = reply.clone();
        reply["id"] = json!(0);
        reply.to_string().replace(name, "<name>")
    };
    for (id, name) in (5..).zip(excluded) {
        let hidden = client
            .request(id, "tools/call", json!({"name": name, "arguments": {}}))
            .await;
        assert_eq!(blank(&hidden, name), blank(&unknown, "no_such_tool"));
    }

    // The control: a runtime tool the filter admits is announced, listed and called.
    registry
        .register(with("runtime_reader", &["READ"], "docs"))
        .unwrap();
    let notification = client.next().await;
    assert_eq!(notification["method"], "notifications/tools/list_changed");
    let listed = client.request(20, "tools/list", json!({})).await;
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 2);
    let call = client
        .request(
            21,
            "tools/call",
            json!({"name": "runtime_reader", "arguments": {}}),
        )
        .await;
    assert_eq!(call["result"]["content"][0]["text"], "runtime_reader");
}

#[tokio::test]
async fn schemas_for_a_provider_rewrite_the_list_not_the_validation() {
    use crate::schema::provider::Provider;
    let def = text_tool_builder("notes_search")
        .input_schema(json!({"type": "object", "properties": {
            "query": {"type": "string"},
            "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "maximum": 5}
        }, "required": ["query"], "additionalProperties": false}))
        .build()
        .unwrap();
    let registry = listing_for(Provider::Gemini, def);
    let mut client = RawClient::connect(Server::new(registry.clone()));
    client.initialize().await;
    let listed = client.request(1, "tools/list", json!({})).await;
    let schema = &listed["result"]["tools"][0]["inputSchema"];
    assert_eq!(
        schema,
        &json!({"type": "object", "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "nullable": true, "minimum": 0, "maximum": 5}
        }, "required": ["query"]}),
        "{listed}"
    );
    // The original schema still validates: `null` is accepted (the listed schema's
    // `nullable` means nothing to a JSON Schema validator), an unknown key still refused.
    let call = |id: i64, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "notes_search", "arguments": arguments}})
    };
    client
        .send(call(2, json!({"query": "a", "limit": null})))
        .await;
    let accepted = client.reply(2).await;
    assert_eq!(accepted["result"]["isError"], false, "{accepted}");
    client
        .send(call(3, json!({"query": "a", "extra": 1})))
        .await;
    let refused = client.reply(3).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    // A tool registered later is listed the same way.
    registry
        .register(
            text_tool_builder("notes_tag")
                .input_schema(json!({"type": "object", "properties": {
                    "tag": {"type": ["string", "null"]}}}))
                .build()
                .unwrap(),
        )
        .unwrap();
    let tag = registry.get("notes_tag").unwrap();
    assert_eq!(tag.input_schema()["properties"]["tag"]["nullable"], true);
    assert!(
        registry
            .provider_report(Provider::Gemini)
            .findings()
            .is_empty()
    );
}

#[tokio::test]
async fn openai_strict_listing_takes_a_null_as_an_argument_left_out() {
    use crate::schema::provider::Provider;
    let def = ToolDef::builder("notes_list")
        .description("List the notes.")
        .input_schema(json!({"type": "object", "properties": {
            "limit": {"type": "integer", "default": 10}
        }}))
        .handler(|args, _ctx| async move { Ok(ToolResult::text(Value::Object(args).to_string())) })
        .build()
        .unwrap();
    let registry = listing_for(Provider::OpenAi, def);
    let listed = registry.get("notes_list").unwrap();
    assert_eq!(
        **listed.input_schema(),
        *json!({"type": "object", "properties": {
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
        }, "required": ["limit"], "additionalProperties": false})
        .as_object()
        .unwrap()
    );
    let mut client = RawClient::connect(Server::new(registry));
    client.initialize().await;
    let call = |id: i64, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "notes_list", "arguments": arguments}})
    };
    // The null reaches the fn as the argument left out.
    client.send(call(1, json!({"limit": null}))).await;
    let reply = client.reply(1).await;
    assert_eq!(reply["result"]["content"][0]["text"], "{}", "{reply}");
    client.send(call(2, json!({"limit": 3}))).await;
    let reply = client.reply(2).await;
    assert_eq!(
        reply["result"]["content"][0]["text"], r#"{"limit":3}"#,
        "{reply}"
    );
    // Any other wrong value is still refused by the original schema.
    client.send(call(3, json!({"limit": "three"}))).await;
    let reply = client.reply(3).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
}

/// A registry of `def` listing schemas for `provider`.
fn listing_for(provider: crate::schema::provider::Provider, def: ToolDef) -> ToolRegistry {
    ToolRegistry::builder()
        .include_linked(false)
        .schemas_for(provider)
        .tool(def)
        .build()
        .unwrap()
}
