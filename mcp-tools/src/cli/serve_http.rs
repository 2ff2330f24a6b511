//! `serve --http ADDR` (feature `http`): its flags `[--stateless] [--allow-host HOST]
//! [--replica-id NAME] [HTTP limits]`, with `tls` `--tls-cert FILE --tls-key FILE`, and with
//! `oauth` `--oauth-issuer URL --resource URL [--scope-map FILE]` and the OAuth settings (see
//! [`oauth_flags`]). The HTTP limits are the [`HttpOptions`] ones: `--max-connections`,
//! `--header-timeout`, `--idle-timeout`, `--max-body`, `--max-sessions`,
//! `--session-timeout`, `--session-park-after`, `--disconnect-grace`. Prints the URL bound
//! and a line saying what is exposed (reach, authentication, tools).

use std::net::SocketAddr;
#[cfg(any(feature = "tls", feature = "oauth"))]
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches};

#[cfg(feature = "tls")]
use crate::server::TlsConfig;
use crate::server::{HttpOptions, ServeError, Server, TokenTable};

#[cfg(feature = "oauth")]
use super::invoke::FAILURE;
#[cfg(feature = "tls")]
use super::invoke::USAGE;
use super::invoke::print_err;
use super::serve::{duration, exit_code, positive};

/// `--http ADDR`, one of the `transport` and `network` groups of `serve`.
pub(super) fn transport() -> Arg {
    Arg::new("http")
        .long("http")
        .value_name("ADDR")
        .value_parser(clap::value_parser!(SocketAddr))
        .groups(["transport", "network"])
        .help("Serve streamable HTTP at http://ADDR/mcp (e.g. 127.0.0.1:8080)")
}

/// The flags that only `--http` takes, in the order `serve --help` lists them.
pub(super) fn flags() -> Vec<Arg> {
    let mut flags = vec![
        Arg::new("stateless")
            .long("stateless")
            .action(ArgAction::SetTrue)
            .requires("http")
            .conflicts_with_all(["stdio", "tcp"])
            .help("HTTP without sessions: every request is served on its own"),
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
        Arg::new("replica_id")
            .long("replica-id")
            .value_name("NAME")
            .requires("http")
            .help(
                "HTTP: name this replica in an `Mcp-Replica: NAME` header on every response \
                 and in every request's span (e.g. the pod name behind a load balancer)",
            ),
    ];
    #[cfg(feature = "tls")]
    flags.extend([
        Arg::new("tls_cert")
            .long("tls-cert")
            .value_name("FILE")
            .value_parser(clap::value_parser!(PathBuf))
            .requires_all(["http", "tls_key"])
            .help(
                "Serve HTTPS with this certificate chain (PEM, leaf first); SIGHUP reloads \
                 it and the key",
            ),
        Arg::new("tls_key")
            .long("tls-key")
            .value_name("FILE")
            .value_parser(clap::value_parser!(PathBuf))
            .requires_all(["http", "tls_cert"])
            .help("The private key of --tls-cert (PEM; private to its owner: chmod 600)"),
    ]);
    flags.extend(http_limits());
    flags.extend(oauth_flags());
    flags
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
            .env("MCP_TOOLBELT_OAUTH_ISSUER")
            .requires_all(["http", "resource"])
            .help(
                "HTTP: accept OAuth 2.1 access tokens (JWT) from this issuer, exactly as its \
                 metadata names itself; its keys are found by RFC 8414 / OpenID discovery",
            ),
        needs_issuer(
            Arg::new("resource")
                .long("resource")
                .value_name("URL")
                .env("MCP_TOOLBELT_OAUTH_RESOURCE")
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
                    "Scopes to permissions: `SCOPE = PERM PERM…` per line (default: each scope \
                     names the permission of the same name)",
                ),
        ),
        needs_issuer(
            Arg::new("advertise_scope")
                .long("advertise-scope")
                .value_name("SCOPE")
                .action(ArgAction::Append)
                .help(
                    "A scope to list in the public metadata's scopes_supported (repeatable; \
                     default: the scope map's scopes, or with no map every permission the \
                     tools need)",
                ),
        ),
        needs_issuer(
            Arg::new("challenge_scope")
                .long("challenge-scope")
                .value_name("SCOPE")
                .action(ArgAction::Append)
                .help(
                    "A scope a 401 tells clients to ask for (repeatable; default: every \
                     advertised scope): name the least a client needs",
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
            Arg::new("oauth_fetch_timeout")
                .long("oauth-fetch-timeout")
                .value_name("TIME")
                .value_parser(duration)
                .help(
                    "Time limit of each fetch from the issuer: metadata, keys, introspection \
                     (default 10s)",
                ),
        ),
        needs_issuer(
            Arg::new("introspection_client")
                .long("introspection-client")
                .value_name("ID")
                .env("MCP_TOOLBELT_INTROSPECTION_CLIENT")
                .help(
                    "Check opaque (non-JWT) tokens at the issuer's RFC 7662 introspection \
                     endpoint as this client; its secret comes from the environment variable \
                     MCP_TOOLBELT_INTROSPECTION_SECRET",
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
    if let Some(scopes) = matches.get_many::<String>("advertise_scope") {
        config = config.scopes_supported(scopes);
    }
    if let Some(scopes) = matches.get_many::<String>("challenge_scope") {
        config = config.challenge_scopes(scopes);
    }
    if let Some(age) = matches.get_one::<Duration>("jwks_max_age") {
        config = config.keys_max_age(*age);
    }
    if let Some(interval) = matches.get_one::<Duration>("jwks_min_refetch") {
        config = config.unknown_kid_refetch(*interval);
    }
    if let Some(timeout) = matches.get_one::<Duration>("oauth_fetch_timeout") {
        config = config.http_timeout(*timeout);
    }
    if let Some(client) = matches.get_one::<String>("introspection_client") {
        let secret = std::env::var("MCP_TOOLBELT_INTROSPECTION_SECRET").map_err(|_| {
            "--introspection-client needs the client's secret in the environment variable \
             MCP_TOOLBELT_INTROSPECTION_SECRET"
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

/// Serve over HTTP at `addr` as the flags say (`tokens`: the `--tokens-file` table;
/// `metrics_token`: `--metrics-token-file`'s, which opens `/metrics` on this listener).
pub(super) async fn run(
    mut server: Server,
    addr: SocketAddr,
    tokens: Option<TokenTable>,
    metrics_token: Option<std::sync::Arc<str>>,
    matches: &ArgMatches,
) -> ExitCode {
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
        server = server.replica_id(id);
    }
    if let Some(token) = metrics_token {
        options = options.metrics_token(&*token);
    }
    #[cfg(feature = "tls")]
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
    exit_code(serve_http(server, addr, options).await)
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

/// Reload `tls`'s certificate and key on every SIGHUP; a pair that fails to load is
/// reported and the one in use stays.
#[cfg(feature = "tls")]
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
