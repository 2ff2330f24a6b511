//! `mcp_toolbelt::testing::TestClient` (feature `testing`): calls, resources, prompts and
//! completions through the real engine on both protocol eras; the caller identity it
//! chooses deciding what is visible; elicitation and sampling answered by closures, on
//! 2025-11-25 as server requests over the pipe and on 2026-07-28 as `input_required`
//! rounds; JSON-RPC errors, notifications, time-outs and closing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_toolbelt::context::LogLevel;
use mcp_toolbelt::definition::CompletionRequest;
use mcp_toolbelt::output::{PromptMessage, Role};
use mcp_toolbelt::server::Server;
use mcp_toolbelt::testing::{
    ClientError, TestClient, TestClientBuilder, ToolResultExt, accept, decline, sampled_text,
};
use mcp_toolbelt::{
    Caller, ErrorKind, Json, PermissionSet, ToolContext, ToolError, ToolRegistry, mcp_prompt,
    mcp_resource, mcp_tool,
};
use serde_json::{Value, json};

/// Both protocol eras: sessions (server requests over the pipe) and per-request metadata
/// (`input_required` rounds).
const ERAS: [&str; 2] = ["2025-11-25", "2026-07-28"];

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

/// Add two numbers.
#[mcp_tool(name = "add", read_only)]
async fn add(
    /// The first number
    a: i64,
    /// The second number
    b: i64,
) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

/// Only for callers holding SECRET.
#[mcp_tool(name = "secret_tool", permissions = ["SECRET"], read_only)]
async fn secret_tool() -> String {
    "the secret".into()
}

/// Who is calling, as the server established it.
#[mcp_tool(name = "whoami", read_only)]
async fn whoami(ctx: ToolContext) -> String {
    ctx.caller().subject().unwrap_or("local").to_string()
}

/// Ask the user's name, then greet them.
#[mcp_tool(name = "ask_name", read_only)]
async fn ask_name(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .elicit(json!({
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        }))
        .await?;
    match answer["action"].as_str() {
        Some("accept") => Ok(format!(
            "Hello, {}!",
            answer["content"]["name"].as_str().unwrap_or("?")
        )),
        other => Err(ToolError::validation(format!(
            "no name: {}",
            other.unwrap_or("?")
        ))),
    }
}

/// Ask the client's model a question.
#[mcp_tool(name = "ask_model", read_only)]
async fn ask_model(
    ctx: ToolContext,
    /// The question
    question: String,
) -> Result<String, ToolError> {
    let sampled = ctx
        .create_message(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": question}}],
            "maxTokens": 20,
        }))
        .await?;
    let text = match &sampled["content"] {
        Value::Array(blocks) => blocks[0]["text"].clone(),
        block => block["text"].clone(),
    };
    Ok(format!("model says: {}", text.as_str().unwrap_or("?")))
}

/// The client's roots, comma-separated.
#[mcp_tool(name = "roots", read_only)]
async fn roots(ctx: ToolContext) -> Result<String, ToolError> {
    let listed = ctx.list_roots().await?;
    let uris: Vec<&str> = listed["roots"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|root| root["uri"].as_str())
        .collect();
    Ok(uris.join(","))
}

/// Report progress twice.
#[mcp_tool(name = "busy", read_only)]
async fn busy(ctx: ToolContext) -> String {
    ctx.progress(1.0, Some(2.0), "half").await;
    ctx.progress(2.0, Some(2.0), "done").await;
    "worked".into()
}

/// Log twice: once at debug, once at warning.
#[mcp_tool(name = "chatty", read_only)]
async fn chatty(ctx: ToolContext) -> String {
    ctx.log(LogLevel::Debug, "details").await;
    ctx.log(LogLevel::Warning, "careful").await;
    "said".into()
}

/// Sleep longer than a test waits.
#[mcp_tool(name = "sleepy", read_only)]
async fn sleepy() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "late".into()
}

/// Set when `held`'s call is dropped.
static HELD_DROPPED: AtomicBool = AtomicBool::new(false);

struct SetOnDrop;

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        HELD_DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Hold the call until it is cancelled.
#[mcp_tool(name = "held", read_only)]
async fn held() -> String {
    let _guard = SetOnDrop;
    tokio::time::sleep(Duration::from_secs(60)).await;
    "released".into()
}

