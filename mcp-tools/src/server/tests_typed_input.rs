//! Typed elicitation (`ToolContext::elicit_as`) and sampling (`ToolContext::sample`)
//! through the real server, with the raw JSON-RPC client of `tests.rs`: on a 2025-11-25
//! session (real server-to-client requests) and on 2026-07-28 (`input_required` and a
//! retry), so the typed forms take the same wire paths as the raw ones on both eras.

use serde::Deserialize;
use serde_json::{Value, json};

use super::Server;
use super::tests::RawClient;
use super::tests_offerings::initialize;
use crate::definition::ToolDef;
use crate::elicitation::{Elicitation, requested_schema_for};
use crate::sampling::SamplingRequest;
use crate::{ToolContext, ToolRegistry, ToolResult};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

/// The form the `order` tool asks for.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Order {
    /// How many
    count: u8,
    size: Size,
    note: Option<String>,
}

/// Not a form: a nested struct.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // refused before any answer
struct Nested {
    order: Order,
}

fn registry() -> ToolRegistry {
    let order = ToolDef::builder("order")
        .description("Asks the user for an order.")
        .handler(|_args, ctx: ToolContext| async move {
            Ok(ToolResult::text(
                match ctx.elicit_as::<Order>("Your order?").await? {
                    Elicitation::Accepted(o) => format!("{} {:?} {:?}", o.count, o.size, o.note),
                    Elicitation::Declined => "declined".into(),
                    Elicitation::Cancelled => "cancelled".into(),
                },
            ))
        })
        .build()
        .unwrap();
    let nested = ToolDef::builder("nested")
        .description("Asks for a form elicitation cannot show.")
        .handler(|_args, ctx: ToolContext| async move {
            ctx.elicit_as::<Nested>("Nested?").await?;
            Ok(ToolResult::text("unreachable"))
        })
        .build()
        .unwrap();
    let sum = ToolDef::builder("sum")
        .description("Asks the client's LLM.")
        .handler(|_args, ctx: ToolContext| async move {
            let request = SamplingRequest::new(20)
                .system_prompt("Answer with a number.")
                .user("2+2?")
                .temperature(0.0)
                .stop_sequence("\n");
            let answer = ctx.sample(request).await?;
            Ok(ToolResult::text(format!(
                "{} by {} ({:?})",
                answer.text().unwrap_or_default(),
                answer.model(),
                answer.stop_reason()
            )))
        })
        .build()
        .unwrap();
    ToolRegistry::builder()
        .include_linked(false)
        .tool(order)
        .tool(nested)
        .tool(sum)
        .build()
        .unwrap()
}

/// The `elicitation/create` params `order` sends.
fn order_question() -> Value {
    json!({
        "message": "Your order?",
        "requestedSchema": *requested_schema_for::<Order>().unwrap(),
    })
}

/// The `sampling/createMessage` params `sum` sends.
fn sum_question() -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
        "maxTokens": 20,
        "systemPrompt": "Answer with a number.",
        "temperature": 0.0,
        "stopSequences": ["\n"],
    })
}

fn sampled() -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": "4"},
           "model": "m-1", "stopReason": "endTurn"})
}

/// `sent` has every member of `params` (rmcp adds its own, e.g. `mode` and `_meta`).
fn assert_sent(sent: &Value, params: &Value) {
    for (key, value) in params.as_object().unwrap() {
        assert_eq!(&sent[key], value, "{key} in {sent}");
    }
}

/// The text of a `tools/call` reply, and whether it is an error.
fn text(reply: &Value) -> (String, bool) {
    let result = &reply["result"];
    (
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text in {reply}"))
            .to_string(),
        result["isError"] == true,
    )
}

/// A 2025-11-25 session that declared elicitation and sampling.
async fn legacy() -> RawClient {
    let mut client = RawClient::connect(Server::new(registry()));
    initialize(&mut client, json!({"elicitation": {}, "sampling": {}})).await;
    client
}

/// Call `tool` on a legacy session, answer the one request it sends with `answer` (after
/// checking its method and params), and return the call's reply.
async fn legacy_round(
    client: &mut RawClient,
    id: i64,
    tool: &str,
    method: &str,
    params: &Value,
    answer: Value,
) -> Value {
    client
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": {"name": tool, "arguments": {}}}))
        .await;
    let request = client.next().await;
    assert_eq!(request["method"], method, "{request}");
    assert_sent(&request["params"], params);
    client
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": answer}))
        .await;
    client.reply(id).await
}

