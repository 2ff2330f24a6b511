//! `read_file` and `write_file`.

use std::io::{Read, Write};

use base64::Engine as _;
use serde::Serialize;

use super::{ContentEncoding, blocking, open_error};
use crate::sandbox::secure_fs::{open_file_read, open_file_write};
use crate::sandbox::{Sandbox, SandboxError};

/// Largest buffer allocated up front for a read.
const PREALLOCATE_MAX: u64 = 16 * 1024 * 1024;

/// Result of [`read_file`]. Over MCP the content is not part of the structured content: it is
/// sent once, as the text of the result's content block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ReadFileOutput {
    /// The file read, relative to the sandbox's base directory.
    pub path: String,
    /// Size of the content in bytes.
    pub size: u64,
    /// Encoding of `content`.
    pub encoding: ContentEncoding,
    /// The file content (the content block over MCP).
    #[serde(skip)]
    pub content: String,
}

impl mcp_toolbelt::output::IntoToolResult for ReadFileOutput {
    /// The metadata as structured content, the file's content as the one text block.
    fn into_tool_result(self) -> Result<mcp_toolbelt::ToolResult, mcp_toolbelt::ToolError> {
        let metadata = serde_json::to_value(&self).map_err(|e| {
            mcp_toolbelt::ToolError::internal(format!("cannot serialize the read result: {e}"))
        })?;
        Ok(mcp_toolbelt::ToolResult::text(self.content).with_structured(metadata))
    }

    fn output_schema() -> Option<mcp_toolbelt::schema::JsonObject> {
        Some(mcp_toolbelt::schema::output_schema_for::<ReadFileOutput>())
    }
}

/// Result of [`write_file`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct WriteFileOutput {
    /// The file written, relative to the sandbox's base directory.
    pub path: String,
    /// Bytes written.
    pub bytes_written: u64,
    /// Whether the file did not exist before.
    pub created: bool,
    /// Directories created on the way (only with `create_dirs`), relative like `path`.
    pub created_dirs: Vec<String>,
}

/// Reads a regular file inside the sandbox. Files over `max_read_bytes` are refused; with
/// [`ContentEncoding::Utf8`] a file that is not valid UTF-8 is refused (read it as base64).
pub async fn read_file(
    sandbox: &Sandbox,
    path: &str,
    encoding: ContentEncoding,
) -> Result<ReadFileOutput, SandboxError> {
    let sandbox = sandbox.clone();
    let path = path.to_string();
    blocking(move || read_file_blocking(&sandbox, &path, encoding)).await
}

/// A file path must not end with `/` (the OS would resolve `notes.txt/` as a directory).
fn reject_trailing_slash(path: &str) -> Result<(), SandboxError> {
    if path.len() > 1 && path.ends_with('/') {
        return Err(SandboxError::invalid(
            format!("path {path:?}"),
            "it ends with '/', which names a directory, not a file",
            "Remove the trailing '/'; use list_directory for directories.",
        ));
    }
    Ok(())
}

/// Refuses a file with more than one hard link: another name of it may be outside the sandbox
/// (or in a denied path), which no path check can see.
fn reject_hard_links(what: &str, meta: &std::fs::Metadata) -> Result<(), SandboxError> {
    use std::os::unix::fs::MetadataExt;
    if meta.is_file() && meta.nlink() > 1 {
        return Err(SandboxError::denied(
            what,
            format!(
                "it has {} hard links, and another name of the same file may be outside the \
                 sandbox",
                meta.nlink()
            ),
            "Use a file with a single name; hard-linked files are never read or written.",
        ));
    }
    Ok(())
}

