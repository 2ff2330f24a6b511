//! Unit tests of the catalog internals: the per-view list cache and its bound.

use std::sync::Arc;

use super::{MAX_CACHED_VIEWS, Registry};
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

fn cached_views(registry: &Registry) -> usize {
    let catalog = registry.shared.catalog.load();
    catalog.views.lock().unwrap().len()
}

fn names(view: &Registry) -> Vec<String> {
    view.list_tools()
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

#[test]
fn the_list_cache_keeps_at_most_256_views_and_serves_the_rest_uncached() {
    let registry = Registry::builder()
        .include_linked(false)
        .tool(tool("open", &[]))
        .tool(tool("first_only", &["CACHE_BOUND_0"]))
        .tool(tool("last_only", &["CACHE_BOUND_299"]))
        .build()
        .unwrap();
    let views: Vec<_> = (0..300)
        .map(|i| registry.view(&PermissionSet::new([format!("CACHE_BOUND_{i}")])))
        .collect();
    for (i, view) in views.iter().enumerate() {
        let expected: &[&str] = match i {
            0 => &["first_only", "open"],
            299 => &["last_only", "open"],
            _ => &["open"],
        };
        assert_eq!(names(view), expected, "view {i}");
        assert_eq!(cached_views(&registry), (i + 1).min(MAX_CACHED_VIEWS));
    }
    assert_eq!(MAX_CACHED_VIEWS, 256);
    // A cached view hands out the same list; one past the bound is computed each time.
    assert!(Arc::ptr_eq(&views[0].list_tools(), &views[0].list_tools()));
    assert!(!Arc::ptr_eq(
        &views[299].list_tools(),
        &views[299].list_tools()
    ));
    // A change swaps in a new catalog with an empty cache.
    registry.disable("open").unwrap();
    assert_eq!(cached_views(&registry), 0);
    assert_eq!(names(&views[299]), ["last_only"]);
    assert_eq!(cached_views(&registry), 1);
}

#[test]
fn only_a_registry_serving_nothing_is_reported_empty() {
    let warned = |registry: &Registry| {
        registry
            .validation_report()
            .to_string()
            .contains(super::library::EMPTY)
    };
    let empty = Registry::builder().include_linked(false).build().unwrap();
    assert!(warned(&empty), "{}", empty.validation_report());
    let one = Registry::builder()
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
        let registry = Registry::builder()
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
