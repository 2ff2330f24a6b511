//! Local files ↔ wiki pages: push a file to a page (WIKI_CREATE + WIKI_MODIFY),
//! pull a page into a file (WIKI_VIEW), and tell a file's format (no
//! permission). Paths are on the machine this server runs on; relative paths
//! are relative to its working directory, and the results give the absolute
//! path used.

use std::io::ErrorKind as Io;
use std::path::{Path, PathBuf};

use mcp_toolbelt::{Json, State, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

use super::MAX_FILE_BYTES;
use super::wiki_text::{InputFormat, WikiSaved, prepare_text, save_page};
use crate::client::TracClient;
use crate::errors::{check_name, wiki_error};
use crate::wiki_format::{
    ConversionIssue, FormatDetection, WikiFormat, detect_format, tracwiki_to_markdown,
};

/// `path` made absolute against the working directory (not resolving links).
fn absolute(path: &str) -> Result<PathBuf, ToolError> {
    if path.trim().is_empty() {
        return Err(ToolError::validation("path must not be empty"));
    }
    std::path::absolute(path)
        .map_err(|e| ToolError::validation(format!("cannot use path {path:?}: {e}")))
}

/// A tool error for a failed file operation on `path`.
fn file_error(doing: &str, path: &Path, err: std::io::Error) -> ToolError {
    let shown = path.display();
    match err.kind() {
        Io::NotFound => ToolError::not_found(format!("cannot {doing} {shown}: no such file or directory"))
            .with_action("Check the path; relative paths are relative to the server's working directory, so prefer an absolute path."),
        Io::PermissionDenied => ToolError::permission_denied(format!("cannot {doing} {shown}: permission denied"))
            .with_action("The server's operating-system user may not access this file; choose another path or fix the file's permissions."),
        Io::AlreadyExists => ToolError::conflict(format!("{shown} exists already"))
            .with_action("Pass overwrite=true to replace it, or choose another path."),
        _ => ToolError::upstream(format!("cannot {doing} {shown}: {err}")),
    }
}

/// Reads a UTF-8 text file of at most [`MAX_FILE_BYTES`].
async fn read_text_file(path: &Path) -> Result<String, ToolError> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| file_error("read", path, e))?;
    if !meta.is_file() {
        return Err(ToolError::validation(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::validation(format!(
            "{} has {} bytes; at most {MAX_FILE_BYTES} are accepted",
            path.display(),
            meta.len()
        ))
        .with_action("Split the text into several pages."));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| file_error("read", path, e))?;
    String::from_utf8(bytes).map_err(|e| {
        ToolError::validation(format!(
            "{} is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
        .with_action("Push text files only (Markdown or TracWiki), saved as UTF-8.")
    })
}

/// The outcome of `wiki_file_push`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WikiFilePushed {
    /// The absolute path of the file that was read.
    pub path: String,
    /// What happened to the page.
    #[serde(flatten)]
    pub page: WikiSaved,
}

/// Upload a local text file as a wiki page: creates the page, or saves a new version of
/// an existing one. A Markdown file (detected, or format="markdown") is converted to
/// TracWiki markup (headings, lists, links, code, emphasis, tables); `conversion_issues`
/// lists what could not be converted. Pushing unchanged text gives `changed: false`.
#[mcp_tool(name = "wiki_file_push", permissions = ["WIKI_CREATE", "WIKI_MODIFY"], idempotent)]
pub async fn wiki_file_push(
    trac: State<TracClient>,
    /// Path of the local file to upload (absolute, or relative to the server's working directory)
    #[arg(min_length = 1)]
    path: String,
    /// Name of the wiki page to create or update, e.g. Guide/Install
    #[arg(min_length = 1, max_length = 255)]
    page: String,
    /// Change comment shown in the page history
    comment: Option<String>,
    /// Format of the file: auto (detect; default), markdown or tracwiki
    #[arg(default = InputFormat::Auto)]
    format: InputFormat,
) -> Result<Json<WikiFilePushed>, ToolError> {
    check_name("page name", &page)?;
    let path = absolute(&path)?;
    let content = read_text_file(&path).await?;
    let exists = trac
        .get_wiki_page_info(&page, None)
        .await
        .map_err(wiki_error)?
        .is_some();
    let prepared = prepare_text(&content, format);
    let saved = save_page(&trac, &page, prepared, comment, !exists).await?;
    Ok(Json(WikiFilePushed {
        path: path.display().to_string(),
        page: saved,
    }))
}

/// The format `wiki_file_pull` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PullFormat {
    /// Markdown for files ending in .md or .markdown, TracWiki otherwise
    #[default]
    Auto,
    /// The page's TracWiki markup as stored
    Tracwiki,
    /// Converted to Markdown
    Markdown,
}

