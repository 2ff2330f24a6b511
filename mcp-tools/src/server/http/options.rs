//! [`HttpOptions`]: what the streamable HTTP transport accepts and every limit it keeps.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::authenticate::Authenticator;
use crate::server::auth::{TokenResolver, TokenTable, TokensFileError};

/// Options of the streamable HTTP transport.
///
/// Defaults: stateful sessions (`Mcp-Session-Id`), endpoint `/mcp`, `Host` must be a
/// loopback name (`localhost`, `127.0.0.1`, `::1`) or the literal address bound, a present
/// `Origin` must be a loopback origin (any port), no bearer tokens. A request with a
/// foreign `Host` or `Origin` gets `403`.
///
/// The limits, each bounding one resource:
///
/// | limit | default | what happens at the limit |
/// |---|---|---|
/// | [`max_connections`](Self::max_connections) | 1024 | the connection idle longest is closed to make room; with none idle the new one gets `503` |
/// | [`header_timeout`](Self::header_timeout) | 10 s | a request whose headers take longer is dropped with its connection |
/// | [`idle_timeout`](Self::idle_timeout) | 60 s | a connection with no request in progress for that long is closed |
/// | [`max_body_bytes`](Self::max_body_bytes) | 4 MiB | a longer body gets `413` |
/// | [`max_sessions`](Self::max_sessions) | 1024 | a new session's `initialize` gets `503` |
/// | [`session_idle_timeout`](Self::session_idle_timeout) | 5 min | the session ends; its id then gets `404` |
/// | [`session_park_after`](Self::session_park_after) | 60 s | the session is parked: its service is closed and a record of under 1 KB kept; its next request rebuilds it |
/// | [`disconnect_grace`](Self::disconnect_grace) | 10 s | a call whose client closed its side is cancelled |
///
/// Requests in flight at once (over all connections) are bounded by
/// [`Server::max_in_flight`](crate::server::Server::max_in_flight); past it, requests wait.
///
/// ```
/// use std::time::Duration;
/// use mcp_toolbelt::{PermissionSet, server::{HttpOptions, TokenTable}};
/// let options = HttpOptions::default()
///     .stateless()
///     .allow_host("mcp.example.com")
///     .allow_origin("https://app.example.com")
///     .max_connections(4096)
///     .idle_timeout(Duration::from_secs(30))
///     .tokens(TokenTable::new([("t0k3n", PermissionSet::new(["WIKI_VIEW"]))]));
/// assert!(!options.is_stateful());
/// ```
#[derive(Clone)]
pub struct HttpOptions {
    pub(crate) stateful: bool,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) authenticator: Option<Arc<dyn Authenticator>>,
    /// The OAuth resource server among the authenticators, for the metadata document and
    /// step-up (`oauth` feature).
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<Arc<crate::server::oauth::ResourceServer>>,
    pub(crate) path: String,
    pub(crate) limits: HttpLimits,
    pub(crate) replica_id: Option<String>,
    /// The bearer token that opens `/metrics` on this listener (`None`: no such route).
    pub(crate) metrics_token: Option<Arc<str>>,
    tls: Option<Tls>,
}

/// The TLS configuration of HTTPS (with the `tls` feature; without it, nothing can make one).
#[cfg(feature = "tls")]
pub(crate) type Tls = crate::server::TlsConfig;
#[cfg(not(feature = "tls"))]
#[derive(Clone)]
pub(crate) enum Tls {}

/// The numeric limits of [`HttpOptions`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct HttpLimits {
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_sessions: usize,
    pub(crate) session_idle_timeout: Duration,
    pub(crate) session_park_after: Duration,
    pub(crate) disconnect_grace: Duration,
}

impl Default for HttpLimits {
    fn default() -> HttpLimits {
        HttpLimits {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 1024,
            session_idle_timeout: Duration::from_secs(300),
            session_park_after: Duration::from_secs(60),
            disconnect_grace: Duration::from_secs(10),
        }
    }
}