#[tokio::test]
async fn typed_elicitation_on_a_session() {
    let mut client = legacy().await;
    let question = order_question();
    let cases = [
        (
            json!({"action": "accept", "content": {"count": 2, "size": "large"}}),
            "2 Large None",
            false,
        ),
        (
            json!({"action": "accept", "content": {"count": 1, "size": "small", "note": "fast"}}),
            "1 Small Some(\"fast\")",
            false,
        ),
        (json!({"action": "decline"}), "declined", false),
        (json!({"action": "cancel"}), "cancelled", false),
        (
            json!({"action": "accept", "content": {"count": 300, "size": "large"}}),
            "Error (upstream_error): the client's elicitation answer does not match the requested form",
            true,
        ),
    ];
    for (id, (answer, expected, is_error)) in (1..).zip(cases) {
        let reply = legacy_round(
            &mut client,
            id,
            "order",
            "elicitation/create",
            &question,
            answer,
        )
        .await;
        let (text, error) = text(&reply);
        assert!(text.starts_with(expected), "{text}");
        assert_eq!(error, is_error, "{reply}");
    }
}

#[tokio::test]
async fn a_type_that_is_no_form_fails_before_asking() {
    let mut client = legacy().await;
    // The reply comes first: no elicitation/create was sent.
    let reply = client
        .request(1, "tools/call", json!({"name": "nested", "arguments": {}}))
        .await;
    let (text, error) = text(&reply);
    assert!(error, "{reply}");
    assert!(
        text.starts_with("Error (internal_error): ")
            && text.contains("cannot be an elicitation form: field `order` is a nested object"),
        "{text}"
    );
}

#[tokio::test]
async fn typed_sampling_on_a_session() {
    let mut client = legacy().await;
    let reply = legacy_round(
        &mut client,
        1,
        "sum",
        "sampling/createMessage",
        &sum_question(),
        sampled(),
    )
    .await;
    assert_eq!(text(&reply), ("4 by m-1 (Some(EndTurn))".into(), false));
    // A result without a model is no sampling result: a clear error, not a panic.
    let reply = legacy_round(
        &mut client,
        2,
        "sum",
        "sampling/createMessage",
        &sum_question(),
        json!({"role": "assistant", "content": {"type": "text", "text": "4"}}),
    )
    .await;
    let (text, error) = text(&reply);
    assert!(error, "{reply}");
    assert!(
        text.starts_with("Error (upstream_error): the client answered sampling/createMessage"),
        "{text}"
    );
}

/// A 2026-07-28 `tools/call` of `tool` (no session), with `extra` params (the retry's
/// `inputResponses` and `requestState`).
async fn modern_call(client: &mut RawClient, id: i64, tool: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        },
    });
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    client.request(id, "tools/call", params).await
}

/// Call `tool` on 2026-07-28: the first round must ask `key` with `method` and `params`;
/// the retry answers `answer` and its reply is returned.
async fn modern_round(
    client: &mut RawClient,
    tool: &str,
    (key, method, params): (&str, &str, &Value),
    answer: Value,
) -> Value {
    let first = modern_call(client, 1, tool, json!({})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let asked = &result["inputRequests"][key];
    assert_eq!(asked["method"], method, "{first}");
    assert_sent(&asked["params"], params);
    let retry = json!({
        "inputResponses": {key: answer},
        "requestState": result["requestState"],
    });
    modern_call(client, 2, tool, retry).await
}

#[tokio::test]
async fn typed_elicitation_and_sampling_on_2026_07_28() {
    let mut client = RawClient::connect(Server::new(registry()));
    let question = order_question();
    let ask = ("elicitation-0", "elicitation/create", &question);
    let cases = [
        (
            json!({"action": "accept", "content": {"count": 3, "size": "small"}}),
            "3 Small None",
            false,
        ),
        (json!({"action": "decline"}), "declined", false),
        (json!({"action": "cancel"}), "cancelled", false),
        (
            json!({"action": "accept", "content": {"size": "small"}}),
            "Error (upstream_error): the client's elicitation answer does not match the requested form",
            true,
        ),
    ];
    for (answer, expected, is_error) in cases {
        let reply = modern_round(&mut client, "order", ask, answer).await;
        let (text, error) = text(&reply);
        assert!(text.starts_with(expected), "{text}");
        assert_eq!(error, is_error, "{reply}");
    }

    let question = sum_question();
    let ask = ("sampling-0", "sampling/createMessage", &question);
    let reply = modern_round(&mut client, "sum", ask, sampled()).await;
    assert_eq!(text(&reply), ("4 by m-1 (Some(EndTurn))".into(), false));
}
