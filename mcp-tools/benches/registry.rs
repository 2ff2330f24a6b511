//! ToolRegistry hot paths: one `call_tool` (lookup + validate + deserialize + middleware +
//! handler), `list_tools`, `get` and `build()`, with 10 and 1,000 tools so growth shows.
//!
//! Run: `cargo bench -p mcp-toolbelt --bench registry`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use futures::future::BoxFuture;
use mcp_toolbelt::definition::ToolDef;
use mcp_toolbelt::{ToolContext, ToolRegistry, ToolResult, mcp_tool};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Echo the text back.
#[mcp_tool(name = "echo")]
async fn echo(
    /// Text to echo
    text: String,
) -> String {
    text
}

type HandRolled = fn(Value) -> BoxFuture<'static, Result<String, serde_json::Error>>;

#[derive(serde::Deserialize)]
struct EchoArgs {
    text: String,
}

fn echo_by_hand(arguments: Value) -> BoxFuture<'static, Result<String, serde_json::Error>> {
    Box::pin(async move {
        let args: EchoArgs = serde_json::from_value(arguments)?;
        Ok(echo(args.text).await)
    })
}

fn generated(count: usize) -> Vec<ToolDef> {
    (0..count)
        .map(|i| {
            ToolDef::builder(format!("gen_tool_{i:04}"))
                .description(format!("Generated tool number {i}"))
                .permissions([format!("PERM_{}", i % 17)])
                .input_schema(json!({
                    "type": "object",
                    "properties": {"id": {"type": "integer", "minimum": 0}, "note": {"type": "string"}},
                    "required": ["id"],
                    "additionalProperties": false
                }))
                .handler(|_args, _ctx| async { Ok(ToolResult::text("ok")) })
                .build()
                .expect("generated tool is valid")
        })
        .collect()
}

fn registry_with(count: usize) -> ToolRegistry {
    generated(count)
        .into_iter()
        .fold(ToolRegistry::builder(), |builder, def| builder.tool(def))
        .build()
        .expect("registry builds")
}

fn call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("call_tool");
    for count in [10, 1_000] {
        let registry = registry_with(count);
        group.bench_with_input(BenchmarkId::new("echo", count), &registry, |b, registry| {
            b.to_async(&runtime).iter(|| async {
                let result = registry
                    .call_tool("echo", json!({"text": "hello"}), ToolContext::default())
                    .await
                    .unwrap();
                assert!(!result.is_error());
                result
            })
        });
    }
    // The peer: what a hand-rolled server does per call (seed 002/003 style) — a map
    // lookup, serde deserialization of the arguments, the fn call — with no schema
    // validation, middleware, panic capture or time budget.
    let hand_rolled: HashMap<&str, HandRolled> =
        HashMap::from([("echo", echo_by_hand as HandRolled)]);
    group.bench_function("hand_rolled_peer", |b| {
        b.to_async(&runtime).iter(|| async {
            let handler = hand_rolled.get("echo").unwrap();
            handler(json!({"text": "hello"})).await.unwrap()
        })
    });
    let registry = registry_with(10);
    group.bench_function("validation_error", |b| {
        b.to_async(&runtime).iter(|| async {
            registry
                .call_tool("echo", json!({"text": 5}), ToolContext::default())
                .await
                .unwrap()
        })
    });
    // A schema the flat reading leaves to the compiled validator: nested objects, arrays of
    // objects, a pattern, a format, unique items.
    let registry = ToolRegistry::builder()
        .tool(nested_tool())
        .build()
        .expect("registry builds");
    let valid = json!({"title": "Fix the build", "priority": "high", "labels": ["ci", "urgent"],
        "due": {"day": 3, "month": 12},
        "links": [{"url": "https://example.com/a", "kind": "issue"}, {"url": "urn:x:1"}]});
    let invalid = json!({"title": "", "priority": "soon", "labels": ["ci", "ci"],
        "due": {"day": 32}, "links": [{"url": "not a uri"}], "extra": true});
    for (name, arguments, is_error) in [("nested", valid, false), ("nested_invalid", invalid, true)]
    {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let result = registry
                    .call_tool("plan", arguments.clone(), ToolContext::default())
                    .await
                    .unwrap();
                assert_eq!(result.is_error(), is_error);
                result
            })
        });
    }
    group.finish();
}

/// A tool with a nested input schema (see `call`).
fn nested_tool() -> ToolDef {
    ToolDef::builder("plan")
        .description("Plan a task.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1, "maxLength": 80, "pattern": "^[A-Za-z ]+$"},
                "priority": {"enum": ["low", "normal", "high"]},
                "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 8,
                    "uniqueItems": true},
                "due": {"type": "object", "additionalProperties": false, "required": ["day", "month"],
                    "properties": {"day": {"type": "integer", "minimum": 1, "maximum": 31},
                        "month": {"type": "integer", "minimum": 1, "maximum": 12}}},
                "links": {"type": "array", "items": {"type": "object", "required": ["url"],
                    "properties": {"url": {"type": "string", "format": "uri"},
                        "kind": {"type": "string"}}}}
            },
            "required": ["title"],
            "additionalProperties": false
        }))
        .handler(|_args, _ctx| async { Ok(ToolResult::text("ok")) })
        .build()
        .expect("the nested tool is valid")
}

fn list_and_lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("list_and_lookup");
    for count in [10, 1_000] {
        let registry = registry_with(count);
        group.bench_with_input(BenchmarkId::new("list_tools", count), &registry, |b, r| {
            b.iter(|| r.list_tools())
        });
        group.bench_with_input(BenchmarkId::new("get", count), &registry, |b, r| {
            b.iter(|| r.get("gen_tool_0007"))
        });
        let view = registry.view(&mcp_toolbelt::PermissionSet::new(["PERM_1", "PERM_2"]));
        group.bench_with_input(BenchmarkId::new("view_list_tools", count), &view, |b, v| {
            b.iter(|| v.list_tools())
        });
    }
    group.finish();
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(20);
    group.bench_function("1000_tools", |b| {
        b.iter_batched(
            || generated(1_000),
            |defs| {
                defs.into_iter()
                    .fold(ToolRegistry::builder(), |builder, def| builder.tool(def))
                    .build()
                    .unwrap()
            },
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, call, list_and_lookup, build);
criterion_main!(benches);
