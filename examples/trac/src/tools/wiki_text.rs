//! What the wiki tools share: the text formats they accept and give, the
//! Markdown → TracWiki step before saving, and the save itself.

use mcp_toolbelt::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::client::{ErrorKind, PutPageOptions, TracClient};
use crate::errors::wiki_error;
use crate::wiki_format::{ConversionIssue, WikiFormat, detect_format, markdown_to_tracwiki};

/// The format of text given to a wiki write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    /// Detect it: Markdown is converted to TracWiki, anything else is saved as it is
    #[default]
    Auto,
    /// Markdown: converted to TracWiki markup before saving
    Markdown,
    /// TracWiki markup: saved as it is
    Tracwiki,
}

/// The format of text read from a wiki page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// The page's TracWiki markup as stored
    #[default]
    Tracwiki,
    /// Converted to Markdown
    Markdown,
}

/// Text ready to save, and what happened on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedText {
    /// The TracWiki text to save.
    pub text: String,
    /// The format the input was taken to be in.
    pub source_format: WikiFormat,
    /// Whether it was converted from Markdown.
    pub converted: bool,
    /// What the conversion could not carry over.
    pub issues: Vec<ConversionIssue>,
}

/// Applies `format` to `content`: Markdown (given or detected) is converted.
pub fn prepare_text(content: &str, format: InputFormat) -> PreparedText {
    let source_format = match format {
        InputFormat::Auto => detect_format(content).format,
        InputFormat::Markdown => WikiFormat::Markdown,
        InputFormat::Tracwiki => WikiFormat::TracWiki,
    };
    if source_format == WikiFormat::Markdown {
        let conversion = markdown_to_tracwiki(content);
        PreparedText {
            text: conversion.text,
            source_format,
            converted: true,
            issues: conversion.issues,
        }
    } else {
        PreparedText {
            text: content.to_string(),
            source_format,
            converted: false,
            issues: Vec::new(),
        }
    }
}

/// The outcome of a wiki write.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WikiSaved {
    /// Page name.
    pub name: String,
    /// The page's version after the write.
    pub version: i32,
    /// Whether the page was created by this write.
    pub created: bool,
    /// False when the page already had exactly this text (nothing was saved).
    pub changed: bool,
    /// The format the given text was taken to be in: markdown, tracwiki or plain.
    pub source_format: WikiFormat,
    /// Whether the text was converted from Markdown to TracWiki before saving.
    pub converted: bool,
    /// What the Markdown conversion could not carry over faithfully (empty: nothing lost).
    pub conversion_issues: Vec<ConversionIssue>,
}

/// Saves `prepared` as page `name` and reads back its version. Trac's "Page
/// not modified" (identical text) is not an error: `changed` is then false.
pub async fn save_page(
    trac: &TracClient,
    name: &str,
    prepared: PreparedText,
    comment: Option<String>,
    created: bool,
) -> Result<WikiSaved, ToolError> {
    let options = PutPageOptions {
        comment,
        author: None,
    };
    let changed = match trac.put_wiki_page(name, &prepared.text, &options).await {
        Ok(()) => true,
        Err(e)
            if e.kind() == ErrorKind::InvalidInput
                && e.trac_message().contains("Page not modified") =>
        {
            false
        }
        Err(e) => return Err(wiki_error(e)),
    };
    let version = match trac.get_wiki_page_info(name, None).await {
        Ok(Some(info)) => info.version,
        Ok(None) => {
            return Err(ToolError::upstream(format!(
                "Trac accepted page {name:?} but then reported it missing"
            )));
        }
        Err(e) => return Err(wiki_error(e)),
    };
    Ok(WikiSaved {
        name: name.to_string(),
        version,
        created: created && changed,
        changed,
        source_format: prepared.source_format,
        converted: prepared.converted,
        conversion_issues: prepared.issues,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_converted_and_tracwiki_kept() {
        let md = prepare_text("# Title\n\nSome **bold** text.\n", InputFormat::Auto);
        assert_eq!(md.source_format, WikiFormat::Markdown);
        assert!(md.converted);
        assert!(md.text.starts_with("= Title ="), "{}", md.text);
        let trac = prepare_text("= Title =\n\n'''bold'''\n", InputFormat::Auto);
        assert!(!trac.converted);
        assert_eq!(trac.text, "= Title =\n\n'''bold'''\n");
        let forced = prepare_text("# not a heading in trac", InputFormat::Tracwiki);
        assert!(!forced.converted);
    }
}
