//! `serve [--stdio | --tcp ADDR | --unix PATH] [--tokens-file F]
//! [--unauthenticated-network-access] [--state-key-file F] [--state-ttl TIME]
//! [--task-ttl TIME] [--task-lease TIME] [--task-store URL] [--share-notifications URL]
//! (the last two with feature `redis`) [--page-size N] [--max-in-flight N] [--shutdown-grace TIME]`: the registry over MCP
//! through [`crate::server::Server`]. With the `http` feature also `--http ADDR` and its
//! flags (`serve_http.rs`). TCP and Unix print the address bound and a line saying what is
//! exposed (reach, authentication, tools). On SIGTERM or SIGINT every transport shuts down
//! gracefully: calls in flight get `--shutdown-grace` to finish, then are cancelled, and the
//! process exits 0.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};
use tokio_util::sync::CancellationToken;

use crate::registry::ToolRegistry;
use crate::server::{AuditLog, ServeError, Server, ServerInfo, StateKey, TcpOptions, TokenTable};

use super::invoke::{FAILURE, USAGE, print_err};
#[cfg(feature = "http")]
use super::serve_http;

/// The network transports' flags, as the help names them.
#[cfg(feature = "http")]
const NETWORK_FLAGS: &str = "--http/--tcp";
#[cfg(not(feature = "http"))]
const NETWORK_FLAGS: &str = "--tcp";