/// A fixed note.
#[mcp_resource(uri = "notes://welcome", mime_type = "text/markdown")]
async fn welcome() -> String {
    "# Welcome".into()
}

/// A note by id.
#[mcp_resource(uri_template = "notes://by-id/{id}", mime_type = "application/json")]
async fn note(id: u32) -> Json<Value> {
    Json(json!({ "id": id }))
}

async fn cities(request: CompletionRequest, _ctx: ToolContext) -> Vec<String> {
    ["paris", "park", "rome"]
        .iter()
        .filter(|c| c.starts_with(&request.value))
        .map(|c| c.to_string())
        .collect()
}

/// Plan a trip.
#[mcp_prompt(name = "trip", complete(city = cities))]
async fn trip(
    /// Where to go
    city: String,
) -> Vec<PromptMessage> {
    vec![PromptMessage::new_text(
        Role::User,
        format!("Plan a trip to {city}."),
    )]
}

fn server() -> Server {
    Server::new(
        ToolRegistry::builder()
            .build()
            .expect("the registry builds"),
    )
}

fn on(era: &str) -> TestClientBuilder {
    TestClient::builder(server()).protocol_version(era)
}

#[tokio::test]
async fn a_call_returns_the_tools_result_through_the_protocol() {
    for era in ERAS {
        let client = on(era).connect().await;
        assert_eq!(
            client.initialize_result().is_some(),
            era == "2025-11-25",
            "{era}"
        );
        let sum = client.call("add", json!({"a": 2, "b": 40})).await;
        assert_eq!(sum.ok()["sum"], 42, "{era}");
        assert_eq!(
            serde_json::from_str::<Value>(&sum.ok_text()).unwrap()["sum"],
            42,
            "{era}: the text copy"
        );
        // Arguments are validated by the server: a tool error of kind validation.
        let bad = client.call("add", json!({"a": "two", "b": 1})).await;
        assert_eq!(bad.err_kind(), ErrorKind::Validation, "{era}");
        assert!(bad.err_text().contains("/a"), "{era}: {}", bad.err_text());
        client.close().await.expect("serving ends cleanly");
    }
}

#[tokio::test]
async fn a_hidden_tool_answers_like_an_unknown_one_for_a_caller_without_the_permission() {
    for era in ERAS {
        let reader = Caller::new(
            Some("bob".into()),
            None,
            vec![],
            PermissionSet::empty(),
            Default::default(),
        );
        let client = on(era).caller(reader).connect().await;
        let names = client.tool_names().await.unwrap();
        assert!(names.contains(&"add".to_string()), "{era}: {names:?}");
        assert!(
            !names.contains(&"secret_tool".to_string()),
            "{era}: {names:?}"
        );
        assert_eq!(client.call("whoami", json!({})).await.ok_text(), "bob");
        let hidden = client.try_call("secret_tool", json!({})).await.unwrap_err();
        let unknown = client
            .try_call("no_such_tool", json!({}))
            .await
            .unwrap_err();
        assert_eq!(hidden.code(), Some(-32602), "{era}: {hidden}");
        assert_eq!(unknown.code(), hidden.code(), "{era}");
        let ClientError::Rpc { message, .. } = &hidden else {
            panic!("{era}: {hidden:?}")
        };
        assert!(message.contains("secret_tool"), "{era}: {message}");

        // The same server, to a caller holding SECRET (and to the local caller).
        let holder = Caller::with_permissions(PermissionSet::new(["SECRET"]));
        let client = on(era).caller(holder).connect().await;
        assert_eq!(
            client.call("secret_tool", json!({})).await.ok_text(),
            "the secret"
        );
        let local = on(era).connect().await;
        assert_eq!(local.call("whoami", json!({})).await.ok_text(), "local");
        assert_eq!(
            local.call("secret_tool", json!({})).await.ok_text(),
            "the secret"
        );
    }
}

