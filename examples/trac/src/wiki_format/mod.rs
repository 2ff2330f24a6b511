//! Markdown and TracWiki: telling them apart and converting between them.
//!
//! * [`detect_format`] scores a text for Markdown- and TracWiki-only syntax.
//! * [`markdown_to_tracwiki`] converts CommonMark (+ tables, strikethrough,
//!   task lists), parsed with `pulldown-cmark`, to TracWiki markup, escaping
//!   text that Trac would otherwise turn into links or formatting.
//! * [`tracwiki_to_markdown`] converts the common TracWiki constructs back.
//!
//! Conversions never fail: what has no equivalent is kept as well as
//! possible and listed in [`Conversion::issues`].

mod detect;
mod escape;
mod md_to_trac;
mod trac_to_md;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use detect::detect_format;
pub use md_to_trac::markdown_to_tracwiki;
pub use trac_to_md::tracwiki_to_markdown;

/// A wiki text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WikiFormat {
    /// CommonMark / GitHub-flavoured Markdown.
    Markdown,
    /// Trac's wiki markup.
    TracWiki,
    /// No markup specific to either: valid as both.
    Plain,
}

impl std::fmt::Display for WikiFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WikiFormat::Markdown => "markdown",
            WikiFormat::TracWiki => "tracwiki",
            WikiFormat::Plain => "plain",
        })
    }
}

/// The verdict of [`detect_format`], with the evidence behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FormatDetection {
    /// The format the text is most likely written in.
    pub format: WikiFormat,
    /// Weighted count of Markdown-only constructs found.
    pub markdown_score: u32,
    /// Weighted count of TracWiki-only constructs found.
    pub tracwiki_score: u32,
    /// Human-readable evidence, e.g. `markdown: ATX heading (line 1)`.
    pub evidence: Vec<String>,
}

/// Something a conversion could not carry over faithfully.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConversionIssue {
    /// 1-based line in the source text.
    pub line: usize,
    /// The construct, e.g. `html`, `image`, `footnote`, `macro`.
    pub construct: String,
    /// What happened to it.
    pub message: String,
}

/// The result of a conversion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Conversion {
    /// The converted text.
    pub text: String,
    /// What could not be converted faithfully (empty: nothing was lost).
    pub issues: Vec<ConversionIssue>,
}

/// 1-based line number of byte offset `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset.min(text.len()))
        .map_or(1, |head| head.matches('\n').count() + 1)
}