impl Default for HttpOptions {
    fn default() -> HttpOptions {
        let loopback = ["localhost", "127.0.0.1", "[::1]"];
        HttpOptions {
            stateful: true,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: ["http", "https"]
                .iter()
                .flat_map(|scheme| loopback.iter().map(move |h| format!("{scheme}://{h}:*")))
                .collect(),
            authenticator: None,
            #[cfg(feature = "oauth")]
            oauth: None,
            path: "/mcp".into(),
            limits: HttpLimits::default(),
            replica_id: None,
            metrics_token: None,
            tls: None,
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("stateful", &self.stateful)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("authenticator", &self.authenticator.is_some())
            .field("path", &self.path)
            .field("limits", &self.limits)
            .field("replica_id", &self.replica_id)
            .field("metrics_token", &self.metrics_token.as_ref().map(|_| "…"))
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

impl HttpOptions {
    /// Stateless mode: no sessions; every POST is served on its own (2026-07-28 clients
    /// are always served this way).
    pub fn stateless(mut self) -> HttpOptions {
        self.stateful = false;
        self
    }

    /// Stateful (`true`, the default) or stateless mode.
    pub fn stateful(mut self, stateful: bool) -> HttpOptions {
        self.stateful = stateful;
        self
    }

    /// True in stateful mode.
    pub fn is_stateful(&self) -> bool {
        self.stateful
    }

    /// Also accept requests whose `Host` is `host` (a name, or `name:port`).
    pub fn allow_host(mut self, host: impl Into<String>) -> HttpOptions {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Also accept requests whose `Origin` is `origin` (`scheme://host[:port|:*]`).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> HttpOptions {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Require a bearer token on every request and filter each caller's tools by the
    /// permissions `resolver` maps its token to. A missing or unknown token gets `401`.
    /// A session belongs to the token that created it: any other token presenting its
    /// id gets the `404` of an unknown session.
    pub fn tokens(self, resolver: impl TokenResolver) -> HttpOptions {
        self.authenticator(resolver)
    }

    /// Authenticate every request with `authenticator` (a [`TokenResolver`] is one, see
    /// [`tokens`](Self::tokens)): a refused request gets its
    /// [`Rejection`](crate::server::Rejection); an accepted one is served as the
    /// [`Caller`](crate::Caller) it returned. Sessions belong to the credential (the
    /// `Authorization` header) that opened them. The same check as
    /// [`AuthLayer`](crate::server::AuthLayer), applied by
    /// [`Server::serve_http`](crate::server::Server::serve_http) and
    /// [`Server::http_service`](crate::server::Server::http_service).
    ///
    /// ```
    /// use mcp_toolbelt::{PermissionSet, server::HttpOptions};
    /// let options = HttpOptions::default()
    ///     .authenticator(|token: &str| (token == "s3cret").then(|| PermissionSet::new(["READ"])));
    /// # let _ = options;
    /// ```
    pub fn authenticator(mut self, authenticator: impl Authenticator) -> HttpOptions {
        self.authenticator = Some(Arc::new(authenticator));
        #[cfg(feature = "oauth")]
        {
            self.oauth = None;
        }
        self
    }

    /// Serve as an OAuth 2.1 resource server (feature `oauth`): `oauth` authenticates every
    /// request (replacing any [`authenticator`](Self::authenticator) set before), and the
    /// endpoint also answers its RFC 9728 metadata at `/.well-known/oauth-protected-resource`
    /// (and that path followed by the endpoint's or the resource's path) and, when enabled,
    /// the step-up `403`. See [`ResourceServer`](crate::server::oauth::ResourceServer).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_toolbelt::server::HttpOptions;
    /// use mcp_toolbelt::server::oauth::{JwtVerifier, OAuthConfig, ResourceServer};
    /// let config = OAuthConfig::new("https://login.example.org", "https://mcp.example.org/mcp");
    /// let options = HttpOptions::default().oauth(ResourceServer::new(JwtVerifier::discover(config).await?));
    /// # let _ = options; Ok(()) }
    /// ```
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, oauth: crate::server::oauth::ResourceServer) -> HttpOptions {
        let oauth = Arc::new(oauth);
        self.authenticator = Some(oauth.clone());
        self.oauth = Some(oauth);
        self
    }

    /// How the endpoint checks its callers, for the exposure check and the startup line.
    pub(crate) fn authentication(&self) -> crate::server::exposure::Authentication {
        use crate::server::exposure::Authentication;
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return Authentication::OAuth {
                tokens: oauth.has_tokens(),
            };
        }
        Authentication::with_tokens(self.authenticator.is_some())
    }

    /// [`tokens`](Self::tokens) from a tokens file (format: [`TokenTable`]).
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("http-tokens-doc-{}", std::process::id()));
    /// std::fs::write(&path, "reader WIKI_VIEW\n").unwrap();
    /// # use std::os::unix::fs::PermissionsExt;
    /// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    /// let options = mcp_toolbelt::server::HttpOptions::default().tokens_file(&path).unwrap();
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn tokens_file(self, path: impl AsRef<Path>) -> Result<HttpOptions, TokensFileError> {
        Ok(self.tokens(TokenTable::from_file(path)?))
    }

    /// Serve HTTPS with `config`'s certificate and key (see [`TlsConfig`](crate::server::TlsConfig)):
    /// every connection starts with a TLS handshake, bounded by the
    /// [`header_timeout`](Self::header_timeout). Bearer tokens then never cross the
    /// network in clear text.
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: crate::server::TlsConfig) -> HttpOptions {
        self.tls = Some(config);
        self
    }

    /// The TLS configuration, if HTTPS.
    pub(crate) fn tls_config(&self) -> Option<Tls> {
        self.tls.clone()
    }

    /// The endpoint path (default `/mcp`); other paths get `404`.
    pub fn path(mut self, path: impl Into<String>) -> HttpOptions {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// Name this process in an `Mcp-Replica: <id>` header on every response, so a client,
    /// a load balancer's log or a test can tell which of several replicas behind one
    /// address answered (see `docs/deploy.md`). Characters outside visible ASCII become
    /// `_`, and the id is cut at 64 characters.
    ///
    /// ```
    /// let options = mcp_toolbelt::server::HttpOptions::default().replica_id("mcp-7c9f");
    /// # let _ = options;
    /// ```
    pub fn replica_id(mut self, id: impl Into<String>) -> HttpOptions {
        let id: String = id
            .into()
            .chars()
            .take(64)
            .map(|c| if c.is_ascii_graphic() { c } else { '_' })
            .collect();
        self.replica_id = (!id.is_empty()).then_some(id);
        self
    }

    /// Serve the server's metrics ([`Server::metrics`](crate::server::Server::metrics), as
    /// Prometheus text) at [`METRICS_PATH`](crate::server::METRICS_PATH) on this listener,
    /// to `GET` requests bearing `Authorization: Bearer <token>` only. This token is
    /// separate from every MCP credential: the MCP authenticator never sees these
    /// requests, and no MCP token or OAuth token opens the route. Without it (the default)
    /// the listener has no `/metrics` route at all; for stdio servers, or to keep metrics
    /// off the MCP listener, use `serve --metrics-addr`
    /// ([`telemetry::serve_metrics`](crate::server::telemetry::serve_metrics)).
    /// An empty token is ignored.
    ///
    /// ```
    /// let options = mcp_toolbelt::server::HttpOptions::default().metrics_token("m3tr1cs");
    /// # let _ = options;
    /// ```
    pub fn metrics_token(mut self, token: impl Into<String>) -> HttpOptions {
        let token = token.into();
        self.metrics_token = (!token.is_empty()).then(|| Arc::from(token));
        self
    }

    /// At most `limit` open connections (default 1024; at least 1). A new connection
    /// past the limit closes the connection that has been idle (no request in progress)
    /// longest; when every connection is busy it is answered `503` and closed.
    pub fn max_connections(mut self, limit: usize) -> HttpOptions {
        self.limits.max_connections = limit.max(1);
        self
    }

    /// How long a client may take to send a request's headers (default 10 s).
    pub fn header_timeout(mut self, timeout: Duration) -> HttpOptions {
        self.limits.header_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a connection may stay open with no request in progress (default 60 s),
    /// from its opening or from the end of its last response.
    pub fn idle_timeout(mut self, timeout: Duration) -> HttpOptions {
        self.limits.idle_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The largest request body accepted, in bytes (default 4 MiB; at least 1); a longer
    /// one gets `413` with a JSON-RPC error.
    pub fn max_body_bytes(mut self, bytes: usize) -> HttpOptions {
        self.limits.max_body_bytes = bytes.max(1);
        self
    }

    /// At most `limit` stateful sessions, live or parked (default 1024; at least 1). At
    /// the cap, a new session takes the place of the parked session idle longest (see
    /// [`session_park_after`](Self::session_park_after)); when none is parked, an
    /// `initialize` that would open a new session gets `503` with a JSON-RPC error until
    /// a session ends (`DELETE`, or [`session_idle_timeout`](Self::session_idle_timeout)).
    pub fn max_sessions(mut self, limit: usize) -> HttpOptions {
        self.limits.max_sessions = limit.max(1);
        self
    }

    /// How long a stateful session lives with no request in progress and no stream open
    /// (default 5 minutes).
    pub fn session_idle_timeout(mut self, timeout: Duration) -> HttpOptions {
        self.limits.session_idle_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a stateful session stays live with no request in progress and no stream
    /// open before it is parked (default 60 s, rmcp's retention of finished streams for
    /// resumption). A parked session keeps its id, owner, `initialize` parameters, log
    /// level and resource subscriptions (under 1 KB instead of about 50 KB); its next
    /// request rebuilds it by replaying the handshake, unseen by the client. Streams that
    /// finished before parking can no longer be resumed with `Last-Event-ID`, and
    /// notifications sent while no stream was open are not replayed to the next `GET`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = mcp_toolbelt::server::HttpOptions::default()
    ///     .session_park_after(Duration::from_secs(10))
    ///     .session_idle_timeout(Duration::from_secs(3600));
    /// assert!(options.is_stateful());
    /// ```
    pub fn session_park_after(mut self, idle: Duration) -> HttpOptions {
        self.limits.session_park_after = idle.max(Duration::from_millis(1));
        self
    }

    /// How long a call goes on after its client closed its side of the connection
    /// before it is cancelled (default 10 s). A client that half-closes after sending
    /// its request still gets the reply if it is ready within this time; work nobody can
    /// receive is bounded by it.
    pub fn disconnect_grace(mut self, grace: Duration) -> HttpOptions {
        self.limits.disconnect_grace = grace;
        self
    }
}