#[tokio::test]
async fn elicitation_is_answered_by_the_closure_on_both_eras() {
    for era in ERAS {
        let asked = Arc::new(AtomicUsize::new(0));
        let seen = asked.clone();
        let client = on(era)
            .on_elicitation(move |params| {
                seen.fetch_add(1, Ordering::SeqCst);
                assert_eq!(params["message"], "Your name?");
                accept(json!({"name": "Ada"}))
            })
            .connect()
            .await;
        assert_eq!(
            client.call("ask_name", json!({})).await.ok_text(),
            "Hello, Ada!",
            "{era}"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1, "{era}: asked once");

        let declining = on(era)
            .on_elicitation_async(|_params| async { decline() })
            .connect()
            .await;
        let declined = declining.call("ask_name", json!({})).await;
        assert_eq!(declined.err_kind(), ErrorKind::Validation, "{era}");
        assert!(declined.err_text().contains("no name: decline"), "{era}");
    }
}

#[tokio::test]
async fn a_client_without_the_elicitation_capability_is_not_asked() {
    // Legacy: the question fails inside the tool; 2026-07-28: the request is refused.
    let legacy = on("2025-11-25").connect().await;
    let result = legacy.call("ask_name", json!({})).await;
    assert_eq!(result.err_kind(), ErrorKind::PermissionDenied);
    let modern = on("2026-07-28").connect().await;
    let refused = modern.try_call("ask_name", json!({})).await.unwrap_err();
    assert_eq!(refused.code(), Some(-32021), "{refused}");
}

#[tokio::test]
async fn sampling_is_answered_by_the_closure_on_both_eras() {
    for era in ERAS {
        let client = on(era)
            .on_sampling(|params| {
                let question = params["messages"][0]["content"]["text"].as_str().unwrap();
                sampled_text(format!("{} = 4", question))
            })
            .connect()
            .await;
        let result = client.call("ask_model", json!({"question": "2+2"})).await;
        assert_eq!(result.ok_text(), "model says: 2+2 = 4", "{era}");
    }
}

#[tokio::test]
async fn roots_are_answered_on_both_eras() {
    for era in ERAS {
        let client = on(era)
            .roots(["file:///work", "file:///home"])
            .connect()
            .await;
        let result = client.call("roots", json!({})).await;
        assert_eq!(result.ok_text(), "file:///work,file:///home", "{era}");
    }
}

