//! Every bad-argument case gives a clear `validation_error` result naming where the problem
//! is; no input makes the registry panic or reach the handler.

use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_toolbelt::{ErrorKind, ToolContext, ToolRegistry, mcp_tool};
use serde_json::{Value, json};

static REACHED: AtomicUsize = AtomicUsize::new(0);

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    High,
}

/// Create a ticket (fixture with many argument types).
#[mcp_tool(name = "ticket_make")]
async fn make(
    /// Summary line
    #[arg(min_length = 1, max_length = 80)]
    summary: String,
    /// Priority
    priority: Priority,
    /// Estimated hours
    #[arg(minimum = 0, maximum = 1000)]
    hours: f64,
    /// Count of copies
    copies: u8,
    /// Labels
    #[arg(max_items = 3)]
    labels: Vec<String>,
    /// Urgent flag
    urgent: Option<bool>,
) -> String {
    REACHED.fetch_add(1, Ordering::SeqCst);
    let _ = (summary, priority, hours, copies, labels, urgent);
    "made".into()
}

fn valid() -> Value {
    json!({"summary": "s", "priority": "low", "hours": 1.5, "copies": 1, "labels": []})
}

fn with(key: &str, value: Value) -> Value {
    let mut v = valid();
    v[key] = value;
    v
}

fn without(key: &str) -> Value {
    let mut v = valid();
    v.as_object_mut().unwrap().remove(key);
    v
}

fn deep(levels: usize) -> Value {
    let mut v = json!("leaf");
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

#[tokio::test]
async fn hostile_arguments_are_rejected_clearly() {
    let registry = ToolRegistry::builder().build().unwrap();
    let cases: Vec<(Value, &str)> = vec![
        (json!([]), "(root)"),
        (json!("text"), "(root)"),
        (json!(42), "(root)"),
        (json!(true), "(root)"),
        (json!({}), "required"),
        (without("summary"), "\"summary\" is a required property"),
        (without("priority"), "\"priority\" is a required property"),
        (with("summary", json!(5)), "/summary"),
        (with("summary", json!(null)), "/summary"),
        (with("summary", json!("")), "/summary"),
        (with("summary", json!("x".repeat(81))), "/summary"),
        (with("summary", json!("x".repeat(1_000_000))), "/summary"),
        (with("summary", json!(["a"])), "/summary"),
        (with("priority", json!("urgent")), "/priority"),
        (with("priority", json!("LOW")), "/priority"),
        (with("priority", json!(1)), "/priority"),
        (with("hours", json!("1.5")), "/hours"),
        (with("hours", json!(-1)), "/hours"),
        (with("hours", json!(1e9)), "/hours"),
        (with("copies", json!(256)), "/copies"),
        (with("copies", json!(-1)), "/copies"),
        (with("copies", json!(1.5)), "/copies"),
        (with("copies", json!("1")), "/copies"),
        (with("labels", json!("a")), "/labels"),
        (with("labels", json!([1])), "/labels/0"),
        (with("labels", json!(["a", "b", "c", "d"])), "/labels"),
        (with("labels", json!({"a": 1})), "/labels"),
        (with("urgent", json!("yes")), "/urgent"),
        (
            with("unknown_key", json!(1)),
            "'unknown_key' was unexpected",
        ),
        (with("summary\u{0}", json!(1)), "was unexpected"),
        (with("labels", deep(2_000)), "deeper than 100 levels"),
        (with("urgent", deep(50)), "/urgent"),
    ];
    let count = cases.len();
    for (args, needle) in cases {
        let shown = args.to_string().chars().take(80).collect::<String>();
        let result = registry
            .call_tool("ticket_make", args, ToolContext::default())
            .await
            .unwrap();
        assert_eq!(result.error_kind(), Some(ErrorKind::Validation), "{shown}");
        let text = result.text_content();
        assert!(
            text.starts_with("Error (validation_error): invalid arguments for tool 'ticket_make'"),
            "{shown}: {text}"
        );
        assert!(
            text.contains(needle),
            "{shown}: expected {needle:?} in {text}"
        );
        assert!(text.contains("\n\nAction: "), "{text}");
        assert!(
            text.len() < 5_000,
            "messages stay readable: {} bytes",
            text.len()
        );
    }
    assert!(count >= 30);
    assert_eq!(
        REACHED.load(Ordering::SeqCst),
        0,
        "no bad call reached the handler"
    );

    let ok = registry
        .call_tool("ticket_make", valid(), ToolContext::default())
        .await
        .unwrap();
    assert_eq!(ok.text_content(), "made");
    let unknown = registry
        .call_tool("", Value::Null, ToolContext::default())
        .await;
    assert!(unknown.is_err());
}

#[tokio::test]
async fn several_problems_are_listed_together() {
    let registry = ToolRegistry::builder().build().unwrap();
    let result = registry
        .call_tool(
            "ticket_make",
            json!({"summary": 1, "priority": "x", "hours": "h", "copies": 1, "labels": [], "extra": 0}),
            ToolContext::default(),
        )
        .await
        .unwrap();
    let text = result.text_content();
    assert!(text.contains("(4 problems)"), "{text}");
    for pointer in ["/summary", "/priority", "/hours", "'extra'"] {
        assert!(text.contains(pointer), "{pointer} in {text}");
    }
}
