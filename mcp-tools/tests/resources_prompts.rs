//! Resources, resource templates, prompts and completions in the registry: collected from
//! `#[mcp_resource]` / `#[mcp_prompt]`, filtered by permission views, typed parameters,
//! contents and MIME types, argument checks, completion fns, and the shared guard (time
//! budget, panic capture).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_toolbelt::definition::{
    Completion, CompletionRef, CompletionRequest, Params, PromptArgument, PromptDef, ResourceDef,
};
use mcp_toolbelt::output::{PromptMessage, ResourceContent, Role};
use mcp_toolbelt::{
    ErrorKind, Json, PermissionSet, State, ToolContext, ToolError, ToolRegistry, mcp_prompt,
    mcp_resource,
};
use serde_json::{Value, json};

/// A stand-in for a wiki backend: pages by name.
struct Wiki {
    pages: Mutex<HashMap<String, String>>,
}

impl Wiki {
    fn new() -> Wiki {
        let pages = [
            ("WikiStart", "= Welcome ="),
            ("Guide/Install", "= Installing ="),
            ("Guide/Upgrade", "= Upgrading ="),
        ];
        Wiki {
            pages: Mutex::new(
                pages
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
        }
    }
}

async fn page_names(request: CompletionRequest, ctx: ToolContext) -> Result<Completion, ToolError> {
    let wiki = ctx
        .state::<Wiki>()
        .ok_or_else(|| ToolError::internal("no wiki"))?;
    let mut names: Vec<String> = wiki.pages.lock().unwrap().keys().cloned().collect();
    names.sort();
    Ok(Completion::matching(names, &request.value))
}

/// One wiki page, by name (names may contain `/`).
#[mcp_resource(
    uri_template = "trac://wiki/{+name}",
    mime_type = "text/x-trac-wiki",
    permissions = ["WIKI_VIEW"],
    complete(name = page_names)
)]
async fn wiki_page(wiki: State<Wiki>, name: String) -> Result<String, ToolError> {
    wiki.pages
        .lock()
        .unwrap()
        .get(&name)
        .cloned()
        .ok_or_else(|| ToolError::not_found(format!("no wiki page named {name:?}")))
}

/// The static text resource.
#[mcp_resource(
    uri = "test://static-text",
    name = "static-text",
    title = "Static text"
)]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A tiny PNG.
#[mcp_resource(uri = "test://static-binary", mime_type = "image/png")]
async fn static_binary() -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G']
}

/// Data for one id.
#[mcp_resource(uri_template = "test://template/{id}/data")]
async fn template_data(id: u32) -> Json<Value> {
    Json(json!({"id": id.to_string(), "templateTest": true}))
}

/// A resource made of two pieces, one with its own URI and MIME type.
#[mcp_resource(uri = "test://bundle")]
async fn bundle() -> Vec<ResourceContent> {
    vec![
        ResourceContent::text("readme"),
        ResourceContent::text("{}")
            .with_uri("test://bundle/meta.json")
            .with_mime_type("application/json"),
    ]
}

/// Panics on purpose.
#[mcp_resource(uri = "test://crash")]
async fn crash() -> String {
    panic!("resource boom")
}

/// Never finishes in time.
#[mcp_resource(uri = "test://slow")]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "late".into()
}

async fn cities(request: CompletionRequest, _ctx: ToolContext) -> Vec<String> {
    let all = ["paris", "park", "party", "rome"];
    all.iter()
        .filter(|c| c.starts_with(&request.value))
        .map(|c| c.to_string())
        .collect()
}

/// Ask for a trip plan.
#[mcp_prompt(name = "trip_plan", complete(city = cities))]
async fn trip_plan(
    /// Where to go
    city: String,
    #[arg(desc = "How many days", default = 3)] days: u8,
    #[arg(rename = "travelStyle")] travel_style: Option<String>,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::new_text(
            Role::User,
            format!(
                "Plan {days} days in {city}{}.",
                travel_style
                    .map(|s| format!(", {s} style"))
                    .unwrap_or_default()
            ),
        ),
        PromptMessage::new_text(Role::Assistant, "Here is a plan."),
    ]
}

/// Admin-only prompt.
#[mcp_prompt(name = "purge_notes", permissions = ["ADMIN"])]
async fn purge_notes() -> &'static str {
    "Purge everything."
}

/// A prompt whose fn fails.
#[mcp_prompt(name = "always_fails")]
async fn always_fails() -> Result<String, ToolError> {
    Err(ToolError::upstream("the template store is down"))
}