fn read_file_blocking(
    sandbox: &Sandbox,
    path: &str,
    encoding: ContentEncoding,
) -> Result<ReadFileOutput, SandboxError> {
    reject_trailing_slash(path)?;
    let resolved = sandbox.check_path(path)?;
    let what = resolved.describe();
    if !resolved.exists() {
        return Err(SandboxError::NotFound {
            what,
            action: "Check the path with list_directory or search_files.".to_string(),
        });
    }
    let file = open_file_read(sandbox.anchor_for(&resolved.existing), &resolved.existing)
        .map_err(|e| open_error(what.clone(), e))?;
    let meta = file
        .metadata()
        .map_err(|e| SandboxError::io(format!("examining {what}"), e))?;
    if meta.is_dir() {
        return Err(SandboxError::invalid(
            what,
            "it is a directory",
            "Use list_directory to see its contents.",
        ));
    }
    if !meta.is_file() {
        return Err(SandboxError::invalid(
            what,
            "it is not a regular file (a FIFO, socket or device)",
            "Read a regular file.",
        ));
    }
    reject_hard_links(&what, &meta)?;
    let limit = sandbox.limits().max_read_bytes;
    let too_large = |size: u64| SandboxError::TooLarge {
        what: what.clone(),
        size,
        limit,
        action: "Read a smaller file, or ask the operator to raise max_read_bytes in the sandbox \
                 configuration."
            .to_string(),
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    // The size is only a hint (the file may change); cap the up-front allocation.
    let mut bytes = Vec::with_capacity(meta.len().min(PREALLOCATE_MAX) as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SandboxError::io(format!("reading {what}"), e))?;
    if bytes.len() as u64 > limit {
        // The file grew after the size check.
        return Err(too_large(bytes.len() as u64));
    }
    let size = bytes.len() as u64;
    let content = match encoding {
        ContentEncoding::Utf8 => String::from_utf8(bytes).map_err(|e| {
            SandboxError::invalid(
                what.clone(),
                format!(
                    "it is not valid UTF-8 text (first invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
                "Read it again with encoding \"base64\".",
            )
        })?,
        ContentEncoding::Base64 => base64::engine::general_purpose::STANDARD.encode(&bytes),
    };
    Ok(ReadFileOutput {
        path: resolved.shown.clone(),
        size,
        encoding,
        content,
    })
}

/// Writes (creates or replaces) a regular file inside the sandbox. With `create_dirs`, missing
/// parent directories are created; without it, the parent must exist. Content over
/// `max_write_bytes` is refused; with [`ContentEncoding::Base64`] the content is decoded first.
pub async fn write_file(
    sandbox: &Sandbox,
    path: &str,
    content: &str,
    encoding: ContentEncoding,
    create_dirs: bool,
) -> Result<WriteFileOutput, SandboxError> {
    let limit = sandbox.limits().max_write_bytes;
    let too_large = |size: u64| SandboxError::TooLarge {
        what: "content".to_string(),
        size,
        limit,
        action: "Write less data at once, or ask the operator to raise max_write_bytes."
            .to_string(),
    };
    // Refuse before decoding: base64 carries 3 bytes in 4 characters.
    let at_least = match encoding {
        ContentEncoding::Utf8 => content.len() as u64,
        ContentEncoding::Base64 => (content.len() as u64 / 4)
            .saturating_mul(3)
            .saturating_sub(2),
    };
    if at_least > limit {
        return Err(too_large(at_least));
    }
    let bytes = match encoding {
        ContentEncoding::Utf8 => content.as_bytes().to_vec(),
        ContentEncoding::Base64 => base64::engine::general_purpose::STANDARD
            .decode(content)
            .map_err(|e| {
                SandboxError::invalid(
                    "content",
                    format!("it is not valid base64: {e}"),
                    "Pass standard base64 with padding, or use encoding \"utf-8\" for text.",
                )
            })?,
    };
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    let sandbox = sandbox.clone();
    let path = path.to_string();
    blocking(move || write_file_blocking(&sandbox, &path, &bytes, create_dirs)).await
}

fn write_file_blocking(
    sandbox: &Sandbox,
    path: &str,
    bytes: &[u8],
    create_dirs: bool,
) -> Result<WriteFileOutput, SandboxError> {
    reject_trailing_slash(path)?;
    let resolved = sandbox.check_path(path)?;
    let what = resolved.describe();
    if sandbox.is_operator_program(&resolved.full()) {
        return Err(SandboxError::denied(
            what,
            "it is a program execute_command may run, and rewriting it would change what runs",
            "Write to another file; allowed programs can only be changed by the operator.",
        ));
    }
    let existing_meta =
        std::fs::symlink_metadata(&resolved.existing).map_err(|e| open_error(what.clone(), e))?;
    if resolved.exists() {
        if existing_meta.is_dir() {
            return Err(SandboxError::invalid(
                what,
                "it is a directory",
                "Pass a file path inside the directory.",
            ));
        }
    } else {
        if !existing_meta.is_dir() {
            return Err(SandboxError::invalid(
                what,
                format!("{} is not a directory", sandbox.show(&resolved.existing)),
                "Write to a path whose parent is a directory.",
            ));
        }
        if resolved.missing.len() > 1 && !create_dirs {
            return Err(SandboxError::NotFound {
                what: format!("parent directory of {what}"),
                action: "Pass create_dirs: true to create the missing directories, or write into \
                         an existing directory."
                    .to_string(),
            });
        }
    }
    let opened = open_file_write(
        sandbox.anchor_for(&resolved.existing),
        &resolved.existing,
        &resolved.missing,
        create_dirs,
    )
    .map_err(|e| open_error(what.clone(), e))?;
    let mut file = opened.file;
    let meta = file
        .metadata()
        .map_err(|e| SandboxError::io(format!("examining {what}"), e))?;
    if !meta.is_file() {
        return Err(SandboxError::invalid(
            what,
            "it is not a regular file (a FIFO, socket or device)",
            "Write to a regular file.",
        ));
    }
    reject_hard_links(&what, &meta)?;
    file.set_len(0)
        .and_then(|()| file.write_all(bytes))
        .and_then(|()| file.flush())
        .map_err(|e| SandboxError::io(format!("writing {what}"), e))?;
    Ok(WriteFileOutput {
        path: resolved.shown.clone(),
        bytes_written: bytes.len() as u64,
        created: opened.created,
        created_dirs: opened
            .created_dirs
            .iter()
            .map(|p| sandbox.show(p))
            .collect(),
    })
}
