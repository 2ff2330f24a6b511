//! `serve [--stdio | --http ADDR | --tcp ADDR | --unix PATH] [--tokens-file F]
//! [--unauthenticated-network-access] [--stateless] [--state-key-file F] [--state-ttl TIME]
//! [--allow-host HOST] [--replica-id NAME] [--page-size N] [--max-in-flight N] [HTTP limits]`:
//! the registry over MCP through [`crate::server::Server`]. HTTP, TCP and
//! Unix print the address bound and a line saying what is exposed (reach, authentication,
//! tools). The HTTP limits are the [`HttpOptions`] ones: `--max-connections`,
//! `--header-timeout`, `--idle-timeout`, `--max-body`, `--max-sessions`,
//! `--session-timeout`, `--session-park-after`, `--disconnect-grace`. With the `oauth`
//! feature, HTTP also takes `--oauth-issuer URL --resource URL [--scope-map FILE]` and the
//! OAuth settings (see [`oauth_flags`]). On SIGTERM or SIGINT every transport shuts down
//! gracefully: calls in flight get `--shutdown-grace` to finish, then are cancelled, and the
//! process exits 0.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};
use tokio_util::sync::CancellationToken;

use crate::registry::Registry;
use crate::server::{
    HttpOptions, ServeError, Server, ServerInfo, StateKey, TcpOptions, TlsConfig, TokenTable,
};

use super::invoke::{FAILURE, USAGE, print_err};

/// The `serve` command.
pub(crate) fn command() -> Command {
    Command::new("serve")
        .about("Serve the tools over MCP (stdio by default; logs go to stderr)")
        .arg(
            Arg::new("stdio")
                .long("stdio")
                .action(ArgAction::SetTrue)
                .help("Serve one session over stdin/stdout (the default)"),
        )
        .arg(
            Arg::new("http")
                .long("http")
                .value_name("ADDR")
                .value_parser(clap::value_parser!(SocketAddr))
                .help("Serve streamable HTTP at http://ADDR/mcp (e.g. 127.0.0.1:8080)"),
        )
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
        .group(ArgGroup::new("transport").args(["stdio", "http", "tcp", "unix"]))
        .group(ArgGroup::new("network").args(["http", "tcp"]))
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
            Arg::new("unauthenticated_network_access")
                .long("unauthenticated-network-access")
                .action(ArgAction::SetTrue)
                .requires("network")
                .conflicts_with("stdio")
                .help(
                    "Allow --http/--tcp on a non-loopback address without --tokens-file: \
                     anyone who can reach the address may call every tool",
                ),
        )
        .arg(
            Arg::new("stateless")
                .long("stateless")
                .action(ArgAction::SetTrue)
                .requires("http")
                .conflicts_with_all(["stdio", "tcp"])
                .help("HTTP without sessions: every request is served on its own"),
        )
        .arg(
            Arg::new("allow_host")
                .long("allow-host")
                .value_name("HOST")
                .action(ArgAction::Append)
                .requires("http")
                .help(
                    "HTTP: also accept requests whose Host is HOST (a name, or name:port; \
                     repeatable), e.g. the name clients reach a load balancer or a Service by; \
                     loopback names are always accepted",
                ),
        )
        .arg(
            Arg::new("replica_id")
                .long("replica-id")
                .value_name("NAME")
                .requires("http")
                .help(
                    "HTTP: name this replica in an `Mcp-Replica: NAME` header on every response \
                     (e.g. the pod name behind a load balancer)",
                ),
        )
        .arg(
            Arg::new("tls_cert")
                .long("tls-cert")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .requires_all(["http", "tls_key"])
                .help(
                    "Serve HTTPS with this certificate chain (PEM, leaf first); SIGHUP reloads \
                     it and the key",
                ),
        )
        .arg(
            Arg::new("tls_key")
                .long("tls-key")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .requires_all(["http", "tls_cert"])
                .help("The private key of --tls-cert (PEM; private to its owner: chmod 600)"),
        )
        .arg(
            Arg::new("state_key_file")
                .long("state-key-file")
                .value_name("FILE")
                .env("MCP_TOOLS_STATE_KEY_FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help(
                    "The key (at least 32 bytes; the file private to its owner: chmod 600) that \
                     seals the requestState of resumable calls on MCP 2026-07-28; give every \
                     replica the same file. Default: a random key, valid in this process only",
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
        )
        .args(http_limits())
        .args(oauth_flags())
}