/// The outcome of `wiki_file_pull`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WikiFilePulled {
    /// Page name.
    pub page: String,
    /// The page version written.
    pub version: i32,
    /// The absolute path of the file written.
    pub path: String,
    /// The format written: tracwiki or markdown.
    pub format: WikiFormat,
    /// Bytes written.
    pub bytes: usize,
    /// For Markdown: what the conversion could not carry over.
    pub conversion_issues: Vec<ConversionIssue>,
}

/// Download a wiki page into a local file, as TracWiki markup or converted to Markdown
/// (format "auto": Markdown for .md/.markdown files). An existing file is only replaced
/// with overwrite=true. The directory must exist.
#[mcp_tool(name = "wiki_file_pull", permissions = ["WIKI_VIEW"], destructive, idempotent)]
pub async fn wiki_file_pull(
    trac: State<TracClient>,
    /// Name of the wiki page to download
    #[arg(min_length = 1)]
    page: String,
    /// Path of the local file to write (absolute, or relative to the server's working directory)
    #[arg(min_length = 1)]
    path: String,
    /// A specific page version (default: the latest)
    #[arg(minimum = 1)]
    page_version: Option<i32>,
    /// auto (by file extension; default), tracwiki or markdown
    #[arg(default = PullFormat::Auto)]
    format: PullFormat,
    /// Replace the file if it exists
    #[arg(default = false)]
    overwrite: bool,
) -> Result<Json<WikiFilePulled>, ToolError> {
    check_name("page name", &page)?;
    let path = absolute(&path)?;
    let (text, info) = trac
        .get_wiki_page_with_info(&page, page_version)
        .await
        .map_err(wiki_error)?;
    let markdown = match format {
        PullFormat::Markdown => true,
        PullFormat::Tracwiki => false,
        PullFormat::Auto => path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown")),
    };
    let (text, format, conversion_issues) = if markdown {
        let converted = tracwiki_to_markdown(&text);
        (converted.text, WikiFormat::Markdown, converted.issues)
    } else {
        (text, WikiFormat::TracWiki, Vec::new())
    };
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true);
    if overwrite {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options
        .open(&path)
        .await
        .map_err(|e| file_error("write", &path, e))?;
    file.write_all(text.as_bytes())
        .await
        .map_err(|e| file_error("write", &path, e))?;
    file.flush()
        .await
        .map_err(|e| file_error("write", &path, e))?;
    Ok(Json(WikiFilePulled {
        page: info.name,
        version: info.version,
        path: path.display().to_string(),
        format,
        bytes: text.len(),
        conversion_issues,
    }))
}

/// The format of a local file.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileFormat {
    /// The absolute path of the file that was read.
    pub path: String,
    /// The verdict and the evidence for it.
    #[serde(flatten)]
    pub detection: FormatDetection,
}

/// Tell whether a local text file is Markdown or TracWiki markup (or plain text, valid
/// as both), with the constructs that decided it, e.g. before wiki_file_push.
#[mcp_tool(name = "wiki_file_detect_format", read_only, idempotent)]
pub async fn wiki_file_detect_format(
    /// Path of the local file (absolute, or relative to the server's working directory)
    #[arg(min_length = 1)]
    path: String,
) -> Result<Json<FileFormat>, ToolError> {
    let path = absolute(&path)?;
    let content = read_text_file(&path).await?;
    Ok(Json(FileFormat {
        path: path.display().to_string(),
        detection: detect_format(&content),
    }))
}
