//! Changing the wiki: create (WIKI_CREATE), update (WIKI_MODIFY), delete
//! (WIKI_DELETE). Markdown content is converted to TracWiki markup.

use mcp_toolbelt::{Json, State, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::Serialize;

use super::wiki_text::{InputFormat, WikiSaved, prepare_text, save_page};
use crate::client::TracClient;
use crate::errors::{check_name, wiki_error};

/// Create a new wiki page. Fails with a conflict if the page exists (use wiki_update).
/// Content in Markdown is converted to TracWiki markup (format "auto" detects it); the
/// result lists what the conversion could not carry over.
#[mcp_tool(name = "wiki_create", permissions = ["WIKI_CREATE"], destructive = false)]
pub async fn wiki_create(
    trac: State<TracClient>,
    /// Name of the new page: CamelCase words or a path like Guide/Install
    #[arg(min_length = 1, max_length = 255)]
    name: String,
    /// The page text (TracWiki markup or Markdown)
    #[arg(min_length = 1)]
    content: String,
    /// Change comment shown in the page history
    comment: Option<String>,
    /// Format of `content`: auto (detect; default), markdown or tracwiki
    #[arg(default = InputFormat::Auto)]
    format: InputFormat,
) -> Result<Json<WikiSaved>, ToolError> {
    check_name("page name", &name)?;
    if trac
        .get_wiki_page_info(&name, None)
        .await
        .map_err(wiki_error)?
        .is_some()
    {
        return Err(ToolError::conflict(format!("wiki page {name:?} already exists"))
            .with_action("Change the existing page with wiki_update (read it first with wiki_get), or choose another name."));
    }
    let prepared = prepare_text(&content, format);
    Ok(Json(
        save_page(&trac, &name, prepared, comment, true).await?,
    ))
}

/// Replace the text of an existing wiki page, saving a new version. Pass
/// `expected_version` (from wiki_get) to refuse the update if someone saved a newer
/// version meanwhile. Markdown content is converted to TracWiki markup. Saving the same
/// text again changes nothing (`changed` is false).
#[mcp_tool(name = "wiki_update", permissions = ["WIKI_MODIFY"], idempotent)]
pub async fn wiki_update(
    trac: State<TracClient>,
    /// Name of the existing page
    #[arg(min_length = 1)]
    name: String,
    /// The complete new page text (TracWiki markup or Markdown); it replaces the old text
    #[arg(min_length = 1)]
    content: String,
    /// Change comment shown in the page history
    comment: Option<String>,
    /// Format of `content`: auto (detect; default), markdown or tracwiki
    #[arg(default = InputFormat::Auto)]
    format: InputFormat,
    /// The version your change is based on; a conflict error if the page is newer
    #[arg(minimum = 1)]
    expected_version: Option<i32>,
) -> Result<Json<WikiSaved>, ToolError> {
    check_name("page name", &name)?;
    let Some(info) = trac
        .get_wiki_page_info(&name, None)
        .await
        .map_err(wiki_error)?
    else {
        return Err(
            ToolError::not_found(format!("wiki page {name:?} does not exist")).with_action(
                "Check the page name (case-sensitive; wiki_search finds pages), or create it with wiki_create.",
            ),
        );
    };
    if let Some(expected) = expected_version
        && expected != info.version
    {
        return Err(ToolError::conflict(format!(
            "wiki page {name:?} is at version {}, not {expected}: {} saved it at {}",
            info.version, info.author, info.last_modified
        ))
        .with_action("Read the page again with wiki_get, merge your change into its text, and update with the new version."));
    }
    let prepared = prepare_text(&content, format);
    Ok(Json(
        save_page(&trac, &name, prepared, comment, false).await?,
    ))
}

/// A deleted wiki page (or version).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WikiDeleted {
    /// Page name.
    pub name: String,
    /// The version deleted, or null when the whole page was deleted.
    pub version: Option<i32>,
}

/// Delete a wiki page with all its history, or only one version of it. This cannot be
/// undone.
#[mcp_tool(
    name = "wiki_delete",
    permissions = ["WIKI_DELETE"],
    destructive,
    idempotent
)]
pub async fn wiki_delete(
    trac: State<TracClient>,
    /// Name of the page to delete
    #[arg(min_length = 1)]
    name: String,
    /// Delete only this version of the page (default: the whole page)
    #[arg(minimum = 1)]
    page_version: Option<i32>,
) -> Result<Json<WikiDeleted>, ToolError> {
    check_name("page name", &name)?;
    let deleted = trac
        .delete_wiki_page(&name, page_version)
        .await
        .map_err(wiki_error)?;
    if !deleted {
        let what = match page_version {
            Some(v) => format!("version {v} of wiki page {name:?}"),
            None => format!("wiki page {name:?}"),
        };
        return Err(ToolError::not_found(format!("{what} does not exist"))
            .with_action("Check the page name (case-sensitive) and version; wiki_get shows a page's current version."));
    }
    Ok(Json(WikiDeleted {
        name,
        version: page_version,
    }))
}