/// The OAuth flags (`oauth` feature): the issuer, this server's resource URL, the scope map,
/// the key cache, introspection and step-up.
#[cfg(feature = "oauth")]
fn oauth_flags() -> Vec<Arg> {
    let needs_issuer = |arg: Arg| arg.requires("oauth_issuer");
    vec![
        Arg::new("oauth_issuer")
            .long("oauth-issuer")
            .value_name("URL")
            .env("MCP_TOOLS_OAUTH_ISSUER")
            .requires_all(["http", "resource"])
            .help(
                "HTTP: accept OAuth 2.1 access tokens (JWT) from this issuer, exactly as its \
                 metadata names itself; its keys are found by RFC 8414 / OpenID discovery",
            ),
        needs_issuer(
            Arg::new("resource")
                .long("resource")
                .value_name("URL")
                .env("MCP_TOOLS_OAUTH_RESOURCE")
                .help(
                    "This server's public URL as the issuer knows it (e.g. \
                     https://mcp.example.org/mcp): tokens must name it as their audience",
                ),
        ),
        needs_issuer(
            Arg::new("scope_map")
                .long("scope-map")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help(
                    "Scopes to permissions: `scope PERM PERM…` per line (default: each scope \
                     names the permission of the same name)",
                ),
        ),
        needs_issuer(
            Arg::new("jwks_max_age")
                .long("jwks-max-age")
                .value_name("TIME")
                .value_parser(duration)
                .help("Refetch the issuer's keys when older than TIME (default 5m)"),
        ),
        needs_issuer(
            Arg::new("jwks_min_refetch")
                .long("jwks-min-refetch")
                .value_name("TIME")
                .value_parser(duration)
                .help(
                    "Tokens naming an unknown key refetch the keys at most once per TIME \
                     (default 10s)",
                ),
        ),
        needs_issuer(
            Arg::new("introspection_client")
                .long("introspection-client")
                .value_name("ID")
                .env("MCP_TOOLS_INTROSPECTION_CLIENT")
                .help(
                    "Check opaque (non-JWT) tokens at the issuer's RFC 7662 introspection \
                     endpoint as this client; its secret comes from the environment variable \
                     MCP_TOOLS_INTROSPECTION_SECRET",
                ),
        ),
        needs_issuer(
            Arg::new("introspection_cache")
                .long("introspection-cache")
                .value_name("TIME")
                .value_parser(duration)
                .requires("introspection_client")
                .help("Reuse an introspection answer for TIME (default 30s)"),
        ),
        needs_issuer(
            Arg::new("step_up")
                .long("step-up")
                .action(ArgAction::SetTrue)
                .help(
                    "Answer a call of a tool the token's scopes do not reach with 403 \
                     insufficient_scope and the scopes to ask for (default: such a tool \
                     answers like an unknown one)",
                ),
        ),
    ]
}

/// Without the `oauth` feature there are no OAuth flags.
#[cfg(not(feature = "oauth"))]
fn oauth_flags() -> Vec<Arg> {
    Vec::new()
}

