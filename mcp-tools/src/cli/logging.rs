//! Logs of a command-line run: `tracing` events to stderr (stdout may be the stdio
//! transport, or a command's output).

use std::io::IsTerminal;

use tracing::Subscriber;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The global flag's long name and its values.
pub(crate) const LOG_LEVEL: &str = "log-level";
pub(crate) const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// rmcp logs every JSON-RPC error answer (`response error`) under this target at warn;
/// those are client mistakes the client is told about (unknown tool, bad params), so below
/// debug they are left out — the server logs its own at debug.
const RMCP_SERVICE: &str = "rmcp::service";

/// The filter for `level` (one of [`LEVELS`]): that level everywhere, and `rmcp::service`
/// at error below debug.
fn level_filter(level: &str) -> Targets {
    let filter = Targets::new().with_default(level.parse().unwrap_or(LevelFilter::WARN));
    match level {
        "debug" | "trace" => filter,
        _ => filter.with_target(RMCP_SERVICE, LevelFilter::ERROR),
    }
}

/// The filter of a run: `level` when given, else `RUST_LOG`'s directives (through
/// `EnvFilter`, whose parser is only paid for when the variable is set), else `warn`.
fn filter<S>(level: Option<&str>) -> Box<dyn Layer<S> + Send + Sync>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    if level.is_none() && std::env::var_os(EnvFilter::DEFAULT_ENV).is_some() {
        // An unparseable RUST_LOG falls back to the default, as before it was set.
        if let Ok(from_env) = EnvFilter::try_from_default_env() {
            return Box::new(from_env);
        }
    }
    Box::new(level_filter(level.unwrap_or("warn")))
}

/// [`filter`] as a per-layer filter (beside the OTLP export's own).
#[cfg(feature = "otel")]
fn layer_filter<S>(
    level: Option<&str>,
) -> Box<dyn tracing_subscriber::layer::Filter<S> + Send + Sync>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    if level.is_none()
        && std::env::var_os(EnvFilter::DEFAULT_ENV).is_some()
        && let Ok(from_env) = EnvFilter::try_from_default_env()
    {
        return Box::new(from_env);
    }
    Box::new(level_filter(level.unwrap_or("warn")))
}

/// Install a stderr subscriber: `level` when given, else `RUST_LOG`, else `warn`.
/// Does nothing when the program already installed a global subscriber.
pub(crate) fn init(level: Option<&str>) {
    let subscriber = tracing_subscriber::fmt()
        // Everything reaches the filter layer below, which decides.
        .with_max_level(LevelFilter::TRACE)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        // A failed log write is dropped: reporting it would `eprintln!`, which panics when
        // stderr is a pipe nobody reads any more, and a log line is never worth the server.
        .log_internal_errors(false)
        .finish();
    let _ = subscriber.with(filter(level)).try_init();
}

/// The OTLP export `serve --otlp-endpoint` set up when logging started (its layer is in
/// the subscriber); `serve` hands it the server's metrics and flushes it at the end.
#[cfg(feature = "otel")]
pub(crate) static OTEL: std::sync::OnceLock<crate::server::telemetry::otel::Otel> =
    std::sync::OnceLock::new();

/// [`init`] with the OTLP export's layer beside the stderr one: each layer filters for
/// itself (stderr at `level`, the export at `INFO`, where the request spans are).
#[cfg(feature = "otel")]
pub(crate) fn init_with_otel(level: Option<&str>, otel: &crate::server::telemetry::otel::Otel) {
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .log_internal_errors(false)
        .with_filter(layer_filter(level));
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(otel.layer())
        .try_init();
}

#[cfg(test)]
mod tests {
    use tracing::Level;
    use tracing_subscriber::filter::Targets;

    fn enabled(filter: &Targets, target: &str, level: Level) -> bool {
        filter.would_enable(target, &level)
    }

    #[test]
    fn rmcp_response_errors_only_at_debug() {
        for level in ["warn", "info"] {
            let filter = super::level_filter(level);
            assert!(
                enabled(&filter, "mcp_toolbelt::server", Level::WARN),
                "{level}"
            );
            assert!(!enabled(&filter, "rmcp::service", Level::WARN), "{level}");
            assert!(enabled(&filter, "rmcp::service", Level::ERROR), "{level}");
            assert!(enabled(&filter, "rmcp::transport", Level::WARN), "{level}");
        }
        let info = super::level_filter("info");
        assert!(enabled(&info, "mcp_toolbelt", Level::INFO));
        assert!(!enabled(&info, "mcp_toolbelt", Level::DEBUG));
        let debug = super::level_filter("debug");
        assert!(enabled(&debug, "rmcp::service", Level::DEBUG));
        assert!(!enabled(&debug, "rmcp::service", Level::TRACE));
        let off = super::level_filter("off");
        assert!(!enabled(&off, "mcp_toolbelt", Level::ERROR));
    }
}
