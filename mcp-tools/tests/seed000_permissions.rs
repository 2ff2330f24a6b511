//! Seed 000's permission table: 27 tools with exactly its permission sets; a read-only
//! permissions file keeps exactly its 14 tools, and each of the 13 others answers as unknown.

use mcp_toolbelt::registry::PermissionMatrix;
use mcp_toolbelt::{PermissionSet, ToolContext, ToolRegistry, mcp_tool};
use serde_json::json;

macro_rules! tools {
    ($($fn_name:ident => [$($perm:literal),*];)*) => {
        $(
            #[doc = concat!("Seed 000 tool `", stringify!($fn_name), "` (returns its own name).")]
            #[mcp_tool(permissions = [$($perm),*])]
            async fn $fn_name() -> &'static str {
                stringify!($fn_name)
            }
        )*
        const TABLE: &[(&str, &[&str])] = &[$((stringify!($fn_name), &[$($perm),*])),*];
    };
}

tools! {
    ping => [];
    get_server_time => [];
    ticket_search => ["TICKET_VIEW"];
    ticket_get => ["TICKET_VIEW"];
    ticket_changelog => ["TICKET_VIEW"];
    ticket_fields => ["TICKET_VIEW"];
    ticket_actions => ["TICKET_VIEW"];
    ticket_create => ["TICKET_CREATE"];
    ticket_update => ["TICKET_MODIFY"];
    ticket_delete => ["TICKET_ADMIN"];
    ticket_batch_create => ["TICKET_CREATE", "TICKET_BATCH_MODIFY"];
    ticket_batch_update => ["TICKET_MODIFY", "TICKET_BATCH_MODIFY"];
    ticket_batch_delete => ["TICKET_ADMIN", "TICKET_BATCH_MODIFY"];
    wiki_get => ["WIKI_VIEW"];
    wiki_search => ["WIKI_VIEW"];
    wiki_recent_changes => ["WIKI_VIEW"];
    wiki_create => ["WIKI_CREATE"];
    wiki_update => ["WIKI_MODIFY"];
    wiki_delete => ["WIKI_DELETE"];
    wiki_file_push => ["WIKI_CREATE", "WIKI_MODIFY"];
    wiki_file_pull => ["WIKI_VIEW"];
    wiki_file_detect_format => [];
    milestone_list => ["MILESTONE_VIEW"];
    milestone_get => ["MILESTONE_VIEW"];
    milestone_create => ["MILESTONE_CREATE"];
    milestone_update => ["MILESTONE_MODIFY"];
    milestone_delete => ["MILESTONE_DELETE"];
}

const INCLUDED: [&str; 14] = [
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

/// The read-only permission file, written anew for each caller: tests run at once, and one
/// rewriting a shared file while another reads it would hand the reader a truncated file.
fn read_only_file() -> PermissionSet {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("seed000-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("read-only.permissions");
    std::fs::write(
        &path,
        "# read-only.permissions\nTICKET_VIEW\nWIKI_VIEW\nMILESTONE_VIEW\n",
    )
    .unwrap();
    let permissions = PermissionSet::from_file(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    permissions
}

#[test]
fn all_27_tools_carry_the_table_permissions() {
    let registry = ToolRegistry::builder().build().unwrap();
    assert_eq!(registry.list_tools().len(), 27);
    assert_eq!(TABLE.len(), 27);
    for (name, permissions) in TABLE {
        let def = registry.get(name).unwrap();
        let mut got: Vec<&str> = def.permissions().names().collect();
        let mut want = permissions.to_vec();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{name}");
    }
    let matrix = PermissionMatrix::of(&registry);
    assert_eq!(matrix.rows.len(), 27);
    assert_eq!(matrix.permissions.len(), 13);
    let text = matrix.to_string();
    assert!(text.contains("| ticket_batch_delete |"), "{text}");
}

#[tokio::test]
async fn read_only_file_keeps_14_and_hides_13() {
    let registry = ToolRegistry::builder()
        .allowed_permissions(read_only_file())
        .build()
        .unwrap();
    let mut listed: Vec<String> = registry
        .list_tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    let mut included: Vec<String> = INCLUDED.iter().map(|s| s.to_string()).collect();
    listed.sort();
    included.sort();
    assert_eq!(listed, included);

    let excluded: Vec<&str> = TABLE
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !INCLUDED.contains(name))
        .collect();
    assert_eq!(excluded.len(), 13);
    for name in excluded {
        let err = registry
            .call_tool(name, json!({}), ToolContext::default())
            .await
            .unwrap_err();
        let unknown = registry
            .call_tool("no_such_tool", json!({}), ToolContext::default())
            .await
            .unwrap_err();
        assert_eq!(err.name(), name);
        assert_eq!(
            err.to_string().replace(name, "X"),
            unknown.to_string().replace("no_such_tool", "X"),
            "a hidden tool must answer exactly like an unknown one"
        );
    }
    for name in INCLUDED {
        let result = registry
            .call_tool(name, json!({}), ToolContext::default())
            .await
            .unwrap();
        assert_eq!(result.text_content(), name);
    }
}

#[tokio::test]
async fn per_caller_views_apply_the_same_rule() {
    let registry = ToolRegistry::builder().build().unwrap();
    let view = registry.view(&read_only_file());
    assert_eq!(view.list_tools().len(), 14);
    let admin = registry.view(&PermissionSet::new(["TICKET_ADMIN", "TICKET_BATCH_MODIFY"]));
    let names: Vec<String> = admin
        .list_tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    assert!(names.contains(&"ticket_batch_delete".into()));
    assert!(!names.contains(&"ticket_batch_create".into()));
    assert!(
        view.call_tool("ticket_delete", json!({}), ToolContext::default())
            .await
            .is_err()
    );
    assert!(
        admin
            .call_tool("ticket_delete", json!({}), ToolContext::default())
            .await
            .is_ok()
    );
    // The category is the name's prefix: the action text speaks of tickets.
    assert_eq!(
        registry.get("ticket_get").unwrap().category(),
        Some("ticket")
    );
}
