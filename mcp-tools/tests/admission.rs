//! Admission: the builder's permission, category and tag filters, alone and combined,
//! decide which tools a registry serves at all — on every path a tool can take (build,
//! runtime `register`, `enable`). A tool a filter excludes is never listed, never callable,
//! and every registry call on its name answers exactly as for an unknown name.

use std::sync::{Arc, Mutex};

use mcp_toolbelt::definition::ToolDef;
use mcp_toolbelt::registry::{RegistryChange, ToolNotFound, ToolRegistryBuilder};
use mcp_toolbelt::{PermissionSet, ToolContext, ToolRegistry, ToolResult};
use serde_json::json;

/// A tool answering its own name, with the given permissions, category and tags.
fn tool(
    name: &str,
    permissions: &[&'static str],
    category: Option<&str>,
    tags: &[&str],
) -> ToolDef {
    let reply = name.to_string();
    let builder = ToolDef::builder(name.to_string())
        .description(format!("Answers {name}."))
        .permissions(permissions.iter().copied())
        .tags(tags.iter().map(|t| t.to_string()))
        .handler(move |_args, _ctx| {
            let reply = reply.clone();
            async move { Ok(ToolResult::text(reply)) }
        });
    match category {
        Some(category) => builder.category(category.to_string()),
        None => builder,
    }
    .build()
    .unwrap()
}

fn listed(registry: &ToolRegistry) -> Vec<String> {
    registry
        .list_tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect()
}

/// The answer for `name` with the name itself blanked, to compare with an unknown name's.
fn blanked(err: ToolNotFound, name: &str) -> String {
    assert_eq!(err.name(), name);
    err.to_string().replace(name, "<name>")
}

async fn call(registry: &ToolRegistry, name: &str) -> Result<ToolResult, ToolNotFound> {
    registry
        .call_tool(name, json!({}), ToolContext::default())
        .await
}

/// Every registry answer about `name` is the one an unknown name gets, before and after
/// trying to enable it; nothing about it is listed, counted or announced.
async fn assert_answers_as_unknown(registry: &ToolRegistry, name: &str) {
    const UNKNOWN: &str = "no_such_tool";
    let unknown_call = blanked(call(registry, UNKNOWN).await.unwrap_err(), UNKNOWN);
    let unknown_enable = blanked(registry.enable(UNKNOWN).unwrap_err(), UNKNOWN);
    assert_eq!(
        blanked(registry.enable(name).unwrap_err(), name),
        unknown_enable,
        "enable({name})"
    );
    for _ in 0..2 {
        assert!(
            !listed(registry).contains(&name.to_string()),
            "{name} listed"
        );
        assert!(registry.get(name).is_none(), "{name} found");
        assert!(registry.stats().iter().all(|s| s.name != name));
        assert_eq!(
            blanked(call(registry, name).await.unwrap_err(), name),
            unknown_call,
            "call({name})"
        );
        assert_eq!(
            blanked(registry.disable(name).unwrap_err(), name),
            blanked(registry.disable(UNKNOWN).unwrap_err(), UNKNOWN)
        );
        assert_eq!(
            blanked(registry.unregister(name).unwrap_err(), name),
            blanked(registry.unregister(UNKNOWN).unwrap_err(), UNKNOWN)
        );
        let _ = registry.enable(name);
    }
}

/// One filter setting and which of [`candidates`] it excludes.
struct Case {
    label: &'static str,
    filter: fn(ToolRegistryBuilder) -> ToolRegistryBuilder,
    excluded: &'static [&'static str],
}

/// Tools differing in one property at a time from `all_match` (READ, category docs, tag
/// public).
fn candidates() -> Vec<ToolDef> {
    vec![
        tool("all_match", &["READ"], Some("docs"), &["public"]),
        tool("needs_admin", &["READ", "ADMIN"], Some("docs"), &["public"]),
        tool("needs_nothing", &[], Some("docs"), &["public"]),
        tool("other_category", &["READ"], Some("ops"), &["public"]),
        tool("no_category", &["READ"], None, &["public"]),
        tool("other_tag", &["READ"], Some("docs"), &["internal"]),
        tool(
            "one_tag_matches",
            &["READ"],
            Some("docs"),
            &["internal", "public"],
        ),
        tool("no_tag", &["READ"], Some("docs"), &[]),
    ]
}

const CASES: &[Case] = &[
    Case {
        label: "permissions alone",
        filter: |b| b.allowed_permissions(PermissionSet::new(["READ"])),
        excluded: &["needs_admin"],
    },
    Case {
        label: "category alone",
        filter: |b| b.categories(["docs", "wiki"]),
        excluded: &["no_category", "other_category"],
    },
    Case {
        label: "tags alone",
        filter: |b| b.tags(["public", "beta"]),
        excluded: &["no_tag", "other_tag"],
    },
    Case {
        label: "permissions and category",
        filter: |b| {
            b.allowed_permissions(PermissionSet::new(["READ"]))
                .categories(["docs"])
        },
        excluded: &["needs_admin", "no_category", "other_category"],
    },
    Case {
        label: "permissions and tags",
        filter: |b| {
            b.allowed_permissions(PermissionSet::new(["READ"]))
                .tags(["public"])
        },
        excluded: &["needs_admin", "no_tag", "other_tag"],
    },
    Case {
        label: "permissions, category and tags",
        filter: |b| {
            b.allowed_permissions(PermissionSet::new(["READ"]))
                .categories(["docs"])
                .tags(["public"])
        },
        excluded: &[
            "needs_admin",
            "no_category",
            "no_tag",
            "other_category",
            "other_tag",
        ],
    },
    Case {
        label: "no filter",
        filter: |b| b,
        excluded: &[],
    },
];