/// The `serve` command.
pub(crate) fn command() -> Command {
    let command = Command::new("serve")
        .about("Serve the tools over MCP (stdio by default; logs go to stderr)")
        .arg(
            Arg::new("stdio")
                .long("stdio")
                .action(ArgAction::SetTrue)
                .help("Serve one session over stdin/stdout (the default)"),
        );
    // `--http ADDR` (feature `http`) joins the `transport` and `network` groups itself.
    #[cfg(feature = "http")]
    let command = command.arg(serve_http::transport());
    let command = command
        .arg(
            Arg::new("tcp")
                .long("tcp")
                .value_name("ADDR")
                .value_parser(clap::value_parser!(SocketAddr))
                .help("Serve newline-delimited JSON-RPC over TCP at ADDR, one session per connection"),
        )
        .arg(
            Arg::new("unix")
                .long("unix")
                .value_name("PATH")
                .value_parser(clap::value_parser!(PathBuf))
                .help(
                    "Serve newline-delimited JSON-RPC on a Unix domain socket at PATH (mode 0600: \
                     only this user may connect), one session per connection",
                ),
        )
        .group(ArgGroup::new("transport").args(["stdio", "tcp", "unix"]))
        .group(ArgGroup::new("network").args(["tcp"]))
        .arg(
            Arg::new("tokens_file")
                .long("tokens-file")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .requires("network")
                .conflicts_with("stdio")
                .help(
                    "Bearer tokens (HTTP Authorization header, TCP authentication line) and the \
                     permissions each grants: `token PERM PERM…` per line; the file must be private to \
                     its owner (chmod 600)",
                ),
        )
        .arg(
            Arg::new("rate_limits")
                .long("rate-limits")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help(
                    "Rate limits of tools/call, one rule a line: `tool NAME RATE|none` (per \
                     caller; overrides the tool's own rate), `caller SUBJECT|* RATE|none` (all \
                     of a caller's calls), `max-keys N`, `store-down admit|refuse`; RATE is \
                     like `10/s` or `100/min burst 20`. Shared by the replicas through Redis \
                     when --task-store is given. Default: each tool's own rate",
                ),
        )
        .arg(
            Arg::new("unauthenticated_network_access")
                .long("unauthenticated-network-access")
                .action(ArgAction::SetTrue)
                .requires("network")
                .conflicts_with("stdio")
                .help(format!(
                    "Allow {NETWORK_FLAGS} on a non-loopback address without --tokens-file: \
                     anyone who can reach the address may call every tool"
                )),
        )
        .arg(
            Arg::new("state_key_file")
                .long("state-key-file")
                .value_name("FILE")
                .env("MCP_TOOLBELT_STATE_KEY_FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help(
                    "The key (at least 32 bytes; the file private to its owner: chmod 600) that \
                     seals the requestState of resumable calls on MCP 2026-07-28; give every \
                     replica the same file. Default: a random key, valid in this process only",
                ),
        )
        .arg(
            Arg::new("audit_log")
                .long("audit-log")
                .value_name("PATH|-")
                .value_parser(clap::value_parser!(PathBuf))
                .help(
                    "Append one JSON line per call that reached a tool, resource or prompt to \
                     PATH (created 0600), or write it to stderr with `-`: who, what, outcome, \
                     duration and a SHA-256 digest of the arguments, never the arguments",
                ),
        )
        .arg(
            Arg::new("audit_queue")
                .long("audit-queue")
                .value_name("LINES")
                .value_parser(positive)
                .requires("audit_log")
                .help(
                    "At most LINES audit lines wait for the writer; a line past it is dropped, \
                     counted and reported, never waited for (default 1024)",
                ),
        )
        .arg(
            Arg::new("state_ttl")
                .long("state-ttl")
                .value_name("TIME")
                .value_parser(duration)
                .help(
                    "How long a requestState stays valid: the time a client has to answer an \
                     elicitation or sampling round and retry (default 10m)",
                ),
        )
        .arg(
            Arg::new("task_ttl")
                .long("task-ttl")
                .value_name("TIME")
                .value_parser(duration)
                .help(
                    "How long a finished task (a call of a task-supporting tool that became a \
                     task) stays readable with tasks/get (default 60m)",
                ),
        )
        .arg(
            Arg::new("task_lease")
                .long("task-lease")
                .value_name("TIME")
                .value_parser(duration)
                .help(
                    "How long a replica's lease on a task it runs holds without refresh: a task \
                     whose replica died is failed once it runs out (default 30s)",
                ),
        )
        .arg(
            Arg::new("page_size")
                .long("page-size")
                .value_name("N")
                .value_parser(positive)
                .help("Split tools/list into pages of N tools (default: one page)"),
        )
        .arg(
            Arg::new("max_in_flight")
                .long("max-in-flight")
                .value_name("N")
                .value_parser(positive)
                .help(
                    "Requests handled at once: per connection on stdio, TCP and Unix, over all \
                     connections on HTTP; more wait their turn (default 256)",
                ),
        )
        .arg(
            Arg::new("shutdown_grace")
                .long("shutdown-grace")
                .value_name("TIME")
                .value_parser(duration)
                .help(
                    "On SIGTERM or SIGINT: stop accepting, let calls in flight finish for up to \
                     TIME, then cancel them and exit 0 (default 10s)",
                ),
        );
    #[cfg(feature = "redis")]
    let command = command.arg(
        Arg::new("task_store")
            .long("task-store")
            .value_name("URL")
            .env("MCP_TOOLBELT_TASK_STORE")
            .hide_env_values(true)
            .help(
                "Keep tasks, and the rate limits' buckets, in the Redis server at URL \
                 (redis://HOST:PORT/DB) so that every replica answers for every task and a \
                 caller's limit holds across replicas; give every replica the same URL. \
                 Default: in this process",
            ),
    );
    #[cfg(feature = "redis")]
    let command = command.arg(
        Arg::new("share_notifications")
            .long("share-notifications")
            .value_name("URL")
            .help(
                "Share runtime changes (tool list, resource updates) with every replica using \
                 the Redis server at URL, so that their clients hear of them too",
            ),
    );
    let command = command
        .arg(
            Arg::new("metrics_addr")
                .long("metrics-addr")
                .value_name("ADDR")
                .value_parser(clap::value_parser!(SocketAddr))
                .help(
                    "Serve the metrics (Prometheus text) at GET /metrics on a listener of their \
                     own at ADDR (e.g. 127.0.0.1:9464), on any transport; beyond loopback it \
                     needs --metrics-token-file (or --unauthenticated-network-access)",
                ),
        )
        .arg(
            Arg::new("metrics_token_file")
                .long("metrics-token-file")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help(METRICS_TOKEN_HELP),
        );
    #[cfg(feature = "otel")]
    let command = command
        .arg(
            Arg::new("otlp_endpoint")
                .long("otlp-endpoint")
                .value_name("URL")
                .help(
                    "Export every request's span and the metrics over OTLP (HTTP/protobuf) to \
                     URL (e.g. http://127.0.0.1:4318: /v1/traces and /v1/metrics are added)",
                ),
        )
        .arg(
            Arg::new("otlp_sample_ratio")
                .long("otlp-sample-ratio")
                .value_name("RATIO")
                .value_parser(clap::value_parser!(f64))
                .requires("otlp_endpoint")
                .help(
                    "With --otlp-endpoint: export this share (0 to 1) of the traces that \
                     start here; a request continuing a client's trace follows its \
                     traceparent's sampled flag [default: 1]",
                ),
        );
    #[cfg(feature = "http")]
    let command = command.args(serve_http::flags());
    command
}

