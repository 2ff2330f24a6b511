//! tracd stopped in the middle of a session: the tools answer upstream_error
//! naming the URL, and work again once tracd is back; the same for a tracd
//! that stops answering (time-out). These tests stop and freeze the servers,
//! so they run one at a time in a test binary (and tracd pair) of their own.

mod common;

use std::process::Command;
use std::time::Duration;

use mcp_toolbelt::{ToolContext, ToolRegistry};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use common::servers;

static SERIAL: Mutex<()> = Mutex::const_new(());

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
    let _serial = SERIAL.lock().await;
    let s = servers();
    let registry = ToolRegistry::builder()
        .state(s.anon_client())
        .build()
        .unwrap();
    let (failed, text, created) = call(
        &registry,
        "ticket_create",
        json!({"summary": "before the outage"}),
    )
    .await;
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
        assert!(
            text.starts_with("Error (upstream_error): "),
            "{tool}: {text}"
        );
        assert!(text.contains(&url), "{tool} names the URL: {text}");
        assert!(text.contains("Action: Trac at "), "{tool}: {text}");
    }

    s.restart();
    let (failed, text, ticket) = call(&registry, "ticket_get", json!({"id": id})).await;
    assert!(!failed, "after the restart: {text}");
    assert_eq!(ticket.unwrap()["fields"]["summary"], "before the outage");
}

#[tokio::test]
async fn frozen_tracd_is_an_upstream_timeout_naming_the_url_then_recovers() {
    let _serial = SERIAL.lock().await;
    let s = servers();
    let registry = ToolRegistry::builder()
        .state(s.client_with(s.anon_url(), None, Duration::from_millis(1500)))
        .build()
        .unwrap();
    let (failed, text, _) = call(&registry, "ping", json!({})).await;
    assert!(!failed, "{text}");

    let pid = s.anon_pid().to_string();
    let signal = |sig: &str| {
        let status = Command::new("kill")
            .args([sig, &pid])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {sig} {pid}");
    };
    signal("-STOP");
    let frozen = call(&registry, "ticket_search", json!({})).await;
    signal("-CONT");
    let (failed, text, _) = frozen;
    assert!(failed, "{text}");
    let url = format!("{}/rpc", s.anon_url());
    assert!(
        text.starts_with(&format!(
            "Error (upstream_error): no answer from Trac at {url} within 1.5s"
        )),
        "{text}"
    );
    let (failed, text, _) = call(&registry, "ticket_search", json!({})).await;
    assert!(!failed, "tracd answers again after SIGCONT: {text}");
}
