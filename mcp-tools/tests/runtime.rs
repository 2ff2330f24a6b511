//! ToolRegistry behaviour at run time: failures become typed results, the registry keeps
//! serving, runtime changes notify listeners, build problems are reported loudly.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_toolbelt::call::{Around, Next};
use mcp_toolbelt::definition::ToolDef;
use mcp_toolbelt::registry::RegistryChange;
use mcp_toolbelt::{ErrorKind, State, ToolContext, ToolError, ToolRegistry, ToolResult, mcp_tool};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Panics on purpose.
#[mcp_tool(name = "crash_now")]
async fn crash() -> String {
    panic!("boom")
}

/// Sleeps longer than its budget.
#[mcp_tool(name = "slow_sleep", timeout_ms = 50)]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "woke".into()
}

/// Waits until cancelled.
#[mcp_tool(name = "slow_wait")]
async fn wait(ctx: ToolContext) -> String {
    ctx.cancellation().cancelled().await;
    "cancelled seen".into()
}

struct Gauge {
    running: AtomicUsize,
    peak: AtomicUsize,
}

/// Records how many calls run at once.
#[mcp_tool(name = "serial_step", max_concurrency = 1)]
async fn serial(gauge: State<Gauge>) -> String {
    let now = gauge.running.fetch_add(1, Ordering::SeqCst) + 1;
    gauge.peak.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(5)).await;
    gauge.running.fetch_sub(1, Ordering::SeqCst);
    "step".into()
}

/// Echo a text back.
#[mcp_tool(name = "echo")]
async fn echo(
    /// Text to echo
    text: String,
) -> String {
    text
}

/// Returns a big text.
#[mcp_tool(name = "big_text")]
async fn big() -> String {
    "é".repeat(10_000)
}