#[tokio::test]
async fn resources_are_listed_and_read() {
    for era in ERAS {
        let client = on(era).connect().await;
        let uris: Vec<Value> = client
            .list_resources()
            .await
            .unwrap()
            .iter()
            .map(|r| r["uri"].clone())
            .collect();
        assert!(uris.contains(&json!("notes://welcome")), "{era}: {uris:?}");
        let templates = client.list_resource_templates().await.unwrap();
        assert!(
            templates
                .iter()
                .any(|t| t["uriTemplate"] == "notes://by-id/{id}"),
            "{era}: {templates:?}"
        );
        let welcome = client.read_resource("notes://welcome").await.unwrap();
        assert_eq!(welcome[0].as_text(), Some("# Welcome"));
        assert_eq!(welcome[0].mime_type(), Some("text/markdown"));
        assert_eq!(welcome[0].uri(), Some("notes://welcome"));
        let note = client.read_resource("notes://by-id/7").await.unwrap();
        assert_eq!(note[0].as_text(), Some(r#"{"id":7}"#), "{era}");
        let missing = client.read_resource("notes://nothing").await.unwrap_err();
        assert!(missing.code().is_some(), "{era}: {missing}");
    }
}

#[tokio::test]
async fn prompts_are_listed_rendered_and_completed() {
    for era in ERAS {
        let client = on(era).connect().await;
        let prompts = client.list_prompts().await.unwrap();
        assert!(
            prompts.iter().any(|p| p["name"] == "trip"),
            "{era}: {prompts:?}"
        );
        let trip = client
            .get_prompt("trip", json!({"city": "Rome"}))
            .await
            .unwrap();
        assert_eq!(trip.messages().len(), 1);
        assert_eq!(trip.messages()[0].role(), Role::User);
        assert_eq!(
            trip.messages()[0].content().as_text(),
            Some("Plan a trip to Rome.")
        );
        let missing = client.get_prompt("trip", json!({})).await.unwrap_err();
        assert_eq!(missing.code(), Some(-32602), "{era}: {missing}");
        let cities = client
            .complete(json!({"type": "ref/prompt", "name": "trip"}), "city", "par")
            .await
            .unwrap();
        assert_eq!(cities, ["paris", "park"], "{era}");
    }
}

#[tokio::test]
async fn progress_notifications_are_collected() {
    let client = on("2025-11-25").progress_tokens(true).connect().await;
    assert_eq!(client.call("busy", json!({})).await.ok_text(), "worked");
    let first = client.notification("notifications/progress").await.unwrap();
    assert_eq!(first.params()["progress"], 1.0);
    assert_eq!(first.params()["message"], "half");
    let second = client.notification("notifications/progress").await.unwrap();
    assert_eq!(second.params()["message"], "done");
    assert!(
        client
            .take_notifications()
            .iter()
            .all(|n| n.method() != "notifications/progress")
    );
}

#[tokio::test]
async fn log_messages_at_the_level_asked_for_are_collected() {
    for era in ERAS {
        let client = on(era).log_level(LogLevel::Info).connect().await;
        assert_eq!(client.call("chatty", json!({})).await.ok_text(), "said");
        let message = client.notification("notifications/message").await.unwrap();
        assert_eq!(message.params()["level"], "warning", "{era}");
        assert_eq!(message.params()["data"], "careful", "{era}");
        // The debug message was not sent.
        assert!(
            client
                .notifications()
                .iter()
                .all(|n| n.method() != "notifications/message"),
            "{era}: {:?}",
            client.notifications()
        );
        // Without a level, the server's default: every message on 2025-11-25, none on
        // 2026-07-28 (a request opts in).
        let default = on(era).connect().await;
        default.call("chatty", json!({})).await.ok_text();
        if era == "2025-11-25" {
            let debug = default.notification("notifications/message").await.unwrap();
            assert_eq!(debug.params()["data"], "details");
            let warning = default.notification("notifications/message").await.unwrap();
            assert_eq!(warning.params()["data"], "careful");
        } else {
            assert!(default.notifications().is_empty(), "{era}");
        }
    }
}

#[tokio::test]
async fn a_list_change_is_notified() {
    let registry = ToolRegistry::builder().build().unwrap();
    let client = TestClient::connect(Server::new(registry.clone())).await;
    assert!(
        client
            .tool_names()
            .await
            .unwrap()
            .contains(&"add".to_string())
    );
    registry.disable("add").unwrap();
    client
        .notification("notifications/tools/list_changed")
        .await
        .unwrap();
    assert!(
        !client
            .tool_names()
            .await
            .unwrap()
            .contains(&"add".to_string())
    );
}

#[tokio::test]
async fn every_wait_is_bounded() {
    let client = on("2025-11-25")
        .timeout(Duration::from_millis(200))
        .connect()
        .await;
    let late = client.try_call("sleepy", json!({})).await.unwrap_err();
    assert!(matches!(late, ClientError::Timeout { .. }), "{late:?}");
    let none = client
        .notification("notifications/message")
        .await
        .unwrap_err();
    assert!(matches!(none, ClientError::Timeout { .. }), "{none:?}");
    // The session still serves after a time-out.
    assert_eq!(
        client.call("add", json!({"a": 1, "b": 1})).await.ok()["sum"],
        2
    );
}

#[tokio::test]
#[should_panic(expected = "calling tool `no_such_tool` failed: JSON-RPC error -32602")]
async fn call_panics_with_the_json_rpc_error() {
    let client = on("2025-11-25").connect().await;
    client.call("no_such_tool", json!({})).await;
}

#[tokio::test]
#[should_panic(expected = "the tool failed: Error (validation_error)")]
async fn ok_panics_with_the_tools_error_text() {
    let client = on("2025-11-25").connect().await;
    client.call("add", json!({"a": 1})).await.ok();
}

#[tokio::test]
async fn dropping_the_client_ends_the_calls_in_flight() {
    for era in ERAS {
        HELD_DROPPED.store(false, Ordering::SeqCst);
        let client = on(era).connect().await;
        let pending = tokio::time::timeout(
            Duration::from_millis(200),
            client.try_call("held", json!({})),
        )
        .await;
        assert!(pending.is_err(), "{era}: the call is still running");
        assert!(!HELD_DROPPED.load(Ordering::SeqCst), "{era}");
        drop(client);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !HELD_DROPPED.load(Ordering::SeqCst) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{era}: the tool's call outlived the client"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
