//! Wire details where the byte-stream transports must answer as rmcp and the MCP
//! specification do (issue 35): integer ids in float form, list cursors of the wrong type,
//! `initialize` with params that do not fit, `resources/unsubscribe` on a server without
//! resources.

use serde_json::{Value, json};

use super::Server;
use super::tests::{RawClient, registry, text_tool_builder};

fn server() -> Server {
    Server::new(registry([text_tool_builder("alpha").build().unwrap()]))
}

/// `2.0` and `1e3` are integers (JSON Schema counts a number with a zero fraction as one):
/// served on every path (the general decoding, by method, the `tools/list` line), each
/// answered with the equal integer as rmcp writes it; `2.5` stays an invalid id.
#[tokio::test]
async fn integer_ids_in_float_form_are_served_and_answered() {
    let mut client = RawClient::connect(server());
    client.initialize().await;
    for (line, id) in [
        (r#"{"jsonrpc":"2.0","id":2.0,"method":"tools/list"}"#, 2),
        (r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#, 1000),
        (
            r#"{"jsonrpc":"2.0","id":3.0,"method":"tools/call","params":{"name":"alpha"}}"#,
            3,
        ),
        (
            r#"{"jsonrpc":"2.0","id":-4.0,"method":"tools/list","params":{"cursor":"x"}}"#,
            -4,
        ),
        (r#"{"jsonrpc":"2.0","id":50E-1,"method":"ping"}"#, 5),
    ] {
        client.send_line(line).await;
        let reply = client.next().await;
        assert_eq!(reply["id"], json!(id), "{line}: {reply}");
        assert!(
            reply.get("result").is_some() || reply["error"]["code"] == -32602,
            "{line}: {reply}"
        );
    }
    // A bad envelope still echoes the id, as the integer.
    client
        .send_line(r#"{"jsonrpc":"1.0","id":6.0,"method":"ping"}"#)
        .await;
    let refused = client.next().await;
    assert_eq!(refused["id"], json!(6), "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    for line in [
        r#"{"jsonrpc":"2.0","id":2.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1e300,"method":"ping"}"#,
    ] {
        client.send_line(line).await;
        let refused = client.next().await;
        assert_eq!(refused["id"], Value::Null, "{line}: {refused}");
        assert_eq!(refused["error"]["code"], -32600, "{line}: {refused}");
    }
}

/// A list cursor that is not a string is an invalid cursor (-32602), not the first page:
/// on every list that takes one, in every spelling (the compact `tools/list` line too).
#[tokio::test]
async fn list_cursors_of_the_wrong_type_are_invalid_params() {
    let mut client = RawClient::connect(server());
    client.initialize().await;
    let lists = [
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
    ];
    let mut id = 10;
    for method in lists {
        for cursor in [json!(123), json!(true), json!({"a": 1}), json!(["0.1"])] {
            id += 1;
            let refused = client.request(id, method, json!({"cursor": cursor})).await;
            assert_eq!(
                refused["error"]["code"], -32602,
                "{method} {cursor}: {refused}"
            );
            assert!(
                refused["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("cursor"),
                "{refused}"
            );
        }
    }
    client
        .send_line(r#"{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{"cursor":123}}"#)
        .await;
    let refused = client.reply(99).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // A null cursor is no cursor, as rmcp reads it; a string one is checked as before.
    let first = client
        .request(100, "tools/list", json!({"cursor": null}))
        .await;
    assert_eq!(first["result"]["tools"][0]["name"], "alpha", "{first}");
}

/// `initialize` without `clientInfo` or `capabilities` is answered -32602 naming the
/// missing field, not with a message about the `_meta` of 2026-07-28 requests.
#[tokio::test]
async fn initialize_with_a_missing_field_names_it() {
    for (params, field) in [
        (
            json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
            "clientInfo",
        ),
        (
            json!({"protocolVersion": "2025-06-18",
                   "clientInfo": {"name": "c", "version": "1"}}),
            "capabilities",
        ),
        (
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": 7, "version": "1"}}),
            "clientInfo",
        ),
    ] {
        let mut client = RawClient::connect(server());
        let refused = client.request(1, "initialize", params.clone()).await;
        assert_eq!(refused["error"]["code"], -32602, "{params}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("initialize") && message.contains(field),
            "{params}: {refused}"
        );
        assert!(!message.contains("_meta"), "{params}: {refused}");
        // The session goes on: a good initialize is served after it.
        let reply = client.initialize().await;
        assert!(reply.get("result").is_some(), "{reply}");
    }
    let mut client = RawClient::connect(server());
    client
        .send_line(r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#)
        .await;
    let refused = client.reply(1).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientInfo"),
        "{refused}"
    );
}

/// On a server that declared no resource subscriptions, `resources/unsubscribe` is refused
/// as `resources/subscribe` is, not answered `{}`.
#[tokio::test]
async fn unsubscribe_without_subscriptions_is_refused_as_subscribe_is() {
    let mut client = RawClient::connect(server());
    let init = client.initialize().await;
    assert!(
        init["result"]["capabilities"].get("resources").is_none(),
        "{init}"
    );
    let subscribe = client
        .request(1, "resources/subscribe", json!({"uri": "demo://a"}))
        .await;
    let unsubscribe = client
        .request(2, "resources/unsubscribe", json!({"uri": "demo://a"}))
        .await;
    assert_eq!(subscribe["error"]["code"], -32601, "{subscribe}");
    assert_eq!(
        unsubscribe["error"]["code"], subscribe["error"]["code"],
        "{unsubscribe} vs {subscribe}"
    );
}

/// Initialize `client` on protocol `version`.
async fn initialize_on(client: &mut RawClient, version: &str) {
    let reply = client
        .request(
            0,
            "initialize",
            json!({"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}),
        )
        .await;
    assert_eq!(reply["result"]["protocolVersion"], version, "{reply}");
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
}

/// The entries of a batch reply, sorted by their ids' JSON text (strings, then numbers,
/// then `null` for refused elements).
fn by_id(reply: &Value) -> Vec<(Value, Value)> {
    let mut entries: Vec<(Value, Value)> = reply
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {reply}"))
        .iter()
        .map(|entry| (entry["id"].clone(), entry.clone()))
        .collect();
    entries.sort_by_key(|(id, _)| id.to_string());
    entries
}

/// On 2025-03-26 a batch is answered with one array of the requests' replies (served on
/// every path: rmcp's, the direct call, the cached `tools/list` page), refused elements
/// included and notifications left out; a batch of notifications gets nothing; an empty
/// batch is `-32600`; more requests than the in-flight bound are served all the same.
#[tokio::test]
async fn batches_are_answered_with_arrays_on_2025_03_26() {
    let mut client = RawClient::connect(server().max_in_flight(2));
    initialize_on(&mut client, "2025-03-26").await;
    // Twice: the second `tools/list` is a cached page, answered as it is read.
    for round in 0..2 {
        let batch = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "alpha"}},
            {"jsonrpc": "2.0", "id": "p", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 4, "method": "no/such/method"},
            {"foo": "bar"},
            {"jsonrpc": "2.0", "id": 5.0, "method": "ping"},
        ]);
        client.send(batch).await;
        let reply = client.next().await;
        let entries = by_id(&reply);
        let ids: Vec<&Value> = entries.iter().map(|(id, _)| id).collect();
        assert_eq!(
            ids,
            [
                &json!("p"),
                &json!(1),
                &json!(3),
                &json!(4),
                &json!(5),
                &Value::Null
            ],
            "round {round}: {reply}"
        );
        assert_eq!(entries[0].1["result"], json!({}), "{reply}");
        assert_eq!(
            entries[1].1["result"]["content"][0]["text"], "alpha",
            "{reply}"
        );
        assert_eq!(
            entries[2].1["result"]["tools"][0]["name"], "alpha",
            "{reply}"
        );
        assert_eq!(entries[3].1["error"]["code"], -32601, "{reply}");
        assert_eq!(entries[4].1["result"], json!({}), "{reply}");
        assert_eq!(entries[5].1["error"]["code"], -32600, "{reply}");
    }
    // Notifications only: no reply at all (the ping after it is the next line).
    client
        .send(json!([
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77}},
        ]))
        .await;
    let ping = client.request(6, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}), "{ping}");
    // More requests than the in-flight bound (2), in one batch.
    let calls: Vec<Value> = (10..20)
        .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "alpha"}}))
        .collect();
    client.send(Value::Array(calls)).await;
    let reply = client.next().await;
    assert_eq!(by_id(&reply).len(), 10, "{reply}");
    // Refused as a whole: empty, not JSON.
    for (line, code) in [("[]", -32600), ("[{\"jsonrpc\":\"2.0\",", -32700)] {
        client.send_line(line).await;
        let refused = client.next().await;
        assert_eq!(refused["error"]["code"], code, "{line}: {refused}");
        assert_eq!(refused["id"], Value::Null, "{line}: {refused}");
    }
}

