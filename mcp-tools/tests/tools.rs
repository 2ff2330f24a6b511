//! The macro's parameter, return-type and metadata features, end to end through a registry.

use mcp_toolbelt::{
    ContentBlock, ErrorKind, Json, State, ToolContext, ToolError, ToolRegistry, ToolResult,
    mcp_tool,
};
use serde_json::{Value, json};

struct Prefix(String);

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    total: i64,
}

/// Add two numbers.
#[mcp_tool(name = "math_add", read_only, idempotent, tags = ["math"], title = "Add")]
async fn add(
    /// First addend
    a: i64,
    #[arg(desc = "Second addend", minimum = -100, maximum = 100)] b: i64,
    #[arg(default = 1, desc = "Multiplier")] times: i64,
) -> Result<Json<Sum>, ToolError> {
    Ok(Json(Sum {
        total: (a + b) * times,
    }))
}

/// Greet with the registered prefix.
#[mcp_tool(name = "text_greet")]
async fn greet(
    prefix: State<Prefix>,
    #[arg(
        rename = "who",
        min_length = 1,
        max_length = 20,
        desc = "Name to greet"
    )]
    name: String,
    /// Optional punctuation
    punctuation: Option<String>,
) -> String {
    format!("{} {name}{}", prefix.0, punctuation.unwrap_or_default())
}

/// Arguments of `memo_make`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct MakeMemo {
    /// The memo title
    title: String,
    /// Labels to attach
    #[serde(default)]
    labels: Vec<String>,
}

/// Make a memo from an args struct.
#[mcp_tool(name = "memo_make", category = "notes", destructive)]
async fn make_memo(#[args] args: MakeMemo, ctx: ToolContext) -> Json<Vec<String>> {
    let mut out = vec![args.title];
    out.extend(args.labels);
    out.push(ctx.request_id().unwrap_or("-").to_string());
    Json(out)
}

#[mcp_tool(
    name = "glossary_lookup",
    description_file = "tests/descriptions/glossary.md"
)]
async fn glossary(
    /// The word
    #[arg(pattern = "^[a-z]+$")]
    word: String,
) -> Result<String, ToolError> {
    match word.as_str() {
        "mcp" => Ok("Model Context Protocol".into()),
        _ => Err(ToolError::not_found(format!(
            "'{word}' is not in the glossary"
        ))),
    }
}

/// Returns nothing.
#[mcp_tool(name = "misc_unit", destructive = false)]
async fn unit() {}

/// Returns a static str.
#[mcp_tool(name = "misc_static")]
async fn static_text() -> &'static str {
    "static"
}

/// Returns mixed content blocks.
#[mcp_tool(name = "misc_blocks")]
async fn blocks() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("one"),
        ContentBlock::image("aGVsbG8=", "image/png"),
    ]
}

/// Returns an explicit error result.
#[mcp_tool(name = "misc_result")]
async fn explicit() -> ToolResult {
    ToolResult::text("partial").with(ContentBlock::embedded_text("memo://1", "body"))
}

/// Fails with an io error.
#[mcp_tool(name = "file_open")]
async fn open() -> Result<String, std::io::Error> {
    std::fs::read_to_string("/definitely/not/here").map(|_| String::new())
}

fn registry() -> ToolRegistry {
    ToolRegistry::builder()
        .state(Prefix("Hello".into()))
        .build()
        .unwrap()
}

async fn call(registry: &ToolRegistry, name: &str, args: Value) -> ToolResult {
    registry
        .call_tool(name, args, ToolContext::default().with_request_id("r1"))
        .await
        .unwrap()
}

