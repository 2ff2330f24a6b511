//! Calling one tool from the command line and printing its result.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::context::{ClientPeer, LogLevel, ToolContext};
use crate::output::content::{Content, ContentBlock};
use crate::output::result::ToolResult;
use crate::registry::ToolRegistry;

/// Exit status of an error result, a failed check or a failed setup.
pub(crate) const FAILURE: u8 = 1;
/// Exit status of a usage error (clap's).
pub(crate) const USAGE: u8 = 2;

/// Write to stdout; a closed pipe (`| head`) is not an error worth a panic.
pub(crate) fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Write to stderr, ignoring failures.
pub(crate) fn print_err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Text ending in exactly one newline (nothing for empty text).
fn line(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

/// Call `tool` with `arguments` and print the result: its text on stdout (exit 0), an error
/// result's text on stderr (exit 1); `json` prints the whole result (its `tools/call` wire
/// form) on stdout.
/// The first Ctrl-C cancels the call; a second one ends the process.
pub(crate) async fn call(
    registry: &ToolRegistry,
    tool: &str,
    arguments: Map<String, Value>,
    json: bool,
) -> ExitCode {
    let token = CancellationToken::new();
    let watcher = tokio::spawn(cancel_on_ctrl_c(token.clone()));
    // The local caller: `--permissions-file` already narrowed the registry itself, as it
    // does for `serve` over stdio.
    let ctx = ToolContext::default()
        .with_cancellation(token)
        .with_peer(Arc::new(StderrPeer));
    tracing::debug!(tool, "calling from the command line");
    let outcome = registry
        .call_tool(tool, Value::Object(arguments), ctx)
        .await;
    watcher.abort();
    let result = match outcome {
        Ok(result) => result,
        Err(not_found) => {
            print_err(&format!("error: {not_found}\n"));
            return ExitCode::from(USAGE);
        }
    };
    let failed = result.is_error();
    if json {
        print_out(&line(
            &serde_json::to_string_pretty(&result).unwrap_or_default(),
        ));
    } else if failed {
        print_err(&line(&result.text_content()));
    } else {
        print_out(&render(&result));
    }
    if failed {
        ExitCode::from(FAILURE)
    } else {
        ExitCode::SUCCESS
    }
}

async fn cancel_on_ctrl_c(token: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    tracing::warn!("interrupted: cancelling the call (press Ctrl-C again to quit)");
    token.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        std::process::exit(130);
    }
}

/// A successful result as text: text blocks as they are, embedded text resources by
/// their text, other blocks as one descriptive line; structured content alone as JSON.
pub(crate) fn render(result: &ToolResult) -> String {
    if result.content().is_empty() {
        return match result.structured_content() {
            Some(value) => line(&serde_json::to_string_pretty(value).unwrap_or_default()),
            None => String::new(),
        };
    }
    result
        .content()
        .iter()
        .map(|block| line(&block_text(block)))
        .collect()
}

fn block_text(block: &ContentBlock) -> String {
    const HINT: &str = "use --json for the data";
    match &block.body {
        Content::Text(text) => text.clone(),
        Content::Image { data, mime_type } => format!(
            "[image {mime_type}, {} base64 characters; {HINT}]",
            data.len()
        ),
        Content::Audio { data, mime_type } => format!(
            "[audio {mime_type}, {} base64 characters; {HINT}]",
            data.len()
        ),
        Content::Resource(contents) => match (contents.as_text(), contents.as_bytes()) {
            (Some(text), _) => text.to_string(),
            (None, bytes) => format!(
                "[resource {}, {}, {} bytes; {HINT}]",
                contents.uri().unwrap_or_default(),
                contents.mime_type().unwrap_or("binary"),
                bytes.map_or(0, <[u8]>::len)
            ),
        },
        Content::ResourceLink(link) => format!("[link {} ({})]", link.uri, link.name),
    }
}

/// The command line as the tool's "client": progress and log notifications become
/// `tracing` events on stderr (visible with `--log-level info` / `debug`); sampling and
/// elicitation answer that the client does not support them.
struct StderrPeer;

impl ClientPeer for StderrPeer {
    fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'static, ()> {
        tracing::info!(progress, total, message = message.as_deref(), "progress");
        Box::pin(async {})
    }

    fn log(&self, level: LogLevel, logger: Option<String>, data: Value) -> BoxFuture<'static, ()> {
        let logger = logger.as_deref().unwrap_or("tool");
        match level {
            LogLevel::Debug => tracing::debug!(logger, %data),
            LogLevel::Info | LogLevel::Notice => tracing::info!(logger, %data),
            LogLevel::Warning => tracing::warn!(logger, %data),
            _ => tracing::error!(logger, level = level.as_str(), %data),
        }
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_prints_text_and_describes_binary_blocks() {
        let result = ToolResult::text("hello")
            .with(ContentBlock::image("AAAA", "image/png"))
            .with(ContentBlock::embedded_text("file:///a.txt", "inside"));
        assert_eq!(
            render(&result),
            "hello\n[image image/png, 4 base64 characters; use --json for the data]\ninside\n"
        );
        let structured = ToolResult::empty().with_structured(serde_json::json!({"a": 1}));
        assert_eq!(render(&structured), "{\n  \"a\": 1\n}\n");
        assert_eq!(render(&ToolResult::empty()), "");
    }
}