/// The names `case` admits, sorted (as registries list them).
fn admitted(case: &Case) -> Vec<String> {
    let mut names: Vec<String> = candidates()
        .iter()
        .map(|d| d.name().to_string())
        .filter(|name| !case.excluded.contains(&name.as_str()))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn build_serves_exactly_what_the_filters_admit() {
    for case in CASES {
        let builder = candidates().into_iter().fold(
            (case.filter)(ToolRegistry::builder().include_linked(false)),
            ToolRegistryBuilder::tool,
        );
        let preview: Vec<String> = builder
            .definitions()
            .iter()
            .map(|d| d.name().to_string())
            .collect();
        assert_eq!(preview, admitted(case), "definitions(), {}", case.label);
        let registry = builder.build().unwrap();
        assert_eq!(listed(&registry), admitted(case), "{}", case.label);
        for name in admitted(case) {
            let result = call(&registry, &name).await.unwrap();
            assert_eq!(result.text_content(), name, "{}", case.label);
        }
        for name in case.excluded {
            assert_answers_as_unknown(&registry, name).await;
        }
    }
}

#[tokio::test]
async fn register_adds_only_what_the_filters_admit_and_enable_cannot_bypass_them() {
    for case in CASES {
        let registry = (case.filter)(ToolRegistry::builder().include_linked(false))
            .build()
            .unwrap();
        let changes = Arc::new(Mutex::new(Vec::new()));
        registry.on_change({
            let changes = changes.clone();
            move |change| changes.lock().unwrap().push(change.clone())
        });
        for def in candidates() {
            registry.register(def).unwrap();
        }
        assert_eq!(listed(&registry), admitted(case), "{}", case.label);
        let registered: Vec<RegistryChange> = admitted(case)
            .into_iter()
            .map(RegistryChange::Registered)
            .collect();
        let mut seen = changes.lock().unwrap().clone();
        seen.sort_by_key(|c| format!("{c:?}"));
        assert_eq!(
            seen, registered,
            "only admitted tools are announced, {}",
            case.label
        );
        for name in admitted(case) {
            let result = call(&registry, &name).await.unwrap();
            assert_eq!(result.text_content(), name, "{}", case.label);
        }
        for name in case.excluded {
            assert_answers_as_unknown(&registry, name).await;
            // Registering it again is still no duplicate: it was never stored.
            let def = candidates()
                .into_iter()
                .find(|d| d.name() == *name)
                .unwrap();
            registry.register(def).unwrap();
            assert_answers_as_unknown(&registry, name).await;
        }
        assert_eq!(
            changes.lock().unwrap().len(),
            admitted(case).len(),
            "{}",
            case.label
        );
    }
}

/// The bypass of issue 17: a registry limited to READ, a runtime tool needing ADMIN.
#[tokio::test]
async fn a_runtime_admin_tool_stays_unreachable_in_a_read_only_registry() {
    let registry = ToolRegistry::builder()
        .include_linked(false)
        .allowed_permissions(PermissionSet::new(["READ"]))
        .tool(tool("reader", &["READ"], None, &[]))
        .build()
        .unwrap();
    registry
        .register(tool("purge", &["ADMIN"], None, &[]))
        .unwrap();
    let refused = registry.enable("purge").unwrap_err();
    assert_eq!(refused.name(), "purge");
    assert_eq!(refused.to_string(), "unknown tool: purge");
    assert_eq!(listed(&registry), ["reader"]);
    assert!(call(&registry, "purge").await.is_err());
    let view = registry.view(&PermissionSet::new(["READ", "ADMIN"]));
    assert!(view.get("purge").is_none());
    assert!(
        view.call_tool("purge", json!({}), ToolContext::default())
            .await
            .is_err()
    );
    // A runtime tool the filter admits still registers, is announced and answers.
    registry
        .register(tool("second_reader", &["READ"], None, &[]))
        .unwrap();
    assert_eq!(listed(&registry), ["reader", "second_reader"]);
    registry.disable("second_reader").unwrap();
    registry.enable("second_reader").unwrap();
    let result = call(&registry, "second_reader").await.unwrap();
    assert_eq!(result.text_content(), "second_reader");
}

/// Runtime registration checks state and schema only for tools the filter admits, like
/// build does.
#[test]
fn register_checks_an_admitted_tool_and_skips_an_excluded_one() {
    struct Missing;
    let needs_state = |name: &str, permissions: &[&'static str]| {
        ToolDef::builder(name.to_string())
            .description("Needs a state that is never registered.")
            .permissions(permissions.iter().copied())
            .requires(Some(mcp_toolbelt::context::StateRequirement {
                type_id: std::any::TypeId::of::<Missing>(),
                type_name: "Missing",
            }))
            .handler(|_args, _ctx| async { Ok(ToolResult::empty()) })
            .build()
            .unwrap()
    };
    let registry = ToolRegistry::builder()
        .include_linked(false)
        .allowed_permissions(PermissionSet::new(["READ"]))
        .build()
        .unwrap();
    let refused = registry
        .register(needs_state("stateful_reader", &["READ"]))
        .unwrap_err()
        .to_string();
    assert!(refused.contains("needs state"), "{refused}");
    registry
        .register(needs_state("stateful_admin", &["ADMIN"]))
        .unwrap();
    assert!(registry.list_tools().is_empty());
}