/// `--metrics-token-file`'s help; it names the HTTP listener only where there is one.
#[cfg(feature = "http")]
const METRICS_TOKEN_HELP: &str = "The bearer token (first line of FILE, mode 600) that /metrics \
     requires: on the --metrics-addr listener, and with --http on the MCP listener too (no MCP \
     or OAuth token opens it; without this file the MCP listener has no /metrics)";
#[cfg(not(feature = "http"))]
const METRICS_TOKEN_HELP: &str = "The bearer token (first line of FILE, mode 600) that /metrics on the --metrics-addr \
     listener requires (no MCP token opens it)";

/// `--metrics-addr` and `--metrics-token-file`: the metrics listener started, and the
/// token the HTTP listener's `/metrics` takes; the message when they cannot be used.
async fn metrics_flags(
    server: &Server,
    matches: &ArgMatches,
    stop: &CancellationToken,
) -> Result<Option<std::sync::Arc<str>>, String> {
    let token = match matches.get_one::<PathBuf>("metrics_token_file") {
        Some(path) => Some(crate::server::telemetry::read_token_file(path)?),
        None => None,
    };
    if let Some(addr) = matches.get_one::<SocketAddr>("metrics_addr") {
        if token.is_none()
            && !addr.ip().is_loopback()
            && !matches.get_flag("unauthenticated_network_access")
        {
            return Err(format!(
                "--metrics-addr {addr} is beyond loopback: give --metrics-token-file, or \
                 --unauthenticated-network-access to serve the metrics to anyone"
            ));
        }
        let bound = crate::server::telemetry::spawn_metrics_listener(
            *addr,
            server.metrics(),
            token.clone(),
            stop.clone(),
        )
        .await
        .map_err(|error| format!("--metrics-addr {addr}: {error}"))?;
        print_err(&format!("serving metrics at http://{bound}/metrics\n"));
    }
    Ok(token)
}

/// A time: a whole number with a unit `ms`, `s` or `m` (a bare number is seconds).
pub(super) fn duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = text
        .find(|c: char| !c.is_ascii_digit())
        .map_or((text, ""), |at| text.split_at(at));
    let value = number.parse::<u64>().ok();
    match (value, unit) {
        (Some(n), "ms") => Ok(Duration::from_millis(n)),
        (Some(n), "s" | "") => Ok(Duration::from_secs(n)),
        (Some(n), "m") => Ok(Duration::from_secs(n.saturating_mul(60))),
        _ => Err(format!(
            "expected a time such as 500ms, 10s or 5m, not '{text}'"
        )),
    }
}

/// A whole number of at least 1, for `--page-size`, `--max-in-flight` and the HTTP counts.
pub(super) fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "expected a whole number of at least 1, not '{text}'"
        )),
    }
}

