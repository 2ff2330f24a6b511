//! tracd stopped in the middle of a session: the tools answer upstream_error
//! naming the URL, and work again once tracd is back. This stops the servers,
//! so it has a test binary (and tracd pair) of its own.

mod common;

use mcp_tools::{ToolContext, ToolRegistry};
use serde_json::{Value, json};

use common::servers;

async fn call(registry: &ToolRegistry, tool: &str, args: Value) -> (bool, String, Option<Value>) {
    let result = registry
        .call_tool(tool, args, ToolContext::default())
        .await
        .expect("a known tool");
    (
        result.is_error(),
        result.text_content(),
        result.structured_content().cloned(),
    )
}

#[tokio::test]
async fn stopped_tracd_is_an_upstream_error_naming_the_url_then_recovers() {
    let s = servers();
    let registry = ToolRegistry::builder()
        .state(s.anon_client())
        .build()
        .unwrap();
    let (failed, text, created) = call(&registry, "ticket_create", json!({"summary": "before the outage"})).await;
    assert!(!failed, "{text}");
    let id = created.unwrap()["id"].clone();

    s.stop();
    let url = format!("{}/rpc", s.anon_url());
    for (tool, args) in [
        ("ticket_get", json!({"id": id})),
        ("ping", json!({})),
        ("wiki_get", json!({"name": "WikiStart"})),
        ("ticket_batch_delete", json!({"ids": [id]})),
    ] {
        let (failed, text, _) = call(&registry, tool, args).await;
        assert!(failed, "{tool} must fail while tracd is down: {text}");
        assert!(text.starts_with("Error (upstream_error): "), "{tool}: {text}");
        assert!(text.contains(&url), "{tool} names the URL: {text}");
        assert!(text.contains("Action: Trac at "), "{tool}: {text}");
    }

    s.restart();
    let (failed, text, ticket) = call(&registry, "ticket_get", json!({"id": id})).await;
    assert!(!failed, "after the restart: {text}");
    assert_eq!(ticket.unwrap()["fields"]["summary"], "before the outage");
}
