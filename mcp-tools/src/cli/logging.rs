//! Logs of a command-line run: `tracing` events to stderr (stdout may be the stdio
//! transport, or a command's output).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The global flag's long name and its values.
pub(crate) const LOG_LEVEL: &str = "log-level";
pub(crate) const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// Install a stderr subscriber: `level` when given, else `RUST_LOG`, else `warn`.
/// Does nothing when the program already installed a global subscriber.
pub(crate) fn init(level: Option<&str>) {
    let filter = match level {
        Some(level) => EnvFilter::new(level),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