/// The environment variables `serve`'s flags read (`env = …`): when one is set, `serve`
/// without flags is not the plain stdio start ([`plain_stdio`]) and goes through the parser.
const FLAG_ENV: &[&str] = &[
    "MCP_TOOLBELT_STATE_KEY_FILE",
    #[cfg(feature = "oauth")]
    "MCP_TOOLBELT_OAUTH_ISSUER",
    #[cfg(feature = "oauth")]
    "MCP_TOOLBELT_OAUTH_RESOURCE",
    #[cfg(feature = "oauth")]
    "MCP_TOOLBELT_INTROSPECTION_CLIENT",
    #[cfg(feature = "redis")]
    "MCP_TOOLBELT_TASK_STORE",
];

/// Whether the command line `args` is `PROGRAM serve` or `PROGRAM serve --stdio` and no
/// environment variable gives `serve` a flag: the way MCP clients start a server, and a
/// command line whose parse the `serve` root would only confirm (no flag set, stdio),
/// so it is served without building the parser. The caller checks that no
/// [`App::setup`](super::App::setup) flags exist (they may read the environment too).
pub(crate) fn plain_stdio(args: &[OsString]) -> bool {
    let plain = match args {
        [_, serve] => serve == "serve",
        [_, serve, stdio] => serve == "serve" && stdio == "--stdio",
        _ => false,
    };
    plain && FLAG_ENV.iter().all(|name| std::env::var_os(name).is_none())
}

/// Whether `serve`'s flags (`matches`) choose stdio (the default transport). A transport
/// the build leaves out (`--http` without the `http` feature) has no flag to give.
pub(crate) fn over_stdio(matches: &ArgMatches) -> bool {
    !["http", "tcp", "unix"]
        .iter()
        .any(|transport| matches.try_contains_id(transport).unwrap_or(false))
}