fn registry() -> ToolRegistry {
    ToolRegistry::builder()
        .state(Wiki::new())
        .default_timeout(Duration::from_millis(100))
        .build()
        .expect("registry builds")
}

fn ctx() -> ToolContext {
    ToolContext::default()
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

#[test]
fn lists_are_collected_sorted_and_split() {
    let registry = registry();
    let uris: Vec<String> = registry
        .list_resources()
        .iter()
        .map(|r| r.address().to_string())
        .collect();
    assert_eq!(
        uris,
        [
            "test://bundle",
            "test://crash",
            "test://slow",
            "test://static-binary",
            "test://static-text"
        ]
    );
    let templates: Vec<String> = registry
        .list_resource_templates()
        .iter()
        .map(|t| t.address().to_string())
        .collect();
    assert_eq!(
        templates,
        ["test://template/{id}/data", "trac://wiki/{+name}"]
    );
    let text = &registry.list_resources()[4];
    assert_eq!(text.name(), "static-text");
    assert_eq!(text.title(), Some("Static text"));
    assert_eq!(text.description(), "The static text resource.");
    let wiki = &registry.list_resource_templates()[1];
    assert_eq!(wiki.name(), "wiki_page");
    assert_eq!(wiki.mime_type(), Some("text/x-trac-wiki"));
    assert_eq!(WIKI_PAGE_RESOURCE, "trac://wiki/{+name}");
    assert_eq!(STATIC_TEXT_RESOURCE, "test://static-text");

    let prompts: Vec<String> = registry
        .list_prompts()
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    assert_eq!(prompts, ["always_fails", "purge_notes", "trip_plan"]);
    let trip = to_json(&registry.list_prompts()[2]);
    assert_eq!(
        trip["arguments"],
        json!([
            {"name": "city", "description": "Where to go", "required": true},
            {"name": "days", "description": "How many days", "required": false},
            {"name": "travelStyle", "required": false}
        ])
    );
    assert_eq!(TRIP_PLAN_PROMPT, "trip_plan");
    assert!(registry.has_resources() && registry.has_prompts());
}

#[test]
fn views_filter_resources_and_prompts_like_tools() {
    let registry = registry();
    let guest = registry.view(&PermissionSet::new(["TICKET_VIEW"]));
    assert!(
        guest
            .list_resource_templates()
            .iter()
            .all(|t| !t.address().to_string().starts_with("trac://"))
    );
    assert!(
        guest
            .list_prompts()
            .iter()
            .all(|p| p.name() != "purge_notes")
    );
    let reader = registry.view(&PermissionSet::new(["WIKI_VIEW"]));
    assert!(
        reader
            .list_resource_templates()
            .iter()
            .any(|t| t.address().to_string().starts_with("trac://"))
    );

    // The registry's own filter drops them entirely.
    let limited = ToolRegistry::builder()
        .state(Wiki::new())
        .allowed_permissions(PermissionSet::new(["WIKI_VIEW"]))
        .build()
        .unwrap();
    assert!(
        limited
            .list_prompts()
            .iter()
            .all(|p| p.name() != "purge_notes")
    );
    assert!(limited.list_resources().len() + limited.list_resource_templates().len() == 7);
}

#[tokio::test]
async fn hidden_resources_and_prompts_answer_like_unknown_ones() {
    let registry = registry();
    let guest = registry.view(&PermissionSet::new(["TICKET_VIEW"]));
    let hidden = guest
        .read_resource("trac://wiki/WikiStart", ctx())
        .await
        .unwrap_err();
    let unknown = guest
        .read_resource("trac://nothing/here", ctx())
        .await
        .unwrap_err();
    assert_eq!(hidden.kind(), ErrorKind::NotFound);
    assert_eq!(unknown.kind(), ErrorKind::NotFound);
    assert_eq!(hidden.message(), "unknown resource: trac://wiki/WikiStart");
    let prompt = guest
        .get_prompt("purge_notes", Params::new(), ctx())
        .await
        .unwrap_err();
    assert_eq!(prompt.kind(), ErrorKind::NotFound);
    assert_eq!(prompt.message(), "unknown prompt: purge_notes");
}

#[tokio::test]
async fn template_variables_become_typed_params_with_state() {
    let registry = registry();
    let reader = registry.view(&PermissionSet::new(["WIKI_VIEW"]));
    let contents = reader
        .read_resource("trac://wiki/Guide/Install", ctx())
        .await
        .unwrap();
    assert_eq!(
        to_json(&contents),
        json!([{
            "uri": "trac://wiki/Guide/Install",
            "mimeType": "text/x-trac-wiki",
            "text": "= Installing ="
        }])
    );
    let missing = reader
        .read_resource("trac://wiki/NoSuchPage", ctx())
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert!(missing.message().contains("NoSuchPage"));

    let data = registry
        .read_resource("test://template/123/data", ctx())
        .await
        .unwrap();
    assert_eq!(
        to_json(&data),
        json!([{
            "uri": "test://template/123/data",
            "mimeType": "application/json",
            "text": "{\"id\":\"123\",\"templateTest\":true}"
        }])
    );
    let bad = registry
        .read_resource("test://template/12x/data", ctx())
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::Validation);
    assert!(
        bad.message().contains("invalid value \"12x\" for `id`"),
        "{}",
        bad.message()
    );
}

