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