/// Serve `registry` as `serve`'s flags say (`None`: no flags, the [`plain_stdio`] start),
/// until the client closes stdin (stdio) or the process gets Ctrl-C / SIGTERM (then shut
/// down gracefully, on every transport).
pub(crate) async fn run(
    registry: ToolRegistry,
    name: &str,
    version: &str,
    matches: Option<&ArgMatches>,
) -> ExitCode {
    let stop = CancellationToken::new();
    tokio::spawn(stop_on_signal(stop.clone()));
    let mut server = Server::new(registry)
        .info(ServerInfo::new(name, version))
        .shutdown_on(stop.clone());
    let Some(matches) = matches else {
        return exit_code(serve_stdio(server).await);
    };
    if let Some(size) = matches.get_one::<usize>("page_size") {
        server = server.page_size(*size);
    }
    if let Some(limit) = matches.get_one::<usize>("max_in_flight") {
        server = server.max_in_flight(*limit);
    }
    if let Some(grace) = matches.get_one::<Duration>("shutdown_grace") {
        server = server.shutdown_grace(*grace);
    }
    if matches.get_flag("unauthenticated_network_access") {
        server = server.unauthenticated_network_access();
    }
    if let Some(path) = matches.get_one::<PathBuf>("state_key_file") {
        match StateKey::from_file(path) {
            Ok(key) => server = server.state_key(key),
            Err(err) => {
                print_err(&format!("error: {err}\n"));
                return ExitCode::from(USAGE);
            }
        }
    }
    if let Some(path) = matches.get_one::<PathBuf>("audit_log") {
        let opened = if path.as_os_str() == "-" {
            AuditLog::to_stderr()
        } else {
            AuditLog::to_file(path)
        };
        match opened {
            Ok(mut log) => {
                if let Some(bound) = matches.get_one::<usize>("audit_queue") {
                    log = log.queue_bound(*bound);
                }
                server = server.audit_log(log);
            }
            Err(err) => {
                print_err(&format!("error: --audit-log: {err}\n"));
                return ExitCode::from(USAGE);
            }
        }
    }
    if let Some(ttl) = matches.get_one::<Duration>("state_ttl") {
        server = server.request_state_ttl(*ttl);
    }
    if let Some(ttl) = matches.get_one::<Duration>("task_ttl") {
        server = server.task_ttl(*ttl);
    }
    if let Some(lease) = matches.get_one::<Duration>("task_lease") {
        server = server.task_lease(*lease);
    }
    #[cfg(feature = "redis")]
    if let Some(url) = matches.get_one::<String>("share_notifications") {
        match crate::server::SharedNotifications::open(url) {
            Ok(shared) => server = server.share_notifications(shared),
            Err(err) => {
                print_err(&format!("error: --share-notifications: {err}\n"));
                return ExitCode::from(USAGE);
            }
        }
    }
    #[cfg(feature = "redis")]
    if let Some(url) = matches.get_one::<String>("task_store") {
        match crate::server::tasks::RedisTaskStore::open(url) {
            Ok(store) => server = server.task_store(store),
            Err(err) => {
                print_err(&format!("error: --task-store: {err}\n"));
                return ExitCode::from(USAGE);
            }
        }
    }
    let limits = match matches.get_one::<PathBuf>("rate_limits") {
        Some(path) => match crate::rate::RateLimits::from_file(path) {
            Ok(limits) => limits,
            Err(err) => {
                print_err(&format!("error: --rate-limits: {err}\n"));
                return ExitCode::from(USAGE);
            }
        },
        None => crate::rate::RateLimits::new(),
    };
    // The buckets live where the tasks do: in Redis when the replicas share one.
    #[cfg(feature = "redis")]
    let limiter = match matches.get_one::<String>("task_store") {
        Some(url) => match crate::server::RedisRateStore::open(url) {
            Ok(store) => crate::server::RateLimiter::shared(limits, store),
            Err(err) => {
                print_err(&format!("error: --task-store: {err}\n"));
                return ExitCode::from(USAGE);
            }
        },
        None => crate::server::RateLimiter::new(limits),
    };
    #[cfg(not(feature = "redis"))]
    let limiter = crate::server::RateLimiter::new(limits);
    server = server.rate_limiter(limiter);
    let tokens = match matches.get_one::<PathBuf>("tokens_file") {
        Some(path) => match TokenTable::from_file(path) {
            Ok(table) => Some(table),
            Err(err) => {
                print_err(&format!("error: {err}\n"));
                return ExitCode::from(USAGE);
            }
        },
        None => None,
    };
    #[cfg(feature = "otel")]
    let otel = super::logging::OTEL.get();
    #[cfg(feature = "otel")]
    if let Some(otel) = otel {
        otel.record(&server.metrics());
    }
    let metrics_token = match metrics_flags(&server, matches, &stop).await {
        Ok(token) => token,
        Err(err) => {
            print_err(&format!("error: {err}\n"));
            return ExitCode::from(USAGE);
        }
    };
    #[cfg(feature = "http")]
    if let Some(addr) = matches.get_one::<SocketAddr>("http") {
        let status = serve_http::run(server, *addr, tokens, metrics_token, matches).await;
        #[cfg(feature = "otel")]
        if let Some(otel) = otel {
            otel.shutdown();
        }
        return status;
    }
    #[cfg(not(feature = "http"))]
    let _ = metrics_token;
    let served = if let Some(addr) = matches.get_one::<SocketAddr>("tcp") {
        let mut options = TcpOptions::default();
        if let Some(table) = tokens {
            options = options.tokens(table);
        }
        serve_tcp(server, *addr, options).await
    } else if let Some(path) = matches.get_one::<PathBuf>("unix") {
        serve_unix(server, path).await
    } else {
        serve_stdio(server).await
    };
    #[cfg(feature = "otel")]
    if let Some(otel) = otel {
        otel.shutdown();
    }
    exit_code(served)
}

