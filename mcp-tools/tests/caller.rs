//! The `Caller` extractor in tools, resources and prompts, through a registry: the local
//! caller outside a server, the caller a context carries, the caller a permission view
//! sets, and the subject in the per-call tracing span (the audit trail).

use std::io::Write;
use std::sync::{Arc, Mutex};

use mcp_toolbelt::definition::Params;
use mcp_toolbelt::{
    Caller, Json, PermissionSet, ToolContext, ToolRegistry, mcp_prompt, mcp_resource, mcp_tool,
};
use serde_json::{Value, json};

/// What a handler saw of its caller.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Seen {
    subject: Option<String>,
    client_id: Option<String>,
    local: bool,
    permissions: Vec<String>,
}

fn seen(caller: &Caller) -> Seen {
    Seen {
        subject: caller.subject().map(String::from),
        client_id: caller.client_id().map(String::from),
        local: caller.is_local(),
        permissions: caller
            .permissions()
            .map(|p| p.names().map(String::from).collect())
            .unwrap_or_default(),
    }
}

/// Who is calling, as the tool sees it.
#[mcp_tool(name = "whoami", read_only)]
async fn whoami(caller: Caller, ctx: ToolContext) -> Json<Seen> {
    // The extractor and the context agree.
    assert_eq!(caller.subject(), ctx.caller().subject());
    Json(seen(&caller))
}

/// A tool that needs a permission, to call through a view.
#[mcp_tool(name = "whoami_read", permissions = ["NOTE_READ"], read_only)]
async fn whoami_read(caller: mcp_toolbelt::Caller) -> Json<Seen> {
    Json(seen(&caller))
}

/// Who is reading.
#[mcp_resource(uri = "whoami://caller", mime_type = "application/json")]
async fn reader(caller: ::mcp_toolbelt::Caller) -> Json<Seen> {
    Json(seen(&caller))
}

/// A greeting for the caller.
#[mcp_prompt(name = "greet")]
async fn greet(caller: Caller) -> String {
    format!("Hello, {}!", caller.subject().unwrap_or("local user"))
}

/// Held by each test that calls a tool: tracing caches whether a log site is enabled when
/// the site is first hit, and a site first hit on another test's thread while
/// [`the_call_span_names_the_subject_and_client`] installs its subscriber can be cached as
/// disabled for it, so the tests here run one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn registry() -> ToolRegistry {
    ToolRegistry::builder()
        .build()
        .expect("the registry builds")
}

fn alice() -> Caller {
    let mut claims = serde_json::Map::new();
    claims.insert("email".into(), json!("alice@example.org"));
    Caller::new(
        Some("alice".into()),
        Some("notes-app".into()),
        vec!["notes".into()],
        PermissionSet::new(["NOTE_READ"]),
        claims,
    )
}

async fn call(registry: &ToolRegistry, tool: &str, ctx: ToolContext) -> Value {
    let result = registry
        .call_tool(tool, Value::Null, ctx)
        .await
        .expect("the tool is visible");
    assert!(!result.is_error(), "{}", result.text_content());
    result.structured_content().cloned().expect("structured")
}

#[test]
fn a_context_outside_a_server_has_the_local_caller() {
    let ctx = ToolContext::default();
    assert!(ctx.caller().is_local());
    assert_eq!(ctx.caller().subject(), None);
    assert!(ctx.caller().permissions().is_none());
    // Setting the local caller explicitly changes nothing.
    assert!(ctx.with_caller(Caller::local()).caller().is_local());
}

#[tokio::test]
async fn tools_see_the_local_caller_unless_the_context_carries_one() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let registry = registry();
    let local = call(&registry, "whoami", ToolContext::default()).await;
    assert_eq!(
        local,
        json!({"subject": null, "client_id": null, "local": true, "permissions": []})
    );

    let ctx = ToolContext::default().with_caller(alice());
    let as_alice = call(&registry, "whoami", ctx).await;
    assert_eq!(
        as_alice,
        json!({"subject": "alice", "client_id": "notes-app", "local": false,
               "permissions": ["NOTE_READ"]})
    );
}

#[tokio::test]
async fn a_view_gives_a_local_context_a_caller_with_its_permissions_and_keeps_a_real_one() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let registry = registry();
    let view = registry.view(&PermissionSet::new(["NOTE_READ"]));
    let anonymous = call(&view, "whoami_read", ToolContext::default()).await;
    assert_eq!(
        anonymous,
        json!({"subject": null, "client_id": null, "local": false, "permissions": ["NOTE_READ"]})
    );
    let ctx = ToolContext::default().with_caller(alice());
    assert_eq!(call(&view, "whoami_read", ctx).await["subject"], "alice");
    // The view still decides what is visible.
    let narrow = registry.view(&PermissionSet::empty());
    let ctx = ToolContext::default().with_caller(alice());
    assert!(
        narrow
            .call_tool("whoami_read", Value::Null, ctx)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn resources_and_prompts_get_the_caller_too() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let registry = registry();
    let read = |ctx| {
        let registry = registry.clone();
        async move {
            let contents = registry
                .read_resource("whoami://caller", ctx)
                .await
                .unwrap();
            serde_json::from_str::<Value>(contents[0].as_text().unwrap()).unwrap()
        }
    };
    assert_eq!(read(ToolContext::default()).await["local"], true);
    let as_alice = read(ToolContext::default().with_caller(alice())).await;
    assert_eq!(as_alice["subject"], "alice");

    let prompt = |ctx| {
        let registry = registry.clone();
        async move {
            let result = registry
                .get_prompt("greet", Params::new(), ctx)
                .await
                .unwrap();
            serde_json::to_value(&result).unwrap()["messages"][0]["content"]["text"].clone()
        }
    };
    assert_eq!(prompt(ToolContext::default()).await, "Hello, local user!");
    assert_eq!(
        prompt(ToolContext::default().with_caller(alice())).await,
        "Hello, alice!"
    );
}

/// Collects what the fmt subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_call_span_names_the_subject_and_client() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let registry = registry();
    call(
        &registry,
        "whoami",
        ToolContext::default().with_caller(alice()),
    )
    .await;
    call(&registry, "whoami", ToolContext::default()).await;
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let finished: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("tool call finished"))
        .collect();
    assert_eq!(finished.len(), 2, "{log}");
    assert!(
        finished[0].contains(r#"tool_call{tool=whoami request_id="" subject="alice" client_id="notes-app" outcome="ok""#),
        "{log}"
    );
    // The local caller has no subject: the fields are left out, not empty.
    assert!(
        finished[1].contains(r#"tool_call{tool=whoami request_id="" outcome="ok""#),
        "{log}"
    );
}
