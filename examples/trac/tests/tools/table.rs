//! Seed 000's permission table, the read-only file (14 tools), and the
//! schema details a model relies on (defaults, bounds, maxItems, hints).

use std::collections::BTreeSet;

use mcp_toolbelt::{PermissionSet, ToolContext, ToolRegistry};
use serde_json::{Value, json};
use trac_mcp::tools::{ALL_TOOLS, MAX_BATCH_SIZE};

use crate::common::servers;

/// Seed 000's table, verbatim.
const TABLE: [(&str, &[&str]); 27] = [
    ("ping", &[]),
    ("get_server_time", &[]),
    ("ticket_search", &["TICKET_VIEW"]),
    ("ticket_get", &["TICKET_VIEW"]),
    ("ticket_changelog", &["TICKET_VIEW"]),
    ("ticket_fields", &["TICKET_VIEW"]),
    ("ticket_actions", &["TICKET_VIEW"]),
    ("ticket_create", &["TICKET_CREATE"]),
    ("ticket_update", &["TICKET_MODIFY"]),
    ("ticket_delete", &["TICKET_ADMIN"]),
    (
        "ticket_batch_create",
        &["TICKET_CREATE", "TICKET_BATCH_MODIFY"],
    ),
    (
        "ticket_batch_update",
        &["TICKET_MODIFY", "TICKET_BATCH_MODIFY"],
    ),
    (
        "ticket_batch_delete",
        &["TICKET_ADMIN", "TICKET_BATCH_MODIFY"],
    ),
    ("wiki_get", &["WIKI_VIEW"]),
    ("wiki_search", &["WIKI_VIEW"]),
    ("wiki_recent_changes", &["WIKI_VIEW"]),
    ("wiki_create", &["WIKI_CREATE"]),
    ("wiki_update", &["WIKI_MODIFY"]),
    ("wiki_delete", &["WIKI_DELETE"]),
    ("wiki_file_push", &["WIKI_CREATE", "WIKI_MODIFY"]),
    ("wiki_file_pull", &["WIKI_VIEW"]),
    ("wiki_file_detect_format", &[]),
    ("milestone_list", &["MILESTONE_VIEW"]),
    ("milestone_get", &["MILESTONE_VIEW"]),
    ("milestone_create", &["MILESTONE_CREATE"]),
    ("milestone_update", &["MILESTONE_MODIFY"]),
    ("milestone_delete", &["MILESTONE_DELETE"]),
];

/// The 14 tools seed 000 lists for the read-only agent.
const READ_ONLY: [&str; 14] = [
    "ping",
    "get_server_time",
    "ticket_search",
    "ticket_get",
    "ticket_changelog",
    "ticket_fields",
    "ticket_actions",
    "wiki_get",
    "wiki_search",
    "wiki_recent_changes",
    "wiki_file_pull",
    "wiki_file_detect_format",
    "milestone_list",
    "milestone_get",
];

fn registry(allowed: Option<PermissionSet>) -> ToolRegistry {
    ToolRegistry::builder()
        .state(servers().anon_client())
        .allowed_permissions(allowed)
        .build()
        .expect("the registry builds")
}

fn read_only_file() -> PermissionSet {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/read-only.permissions");
    PermissionSet::from_file(path).expect("the example's read-only.permissions parses")
}

#[test]
fn all_27_tools_carry_exactly_the_seed_permissions() {
    let registry = registry(None);
    let defs = registry.list_tools();
    let names: BTreeSet<&str> = defs.iter().map(|d| d.name()).collect();
    let expected: BTreeSet<&str> = TABLE.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, expected);
    assert_eq!(ALL_TOOLS.len(), 27);
    assert_eq!(ALL_TOOLS.iter().copied().collect::<BTreeSet<_>>(), expected);
    for (name, permissions) in TABLE {
        let def = registry.get(name).unwrap();
        let have: BTreeSet<&str> = def.permissions().names().collect();
        let want: BTreeSet<&str> = permissions.iter().copied().collect();
        assert_eq!(have, want, "permissions of {name}");
        assert!(
            def.description().len() > 40,
            "{name} needs a description a model can act on"
        );
    }
}

#[tokio::test]
async fn the_read_only_file_keeps_14_tools_and_hides_the_13_others() {
    let registry = registry(Some(read_only_file()));
    let listed: Vec<String> = registry
        .list_tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    let mut want: Vec<&str> = READ_ONLY.to_vec();
    want.sort();
    assert_eq!(listed, want);
    for (name, _) in TABLE {
        let outcome = registry
            .call_tool(name, json!({}), ToolContext::default())
            .await;
        if READ_ONLY.contains(&name) {
            assert!(outcome.is_ok(), "{name} should be callable");
        } else {
            assert!(outcome.is_err(), "{name} must answer as unknown");
        }
    }
}

fn schema(name: &str) -> Value {
    let registry = registry(None);
    Value::Object((**registry.get(name).unwrap().input_schema()).clone())
}

#[test]
fn schemas_carry_defaults_bounds_and_batch_limits() {
    let search = schema("ticket_search");
    assert_eq!(search["properties"]["query"]["default"], "status!=closed");
    let max = &search["properties"]["max_results"];
    assert_eq!(
        (max["default"].as_u64(), max["minimum"].as_u64()),
        (Some(10), Some(1))
    );
    assert_eq!(max["maximum"], 100);
    assert!(
        search
            .get("required")
            .is_none_or(|r| r.as_array().unwrap().is_empty())
    );
    for (tool, property) in [
        ("ticket_batch_create", "tickets"),
        ("ticket_batch_update", "updates"),
        ("ticket_batch_delete", "ids"),
    ] {
        let array = &schema(tool)["properties"][property];
        assert_eq!(array["maxItems"], MAX_BATCH_SIZE, "{tool}");
        assert_eq!(array["minItems"], 1, "{tool}");
    }
    // the batch items are the single tools' arguments, inlined
    let item = &schema("ticket_batch_update")["properties"]["updates"]["items"];
    assert_eq!(item["properties"]["action"]["default"], "leave");
    assert!(
        schema("ticket_create")["required"]
            .as_array()
            .unwrap()
            .contains(&json!("summary"))
    );
    let pull = schema("wiki_file_pull");
    assert_eq!(pull["properties"]["overwrite"]["default"], false);
}

#[test]
fn annotations_say_what_a_tool_does_and_reads_give_output_schemas() {
    let registry = registry(None);
    for (name, _) in TABLE {
        let def = registry.get(name).unwrap();
        let hints = def.annotations();
        let reads = READ_ONLY.contains(&name) && name != "wiki_file_pull";
        assert_eq!(
            hints.read_only_hint == Some(true),
            reads,
            "readOnlyHint of {name}"
        );
        let destroys = name.ends_with("_delete") || name == "wiki_file_pull";
        assert_eq!(
            hints.destructive_hint == Some(true),
            destroys,
            "destructiveHint of {name}"
        );
        // Creating never overwrites: say so, or clients assume a write may destroy.
        let creates = name.ends_with("_create");
        assert_eq!(
            hints.destructive_hint == Some(false),
            creates,
            "destructiveHint false of {name}"
        );
        assert!(def.output_schema().is_some(), "{name} returns Json<T>");
    }
}
