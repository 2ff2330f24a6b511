//! In-process protocol tests of resources, prompts, completion, subscriptions and a tool's
//! sampling/elicitation requests, with the raw JSON-RPC client of `tests.rs`.

use std::time::Duration;

use serde_json::{Value, json};

use super::Server;
use super::tests::RawClient;
use crate::definition::{Completion, PromptArgument, PromptDef, ResourceDef, ToolDef};
use crate::output::ResourceContent;
use crate::{ToolRegistry, ToolResult};

fn text_resource(uri: &'static str, text: &'static str) -> ResourceDef {
    ResourceDef::fixed(uri)
        .name(uri)
        .description("A fixed text")
        .handler(move |_request, _ctx| async move { Ok(vec![ResourceContent::text(text)]) })
        .build()
        .unwrap()
}

fn registry() -> ToolRegistry {
    let square = ResourceDef::template("demo://square/{n}")
        .name("square")
        .description("The square of n")
        .complete(
            "n",
            |request: crate::definition::CompletionRequest, _ctx| async move {
                Ok(Completion::matching(["10", "12", "20"], &request.value))
            },
        )
        .handler(|request, _ctx| async move {
            let n: i64 = request.params().required("n")?;
            Ok(vec![ResourceContent::text((n * n).to_string())])
        })
        .build()
        .unwrap();
    let greet = PromptDef::builder("greet")
        .description("Greet someone")
        .argument(PromptArgument::new("name").with_required(true))
        .handler(|args, _ctx| async move {
            let name: String = args.required("name")?;
            crate::output::IntoPromptResult::into_prompt_result(format!("Say hello to {name}."))
        })
        .build()
        .unwrap();
    let ask = ToolDef::builder("ask")
        .description("Asks the client's LLM and the user.")
        .handler(|_args, ctx: crate::ToolContext| async move {
            let sampled = ctx
                .create_message(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
                    "maxTokens": 5,
                }))
                .await?;
            Ok(ToolResult::text(format!(
                "sampled: {}",
                sampled["content"]["text"]
            )))
        })
        .build()
        .unwrap();
    let confirm = ToolDef::builder("confirm")
        .description("Asks the user to confirm.")
        .handler(|_args, ctx: crate::ToolContext| async move {
            let answer = ctx
                .elicit(json!({
                    "message": "Sure?",
                    "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                }))
                .await?;
            Ok(ToolResult::text(answer["action"].to_string()))
        })
        .build()
        .unwrap();
    ToolRegistry::builder()
        .include_linked(false)
        .resource(text_resource("demo://a", "alpha"))
        .resource(text_resource("demo://b", "beta"))
        .resource(square)
        .prompt(greet)
        .tool(ask)
        .tool(confirm)
        .build()
        .unwrap()
}

/// `initialize` a 2025-11-25 session declaring `capabilities`, then `notifications/initialized`.
pub(super) async fn initialize(client: &mut RawClient, capabilities: Value) -> Value {
    let reply = client
        .request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "raw", "version": "1"}}),
        )
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    reply
}

