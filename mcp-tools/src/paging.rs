//! Bounded lists: [`Limited`] cuts a list to N items and says so (`truncated`, `total`,
//! `showing`); [`PageArgs`] are the paging arguments a tool takes (`limit`, `offset`) and
//! [`Page`] the page they select, with the hint for the next page.
//!
//! `PageArgs` is an ordinary argument type: flatten it into a tool's `#[args]` struct and
//! its two properties join the tool's input schema, its validation and its command-line
//! flags (`--limit`, `--offset`) like any other argument.
//!
//! ```rust,standalone_crate
//! use mcp_toolbelt::envelope::Envelope;
//! use mcp_toolbelt::paging::{Page, PageArgs};
//! use mcp_toolbelt::{mcp_tool, ToolContext, ToolRegistry};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct ListArgs {
//!     /// Only names starting with this
//!     prefix: Option<String>,
//!     #[serde(flatten)]
//!     page: PageArgs,
//! }
//!
//! /// List the numbers' names.
//! #[mcp_tool(name = "names", read_only)]
//! async fn names(#[args] args: ListArgs) -> Envelope<Page<String>> {
//!     let all = (1..=45).map(|n| format!("n{n}"));
//!     let matching = all.filter(|n| n.starts_with(args.prefix.as_deref().unwrap_or("")));
//!     let page = args.page.select(matching, 20);
//!     let hint = page.next_step("names");
//!     Envelope::ok(page.describe("names"), page).next_steps(hint)
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = ToolRegistry::builder().build().unwrap();
//! let schema = registry.list_tools()[0].input_schema().clone();
//! assert!(schema["properties"].get("limit").is_some() && schema["properties"].get("offset").is_some());
//! let result = registry.call_tool(NAMES_TOOL, serde_json::json!({"limit": 10}), ToolContext::default()).await.unwrap();
//! let data = &result.structured_content().unwrap()["data"];
//! assert_eq!((data["showing"].as_u64(), data["total"].as_u64(), data["next_offset"].as_u64()), (Some(10), Some(45), Some(10)));
//! assert!(result.text_content().contains("call names with offset=10"));
//! # });
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest `limit` [`PageArgs`] accepts (its schema says so; larger values are
/// validation errors before the tool runs).
pub const MAX_PAGE_LIMIT: u32 = 1000;

/// A list cut to at most N items, with the counts a reader needs to know it was cut.
///
/// ```
/// use mcp_toolbelt::paging::Limited;
/// let frames = Limited::new(1..=100, 10);
/// assert_eq!(frames.items.len(), 10);
/// assert_eq!((frames.showing, frames.total, frames.truncated), (10, 100, true));
/// assert_eq!(frames.describe("frames"), "10 of 100 frames (truncated)");
/// let all = Limited::new(["a", "b"], 10);
/// assert!(!all.truncated);
/// assert_eq!(all.describe("names"), "2 names");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Limited<T> {
    /// The items kept (the first `showing` of `total`)
    pub items: Vec<T>,
    /// How many items there were in all
    pub total: usize,
    /// How many are shown
    pub showing: usize,
    /// True when items were left out
    pub truncated: bool,
}

impl<T> Limited<T> {
    /// Keep the first `limit` items of `items`; the rest are counted, not kept (so the
    /// memory used is bounded by `limit` whatever the length of the iterator).
    pub fn new(items: impl IntoIterator<Item = T>, limit: usize) -> Self {
        let mut kept = Vec::new();
        let mut total = 0usize;
        for item in items {
            if kept.len() < limit {
                kept.push(item);
            }
            total += 1;
        }
        Limited::from_parts(kept, total)
    }

    /// Items already cut, and how many there were in all (when only the count is known, as
    /// from a backend that returns a page and a total).
    ///
    /// ```
    /// let l = mcp_toolbelt::paging::Limited::from_parts(vec![1, 2], 40);
    /// assert!(l.truncated);
    /// ```
    pub fn from_parts(items: Vec<T>, total: usize) -> Self {
        let showing = items.len();
        Limited {
            items,
            total: total.max(showing),
            showing,
            truncated: total > showing,
        }
    }

    /// `"10 of 100 frames (truncated)"` or `"3 frames"`.
    pub fn describe(&self, what: &str) -> String {
        if self.truncated {
            format!("{} of {} {what} (truncated)", self.showing, self.total)
        } else {
            format!("{} {what}", self.total)
        }
    }

    /// Convert the items, keeping the counts.
    ///
    /// ```
    /// let l = mcp_toolbelt::paging::Limited::new(1..=5, 2).map(|n| n * 10);
    /// assert_eq!((l.items, l.total), (vec![10, 20], 5));
    /// ```
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Limited<U> {
        Limited {
            items: self.items.into_iter().map(f).collect(),
            total: self.total,
            showing: self.showing,
            truncated: self.truncated,
        }
    }
}

/// Paging arguments a tool takes: `limit` (1 to [`MAX_PAGE_LIMIT`], the tool's default when
/// omitted) and `offset` (items to skip, 0 when omitted). Flatten it into an `#[args]`
/// struct (see the [module docs](self)).
///
/// ```
/// use mcp_toolbelt::paging::PageArgs;
/// let args: PageArgs = serde_json::from_value(serde_json::json!({"limit": 2, "offset": 3})).unwrap();
/// let page = args.select(0..10, 50);
/// assert_eq!(page.items, [3, 4]);
/// assert_eq!(page.next_offset, Some(5));
/// assert_eq!(PageArgs::default().select(0..10, 50).items.len(), 10);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct PageArgs {
    /// Most items to return (default: the tool's page size)
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Items to skip before this page: the `next_offset` of the previous page (default 0)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