/// The OAuth resource server the flags ask for (`None` without `--oauth-issuer`), taking
/// the static `tokens` too; the error text when the scope map, the secret or the issuer's
/// discovery fails.
#[cfg(feature = "oauth")]
async fn oauth_resource_server(
    matches: &ArgMatches,
    tokens: Option<TokenTable>,
) -> Result<Option<crate::server::oauth::ResourceServer>, String> {
    use crate::server::oauth::{JwtVerifier, OAuthConfig, ResourceServer, ScopeMap};
    let (Some(issuer), Some(resource)) = (
        matches.get_one::<String>("oauth_issuer"),
        matches.get_one::<String>("resource"),
    ) else {
        return Ok(None);
    };
    let mut config = OAuthConfig::new(issuer, resource);
    if let Some(path) = matches.get_one::<PathBuf>("scope_map") {
        config = config.scope_map(ScopeMap::from_file(path).map_err(|e| e.to_string())?);
    }
    if let Some(age) = matches.get_one::<Duration>("jwks_max_age") {
        config = config.keys_max_age(*age);
    }
    if let Some(interval) = matches.get_one::<Duration>("jwks_min_refetch") {
        config = config.unknown_kid_refetch(*interval);
    }
    if let Some(client) = matches.get_one::<String>("introspection_client") {
        let secret = std::env::var("MCP_TOOLS_INTROSPECTION_SECRET").map_err(|_| {
            "--introspection-client needs the client's secret in the environment variable \
             MCP_TOOLS_INTROSPECTION_SECRET"
                .to_string()
        })?;
        config = config.introspection(client, secret);
        if let Some(cache) = matches.get_one::<Duration>("introspection_cache") {
            config = config.introspection_cache(*cache);
        }
    }
    let verifier = JwtVerifier::discover(config)
        .await
        .map_err(|e| format!("cannot use the OAuth issuer {issuer}: {e}"))?;
    tracing::info!(%issuer, %resource, jwks = %verifier.metadata().jwks_uri, "accepting OAuth access tokens");
    let mut oauth = ResourceServer::new(verifier).step_up(matches.get_flag("step_up"));
    if let Some(table) = tokens {
        oauth = oauth.with_tokens(table);
    }
    Ok(Some(oauth))
}

/// The flags of [`HttpOptions`]' limits (HTTP only).
fn http_limits() -> [Arg; 8] {
    let count = |id: &'static str, long: &'static str, help: &'static str| {
        Arg::new(id)
            .long(long)
            .value_name("N")
            .value_parser(positive)
            .requires("http")
            .help(help)
    };
    let time = |id: &'static str, long: &'static str, help: &'static str| {
        Arg::new(id)
            .long(long)
            .value_name("TIME")
            .value_parser(duration)
            .requires("http")
            .help(help)
    };
    [
        count(
            "max_connections",
            "max-connections",
            "HTTP: open connections at most; past it the connection idle longest is closed, \
             or the new one gets 503 when all are busy (default 1024)",
        ),
        time(
            "header_timeout",
            "header-timeout",
            "HTTP: time a client has to send a request's headers (default 10s)",
        ),
        time(
            "idle_timeout",
            "idle-timeout",
            "HTTP: a connection with no request in progress is closed after TIME (default 60s)",
        ),
        count(
            "max_body",
            "max-body",
            "HTTP: bytes in one request body; a longer one gets 413 (default 4194304)",
        ),
        count(
            "max_sessions",
            "max-sessions",
            "HTTP: sessions (live or parked) at most; past it a new session's initialize gets 503 \
             (default 1024)",
        ),
        time(
            "session_timeout",
            "session-timeout",
            "HTTP: a session with no request in progress and no stream open for TIME ends \
             (default 5m)",
        ),
        time(
            "session_park_after",
            "session-park-after",
            "HTTP: a session idle for TIME is parked: its service is closed, a small record \
             kept, and its next request rebuilds it (default 60s)",
        ),
        time(
            "disconnect_grace",
            "disconnect-grace",
            "HTTP: a call whose client closed its side of the connection is cancelled \
             after TIME (default 10s)",
        ),
    ]
}

/// A time: a whole number with a unit `ms`, `s` or `m` (a bare number is seconds).
fn duration(text: &str) -> Result<Duration, String> {
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

/// `options` with the limits given on the command line.
fn with_limits(mut options: HttpOptions, matches: &ArgMatches) -> HttpOptions {
    let count = |id: &str| matches.get_one::<usize>(id).copied();
    let time = |id: &str| matches.get_one::<Duration>(id).copied();
    if let Some(n) = count("max_connections") {
        options = options.max_connections(n);
    }
    if let Some(t) = time("header_timeout") {
        options = options.header_timeout(t);
    }
    if let Some(t) = time("idle_timeout") {
        options = options.idle_timeout(t);
    }
    if let Some(n) = count("max_body") {
        options = options.max_body_bytes(n);
    }
    if let Some(n) = count("max_sessions") {
        options = options.max_sessions(n);
    }
    if let Some(t) = time("session_timeout") {
        options = options.session_idle_timeout(t);
    }
    if let Some(t) = time("session_park_after") {
        options = options.session_park_after(t);
    }
    if let Some(t) = time("disconnect_grace") {
        options = options.disconnect_grace(t);
    }
    options
}

/// A whole number of at least 1, for `--page-size` and `--max-in-flight`.
fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "expected a whole number of at least 1, not '{text}'"
        )),
    }
}

