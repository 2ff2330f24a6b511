//! Reading the wiki: one page, full-text search, recent changes (WIKI_VIEW).

use chrono::{DateTime, Duration, Utc};
use mcp_toolbelt::{Json, State, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::Serialize;

use super::wiki_text::OutputFormat;
use super::{DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT};
use crate::client::{TracClient, WikiPageInfo};
use crate::errors::{check_name, wiki_error};
use crate::wiki_format::{ConversionIssue, tracwiki_to_markdown};
use mcp_toolbelt::paging::Limited;

/// A wiki page with its metadata.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WikiPage {
    /// Page name.
    pub name: String,
    /// Version number of this text.
    pub version: i32,
    /// Who saved this version.
    pub author: String,
    /// When this version was saved.
    pub last_modified: DateTime<Utc>,
    /// The change comment of this version.
    pub comment: String,
    /// The format of `text`: tracwiki or markdown.
    pub format: String,
    /// The page text.
    pub text: String,
    /// For format=markdown: what the conversion could not carry over.
    pub conversion_issues: Vec<ConversionIssue>,
}

/// Read a wiki page: its text plus version, author, time and change comment. The text is
/// TracWiki markup as stored, or converted to Markdown with format="markdown". Page
/// names are case-sensitive (e.g. WikiStart, Guide/Install).
#[mcp_tool(name = "wiki_get", permissions = ["WIKI_VIEW"], read_only, idempotent)]
pub async fn wiki_get(
    trac: State<TracClient>,
    /// Page name, e.g. WikiStart
    #[arg(min_length = 1)]
    name: String,
    /// A specific version of the page (default: the latest)
    #[arg(minimum = 1)]
    page_version: Option<i32>,
    /// tracwiki (as stored, default) or markdown (converted)
    #[arg(default = OutputFormat::Tracwiki)]
    format: OutputFormat,
) -> Result<Json<WikiPage>, ToolError> {
    check_name("page name", &name)?;
    let (text, info) = trac
        .get_wiki_page_with_info(&name, page_version)
        .await
        .map_err(wiki_error)?;
    let (format, text, conversion_issues) = match format {
        OutputFormat::Tracwiki => ("tracwiki", text, Vec::new()),
        OutputFormat::Markdown => {
            let converted = tracwiki_to_markdown(&text);
            ("markdown", converted.text, converted.issues)
        }
    };
    Ok(Json(WikiPage {
        name: info.name,
        version: info.version,
        author: info.author,
        last_modified: info.last_modified,
        comment: info.comment,
        format: format.to_string(),
        text,
        conversion_issues,
    }))
}

/// One wiki search hit.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WikiHit {
    /// Page name (pass it to wiki_get).
    pub name: String,
    /// Title as Trac shows it.
    pub title: String,
    /// Link to the page.
    pub href: String,
    /// Author of the matching version.
    pub author: String,
    /// Time of the matching version.
    pub date: DateTime<Utc>,
    /// Text around the match.
    pub excerpt: String,
}

/// The answer of `wiki_search`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WikiSearch {
    /// The search terms.
    pub query: String,
    /// Number of hits returned.
    pub count: usize,
    /// Number of pages Trac found.
    pub total: usize,
    /// True when Trac found more pages than were returned.
    pub truncated: bool,
    /// The hits, best first.
    pub hits: Vec<WikiHit>,
}

/// The page name in a wiki URL (`.../wiki/Guide/Install` → `Guide/Install`).
fn page_name(href: &str) -> Option<String> {
    let (_, tail) = href.split_once("/wiki/")?;
    let tail = tail.split(['?', '#']).next().unwrap_or(tail);
    Some(
        percent_encoding::percent_decode_str(tail)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

/// Full-text search over wiki pages (names and text). Terms are ANDed; quote a
/// "phrase"; prefix a term with - to exclude it. Returns page names with an excerpt;
/// read a page with wiki_get.
#[mcp_tool(name = "wiki_search", permissions = ["WIKI_VIEW"], read_only, idempotent)]
pub async fn wiki_search(
    trac: State<TracClient>,
    /// Search terms (at least 3 characters, as Trac requires)
    #[arg(min_length = 3)]
    query: String,
    /// Most pages to return
    #[arg(default = DEFAULT_MAX_RESULTS, minimum = 1, maximum = MAX_RESULTS_LIMIT)]
    max_results: u32,
) -> Result<Json<WikiSearch>, ToolError> {
    if query.trim().chars().count() < 3 {
        return Err(
            ToolError::validation("the search terms must have at least 3 characters")
                .with_action("Search for a longer word or phrase."),
        );
    }
    let results = trac
        .search(query.trim(), &["wiki"])
        .await
        .map_err(wiki_error)?;
    let hits = results.into_iter().filter_map(|r| {
        Some(WikiHit {
            name: page_name(&r.href)?,
            title: r.title,
            href: r.href,
            author: r.author,
            date: r.date,
            excerpt: r.excerpt,
        })
    });
    let hits = Limited::new(hits, max_results as usize);
    Ok(Json(WikiSearch {
        query,
        count: hits.showing,
        total: hits.total,
        truncated: hits.truncated,
        hits: hits.items,
    }))
}

/// The answer of `wiki_recent_changes`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WikiRecentChanges {
    /// Changes after this time are listed.
    pub since: DateTime<Utc>,
    /// Number of pages returned.
    pub count: usize,
    /// Number of pages changed in the period.
    pub total: usize,
    /// True when more pages changed than were returned.
    pub truncated: bool,
    /// Changed pages, most recently changed first, each with its latest version.
    pub pages: Vec<WikiPageInfo>,
}

/// Wiki pages changed in the last `days` days, most recent first, each with its latest
/// version, author, time and change comment.
#[mcp_tool(name = "wiki_recent_changes", permissions = ["WIKI_VIEW"], read_only, idempotent)]
pub async fn wiki_recent_changes(
    trac: State<TracClient>,
    /// How many days back to look
    #[arg(default = 7, minimum = 1, maximum = 3650)]
    days: u32,
    /// Most pages to return
    #[arg(default = DEFAULT_MAX_RESULTS, minimum = 1, maximum = MAX_RESULTS_LIMIT)]
    max_results: u32,
) -> Result<Json<WikiRecentChanges>, ToolError> {
    let since = Utc::now() - Duration::days(i64::from(days));
    let mut pages = trac.wiki_recent_changes(since).await.map_err(wiki_error)?;
    pages.sort_by_key(|p| std::cmp::Reverse(p.last_modified));
    let pages = Limited::new(pages, max_results as usize);
    Ok(Json(WikiRecentChanges {
        since,
        count: pages.showing,
        total: pages.total,
        truncated: pages.truncated,
        pages: pages.items,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_come_from_wiki_links() {
        assert_eq!(
            page_name("http://h/wiki/Guide/Install%20Notes?version=2").as_deref(),
            Some("Guide/Install Notes")
        );
        assert_eq!(page_name("http://h/ticket/3"), None);
    }
}