async fn serve_stdio(server: Server) -> Result<(), ServeError> {
    tracing::info!("serving MCP over stdio");
    server.serve_stdio().await
}

/// The exit status of a server that stopped: 0, 2 (usage: a refused exposure) or 1.
pub(super) fn exit_code(served: Result<(), ServeError>) -> ExitCode {
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err @ ServeError::Unauthenticated { .. }) => {
            print_err(&format!("error: {err}\n"));
            ExitCode::from(USAGE)
        }
        Err(err) => {
            print_err(&format!("error: {err}\n"));
            ExitCode::from(FAILURE)
        }
    }
}

async fn serve_tcp(
    server: Server,
    addr: SocketAddr,
    options: TcpOptions,
) -> Result<(), ServeError> {
    let bound = server.bind_tcp(addr, options).await?;
    print_err(&format!(
        "serving MCP over TCP at {}\n",
        bound.local_addr()?
    ));
    print_err(&format!("{}\n", bound.exposure()?));
    bound.serve().await
}

async fn serve_unix(server: Server, path: &std::path::Path) -> Result<(), ServeError> {
    let bound = server.bind_unix(path).await?;
    print_err(&format!(
        "serving MCP over Unix socket at {}\n",
        bound.path().display()
    ));
    print_err(&format!("{}\n", bound.exposure()));
    bound.serve().await
}

/// Cancel `stop` on Ctrl-C or SIGTERM. The handlers are installed before this returns, so
/// a signal that comes while the server is still starting drains it too, instead of the
/// default action ending the process at once.
fn stop_on_signal(stop: CancellationToken) -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let signals = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        )
    };
    async move {
        #[cfg(unix)]
        match signals {
            (Ok(mut interrupt), Ok(mut term)) => {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = term.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        print_err("shutting down: accepting nothing new; calls in flight may finish\n");
        stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::{FLAG_ENV, command, duration, plain_stdio};
    use std::ffi::OsString;
    use std::time::Duration;

    /// A flag that reads the environment but is missing from `FLAG_ENV` would let the
    /// plain stdio start ignore that variable.
    #[test]
    fn the_plain_stdio_start_knows_every_variable_serve_reads() {
        let mut read: Vec<String> = command()
            .get_arguments()
            .filter_map(|arg| arg.get_env())
            .map(|name| name.to_string_lossy().into_owned())
            .collect();
        read.sort();
        let mut listed: Vec<String> = FLAG_ENV.iter().map(|name| name.to_string()).collect();
        listed.sort();
        assert_eq!(read, listed);
    }

    #[test]
    fn only_serve_without_flags_is_the_plain_stdio_start() {
        let args = |words: &[&str]| -> Vec<OsString> { words.iter().map(OsString::from).collect() };
        // The test process may have the variables set; then nothing is plain.
        let clean = FLAG_ENV.iter().all(|name| std::env::var_os(name).is_none());
        assert_eq!(plain_stdio(&args(&["p", "serve"])), clean);
        assert_eq!(plain_stdio(&args(&["p", "serve", "--stdio"])), clean);
        for other in [
            &["p"][..],
            &["p", "serve", "--stdio", "--stdio"],
            &["p", "serve", "--tcp", "127.0.0.1:0"],
            &["p", "--log-level", "debug", "serve"],
            &["p", "serve", "--help"],
            &["p", "serve", "--std"],
            &["p", "--stdio", "serve"],
            &["p", "tools", "list"],
        ] {
            assert!(!plain_stdio(&args(other)), "{other:?}");
        }
    }

    #[test]
    fn times_take_a_unit_and_default_to_seconds() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("7"), Ok(Duration::from_secs(7)));
        assert_eq!(duration("5m"), Ok(Duration::from_secs(300)));
        for bad in ["", "s", "1h", "-1s", "1.5s", "10 s"] {
            assert!(duration(bad).is_err(), "{bad:?}");
        }
    }
}