#[tokio::test]
async fn capabilities_and_paged_lists() {
    let mut client = RawClient::connect(Server::new(registry()).page_size(1));
    let init = initialize(&mut client, json!({})).await;
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["resources"], json!({"subscribe": true}), "{init}");
    assert!(
        caps["prompts"].is_object() && caps["completions"].is_object(),
        "{init}"
    );

    let mut uris = Vec::new();
    let mut params = json!({});
    for id in 1..10 {
        let page = client.request(id, "resources/list", params.clone()).await;
        let result = &page["result"];
        uris.extend(
            result["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["uri"].clone()),
        );
        match result.get("nextCursor") {
            Some(cursor) => params = json!({"cursor": cursor}),
            None => break,
        }
    }
    assert_eq!(uris, [json!("demo://a"), json!("demo://b")]);
    let bad = client
        .request(20, "resources/list", json!({"cursor": "x"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let templates = client
        .request(21, "resources/templates/list", json!({}))
        .await;
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "demo://square/{n}"
    );
    let prompts = client.request(22, "prompts/list", json!({})).await;
    assert_eq!(
        prompts["result"]["prompts"][0]["arguments"],
        json!([{"name": "name", "required": true}])
    );
}

#[tokio::test]
async fn reads_prompts_completions_and_their_errors() {
    let mut client = RawClient::connect(Server::new(registry()));
    initialize(&mut client, json!({})).await;
    let read = client
        .request(1, "resources/read", json!({"uri": "demo://square/12"}))
        .await;
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": "demo://square/12", "mimeType": "text/plain", "text": "144"}])
    );
    let unknown = client
        .request(2, "resources/read", json!({"uri": "demo://zzz"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    assert_eq!(unknown["error"]["data"]["kind"], "not_found");
    let bad = client
        .request(3, "resources/read", json!({"uri": "demo://square/twelve"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let malformed = client.request(4, "resources/read", json!({"uri": 7})).await;
    assert_eq!(malformed["error"]["code"], -32602, "{malformed}");

    let prompt = client
        .request(
            5,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "Say hello to Ada."
    );
    let missing = client
        .request(6, "prompts/get", json!({"name": "greet"}))
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let unknown = client
        .request(7, "prompts/get", json!({"name": "nope"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    let completion = client
        .request(
            8,
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "demo://square/{n}"},
                   "argument": {"name": "n", "value": "1"}}),
        )
        .await;
    assert_eq!(
        completion["result"]["completion"],
        json!({"values": ["10", "12"], "total": 2, "hasMore": false})
    );
}

#[tokio::test]
async fn subscriptions_notify_until_unsubscribed() {
    let registry = registry();
    let mut client = RawClient::connect(Server::new(registry.clone()));
    initialize(&mut client, json!({})).await;
    let unknown = client
        .request(1, "resources/subscribe", json!({"uri": "demo://none"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    let ok = client
        .request(2, "resources/subscribe", json!({"uri": "demo://a"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    registry.resource_updated("demo://a");
    let note = client.next().await;
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": "demo://a"}})
    );
    let ok = client
        .request(3, "resources/unsubscribe", json!({"uri": "demo://a"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    // An update of a URI nobody watches is dropped at once; the next notification is b's.
    registry.resource_updated("demo://a");
    client
        .request(4, "resources/subscribe", json!({"uri": "demo://square/3"}))
        .await;
    registry.resource_updated("demo://square/3");
    let note = client.next().await;
    assert_eq!(note["params"]["uri"], "demo://square/3", "{note}");
    assert!(
        client.notifications.is_empty(),
        "{:?}",
        client.notifications
    );
}

#[tokio::test]
async fn sampling_round_trip_and_timeout() {
    let server = Server::new(registry()).client_request_timeout(Duration::from_millis(300));
    let mut client = RawClient::connect(server);
    initialize(&mut client, json!({"sampling": {}})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "ask", "arguments": {}}}))
        .await;
    let request = client.next().await;
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    assert_eq!(request["params"]["maxTokens"], 5);
    client
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}}))
        .await;
    let reply = client.reply(1).await;
    assert_eq!(
        reply["result"]["content"][0]["text"], "sampled: \"4\"",
        "{reply}"
    );

    // A client that never answers: the tool gets a time-out error.
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "ask", "arguments": {}}}))
        .await;
    let ignored = client.next().await;
    assert_eq!(ignored["method"], "sampling/createMessage");
    let mut reply = client.next().await;
    while reply.get("id") != Some(&json!(2)) {
        reply = client.next().await;
    }
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(
        text.starts_with(
            "Error (timeout): the client did not answer sampling/createMessage within 0.3 s"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn elicitation_needs_the_capability() {
    let mut client = RawClient::connect(Server::new(registry()));
    initialize(&mut client, json!({"sampling": {}})).await;
    let reply = client
        .request(1, "tools/call", json!({"name": "confirm", "arguments": {}}))
        .await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did not declare the `elicitation` capability"),
        "{reply}"
    );

    let mut client = RawClient::connect(Server::new(registry()));
    initialize(&mut client, json!({"elicitation": {}})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "confirm", "arguments": {}}}))
        .await;
    let request = client.next().await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    client
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}}))
        .await;
    let reply = client.reply(1).await;
    assert_eq!(
        reply["result"]["content"][0]["text"], "\"decline\"",
        "{reply}"
    );
}

/// The audit log's lines of `resources/read` and `prompts/get`: a templated URI is written
/// as its template (the variables only in the digest), a fixed one as it is, an unknown
/// resource or prompt writes nothing, a failure is a protocol error with its code.
#[cfg(feature = "audit")]
#[tokio::test]
async fn resource_reads_and_prompts_are_audited() {
    let dir = std::env::temp_dir().join(format!("audit-offerings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("audit.jsonl");
    let _ = std::fs::remove_file(&path);
    let log = super::AuditLog::to_file(&path).unwrap();
    let mut client = RawClient::connect(Server::new(registry()).audit_log(log.clone()));
    initialize(&mut client, json!({})).await;
    client
        .request(1, "resources/read", json!({"uri": "demo://square/12"}))
        .await;
    client
        .request(2, "resources/read", json!({"uri": "demo://square/twelve"}))
        .await;
    client
        .request(3, "resources/read", json!({"uri": "demo://secret-unknown"}))
        .await;
    client
        .request(4, "resources/read", json!({"uri": "demo://a"}))
        .await;
    client
        .request(
            5,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ann"}}),
        )
        .await;
    client
        .request(6, "prompts/get", json!({"name": "no-such-prompt"}))
        .await;
    assert!(log.flush(Duration::from_secs(10)));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        !text.contains("secret-unknown") && !text.contains("no-such-prompt"),
        "{text}"
    );
    assert!(
        !text.contains("square/12") && !text.contains("Ann"),
        "{text}"
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id = |id: &str| {
        lines
            .iter()
            .find(|l| l["request_id"] == id)
            .unwrap_or_else(|| panic!("no line for {id}: {text}"))
    };
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(by_id("1")["target"], "demo://square/{n}");
    assert_eq!(by_id("1")["outcome"], "ok");
    assert_eq!(
        by_id("1")["arguments_digest"],
        super::arguments_digest(&json!("demo://square/12"))
    );
    assert_eq!(by_id("2")["outcome"], "protocol_error");
    assert_eq!(by_id("2")["error_code"], -32602);
    assert_ne!(
        by_id("2")["arguments_digest"],
        by_id("1")["arguments_digest"]
    );
    assert_eq!(by_id("4")["target"], "demo://a");
    assert_eq!(by_id("5")["method"], "prompts/get");
    assert_eq!(by_id("5")["target"], "greet");
    assert_eq!(
        by_id("5")["arguments_digest"],
        super::arguments_digest(&json!({"name": "Ann"}))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