fn registry() -> ToolRegistry {
    ToolRegistry::builder()
        .state(Gauge {
            running: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
        .build()
        .unwrap()
}

async fn call(registry: &ToolRegistry, name: &str, args: serde_json::Value) -> ToolResult {
    registry
        .call_tool(name, args, ToolContext::default())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_panicking_tool_is_an_internal_error_and_the_registry_keeps_serving() {
    let registry = registry();
    let crashed = call(&registry, "crash_now", json!({})).await;
    assert_eq!(crashed.error_kind(), Some(ErrorKind::Internal));
    assert!(
        crashed
            .text_content()
            .contains("tool 'crash_now' panicked: boom")
    );
    let ok = call(&registry, "echo", json!({"text": "still here"})).await;
    assert_eq!(ok.text_content(), "still here");
    let stats = registry.stats();
    let crash_stats = stats.iter().find(|s| s.name == "crash_now").unwrap();
    assert_eq!((crash_stats.calls, crash_stats.errors), (1, 1));
}

#[tokio::test]
async fn a_hanging_tool_times_out() {
    let registry = registry();
    let result = call(&registry, "slow_sleep", json!({})).await;
    assert_eq!(result.error_kind(), Some(ErrorKind::Timeout));
    assert!(
        result
            .text_content()
            .contains("did not finish within 50 ms")
    );
}

#[tokio::test]
async fn the_registry_default_timeout_applies_to_tools_without_their_own() {
    let registry = ToolRegistry::builder()
        .state(Gauge {
            running: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
        .default_timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    let result = call(&registry, "slow_wait", json!({})).await;
    assert_eq!(result.error_kind(), Some(ErrorKind::Timeout));
}

#[tokio::test]
async fn cancellation_drops_the_call() {
    let registry = registry();
    let token = CancellationToken::new();
    let ctx = ToolContext::default().with_cancellation(token.clone());
    let pending = tokio::spawn({
        let registry = registry.clone();
        async move { registry.call_tool("slow_wait", json!({}), ctx).await }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    token.cancel();
    let result = pending.await.unwrap().unwrap();
    assert_eq!(result.error_kind(), Some(ErrorKind::Cancelled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_concurrency_one_serializes_a_tool() {
    let gauge = Arc::new(Gauge {
        running: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
    });
    let registry = ToolRegistry::builder()
        .state_arc(gauge.clone())
        .build()
        .unwrap();
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let registry = registry.clone();
            tokio::spawn(async move { call(&registry, "serial_step", json!({})).await })
        })
        .collect();
    for c in calls {
        assert_eq!(c.await.unwrap().text_content(), "step");
    }
    assert_eq!(gauge.peak.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn oversized_text_is_truncated_with_a_notice() {
    let registry = ToolRegistry::builder()
        .state(Gauge {
            running: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
        .max_response_bytes(1001)
        .build()
        .unwrap();
    let result = call(&registry, "big_text", json!({})).await;
    let text = result.text_content();
    assert!(text.starts_with(&"é".repeat(500)));
    assert!(
        text.contains(
            "[truncated: the response was 20000 bytes of text, over the 1001-byte limit]"
        )
    );
}

#[tokio::test]
async fn disable_enable_register_unregister_notify_listeners() {
    let registry = registry();
    let seen = Arc::new(Mutex::new(Vec::new()));
    registry.on_change({
        let seen = seen.clone();
        move |change| seen.lock().unwrap().push(change.clone())
    });
    registry.disable("echo").unwrap();
    assert!(registry.get("echo").is_none());
    assert!(registry.list_tools().iter().all(|t| t.name() != "echo"));
    assert!(
        registry
            .call_tool("echo", json!({"text": "x"}), ToolContext::default())
            .await
            .is_err()
    );
    registry.enable("echo").unwrap();
    assert_eq!(
        call(&registry, "echo", json!({"text": "back"}))
            .await
            .text_content(),
        "back"
    );

    let runtime = ToolDef::builder("runtime_hello")
        .description("A tool registered while serving")
        .handler(|_args, _ctx| async { Ok(ToolResult::text("hello from runtime")) })
        .build()
        .unwrap();
    registry.register(runtime.clone()).unwrap();
    assert_eq!(
        call(&registry, "runtime_hello", json!({}))
            .await
            .text_content(),
        "hello from runtime"
    );
    let duplicate = registry.register(runtime).unwrap_err().to_string();
    assert!(
        duplicate.contains("duplicate tool name \"runtime_hello\""),
        "{duplicate}"
    );
    registry.unregister("runtime_hello").unwrap();
    assert!(registry.get("runtime_hello").is_none());
    assert!(registry.disable("nope").is_err());

    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            RegistryChange::Disabled("echo".into()),
            RegistryChange::Enabled("echo".into()),
            RegistryChange::Registered("runtime_hello".into()),
            RegistryChange::Unregistered("runtime_hello".into()),
        ]
    );
}

#[test]
fn missing_state_fails_build_naming_tool_and_type() {
    let err = ToolRegistry::builder().build().unwrap_err().to_string();
    assert!(
        err.contains("state runtime::Gauge is needed by 1 tool(s)"),
        "{err}"
    );
    assert!(
        err.contains("\"serial_step\" (mcp-tools/tests/runtime.rs:"),
        "{err}"
    );
    assert!(err.contains(".state(value)"), "{err}");
}

/// `build` names every problem at once: a missing state does not hide a duplicate name
/// (it used to return the missing state alone).
#[test]
fn a_missing_state_and_a_duplicate_name_are_both_named() {
    let plain = |name: &'static str| {
        ToolDef::builder(name)
            .description("Answers.")
            .handler(|_a, _c| async { Ok(ToolResult::empty()) })
            .build()
            .unwrap()
    };
    let needs_gauge = ToolDef::builder("gauged")
        .description("Needs the gauge")
        .requires(<State<Gauge> as mcp_toolbelt::context::FromContext>::requirement())
        .handler(|_a, _c| async { Ok(ToolResult::empty()) })
        .build()
        .unwrap();
    let err = ToolRegistry::builder()
        .include_linked(false)
        .tool(plain("twice"))
        .tool(needs_gauge)
        .tool(plain("twice"))
        .build()
        .unwrap_err();
    assert_eq!(err.problems().len(), 2, "{err}");
    assert!(
        err.problems()[0].starts_with("state runtime::Gauge is needed by 1 tool(s)"),
        "{err}"
    );
    assert!(
        err.problems()[1].starts_with("duplicate tool name \"twice\""),
        "{err}"
    );
}

#[test]
fn missing_state_names_every_tool_needing_it_in_source_order() {
    let needs_gauge = |name: &'static str, file: &'static str, line: u32| {
        ToolDef::builder(name)
            .description("Needs the gauge")
            .source(file, line)
            .requires(<State<Gauge> as mcp_toolbelt::context::FromContext>::requirement())
            .handler(|_a, _c| async { Ok(ToolResult::empty()) })
            .build()
            .unwrap()
    };
    let err = ToolRegistry::builder()
        .include_linked(false)
        .tool(needs_gauge("late", "src/z.rs", 1))
        .tool(needs_gauge("early", "src/a.rs", 7))
        .tool(needs_gauge("middle", "src/a.rs", 30))
        .build()
        .unwrap_err();
    assert_eq!(err.problems().len(), 1, "one problem per state type: {err}");
    assert!(
        err.problems()[0]
            .ends_with("\"early\" (src/a.rs:7), \"middle\" (src/a.rs:30), \"late\" (src/z.rs:1)"),
        "every tool, in source order: {err}"
    );
    assert!(err.problems()[0].contains("needed by 3 tool(s)"), "{err}");
}

#[test]
fn duplicate_locations_are_listed_in_source_order() {
    let at = |file: &'static str, line: u32| {
        ToolDef::builder("twice")
            .description("Defined twice")
            .source(file, line)
            .handler(|_a, _c| async { Ok(ToolResult::empty()) })
            .build()
            .unwrap()
    };
    for (first, second) in [
        (at("src/b.rs", 3), at("src/a.rs", 40)),
        (at("src/a.rs", 40), at("src/b.rs", 3)),
    ] {
        let err = ToolRegistry::builder()
            .include_linked(false)
            .tool(first)
            .tool(second)
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("defined at src/a.rs:40 and at src/b.rs:3;"),
            "whatever the collection order: {err}"
        );
    }
}

#[test]
fn duplicate_names_fail_build_naming_both_places() {
    let def = || {
        ToolDef::builder("echo")
            .description("A second echo")
            .handler(|_a, _c| async { Ok(ToolResult::empty()) })
            .build()
            .unwrap()
    };
    let err = ToolRegistry::builder()
        .state(Gauge {
            running: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
        .tool(def())
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("duplicate tool name \"echo\""), "{err}");
    assert!(
        err.contains("runtime.rs:"),
        "the macro tool's location is named: {err}"
    );
    assert!(err.contains("a runtime definition"), "{err}");

    let lenient = ToolRegistry::builder()
        .state(Gauge {
            running: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
        .tool(def())
        .lenient(true)
        .build()
        .unwrap();
    assert!(lenient.validation_report().has_errors());
    assert!(
        lenient
            .validation_report()
            .to_string()
            .contains("duplicate tool name")
    );
}

#[test]
fn runtime_definitions_are_checked() {
    let no_description = ToolDef::builder("x")
        .handler(|_a, _c| async { Ok(ToolResult::empty()) })
        .build()
        .unwrap_err();
    assert!(no_description.to_string().contains("has no description"));
    let bad_name = ToolDef::builder("has space")
        .description("d")
        .handler(|_a, _c| async { Ok(ToolResult::empty()) })
        .build()
        .unwrap_err();
    assert!(bad_name.to_string().contains("contains ' '"));
    let dotted = ToolDef::builder("a.b")
        .description("d")
        .handler(|_a, _c| async { Ok(ToolResult::empty()) })
        .build()
        .unwrap_err();
    assert!(dotted.to_string().contains("nonportable_name"));
    let not_object = ToolDef::builder("arr")
        .description("d")
        .input_schema(json!({"type": "array"}))
        .handler(|_a, _c| async { Ok(ToolResult::empty()) })
        .build()
        .unwrap_err();
    assert!(not_object.to_string().contains("root must be"));
}

struct Recorder(Arc<Mutex<Vec<String>>>, &'static str);

impl Around for Recorder {
    fn around(
        &self,
        tool: &ToolDef,
        ctx: ToolContext,
        next: Next,
    ) -> BoxFuture<'static, Result<ToolResult, ToolError>> {
        let log = self.0.clone();
        let label = self.1;
        let name = tool.name().to_string();
        Box::pin(async move {
            log.lock().unwrap().push(format!("{label}>{name}"));
            let out = next(ctx).await;
            log.lock().unwrap().push(format!("{label}<{name}"));
            out
        })
    }
}

#[tokio::test]
async fn around_hooks_run_in_order_first_outermost() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let registry = ToolRegistry::builder()
        .state(Gauge {
            running: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
        .around(Recorder(log.clone(), "outer"))
        .around(Recorder(log.clone(), "inner"))
        .build()
        .unwrap();
    call(&registry, "echo", json!({"text": "x"})).await;
    assert_eq!(
        *log.lock().unwrap(),
        ["outer>echo", "inner>echo", "inner<echo", "outer<echo"]
    );
}
