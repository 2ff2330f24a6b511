//! Wire details of the HTTP front door (issue 35), through the tower service `serve_http`
//! serves: integer ids in float form, list cursors of the wrong type, the session header
//! on a stateless server, batches on 2025-03-26.

use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower_service::Service;

use crate::server::tests::{registry, text_tool_builder};
use crate::server::{HttpOptions, McpService, Server};

pub(super) fn service(options: HttpOptions) -> McpService {
    Server::new(registry([text_tool_builder("alpha").build().unwrap()])).http_service(options)
}

/// A reply: status, session id answered, body as JSON (`Null` when empty; the last
/// `data:` of an event stream).
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) session: Option<String>,
    pub(super) body: Value,
}

/// POST `body` (as written) to `service`, with `headers`.
pub(super) async fn post_raw(
    service: &mut McpService,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut request = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_string(),
        )))
        .unwrap();
    let response = service.call(request).await.unwrap();
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let stream = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let body = if stream {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .map_or(Value::Null, |l| serde_json::from_str(l).unwrap())
    } else if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    Answer {
        status,
        session,
        body,
    }
}

/// Open a session on `version`: its id.
pub(super) async fn open_session(service: &mut McpService, version: &str) -> String {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "wire-test", "version": "1"}},
    });
    let answer = post_raw(service, &[], &initialize.to_string()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.body["result"]["protocolVersion"], version,
        "{}",
        answer.body
    );
    let session = answer.session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [("mcp-session-id", session.as_str())];
    let answer = post_raw(service, &headers, &initialized.to_string()).await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    session
}

/// Integer ids in float form are served on the stateless direct path, through rmcp and in
/// a session, each answered with the equal integer; `2.5` is refused with `id: null`.
#[tokio::test]
async fn integer_ids_in_float_form_are_served_over_http() {
    let stateless = service(HttpOptions::default().stateless());
    let mut stateful = service(HttpOptions::default());
    let session = open_session(&mut stateful, "2025-06-18").await;
    let in_session = [("mcp-session-id", session.as_str())];
    let version = [("mcp-protocol-version", "2025-06-18")];
    for (mut service, headers) in [
        (stateless.clone(), &version[..]),
        (stateless, &[][..]),
        (stateful, &in_session[..]),
    ] {
        let service = &mut service;
        for (body, id) in [
            (r#"{"jsonrpc":"2.0","id":2.0,"method":"tools/list"}"#, 2),
            (r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#, 1000),
            (
                r#"{"jsonrpc":"2.0","id":3.0,"method":"tools/call","params":{"name":"alpha"}}"#,
                3,
            ),
        ] {
            let answer = post_raw(service, headers, body).await;
            assert_eq!(answer.status, 200, "{body}: {}", answer.body);
            assert_eq!(answer.body["id"], json!(id), "{body}: {}", answer.body);
            assert!(
                answer.body.get("result").is_some(),
                "{body}: {}",
                answer.body
            );
        }
        let answer = post_raw(
            service,
            headers,
            r#"{"jsonrpc":"2.0","id":2.5,"method":"ping"}"#,
        )
        .await;
        assert_eq!(answer.status, 400, "{}", answer.body);
        assert_eq!(answer.body["id"], Value::Null, "{}", answer.body);
        assert_eq!(answer.body["error"]["code"], -32600, "{}", answer.body);
    }
}

/// A list cursor that is not a string is refused over HTTP as over stdio.
#[tokio::test]
async fn list_cursors_of_the_wrong_type_are_invalid_params_over_http() {
    let mut stateless = service(HttpOptions::default().stateless());
    for method in ["tools/list", "resources/list", "prompts/list"] {
        let body = json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": {"cursor": 123}});
        let answer = post_raw(&mut stateless, &[], &body.to_string()).await;
        assert_eq!(answer.body["id"], 5, "{method}: {}", answer.body);
        assert_eq!(
            answer.body["error"]["code"], -32602,
            "{method}: {}",
            answer.body
        );
    }
}

/// A stateless server has no sessions: an `Mcp-Session-Id` header is ignored whatever the
/// method, `initialize` included.
#[tokio::test]
async fn a_stateless_server_ignores_the_session_header() {
    let mut stateless = service(HttpOptions::default().stateless());
    let headers = [("mcp-session-id", "whatever-the-client-kept")];
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "wire-test", "version": "1"}},
    });
    let answer = post_raw(&mut stateless, &headers, &initialize.to_string()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.body["result"]["protocolVersion"], "2025-06-18",
        "{}",
        answer.body
    );
    let call =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "alpha"}});
    let answer = post_raw(&mut stateless, &headers, &call.to_string()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.body["result"]["content"][0]["text"], "alpha",
        "{}",
        answer.body
    );
    // A stateful server still refuses a second `initialize` in a session.
    let mut stateful = service(HttpOptions::default());
    let session = open_session(&mut stateful, "2025-06-18").await;
    let in_session = [("mcp-session-id", session.as_str())];
    let answer = post_raw(&mut stateful, &in_session, &initialize.to_string()).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
}

