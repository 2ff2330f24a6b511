//! Reading the wiki: one page, full-text search, recent changes (WIKI_VIEW).

use chrono::{DateTime, Duration, Utc};
use mcp_toolbelt::envelope::Envelope;
use mcp_toolbelt::paging::{Page, PageArgs};
use mcp_toolbelt::{Json, State, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::DEFAULT_MAX_RESULTS;
use super::wiki_text::OutputFormat;
use crate::client::{TracClient, WikiPageInfo};
use crate::errors::{check_name, wiki_error};
use crate::wiki_format::{ConversionIssue, tracwiki_to_markdown};

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
    /// This page of the hits, best first.
    pub hits: Page<WikiHit>,
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

/// `wiki_search`'s arguments: the terms and the page of hits.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WikiSearchArgs {
    /// Search terms (at least 3 characters, as Trac requires)
    #[schemars(length(min = 3))]
    pub query: String,
    /// Which hits (default: the first 10)
    #[serde(flatten)]
    pub page: PageArgs,
}

/// Full-text search over wiki pages (names and text). Terms are ANDed; quote a
/// "phrase"; prefix a term with - to exclude it. Returns page names with an excerpt, a
/// page of hits at a time (limit, offset); read a page with wiki_get.
#[mcp_tool(name = "wiki_search", permissions = ["WIKI_VIEW"], read_only, idempotent)]
pub async fn wiki_search(
    trac: State<TracClient>,
    #[args] args: WikiSearchArgs,
) -> Result<Envelope<WikiSearch>, ToolError> {
    let query = args.query.trim();
    if query.chars().count() < 3 {
        return Err(
            ToolError::validation("the search terms must have at least 3 characters")
                .with_action("Search for a longer word or phrase."),
        );
    }
    let results = trac.search(query, &["wiki"]).await.map_err(wiki_error)?;
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
    let hits = args.page.select(hits, DEFAULT_MAX_RESULTS);
    let more = hits.next_step("wiki_search");
    let read = hits
        .items
        .first()
        .map(|hit| format!("read a page: wiki_get name={}", hit.name));
    Ok(Envelope::ok(
        format!("{} for \"{query}\"", hits.describe("wiki pages")),
        WikiSearch {
            query: query.to_string(),
            hits,
        },
    )
    .next_steps(read)
    .next_steps(more))
}

/// The answer of `wiki_recent_changes`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WikiRecentChanges {
    /// Changes after this time are listed.
    pub since: DateTime<Utc>,
    /// This page of the changed pages, most recently changed first, each with its latest
    /// version.
    pub pages: Page<WikiPageInfo>,
}

/// `wiki_recent_changes`' arguments: the period and the page of changed pages.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WikiRecentChangesArgs {
    /// How many days back to look
    #[serde(default = "a_week")]
    #[schemars(range(min = 1, max = 3650))]
    pub days: u32,
    /// Which pages (default: the first 10)
    #[serde(flatten)]
    pub page: PageArgs,
}

fn a_week() -> u32 {
    7
}

/// Wiki pages changed in the last `days` days, most recent first, each with its latest
/// version, author, time and change comment; a page of them at a time (limit, offset).
#[mcp_tool(name = "wiki_recent_changes", permissions = ["WIKI_VIEW"], read_only, idempotent)]
pub async fn wiki_recent_changes(
    trac: State<TracClient>,
    #[args] args: WikiRecentChangesArgs,
) -> Result<Envelope<WikiRecentChanges>, ToolError> {
    let since = Utc::now() - Duration::days(i64::from(args.days));
    let mut pages = trac.wiki_recent_changes(since).await.map_err(wiki_error)?;
    pages.sort_by_key(|p| std::cmp::Reverse(p.last_modified));
    let pages = args.page.select(pages, DEFAULT_MAX_RESULTS);
    let more = pages.next_step("wiki_recent_changes");
    let read = pages
        .items
        .first()
        .map(|page| format!("read the newest: wiki_get name={}", page.name));
    Ok(Envelope::ok(
        format!(
            "{} changed in the last {} days",
            pages.describe("wiki pages"),
            args.days
        ),
        WikiRecentChanges { since, pages },
    )
    .next_steps(read)
    .next_steps(more))
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
