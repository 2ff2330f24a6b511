//! The optional-argument rule through the registry: `Option<T>`, `Vec<T>`, `bool` and
//! `#[arg(default)]` may be left out, the schema clients see says so (with the default), and
//! the handler gets the default. Also: a user's `enum State` argument and an 8-argument tool
//! (clippy's `too_many_arguments` stays quiet: `cargo clippy --all-targets` checks this file).

use mcp_toolbelt::definition::Params;
use mcp_toolbelt::{ToolContext, ToolRegistry, mcp_prompt, mcp_tool};
use serde_json::{Value, json};

/// A ticket's state: the user's own type named `State`, an argument.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
enum State {
    Open,
    Closed,
}

/// Echo every argument back.
#[mcp_tool]
async fn demo_echo(
    text: String,
    note: Option<String>,
    tags: Vec<String>,
    force: bool,
    #[arg(default = 10)] limit: u32,
    state: Option<State>,
) -> String {
    format!("{text}|{note:?}|{tags:?}|{force}|{limit}|{state:?}")
}

/// Eight arguments.
#[mcp_tool]
async fn demo_sum(a: u8, b: u8, c: u8, d: u8, e: u8, f: u8, g: u8, h: u8) -> String {
    (u32::from(a) + u32::from(b) + u32::from(c) + u32::from(d))
        .saturating_add(u32::from(e) + u32::from(f) + u32::from(g) + u32::from(h))
        .to_string()
}

/// Summarize a text.
#[mcp_prompt]
async fn summarize(text: String, brief: bool) -> String {
    format!("{text} brief={brief}")
}

async fn call(registry: &ToolRegistry, name: &str, arguments: Value) -> String {
    let result = registry
        .call_tool(name, arguments, ToolContext::default())
        .await
        .unwrap();
    assert!(!result.is_error(), "{}", result.text_content());
    result.text_content()
}

#[tokio::test]
async fn optional_arguments_are_optional_everywhere() {
    let registry = ToolRegistry::builder().build().unwrap();
    let tools = registry.list_tools();
    let echo = tools.iter().find(|t| t.name() == DEMO_ECHO_TOOL).unwrap();
    let schema = Value::Object((**echo.input_schema()).clone());
    assert_eq!(schema["required"], json!(["text"]), "{schema}");
    let properties = &schema["properties"];
    assert_eq!(properties["tags"]["default"], json!([]), "{schema}");
    assert_eq!(properties["force"]["default"], json!(false), "{schema}");
    assert_eq!(properties["limit"]["default"], json!(10), "{schema}");
    assert_eq!(
        call(&registry, DEMO_ECHO_TOOL, json!({"text": "t"})).await,
        "t|None|[]|false|10|None"
    );
    assert_eq!(
        call(
            &registry,
            DEMO_ECHO_TOOL,
            json!({"text": "t", "note": "n", "tags": ["a"], "force": true, "limit": 2, "state": "Closed"})
        )
        .await,
        "t|Some(\"n\")|[\"a\"]|true|2|Some(Closed)"
    );
    // Still validated when given.
    let result = registry
        .call_tool(
            DEMO_ECHO_TOOL,
            json!({"text": "t", "force": "yes"}),
            ToolContext::default(),
        )
        .await
        .unwrap();
    assert!(result.is_error());
    assert!(
        result.text_content().contains("/force"),
        "{}",
        result.text_content()
    );
}

#[tokio::test]
async fn a_long_parameter_list_is_a_tool() {
    let registry = ToolRegistry::builder().build().unwrap();
    let arguments = json!({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8});
    assert_eq!(call(&registry, DEMO_SUM_TOOL, arguments).await, "36");
}

#[tokio::test]
async fn a_bool_prompt_argument_is_optional_and_false() {
    let registry = ToolRegistry::builder().build().unwrap();
    let prompts = registry.list_prompts();
    let arguments = prompts[0].arguments();
    let required: Vec<(&str, bool)> = arguments.iter().map(|a| (a.name(), a.required())).collect();
    assert_eq!(required, [("text", true), ("brief", false)]);
    let args: Params = [("text", "t")].into_iter().collect();
    let result = registry
        .get_prompt(SUMMARIZE_PROMPT, args, ToolContext::default())
        .await
        .unwrap();
    let message = serde_json::to_value(&result.messages()[0]).unwrap();
    assert_eq!(message["content"]["text"], "t brief=false");
}