#[tokio::test]
async fn contents_carry_mime_types_and_base64_blobs() {
    let registry = registry();
    let text = registry
        .read_resource("test://static-text", ctx())
        .await
        .unwrap();
    assert_eq!(to_json(&text)[0]["mimeType"], "text/plain");
    let binary = registry
        .read_resource("test://static-binary", ctx())
        .await
        .unwrap();
    assert_eq!(
        to_json(&binary),
        json!([{"uri": "test://static-binary", "mimeType": "image/png", "blob": "iVBORw=="}])
    );
    let bundle = registry
        .read_resource("test://bundle", ctx())
        .await
        .unwrap();
    assert_eq!(
        to_json(&bundle),
        json!([
            {"uri": "test://bundle", "mimeType": "text/plain", "text": "readme"},
            {"uri": "test://bundle/meta.json", "mimeType": "application/json", "text": "{}"}
        ])
    );
}

#[tokio::test]
async fn panics_and_time_outs_become_errors_and_the_registry_keeps_serving() {
    let registry = registry();
    let crash = registry
        .read_resource("test://crash", ctx())
        .await
        .unwrap_err();
    assert_eq!(crash.kind(), ErrorKind::Internal);
    assert_eq!(
        crash.message(),
        "resource 'test://crash' panicked: resource boom"
    );
    let slow = registry
        .read_resource("test://slow", ctx())
        .await
        .unwrap_err();
    assert_eq!(slow.kind(), ErrorKind::Timeout);
    assert!(
        slow.message()
            .contains("resource 'test://slow' did not finish")
    );
    assert!(
        registry
            .read_resource("test://static-text", ctx())
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn prompt_arguments_are_checked_converted_and_defaulted() {
    let registry = registry();
    let args: Params = [("city", "Lyon")].into_iter().collect();
    let result = registry.get_prompt("trip_plan", args, ctx()).await.unwrap();
    assert_eq!(
        to_json(&result)["messages"],
        json!([
            {"role": "user", "content": {"type": "text", "text": "Plan 3 days in Lyon."}},
            {"role": "assistant", "content": {"type": "text", "text": "Here is a plan."}}
        ])
    );
    let args: Params = [("city", "Lyon"), ("days", "2"), ("travelStyle", "slow")]
        .into_iter()
        .collect();
    let result = registry.get_prompt("trip_plan", args, ctx()).await.unwrap();
    assert_eq!(
        to_json(&result)["messages"][0]["content"]["text"],
        "Plan 2 days in Lyon, slow style."
    );

    let missing = registry
        .get_prompt("trip_plan", [("dayz", "2")].into_iter().collect(), ctx())
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::Validation);
    assert_eq!(
        missing.message(),
        "invalid arguments for prompt 'trip_plan': missing required arguments: city; unknown arguments: dayz"
    );
    let bad = registry
        .get_prompt(
            "trip_plan",
            [("city", "Lyon"), ("days", "many")].into_iter().collect(),
            ctx(),
        )
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::Validation);
    assert!(bad.message().contains("invalid value \"many\" for `days`"));

    let failed = registry
        .get_prompt("always_fails", Params::new(), ctx())
        .await
        .unwrap_err();
    assert_eq!(failed.kind(), ErrorKind::Upstream);
    assert_eq!(failed.message(), "the template store is down");
}