impl PageArgs {
    /// The page args for `limit` items from `offset`.
    pub fn new(limit: u32, offset: u64) -> Self {
        PageArgs {
            limit: Some(limit),
            offset: Some(offset),
        }
    }

    /// The limit asked for, or `default_limit`, within 1 ..= [`MAX_PAGE_LIMIT`].
    pub fn limit_or(&self, default_limit: u32) -> u32 {
        self.limit.unwrap_or(default_limit).clamp(1, MAX_PAGE_LIMIT)
    }

    /// The offset asked for (0 when omitted).
    pub fn offset(&self) -> u64 {
        self.offset.unwrap_or(0)
    }

    /// The page of `items` these arguments select; `default_limit` applies when no limit
    /// was given. Items before the offset are skipped and those after the page counted, so
    /// memory is bounded by the limit.
    pub fn select<T>(&self, items: impl IntoIterator<Item = T>, default_limit: u32) -> Page<T> {
        let limit = self.limit_or(default_limit) as usize;
        let offset = self.offset();
        let mut kept = Vec::new();
        let mut total: u64 = 0;
        for item in items {
            if total >= offset && kept.len() < limit {
                kept.push(item);
            }
            total += 1;
        }
        Page::from_parts(kept, offset, total)
    }
}

/// One page of a list: the items, where it starts, how many there are in all, and the
/// offset of the next page (none on the last page).
///
/// ```
/// use mcp_toolbelt::paging::Page;
/// let page = Page::from_parts(vec!["c", "d"], 2, 9);
/// assert_eq!(page.next_offset, Some(4));
/// assert_eq!(page.next_step("list_things").unwrap(), "more: call list_things with offset=4 (items 3-4 of 9 shown)");
/// assert_eq!(page.describe("things"), "things 3-4 of 9");
/// let last = Page::from_parts(vec!["i"], 8, 9);
/// assert_eq!(last.next_offset, None);
/// assert!(last.next_step("list_things").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items of this page
    pub items: Vec<T>,
    /// Items skipped before this page
    pub offset: u64,
    /// How many items this page shows
    pub showing: usize,
    /// How many items there are in all
    pub total: u64,
    /// True when items come after this page
    pub truncated: bool,
    /// The offset of the next page (absent on the last page)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

impl<T> Page<T> {
    /// A page of `items` starting at `offset` out of `total`.
    pub fn from_parts(items: Vec<T>, offset: u64, total: u64) -> Self {
        let showing = items.len();
        let end = offset + showing as u64;
        let more = end < total;
        Page {
            items,
            offset,
            showing,
            total,
            truncated: more,
            next_offset: more.then_some(end),
        }
    }

    /// The next-page hint for an envelope's next steps, naming the `tool` to call; `None`
    /// on the last page.
    pub fn next_step(&self, tool: &str) -> Option<String> {
        let next = self.next_offset?;
        Some(format!(
            "more: call {tool} with offset={next} (items {}-{next} of {} shown)",
            self.offset + 1,
            self.total
        ))
    }

    /// `"things 3-4 of 9"`, `"no things"` or `"no things at offset 12 (9 in all)"`.
    pub fn describe(&self, what: &str) -> String {
        if self.showing == 0 {
            if self.offset == 0 || self.total == 0 {
                return format!("no {what}");
            }
            return format!(
                "no {what} at offset {} ({} in all)",
                self.offset, self.total
            );
        }
        format!(
            "{what} {}-{} of {}",
            self.offset + 1,
            self.offset + self.showing as u64,
            self.total
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limited_list_keeps_only_the_limit() {
        let l = Limited::new(0..1_000_000, 3);
        assert_eq!(l.items, [0, 1, 2]);
        assert_eq!(l.total, 1_000_000);
        assert!(l.truncated);
        let none = Limited::new(Vec::<u8>::new(), 3);
        assert_eq!((none.showing, none.total, none.truncated), (0, 0, false));
        let exact = Limited::new(0..3, 3);
        assert!(!exact.truncated);
    }

    #[test]
    fn pages_walk_a_list_to_its_end() {
        let mut offset = 0;
        let mut seen = Vec::new();
        for _ in 0..10 {
            let page = PageArgs::new(4, offset).select(0..10, 50);
            seen.extend(page.items.iter().copied());
            match page.next_offset {
                Some(next) => offset = next,
                None => break,
            }
        }
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn limits_are_clamped_and_offsets_past_the_end_are_empty() {
        let args = PageArgs {
            limit: Some(0),
            offset: Some(50),
        };
        assert_eq!(args.limit_or(20), 1);
        let page = args.select(0..10, 20);
        assert!(page.items.is_empty());
        assert_eq!((page.total, page.next_offset), (10, None));
        assert_eq!(page.describe("rows"), "no rows at offset 50 (10 in all)");
        assert_eq!(PageArgs::default().limit_or(5000), MAX_PAGE_LIMIT);
    }

    #[test]
    fn the_schema_has_two_optional_properties() {
        let schema = crate::schema::input_schema_for::<PageArgs>();
        assert!(
            schema
                .get("required")
                .is_none_or(|r| r.as_array().unwrap().is_empty())
        );
        assert_eq!(schema["properties"]["limit"]["maximum"], 1000);
        assert_eq!(schema["properties"]["limit"]["minimum"], 1);
    }
}