/// After 2025-03-26 batches are gone: refused `-32600` as before.
#[tokio::test]
async fn batches_are_refused_on_later_revisions() {
    for version in ["2025-06-18", "2025-11-25"] {
        let mut client = RawClient::connect(server());
        initialize_on(&mut client, version).await;
        client
            .send(json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]))
            .await;
        let refused = client.next().await;
        assert_eq!(refused["error"]["code"], -32600, "{version}: {refused}");
        assert_eq!(refused["id"], Value::Null, "{version}: {refused}");
    }
}

/// A request of a batch that the client cancels gets no reply (as alone), so the batch's
/// array is written without it, once the others are in.
#[tokio::test]
async fn a_cancelled_request_of_a_batch_leaves_the_array_without_it() {
    let waits = crate::definition::ToolDef::builder("waits")
        .description("Waits until cancelled.")
        .handler(|_args, _ctx| async {
            std::future::pending::<()>().await;
            Ok(crate::ToolResult::text("never"))
        })
        .build()
        .unwrap();
    let mut client = RawClient::connect(Server::new(registry([waits])));
    initialize_on(&mut client, "2025-03-26").await;
    client
        .send(json!([
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "waits"}},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        ]))
        .await;
    client
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1}}),
        )
        .await;
    let reply = client.next().await;
    assert_eq!(reply, json!([{"jsonrpc": "2.0", "id": 2, "result": {}}]));
}