#[tokio::test]
async fn schema_reflects_arg_attributes() {
    let registry = registry();
    let add = registry.get("math_add").unwrap();
    let schema = Value::Object((**add.input_schema()).clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert_eq!(schema["properties"]["a"]["description"], "First addend");
    assert_eq!(schema["properties"]["b"]["minimum"], -100);
    assert_eq!(schema["properties"]["b"]["maximum"], 100);
    assert_eq!(schema["properties"]["times"]["default"], 1);
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    assert_eq!(add.title(), Some("Add"));
    assert_eq!(add.annotations().read_only_hint, Some(true));
    assert_eq!(add.annotations().idempotent_hint, Some(true));
    assert_eq!(add.tags().collect::<Vec<_>>(), ["math"]);
    assert!(add.output_schema().is_some());
    let unit = registry.get("misc_unit").unwrap();
    assert_eq!(unit.annotations().destructive_hint, Some(false));
    assert_eq!(unit.annotations().read_only_hint, None);

    let greet = registry.get("text_greet").unwrap();
    let schema = Value::Object((**greet.input_schema()).clone());
    assert_eq!(schema["required"], json!(["who"]));
    assert_eq!(schema["properties"]["who"]["minLength"], 1);
    assert_eq!(schema["properties"]["who"]["maxLength"], 20);
    assert!(
        schema["properties"].get("prefix").is_none(),
        "extractors are not arguments"
    );
    assert_eq!(greet.category(), Some("text"));

    let memo = registry.get("memo_make").unwrap();
    assert_eq!(memo.category(), Some("notes"));
    assert_eq!(
        memo.input_schema()["properties"]["title"]["description"],
        "The memo title"
    );
    let output = memo.output_schema().unwrap();
    assert_eq!(
        output["required"],
        json!(["result"]),
        "non-object outputs are wrapped"
    );

    let glossary = registry.get("glossary_lookup").unwrap();
    assert!(glossary.description().starts_with("Look up a word"));
    assert_eq!(
        glossary.input_schema()["properties"]["word"]["pattern"],
        "^[a-z]+$"
    );
}

#[tokio::test]
async fn every_return_type_converts() {
    let registry = registry();
    let sum = call(&registry, "math_add", json!({"a": 2, "b": 3, "times": 2})).await;
    assert_eq!(sum.structured_content(), Some(&json!({"total": 10})));
    assert!(sum.text_content().contains("\"total\": 10"));

    let greeting = call(
        &registry,
        "text_greet",
        json!({"who": "Ada", "punctuation": "!"}),
    )
    .await;
    assert_eq!(greeting.text_content(), "Hello Ada!");

    let memo = call(
        &registry,
        "memo_make",
        json!({"title": "t", "labels": ["x"]}),
    )
    .await;
    assert_eq!(
        memo.structured_content(),
        Some(&json!({"result": ["t", "x", "r1"]}))
    );

    assert!(
        call(&registry, "misc_unit", json!({}))
            .await
            .content()
            .is_empty()
    );
    assert_eq!(
        call(&registry, "misc_static", Value::Null)
            .await
            .text_content(),
        "static"
    );
    assert_eq!(
        call(&registry, "misc_blocks", json!({}))
            .await
            .content()
            .len(),
        2
    );
    assert_eq!(
        call(&registry, "misc_result", json!({}))
            .await
            .content()
            .len(),
        2
    );

    let missing = call(&registry, "glossary_lookup", json!({"word": "zebra"})).await;
    assert_eq!(missing.error_kind(), Some(ErrorKind::NotFound));
    assert_eq!(
        missing.text_content(),
        "Error (not_found): 'zebra' is not in the glossary\n\nAction: Check the glossary identifier; list what exists (if a tool lists or searches it) and call again with an existing one."
    );
    let io = call(&registry, "file_open", json!({})).await;
    assert_eq!(io.error_kind(), Some(ErrorKind::NotFound));
}

#[tokio::test]
async fn the_fn_stays_callable_directly() {
    let Json(sum) = add(1, 2, 3).await.unwrap();
    assert_eq!(sum.total, 9);
    assert_eq!(
        greet(State::new(Prefix("Hi".into())), "Bo".into(), None).await,
        "Hi Bo"
    );
}

#[tokio::test]
async fn bounds_and_patterns_are_enforced() {
    let registry = registry();
    let too_big = call(&registry, "math_add", json!({"a": 1, "b": 101})).await;
    assert_eq!(too_big.error_kind(), Some(ErrorKind::Validation));
    assert!(
        too_big
            .text_content()
            .contains("/b: 101 is greater than the maximum of 100")
    );
    let too_long = call(&registry, "text_greet", json!({"who": "x".repeat(21)})).await;
    assert!(
        too_long.text_content().contains("/who"),
        "{}",
        too_long.text_content()
    );
    let empty = call(&registry, "text_greet", json!({"who": ""})).await;
    assert!(empty.is_error());
    let pattern = call(&registry, "glossary_lookup", json!({"word": "MCP"})).await;
    assert!(
        pattern.text_content().contains("does not match"),
        "{}",
        pattern.text_content()
    );
}