/// Whether `serve`'s flags (`matches`) choose stdio (the default transport).
pub(crate) fn over_stdio(matches: &ArgMatches) -> bool {
    !["http", "tcp", "unix"]
        .iter()
        .any(|transport| matches.contains_id(transport))
}

/// Serve `registry` as `serve`'s flags say, until the client closes stdin (stdio) or the
/// process gets Ctrl-C / SIGTERM (then shut down gracefully, on every transport).
pub(crate) async fn run(
    registry: Registry,
    name: &str,
    version: &str,
    matches: &ArgMatches,
) -> ExitCode {
    let stop = CancellationToken::new();
    tokio::spawn(stop_on_signal(stop.clone()));
    let mut server = Server::new(registry)
        .info(ServerInfo::new(name, version))
        .shutdown_on(stop);
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
    if let Some(ttl) = matches.get_one::<Duration>("state_ttl") {
        server = server.request_state_ttl(*ttl);
    }
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
    let served = if let Some(addr) = matches.get_one::<SocketAddr>("http") {
        let mut options = with_limits(
            HttpOptions::default().stateful(!matches.get_flag("stateless")),
            matches,
        );
        #[cfg(feature = "oauth")]
        let tokens = match oauth_resource_server(matches, tokens.clone()).await {
            Ok(Some(oauth)) => {
                options = options.oauth(oauth);
                None
            }
            Ok(None) => tokens,
            Err(err) => {
                print_err(&format!("error: {err}\n"));
                return ExitCode::from(FAILURE);
            }
        };
        if let Some(table) = tokens {
            options = options.tokens(table);
        }
        for host in matches
            .get_many::<String>("allow_host")
            .into_iter()
            .flatten()
        {
            options = options.allow_host(host);
        }
        if let Some(id) = matches.get_one::<String>("replica_id") {
            options = options.replica_id(id);
        }
        if let (Some(cert), Some(key)) = (
            matches.get_one::<PathBuf>("tls_cert"),
            matches.get_one::<PathBuf>("tls_key"),
        ) {
            let tls = match TlsConfig::from_pem_files(cert, key) {
                Ok(tls) => tls,
                Err(err) => {
                    print_err(&format!("error: {err}\n"));
                    return ExitCode::from(USAGE);
                }
            };
            tokio::spawn(reload_on_hangup(tls.clone()));
            options = options.tls(tls);
        }
        serve_http(server, *addr, options).await
    } else if let Some(addr) = matches.get_one::<SocketAddr>("tcp") {
        let mut options = TcpOptions::default();
        if let Some(table) = tokens {
            options = options.tokens(table);
        }
        serve_tcp(server, *addr, options).await
    } else if let Some(path) = matches.get_one::<PathBuf>("unix") {
        serve_unix(server, path).await
    } else {
        tracing::info!("serving MCP over stdio");
        server.serve_stdio().await
    };
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

async fn serve_http(
    server: Server,
    addr: SocketAddr,
    options: HttpOptions,
) -> Result<(), ServeError> {
    let bound = server.bind_http(addr, options).await?;
    // Always on stderr, whatever the log level: with port 0 it is how a caller learns
    // the port.
    print_err(&format!("serving MCP over HTTP at {}\n", bound.url()?));
    print_err(&format!("{}\n", bound.exposure()?));
    bound.serve().await
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

/// Reload `tls`'s certificate and key on every SIGHUP; a pair that fails to load is
/// reported and the one in use stays.
async fn reload_on_hangup(tls: TlsConfig) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut hangups) = signal(SignalKind::hangup()) else {
            return;
        };
        while hangups.recv().await.is_some() {
            match tls.reload() {
                Ok(()) => print_err("reloaded the TLS certificate and key\n"),
                Err(err) => print_err(&format!("error: {err}; keeping the certificate in use\n")),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = tls;
}

/// Cancel `stop` on Ctrl-C or SIGTERM.
async fn stop_on_signal(stop: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return stop.cancel();
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
    print_err("shutting down: accepting nothing new; calls in flight may finish\n");
    stop.cancel();
}

#[cfg(test)]
mod tests {
    use super::duration;
    use std::time::Duration;

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
