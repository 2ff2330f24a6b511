//! ping and get_server_time.

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::Tools;
use crate::common::servers;

#[tokio::test]
async fn ping_reports_the_endpoint_and_api_version() {
    let info = Tools::anon().await.ok("ping", json!({})).await;
    assert_eq!(info["endpoint"], format!("{}/rpc", servers().anon_url()));
    assert_eq!(info["user"], serde_json::Value::Null);
    assert_eq!(info["api_version"]["epoch"], 1);
    let auth = Tools::new(servers().auth_client())
        .await
        .ok("ping", json!({}))
        .await;
    assert_eq!(
        auth["endpoint"],
        format!("{}/login/rpc", servers().auth_url())
    );
    assert_eq!(auth["user"], crate::common::USER);
}

#[tokio::test]
async fn server_time_is_the_servers_clock() {
    let before = Utc::now().timestamp();
    let time = Tools::anon().await.ok("get_server_time", json!({})).await;
    let after = Utc::now().timestamp();
    let unix = time["unix_seconds"].as_i64().unwrap();
    // same machine: the server's clock (whole seconds) lies within our call
    assert!(before - 1 <= unix && unix <= after + 1, "{time}");
    let parsed: DateTime<Utc> = time["server_time"].as_str().unwrap().parse().unwrap();
    assert_eq!(parsed.timestamp(), unix);
}
