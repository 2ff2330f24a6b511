//! A constraint on a type the macro cannot see through (here a user struct) that does not
//! reach the schema fails the registry build, naming the tool and the argument; one that
//! does (an alias of a number) works.

use mcp_toolbelt::{ToolContext, ToolRegistry, mcp_tool};

type Count = u32;

/// A point.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

/// Move to a point.
#[mcp_tool]
async fn demo_move(#[arg(max_length = 3)] to: Point) -> String {
    format!("{},{}", to.x, to.y)
}

/// Repeat.
#[mcp_tool]
async fn demo_repeat(#[arg(minimum = 1, maximum = 3)] times: Count) -> String {
    "x".repeat(times as usize)
}

#[tokio::test]
async fn a_constraint_that_does_not_fit_fails_the_build() {
    let err = ToolRegistry::builder().build().err().unwrap();
    let problems = err.problems().join("\n");
    assert!(
        problems.contains(
            "tool \"demo_move\": argument `to`: `#[arg(max_length)]` does not fit its type"
        ),
        "{problems}"
    );
    assert!(!problems.contains("demo_repeat"), "{problems}");
    // Lenient: the problem is in the validation report, and the tool that fits works.
    let registry = ToolRegistry::builder().lenient(true).build().unwrap();
    let report = format!("{:?}", registry.validation_report());
    assert!(report.contains("demo_move"), "{report}");
    let result = registry
        .call_tool(
            DEMO_REPEAT_TOOL,
            serde_json::json!({"times": 4}),
            ToolContext::default(),
        )
        .await
        .unwrap();
    assert!(result.is_error(), "maximum enforced");
}
