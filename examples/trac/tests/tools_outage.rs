//! tracd stopped in the middle of a session: the tools answer upstream_error
//! naming the URL, and work again once tracd is back; the same for a tracd
//! that stops answering (time-out). These tests stop and freeze the servers,
//! so they run one at a time in a test binary (and tracd pair) of their own.

mod common;

use std::process::Command;
use std::time::Duration;

use mcp_toolbelt::ToolRegistry;
use mcp_toolbelt::server::Server;
use mcp_toolbelt::testing::{TestClient, ToolResultExt};
use serde_json::json;
use tokio::sync::Mutex;
use trac_mcp::client::TracClient;

use common::servers;

static SERIAL: Mutex<()> = Mutex::const_new(());

/// An MCP client of every tool over `trac`, through the protocol engine.
async fn connect(trac: TracClient) -> TestClient {
    let registry = ToolRegistry::builder().state(trac).build().unwrap();
    TestClient::connect(Server::new(registry)).await
}

#[tokio::test]
async fn stopped_tracd_is_an_upstream_error_naming_the_url_then_recovers() {
    let _serial = SERIAL.lock().await;
    let s = servers();
    let client = connect(s.anon_client()).await;
    let created = client
        .call("ticket_create", json!({"summary": "before the outage"}))
        .await;
    let id = created.ok()["id"].clone();

    s.stop();
    let url = format!("{}/rpc", s.anon_url());
    for (tool, args) in [
        ("ticket_get", json!({"id": id})),
        ("ping", json!({})),
        ("wiki_get", json!({"name": "WikiStart"})),
        ("ticket_batch_delete", json!({"ids": [id]})),
    ] {
        let failed = client.call(tool, args).await;
        let text = failed.err_text();
        assert!(
            text.starts_with("Error (upstream_error): "),
            "{tool}: {text}"
        );
        assert!(text.contains(&url), "{tool} names the URL: {text}");
        assert!(text.contains("Action: Trac at "), "{tool}: {text}");
    }

    s.restart();
    let ticket = client.call("ticket_get", json!({"id": id})).await;
    assert_eq!(ticket.ok()["fields"]["summary"], "before the outage");
}

#[tokio::test]
async fn frozen_tracd_is_an_upstream_timeout_naming_the_url_then_recovers() {
    let _serial = SERIAL.lock().await;
    let s = servers();
    let client = connect(s.client_with(s.anon_url(), None, Duration::from_millis(1500))).await;
    client.call("ping", json!({})).await.ok();

    let pid = s.anon_pid().to_string();
    let signal = |sig: &str| {
        let status = Command::new("kill")
            .args([sig, &pid])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {sig} {pid}");
    };
    signal("-STOP");
    let frozen = client.call("ticket_search", json!({})).await;
    signal("-CONT");
    let text = frozen.err_text();
    let url = format!("{}/rpc", s.anon_url());
    assert!(
        text.starts_with(&format!(
            "Error (upstream_error): no answer from Trac at {url} within 1.5s"
        )),
        "{text}"
    );
    // tracd answers again after SIGCONT
    client.call("ticket_search", json!({})).await.ok();
}
