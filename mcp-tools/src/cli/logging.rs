//! Logs of a command-line run: `tracing` events to stderr (stdout may be the stdio
//! transport, or a command's output).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The global flag's long name and its values.
pub(crate) const LOG_LEVEL: &str = "log-level";
pub(crate) const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// The filter for `level`. rmcp logs every JSON-RPC error answer (`response error`) at
/// warn; those are client mistakes the client is told about (unknown tool, bad params),
/// so below debug they are left out — the server logs its own at debug.
fn directives(level: &str) -> String {
    match level {
        "debug" | "trace" => level.to_string(),
        _ => format!("{level},rmcp::service=error"),
    }
}

/// Install a stderr subscriber: `level` when given, else `RUST_LOG`, else `warn`.
/// Does nothing when the program already installed a global subscriber.
pub(crate) fn init(level: Option<&str>) {
    let filter = match level {
        Some(level) => EnvFilter::new(directives(level)),
        None => {
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(directives("warn")))
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        // A failed log write is dropped: reporting it would `eprintln!`, which panics when
        // stderr is a pipe nobody reads any more, and a log line is never worth the server.
        .log_internal_errors(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    #[test]
    fn rmcp_response_errors_only_at_debug() {
        assert_eq!(super::directives("warn"), "warn,rmcp::service=error");
        assert_eq!(super::directives("info"), "info,rmcp::service=error");
        assert_eq!(super::directives("debug"), "debug");
    }
}