/// In a session on 2025-03-26 a batch is answered `200` with one array of the requests'
/// replies (refused elements included, notifications left out); a batch of notifications
/// `202` with no body; an empty batch `400` `-32600`. Later revisions refuse batches.
#[tokio::test]
async fn batches_are_answered_with_arrays_in_sessions_on_2025_03_26() {
    let mut stateful = Server::new(registry([text_tool_builder("alpha").build().unwrap()]))
        .max_in_flight(2)
        .http_service(HttpOptions::default());
    let session = open_session(&mut stateful, "2025-03-26").await;
    let in_session = [("mcp-session-id", session.as_str())];
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "alpha"}},
        {"jsonrpc": "2.0", "id": "p", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "no/such/method"},
        {"foo": "bar"},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "alpha"}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "alpha"}},
    ]);
    let answer = post_raw(&mut stateful, &in_session, &batch.to_string()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let entries = answer.body.as_array().expect("an array");
    let entry = |id: Value| {
        entries
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("no entry {id}: {}", answer.body))
    };
    assert_eq!(entries.len(), 7, "{}", answer.body);
    assert_eq!(entry(json!(1))["result"]["content"][0]["text"], "alpha");
    assert_eq!(entry(json!("p"))["result"], json!({}));
    assert_eq!(entry(json!(3))["result"]["tools"][0]["name"], "alpha");
    assert_eq!(entry(json!(4))["error"]["code"], -32601);
    assert_eq!(entry(Value::Null)["error"]["code"], -32600);
    assert_eq!(entry(json!(6))["result"]["content"][0]["text"], "alpha");
    let notifications = json!([
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77}},
    ]);
    let answer = post_raw(&mut stateful, &in_session, &notifications.to_string()).await;
    assert_eq!((answer.status, answer.body), (202, Value::Null));
    let answer = post_raw(&mut stateful, &in_session, "[]").await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(answer.body["error"]["code"], -32600, "{}", answer.body);
    // A later revision's session refuses batches.
    let mut later = service(HttpOptions::default());
    let session = open_session(&mut later, "2025-06-18").await;
    let in_later = [("mcp-session-id", session.as_str())];
    let ping = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]).to_string();
    let answer = post_raw(&mut later, &in_later, &ping).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(answer.body["error"]["code"], -32600, "{}", answer.body);
}

/// An `initialize` missing `clientInfo` is answered `-32602` naming it over HTTP too.
#[tokio::test]
async fn initialize_with_a_missing_field_names_it_over_http() {
    for options in [HttpOptions::default(), HttpOptions::default().stateless()] {
        let mut endpoint = service(options);
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
        });
        let answer = post_raw(&mut endpoint, &[], &initialize.to_string()).await;
        assert_eq!(answer.body["id"], 1, "{}", answer.body);
        assert_eq!(answer.body["error"]["code"], -32602, "{}", answer.body);
        let message = answer.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("clientInfo"), "{}", answer.body);
    }
}

/// A stateless server takes a batch on 2025-03-26: the request's `MCP-Protocol-Version`,
/// or none (the revision the specification says to assume then); later revisions refuse.
#[tokio::test]
async fn stateless_batches_follow_the_protocol_version_header() {
    let mut stateless = service(HttpOptions::default().stateless());
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "alpha"}},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ])
    .to_string();
    for headers in [&[][..], &[("mcp-protocol-version", "2025-03-26")][..]] {
        let answer = post_raw(&mut stateless, headers, &batch).await;
        assert_eq!(answer.status, 200, "{headers:?}: {}", answer.body);
        let entries = answer.body.as_array().expect("an array");
        assert_eq!(entries.len(), 2, "{}", answer.body);
        assert!(
            entries.iter().all(|e| e.get("result").is_some()),
            "{}",
            answer.body
        );
    }
    let notifications = json!([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]);
    let answer = post_raw(&mut stateless, &[], &notifications.to_string()).await;
    assert_eq!((answer.status, answer.body), (202, Value::Null));
    for version in ["2025-06-18", "2025-11-25"] {
        let headers = [("mcp-protocol-version", version)];
        let answer = post_raw(&mut stateless, &headers, &batch).await;
        assert_eq!(answer.status, 400, "{version}: {}", answer.body);
        assert_eq!(answer.body["error"]["code"], -32600, "{}", answer.body);
    }
}
