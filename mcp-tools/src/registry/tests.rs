//! Unit tests of the catalog internals: the per-view list cache and its bound.

use std::sync::Arc;

use super::ToolRegistry;
use super::view_cache::MAX_CACHED_VIEWS;
use crate::definition::ToolDef;
use crate::{PermissionSet, ToolResult};

fn tool(name: &str, permissions: &[&'static str]) -> ToolDef {
    ToolDef::builder(name.to_string())
        .description(format!("Answers {name}."))
        .permissions(permissions.iter().copied())
        .handler(|_args, _ctx| async { Ok(ToolResult::empty()) })
        .build()
        .unwrap()
}

fn cached_views(registry: &ToolRegistry) -> usize {
    registry.shared.catalog.load().views.len()
}

fn names(view: &ToolRegistry) -> Vec<String> {
    view.list_tools()
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// True when `view`'s list is served from the cache (the same list as last time).
fn cached(view: &ToolRegistry) -> bool {
    Arc::ptr_eq(&view.list_tools(), &view.list_tools())
}

#[test]
fn the_list_cache_keeps_the_256_views_used_last() {
    assert_eq!(MAX_CACHED_VIEWS, 256);
    let registry = ToolRegistry::builder()
        .include_linked(false)
        .tool(tool("open", &[]))
        .tool(tool("first_only", &["CACHE_BOUND_0"]))
        .tool(tool("last_only", &["CACHE_BOUND_299"]))
        .build()
        .unwrap();
    let views: Vec<_> = (0..300)
        .map(|i| registry.view(&PermissionSet::new([format!("CACHE_BOUND_{i}")])))
        .collect();
    // Each view's first list, kept here: the cache holds a second reference while the
    // view is cached.
    let mut first = Vec::new();
    for (i, view) in views.iter().enumerate() {
        let expected: &[&str] = match i {
            0 => &["first_only", "open"],
            299 => &["last_only", "open"],
            _ => &["open"],
        };
        assert_eq!(names(view), expected, "view {i}");
        first.push(view.list_tools());
        assert_eq!(cached_views(&registry), (i + 1).min(MAX_CACHED_VIEWS));
    }
    let in_cache = |i: usize| Arc::strong_count(&first[i]) == 2;
    // Past the bound the views used least recently made room: 0..44 out, 44..300 in.
    assert!((0..44).all(|i| !in_cache(i)));
    assert!((44..300).all(in_cache));
    assert!(cached(&views[299]));
    // Using view 44 again makes 45 the oldest: view 0 coming back evicts 45, not 44.
    assert!(cached(&views[44]));
    assert_eq!(names(&views[0]), ["first_only", "open"]);
    assert!(cached(&views[0]));
    assert!(in_cache(44));
    assert!(!in_cache(45));
    assert!((46..300).all(in_cache));
    assert_eq!(cached_views(&registry), MAX_CACHED_VIEWS);
    // A change swaps in a new catalog with an empty cache.
    registry.disable("open").unwrap();
    assert_eq!(cached_views(&registry), 0);
    assert_eq!(names(&views[299]), ["last_only"]);
    assert_eq!(cached_views(&registry), 1);
}

#[test]
fn only_a_registry_serving_nothing_is_reported_empty() {
    let warned = |registry: &ToolRegistry| {
        registry
            .validation_report()
            .to_string()
            .contains(super::library::EMPTY)
    };
    let empty = ToolRegistry::builder()
        .include_linked(false)
        .build()
        .unwrap();
    assert!(warned(&empty), "{}", empty.validation_report());
    let one = ToolRegistry::builder()
        .include_linked(false)
        .tool(tool("open", &[]))
        .build()
        .unwrap();
    assert!(!warned(&one), "{}", one.validation_report());
}

#[test]
fn a_library_is_reported_silent_only_when_it_contributed_no_tool() {
    let silent = |anchor: &'static str| {
        let library = super::Library::new("demo_tools", anchor);
        let in_library = ToolDef::builder("from_library")
            .description("Defined in the library's source tree.")
            .source("/work/demo_tools/src/tools.rs", 7)
            .handler(|_args, _ctx| async { Ok(ToolResult::empty()) })
            .build()
            .unwrap();
        let registry = ToolRegistry::builder()
            .include_linked(false)
            .library(library)
            .tool(in_library)
            .build()
            .unwrap();
        registry
            .validation_report()
            .to_string()
            .contains(&super::library::silent(&library))
    };
    assert!(!silent("/work/demo_tools/src/lib.rs"));
    assert!(silent("/work/other_tools/src/lib.rs"));
}

/// `validation_report` compiles every input schema (serving compiles each lazily): a
/// schema that cannot compile is an error finding that names the tool and the schema's
/// problem with its place; a schema that compiles is not reported at all.
#[test]
fn the_report_names_a_tool_whose_input_schema_cannot_compile_and_only_it() {
    let with_schema = |name: &str, schema: serde_json::Value| {
        ToolDef::builder(name.to_string())
            .description(format!("Answers {name}."))
            .input_schema(schema)
            .handler(|_args, _ctx| async { Ok(ToolResult::empty()) })
            .build()
            .unwrap()
    };
    let registry = ToolRegistry::builder()
        .include_linked(false)
        .tool(with_schema(
            "broken",
            serde_json::json!({"type": "object", "properties": {"a": {"type": "nope"}}}),
        ))
        .tool(with_schema(
            "sound",
            serde_json::json!({
                "type": "object",
                "properties": {"a": {"type": "string", "pattern": "^[a-z]+$"}},
                "required": ["a"]
            }),
        ))
        .build()
        .unwrap();
    let report = registry.validation_report();
    let schema_findings: Vec<_> = report
        .findings()
        .iter()
        .filter(|f| f.message.starts_with("invalid input schema"))
        .collect();
    assert_eq!(schema_findings.len(), 1, "{report}");
    let finding = schema_findings[0];
    assert_eq!(finding.tool, "broken");
    assert_eq!(finding.severity, super::Severity::Error);
    // The compiler's own words, with the place: not empty, not made up.
    let problem = finding
        .message
        .strip_prefix("invalid input schema: ")
        .expect("the problem follows the prefix");
    assert!(problem.contains("/properties/a/type"), "{problem}");
    assert!(problem.contains("type"), "{problem}");
    let direct = crate::call::validate::ArgumentValidator::compile(
        registry.get("broken").unwrap().input_schema(),
    )
    .err()
    .expect("the schema does not compile");
    assert_eq!(problem, direct);
    assert!(report.has_errors());
    assert!(
        !report
            .findings()
            .iter()
            .any(|f| f.tool == "sound" && f.severity == super::Severity::Error),
        "{report}"
    );
}