#[tokio::test]
async fn completion_fns_answer_for_prompts_and_templates() {
    let registry = registry();
    let prompt = CompletionRef::Prompt("trip_plan".into());
    let done = registry
        .complete(&prompt, CompletionRequest::new("city", "par"), ctx())
        .await
        .unwrap();
    assert_eq!(done.values(), ["paris", "park", "party"]);
    assert_eq!(done.total(), Some(3));

    // An argument without a completion fn has no suggestions.
    let none = registry
        .complete(&prompt, CompletionRequest::new("days", "1"), ctx())
        .await
        .unwrap();
    assert!(none.values().is_empty());

    let unknown_arg = registry
        .complete(&prompt, CompletionRequest::new("country", "f"), ctx())
        .await
        .unwrap_err();
    assert_eq!(unknown_arg.kind(), ErrorKind::Validation);

    let template = CompletionRef::ResourceTemplate("trac://wiki/{+name}".into());
    let pages = registry
        .complete(&template, CompletionRequest::new("name", "guide/"), ctx())
        .await
        .unwrap();
    assert_eq!(pages.values(), ["Guide/Install", "Guide/Upgrade"]);
    let hidden = registry
        .view(&PermissionSet::empty())
        .complete(&template, CompletionRequest::new("name", "g"), ctx())
        .await
        .unwrap_err();
    assert_eq!(hidden.kind(), ErrorKind::NotFound);
    assert_eq!(
        registry.completable(),
        [
            CompletionRef::ResourceTemplate("trac://wiki/{+name}".into()),
            CompletionRef::Prompt("trip_plan".into())
        ]
    );
}

#[test]
fn build_fails_on_missing_state_and_duplicates() {
    let missing = ToolRegistry::builder().build().unwrap_err();
    assert_eq!(missing.problems().len(), 1);
    assert!(
        missing.problems()[0].starts_with("resource \"trac://wiki/{+name}\" needs state"),
        "{:?}",
        missing.problems()
    );

    let again = ResourceDef::fixed("test://static-text")
        .name("again")
        .description("A second definition of the same URI")
        .handler(|_r, _c| async { Ok(vec![ResourceContent::text("again")]) })
        .build()
        .unwrap();
    let prompt_again = PromptDef::builder("trip_plan")
        .description("A second trip_plan")
        .argument(PromptArgument::new("city").with_required(true))
        .handler(|_a, _c| async { mcp_toolbelt::output::IntoPromptResult::into_prompt_result("x") })
        .build()
        .unwrap();
    let err = ToolRegistry::builder()
        .state(Wiki::new())
        .resource(again.clone())
        .prompt(prompt_again.clone())
        .build()
        .unwrap_err();
    assert_eq!(err.problems().len(), 2, "{:?}", err.problems());
    assert!(err.problems().iter().any(|p| p.starts_with(
        "duplicate resource \"test://static-text\": defined at mcp-tools/tests/resources_prompts.rs:"
    ) && p.ends_with("and at a runtime definition; change one of them")));
    assert!(
        err.problems()
            .iter()
            .any(|p| p.starts_with("duplicate prompt name \"trip_plan\""))
    );
    // Lenient: the first definition wins.
    let lenient = ToolRegistry::builder()
        .state(Wiki::new())
        .resource(again)
        .prompt(prompt_again)
        .lenient(true)
        .build()
        .unwrap();
    assert_eq!(lenient.list_resources()[4].name(), "static-text");
}

#[test]
fn runtime_definitions_are_checked() {
    let no_scheme = ResourceDef::template("wiki/{name}")
        .name("w")
        .description("d")
        .handler(|_r, _c| async { Ok(vec![]) })
        .build()
        .unwrap_err();
    assert!(no_scheme.to_string().contains("scheme"), "{no_scheme}");
    let bad_completion = ResourceDef::template("x://{a}")
        .name("w")
        .description("d")
        .complete("b", |_r, _c| async { Ok(Completion::empty()) })
        .handler(|_r, _c| async { Ok(vec![]) })
        .build()
        .unwrap_err();
    assert!(bad_completion.problem().contains("`b`"));
    let bad_name = PromptDef::builder("has space")
        .description("d")
        .handler(|_a, _c| async { mcp_toolbelt::output::IntoPromptResult::into_prompt_result("x") })
        .build()
        .unwrap_err();
    assert_eq!(bad_name.item(), "prompt \"has space\"");
}

#[test]
fn resource_updates_reach_listeners() {
    let registry = registry();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    registry.on_resource_updated(move |uri| sink.lock().unwrap().push(uri.to_string()));
    registry.resource_updated("trac://wiki/WikiStart");
    registry.clone().resource_updated("test://static-text");
    assert_eq!(
        *seen.lock().unwrap(),
        ["trac://wiki/WikiStart", "test://static-text"]
    );
}
