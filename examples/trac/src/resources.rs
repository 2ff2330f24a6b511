//! Wiki pages as MCP resources: `trac://wiki/{+name}` reads a page's TracWiki
//! markup (names may contain `/`, e.g. `trac://wiki/Guide/Install`), with
//! completion of page names. Needs WIKI_VIEW, like `wiki_get`.

use mcp_toolbelt::definition::{Completion, CompletionRequest};
use mcp_toolbelt::{State, ToolContext, ToolError, mcp_resource};

use crate::client::TracClient;
use crate::errors::{check_name, wiki_error};

/// A wiki page of this Trac, as TracWiki markup (the latest version). Use wiki_get for
/// its metadata or a Markdown rendering.
#[mcp_resource(
    uri_template = "trac://wiki/{+name}",
    name = "wiki_page",
    title = "Trac wiki page",
    mime_type = "text/x-trac-wiki",
    permissions = ["WIKI_VIEW"],
    complete(name = page_names)
)]
pub async fn wiki_page(trac: State<TracClient>, name: String) -> Result<String, ToolError> {
    check_name("page name", &name)?;
    trac.get_wiki_page(&name, None).await.map_err(wiki_error)
}

/// Completes a page name from the pages Trac has.
pub async fn page_names(
    request: CompletionRequest,
    ctx: ToolContext,
) -> Result<Completion, ToolError> {
    let trac = ctx
        .state::<TracClient>()
        .ok_or_else(|| ToolError::internal("no Trac client registered"))?;
    let mut names = trac.list_wiki_pages().await.map_err(wiki_error)?;
    names.sort();
    Ok(Completion::matching(names, &request.value))
}
