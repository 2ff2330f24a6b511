//! The public face of the server: [`Server`] (builder and `serve_*`), [`ServerInfo`],
//! the bound listeners [`TcpServer`] / `UnixServer`, and [`ServeError`]. Streamable HTTP
//! (feature `http`) adds its methods and `HttpServer` in `http_server.rs`.
//! Binding checks the address first: beyond loopback, authentication or an explicit opt-in
//! is required (see `exposure.rs`).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{
    Implementation, PromptsCapability, ResourcesCapability, ServerCapabilities, ServerConfig,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::codec::DEFAULT_MAX_LINE_LENGTH;
use super::drain::Drain;
use super::exposure::{self, Authentication};
use super::handler::McpHandler;
use super::notify::ListChanged;
use super::request_state::{DEFAULT_REQUEST_STATE_TTL, Sealing, StateKey};
use super::state::{Shared, Tasks};
use super::stream;
use super::stream::StreamLimits;
use super::subscriptions::Subscriptions;
use super::tasks::counts::TaskCounts;
use super::tasks::run::TaskRuntime;
use super::tasks::{MemoryTaskStore, TaskLimits, TaskStore};
use super::tcp::{self, TcpOptions};
use super::tool_pages::ToolPages;
#[cfg(unix)]
use super::unix;
use crate::Caller;
use crate::definition::TaskSupport;
use crate::registry::ToolRegistry;

/// The default bound on requests in flight per connection.
pub(crate) const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// How long calls in flight may go on after the shutdown token fires, by default.
pub(crate) const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How long a sampling or elicitation request waits for the client by default (a person
/// may be answering an elicitation).
pub(crate) const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_secs(300);

/// The name, version and optional title a server reports in `initialize` and
/// `server/discover` (`serverInfo`). [`server_info!`](crate::server_info) fills it from the
/// calling crate's `Cargo.toml`.
///
/// ```
/// let info = mcp_toolbelt::server::ServerInfo::new("trac-mcp", "1.2.0").title("Trac");
/// assert_eq!(info.name(), "trac-mcp");
/// assert_eq!(info.version(), "1.2.0");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    name: String,
    version: String,
    title: Option<String>,
}

impl ServerInfo {
    /// A server named `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> ServerInfo {
        ServerInfo {
            name: name.into(),
            version: version.into(),
            title: None,
        }
    }

    /// A human-readable display name.
    pub fn title(mut self, title: impl Into<String>) -> ServerInfo {
        self.title = Some(title.into());
        self
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's version.
    pub fn version(&self) -> &str {
        &self.version
    }
}

impl Default for ServerInfo {
    /// The executable's file name, version `0.0.0-unknown` (no crate version is known at
    /// run time; use [`server_info!`](crate::server_info) or [`Server::info`]).
    ///
    /// ```
    /// let info = mcp_toolbelt::server::ServerInfo::default();
    /// assert!(!info.name().is_empty());
    /// ```
    fn default() -> ServerInfo {
        let name = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "mcp-toolbelt-server".to_string());
        ServerInfo::new(name, "0.0.0-unknown")
    }
}

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The listening socket could not be opened.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The Unix domain socket could not be created at the path.
    #[error("cannot listen on Unix socket {}: {source}", path.display())]
    BindUnix {
        /// The socket's path.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The address is reachable from other machines and no authentication is configured;
    /// nothing was bound. Add tokens, listen on loopback, or opt in with
    /// [`Server::unauthenticated_network_access`].
    #[error(
        "refusing to serve MCP over {transport} at {addr} without authentication: that address \
         is reachable from other machines, and every tool would be open to anyone who connects. \
         Add bearer tokens (`--tokens-file FILE`; in code `HttpOptions::tokens` or \
         `TcpOptions::tokens`), listen on a loopback address (127.0.0.1 or [::1]), or, on a \
         network you trust, opt in with `--unauthenticated-network-access` \
         (`Server::unauthenticated_network_access`)"
    )]
    Unauthenticated {
        /// `HTTP` or `TCP`.
        transport: &'static str,
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The MCP session (stdio or another single stream) could not start or failed.
    #[error("MCP session failed: {0}")]
    Session(String),
    /// Another I/O failure of the listener.
    #[error("I/O error while serving: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves a [`ToolRegistry`] over MCP. Build it, then call one `serve_*` method.
///
/// ```no_run
/// use mcp_toolbelt::server::{Server, TcpOptions};
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = mcp_toolbelt::ToolRegistry::builder().build()?;
/// Server::new(registry)
///     .info(mcp_toolbelt::server_info!())
///     .page_size(50)
///     .max_in_flight(128)
///     .serve_tcp("127.0.0.1:9000".parse()?, TcpOptions::default().tokens_file("tokens")?)
///     .await?;
/// # Ok(())
/// # }
/// ```
#[must_use]
pub struct Server {
    pub(super) registry: ToolRegistry,
    info: ServerInfo,
    instructions: Option<String>,
    page_size: Option<usize>,
    list_ttl: Option<Duration>,
    pub(super) max_in_flight: usize,
    max_line_length: usize,
    client_timeout: Duration,
    /// The `requestState` key; `None`: a random one made when the server is built.
    state_key: Option<StateKey>,
    state_ttl: Duration,
    pub(super) shutdown: CancellationToken,
    shutdown_grace: Duration,
    /// The operator's opt-in to listen beyond loopback with no authentication.
    unauthenticated_network_access: bool,
    /// Whether everyday requests take the fast paths ([`Server::fast_paths`]).
    fast_paths: bool,
    /// The rate limits of `tools/call`.
    rate: super::rate_limit::RateLimiter,
    /// The metrics ([`Server::metrics`]) and the replica id ([`Server::replica_id`]).
    telemetry: super::telemetry::Telemetry,
    /// Where tasks live and how long; `None` store: one in this process.
    tasks: TaskOptions,
    /// Where runtime changes are shared with the other replicas.
    #[cfg(feature = "redis")]
    shared_notifications: Option<super::fanout::SharedNotifications>,
    /// The audit log ([`Server::audit_log`]).
    #[cfg(feature = "audit")]
    pub(super) audit: Option<super::AuditLog>,
    /// Built on first use; every setter resets it.
    built: OnceLock<Arc<Shared>>,
}

impl Server {
    /// A server for `registry` with the defaults: [`ServerInfo::default`], one
    /// `tools/list` page, no list TTL, 256 requests in flight per connection.
    pub fn new(registry: ToolRegistry) -> Server {
        Server {
            registry,
            info: ServerInfo::default(),
            instructions: None,
            page_size: None,
            list_ttl: None,
            client_timeout: DEFAULT_CLIENT_TIMEOUT,
            state_key: None,
            state_ttl: DEFAULT_REQUEST_STATE_TTL,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            shutdown: CancellationToken::new(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            unauthenticated_network_access: false,
            fast_paths: true,
            rate: super::rate_limit::RateLimiter::default(),
            telemetry: Default::default(),
            tasks: TaskOptions::default(),
            #[cfg(feature = "redis")]
            shared_notifications: None,
            #[cfg(feature = "audit")]
            audit: None,
            built: OnceLock::new(),
        }
    }

    /// Report `info` as `serverInfo`: [`server_info!`](crate::server_info) for the
    /// calling crate's name and version, or [`ServerInfo::new`].
    ///
    /// ```
    /// use mcp_toolbelt::server::{Server, ServerInfo};
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let server = Server::new(registry).info(ServerInfo::new("demo", "1.0.0").title("Demo"));
    /// # let _ = server;
    /// ```
    pub fn info(mut self, info: ServerInfo) -> Server {
        self.built = OnceLock::new();
        self.info = info;
        self
    }

    /// Usage instructions sent to the client in `initialize`.
    pub fn instructions(mut self, text: impl Into<String>) -> Server {
        self.built = OnceLock::new();
        self.instructions = Some(text.into());
        self
    }

    /// Split `tools/list` into pages of `size` tools (cursor pagination). Without it (or
    /// with 0) the whole list is one page, which every client understands.
    pub fn page_size(mut self, size: usize) -> Server {
        self.built = OnceLock::new();
        self.page_size = (size > 0).then_some(size);
        self
    }

    /// How long a tool's sampling (`ToolContext::create_message`) or elicitation
    /// (`ToolContext::elicit`) request waits for the client before it fails with a
    /// time-out error (default 5 minutes).
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let _server = mcp_toolbelt::server::Server::new(registry)
    ///     .client_request_timeout(std::time::Duration::from_secs(30));
    /// ```
    pub fn client_request_timeout(mut self, timeout: Duration) -> Server {
        self.built = OnceLock::new();
        self.client_timeout = timeout;
        self
    }

    /// Seal the `requestState` of resumable calls (protocol 2026-07-28: a tool that
    /// elicits or samples answers `input_required`, and the client retries) with `key`.
    /// Give every replica behind a load balancer the same key so that a retry may land on
    /// any of them. Without it the server makes a random key, which only this process can
    /// verify: one replica.
    ///
    /// ```
    /// use mcp_toolbelt::server::{Server, StateKey};
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let key = StateKey::from_bytes(*b"shared-by-every-replica-32-bytes").unwrap();
    /// let _server = Server::new(registry).state_key(key);
    /// ```
    pub fn state_key(mut self, key: StateKey) -> Server {
        self.built = OnceLock::new();
        self.state_key = Some(key);
        self
    }

    /// How long a `requestState` stays valid: the time a client has to answer one round
    /// and retry (default [`DEFAULT_REQUEST_STATE_TTL`], 10 minutes).
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let _server = mcp_toolbelt::server::Server::new(registry)
    ///     .request_state_ttl(std::time::Duration::from_secs(120));
    /// ```
    pub fn request_state_ttl(mut self, ttl: Duration) -> Server {
        self.built = OnceLock::new();
        self.state_ttl = ttl;
        self
    }

    /// How long a client may cache `tools/list` (`ttlMs`, protocol 2026-07-28 and later;
    /// default 0: revalidate every time).
    pub fn list_ttl(mut self, ttl: Duration) -> Server {
        self.built = OnceLock::new();
        self.list_ttl = Some(ttl);
        self
    }

    /// At most `limit` requests in flight per connection on stdio and TCP (default 256;
    /// at least 1). Over HTTP it bounds the requests (POSTs) handled at once over all
    /// connections; the open connections are bounded by `HttpOptions::max_connections`
    /// (feature `http`).
    pub fn max_in_flight(mut self, limit: usize) -> Server {
        self.built = OnceLock::new();
        self.max_in_flight = limit.max(1);
        self
    }

    /// This server's metrics (`docs/operations.md`): every request on every transport
    /// feeds them; read them with [`Metrics::prometheus_text`](super::telemetry::Metrics::prometheus_text),
    /// serve them with [`telemetry::serve_metrics`](super::telemetry::serve_metrics) (or
    /// [`HttpOptions::metrics_token`](super::HttpOptions::metrics_token) on the HTTP
    /// listener). They include the counters of the rate limiter and the audit log this
    /// server serves with. Clones share one set of metrics.
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let server = mcp_toolbelt::server::Server::new(registry);
    /// let text = server.metrics().prometheus_text();
    /// assert!(text.contains("mcp_toolbelt_sessions_open 0\n"));
    /// ```
    pub fn metrics(&self) -> super::telemetry::Metrics {
        self.telemetry.metrics.clone()
    }

    /// Which replica this server is, for every request's span
    /// (`mcp_toolbelt.replica.id`) on every transport; empty: none (the default).
    /// [`HttpOptions::replica_id`](super::HttpOptions::replica_id) also sets it for the
    /// HTTP listener's requests.
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let server = mcp_toolbelt::server::Server::new(registry).replica_id("mcp-7c9f");
    /// # let _ = server;
    /// ```
    pub fn replica_id(mut self, id: impl Into<String>) -> Server {
        self.built = OnceLock::new();
        let id = id.into();
        self.telemetry.replica = (!id.is_empty()).then(|| Arc::from(id));
        self
    }

    /// Whether the everyday requests (`tools/call`, the lists, `resources/read`,
    /// `prompts/get`, `completion/complete`, `ping`) take the fast paths that answer them
    /// in the request's own task (default `true`). With `false` every request goes
    /// through rmcp's service loop (stdio, TCP, Unix sockets) or its streamable HTTP
    /// session layer, which answer the same (the differential test checks it) at several
    /// times the cost: for comparing the two and for telling whether a problem is in a
    /// fast path, not for production.
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let server = mcp_toolbelt::server::Server::new(registry).fast_paths(false);
    /// # let _ = server;
    /// ```
    pub fn fast_paths(mut self, on: bool) -> Server {
        self.built = OnceLock::new();
        self.fast_paths = on;
        self
    }

    /// Keep tasks (the MCP tasks extension: calls of tools declared with
    /// [`TaskSupport`](crate::definition::TaskSupport) that outlive their first wait) in
    /// `store` instead of this process's [`MemoryTaskStore`]: replicas behind one load
    /// balancer must share one, so that any of them answers `tasks/get` for any task.
    ///
    /// ```
    /// use mcp_toolbelt::server::tasks::MemoryTaskStore;
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let server = mcp_toolbelt::server::Server::new(registry).task_store(MemoryTaskStore::new());
    /// # let _ = server;
    /// ```
    pub fn task_store(mut self, store: impl TaskStore) -> Server {
        self.built = OnceLock::new();
        self.tasks.store = Some(Arc::new(store));
        self
    }

    /// Share runtime changes with the other replicas through Redis (feature `redis`): a
    /// change of the tool list or a resource update made on any replica that shares the
    /// channel reaches the legacy sessions and `subscriptions/listen` streams open on this
    /// one, and this one's reach them. The link starts when the server is first built
    /// inside a tokio runtime (when it serves).
    ///
    /// ```
    /// use mcp_toolbelt::server::SharedNotifications;
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let shared = SharedNotifications::open("redis://127.0.0.1:6379/").unwrap();
    /// let server = mcp_toolbelt::server::Server::new(registry).share_notifications(shared);
    /// # let _ = server;
    /// ```
    #[cfg(feature = "redis")]
    pub fn share_notifications(mut self, shared: super::fanout::SharedNotifications) -> Server {
        self.built = OnceLock::new();
        self.shared_notifications = Some(shared);
        self
    }

    /// Enforce `limiter`'s rate limits on `tools/call` instead of the default one (each
    /// tool's own `rate`, buckets in this process). A call past a limit is refused with
    /// JSON-RPC `-32029` and `data: {"retryAfterMs": N, "limit": "…"}`, before its tool
    /// runs; a tool the caller cannot see still answers as unknown. Over HTTP a caller
    /// past its overall limit gets `429` with `Retry-After` before its body is read.
    /// Keep a clone of `limiter` to read its counters (`docs/rate-limits.md`).
    ///
    /// ```
    /// use mcp_toolbelt::rate::RateLimits;
    /// use mcp_toolbelt::server::RateLimiter;
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let limits = RateLimits::new().every_caller("100/min".parse().unwrap());
    /// let server = mcp_toolbelt::server::Server::new(registry).rate_limiter(RateLimiter::new(limits));
    /// # let _ = server;
    /// ```
    pub fn rate_limiter(mut self, limiter: super::rate_limit::RateLimiter) -> Server {
        self.built = OnceLock::new();
        self.rate = limiter;
        self
    }

    /// Bounds on tasks: unfinished ones per caller, and all the store holds (default 32
    /// and 10,000). A call past a bound is refused with a retryable error (-32004).
    pub fn task_limits(mut self, limits: TaskLimits) -> Server {
        self.built = OnceLock::new();
        self.tasks.limits = limits;
        self
    }

    /// How long a finished task stays readable (`ttlMs`; default
    /// [`DEFAULT_TASK_TTL`](super::tasks::DEFAULT_TASK_TTL), 1 hour).
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let _server = mcp_toolbelt::server::Server::new(registry)
    ///     .task_ttl(std::time::Duration::from_secs(600));
    /// ```
    pub fn task_ttl(mut self, ttl: Duration) -> Server {
        self.built = OnceLock::new();
        self.tasks.ttl = ttl;
        self
    }

    /// How long a replica's lease on a task it runs holds without refresh (default
    /// [`DEFAULT_TASK_LEASE`](super::tasks::DEFAULT_TASK_LEASE), 30 s; at least 30 ms;
    /// refreshed every third of it): a task whose replica died is failed by the next
    /// `tasks/get` once its lease has run out.
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let _server = mcp_toolbelt::server::Server::new(registry)
    ///     .task_lease(std::time::Duration::from_secs(10));
    /// ```
    pub fn task_lease(mut self, lease: Duration) -> Server {
        self.built = OnceLock::new();
        self.tasks.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// The longest line (one JSON-RPC message) accepted on stdio and TCP, in bytes
    /// (default 4 MiB; at least 1). A longer line is skipped as it streams in, without
    /// being held in memory, and answered with a `-32600` error (`"id": null`).
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let _server = mcp_toolbelt::server::Server::new(registry).max_line_length(64 * 1024);
    /// ```
    pub fn max_line_length(mut self, bytes: usize) -> Server {
        self.max_line_length = bytes.max(1);
        self
    }

    fn stream_limits(&self) -> StreamLimits {
        StreamLimits {
            max_in_flight: self.max_in_flight,
            max_line_length: self.max_line_length,
        }
    }

    /// Allow `bind_http` (feature `http`) and [`bind_tcp`](Self::bind_tcp) to listen on
    /// an address other machines can reach (`0.0.0.0`, `::`, a LAN address) with no
    /// authentication. Without this such a bind fails with [`ServeError::Unauthenticated`]
    /// before any socket is opened; with it the server logs a warning naming the address
    /// and the tools anyone who can reach it may call. The command line's
    /// `--unauthenticated-network-access`. Loopback addresses never need it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use mcp_toolbelt::server::{Server, ServeError, TcpOptions};
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let refused = Server::new(registry.clone())
    ///     .bind_tcp("0.0.0.0:0".parse().unwrap(), TcpOptions::default())
    ///     .await;
    /// assert!(matches!(refused, Err(ServeError::Unauthenticated { .. })));
    /// let opted_in = Server::new(registry)
    ///     .unauthenticated_network_access()
    ///     .bind_tcp("0.0.0.0:0".parse().unwrap(), TcpOptions::default())
    ///     .await;
    /// assert!(opted_in.is_ok());
    /// # });
    /// ```
    pub fn unauthenticated_network_access(mut self) -> Server {
        self.unauthenticated_network_access = true;
        self
    }

    /// Shut down gracefully when `token` is cancelled, on every transport: accept no new
    /// connection (HTTP's readiness endpoint answers `503`), read no new request, let the
    /// calls in flight finish for the [`shutdown_grace`](Self::shutdown_grace), then
    /// cancel those still running (their tools see the cancellation, as with a client's
    /// `notifications/cancelled`) and return `Ok`.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let stop = tokio_util::sync::CancellationToken::new();
    /// let server = mcp_toolbelt::server::Server::new(registry)
    ///     .shutdown_on(stop.clone())
    ///     .bind_tcp("127.0.0.1:0".parse().unwrap(), Default::default())
    ///     .await
    ///     .unwrap();
    /// stop.cancel();
    /// server.serve().await.unwrap();
    /// # });
    /// ```
    pub fn shutdown_on(mut self, token: CancellationToken) -> Server {
        self.built = OnceLock::new();
        self.shutdown = token;
        self
    }

    /// How long calls in flight may go on once the [`shutdown_on`](Self::shutdown_on)
    /// token fires before they are cancelled (default 10 s). Serving returns as soon as
    /// none is left, or shortly after the grace.
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let _server = mcp_toolbelt::server::Server::new(registry)
    ///     .shutdown_grace(std::time::Duration::from_secs(25));
    /// ```
    pub fn shutdown_grace(mut self, grace: Duration) -> Server {
        self.shutdown_grace = grace;
        self
    }

    /// Write one JSON line to `log` per call that reached a tool, a resource or a prompt
    /// (feature `audit`; `serve --audit-log PATH|-`). A call of a tool, resource or prompt
    /// the caller cannot see writes no line. The queue is flushed when a graceful shutdown
    /// ends; served over HTTP with [`HttpOptions::replica_id`](super::HttpOptions::replica_id),
    /// the lines name that replica unless [`AuditLog::replica`](super::AuditLog::replica)
    /// named one.
    ///
    /// ```
    /// use mcp_toolbelt::server::{AuditLog, Server};
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let server = Server::new(registry).audit_log(AuditLog::to_stderr().unwrap());
    /// ```
    #[cfg(feature = "audit")]
    #[cfg_attr(docsrs, doc(cfg(feature = "audit")))]
    pub fn audit_log(mut self, log: super::AuditLog) -> Server {
        self.built = OnceLock::new();
        self.audit = Some(log);
        self
    }

    pub(super) fn drain(&self) -> Drain {
        let drain = Drain::start(self.shutdown.clone(), self.shutdown_grace);
        #[cfg(feature = "audit")]
        let drain = drain.flushing(self.audit.clone());
        drain
    }

    /// The rmcp handler for one new session, to serve over a transport of your own
    /// (call it once per session; all of them share the registry and settings).
    pub fn handler(&self) -> McpHandler {
        McpHandler::new_session(self.shared())
    }

    pub(super) fn shared(&self) -> Arc<Shared> {
        self.built.get_or_init(|| self.build_shared()).clone()
    }

    fn build_shared(&self) -> Arc<Shared> {
        if self.registry.is_empty() {
            tracing::warn!("{}", crate::registry::library::EMPTY);
        }
        let mut implementation = Implementation::new(&self.info.name, &self.info.version);
        implementation.title = self.info.title.clone();
        #[expect(deprecated)] // logging: deprecated by SEP-2577, still in the protocol
        let mut capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        add_offering_capabilities(&mut capabilities, &self.registry);
        let task_tools = self
            .registry
            .list_tools()
            .iter()
            .any(|def| def.task_support() != TaskSupport::Forbidden);
        if task_tools || self.tasks.store.is_some() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(
                    rmcp::model::TASKS_EXTENSION_ID.to_string(),
                    Default::default(),
                );
        }
        let mut config = ServerConfig::new(capabilities).with_server_info(implementation);
        config.instructions = self.instructions.clone();
        let list_changed = ListChanged::attach(&self.registry);
        let subscriptions = Subscriptions::attach(&self.registry);
        #[cfg(feature = "redis")]
        let fanout = self.shared_notifications.as_ref().and_then(|shared| {
            if tokio::runtime::Handle::try_current().is_err() {
                tracing::warn!(
                    "notifications are shared through Redis only by a server built inside a \
                     tokio runtime; this one was built outside one"
                );
                return None;
            }
            Some(super::fanout::Fanout::start(
                shared,
                &self.registry,
                &list_changed,
                &subscriptions,
            ))
        });
        let task_counts = TaskCounts::new(self.tasks.ttl, self.tasks.limits.total);
        self.telemetry
            .metrics
            .count_from(super::telemetry::Counted {
                rate: Some(self.rate.clone()),
                tasks: Some(task_counts.clone()),
                #[cfg(feature = "audit")]
                audit: self.audit.clone(),
            });
        Arc::new(Shared {
            registry: self.registry.clone(),
            config,
            page_size: self.page_size,
            list_ttl: self.list_ttl,
            list_changed,
            subscriptions,
            client_timeout: self.client_timeout,
            sealing: Sealing {
                key: self.state_key.clone().unwrap_or_else(StateKey::random),
                ttl: self.state_ttl,
            },
            tool_pages: ToolPages::default(),
            fast_paths: self.fast_paths,
            rate: self.rate.clone(),
            telemetry: self.telemetry.clone(),
            tasks: Tasks {
                runtime: TaskRuntime {
                    store: self
                        .tasks
                        .store
                        .clone()
                        .unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
                    lease: self.tasks.lease,
                    counts: task_counts,
                },
                limits: self.tasks.limits,
                ttl: self.tasks.ttl,
                poll_interval: DEFAULT_TASK_POLL_INTERVAL,
            },
            #[cfg(feature = "audit")]
            audit: self.audit.clone(),
            #[cfg(feature = "redis")]
            _fanout: fanout,
        })
    }

    /// Serve over this process's stdin/stdout until the client closes stdin (or the
    /// shutdown token fires). Uses rmcp's non-blocking pipe transport when both are
    /// pipes (the way MCP clients start servers), blocking stdio otherwise.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let (read, write) = rmcp::transport::stdio_pipes();
        self.serve_io(read, write).await
    }

    /// Serve one MCP session over a byte stream pair (newline-delimited JSON-RPC), e.g.
    /// a socket or an in-memory `tokio::io::duplex`, until it closes.
    pub async fn serve_io<R, W>(self, read: R, write: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.serve_io_as(None, read, write).await
    }

    /// [`serve_io`](Self::serve_io) for a caller the transport established (`None`: the
    /// local caller): the in-process test client's identity.
    pub(crate) async fn serve_io_as<R, W>(
        self,
        caller: Option<Caller>,
        read: R,
        write: W,
    ) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let shared = self.shared();
        shared.list_changed.start_pump();
        let limits = self.stream_limits();
        let drain = self.drain();
        stream::serve_stream(shared, read, write, caller, limits, &drain).await
    }

    /// Listen on `addr` for TCP connections, each one MCP session of newline-delimited
    /// JSON-RPC (behind an authentication line when `options` has tokens), without serving
    /// yet (learn the port first, e.g. for port 0).
    ///
    /// Fails with [`ServeError::Unauthenticated`], binding nothing, when `addr` is not a
    /// loopback address, `options` has no tokens and
    /// [`unauthenticated_network_access`](Self::unauthenticated_network_access) was not
    /// called.
    pub async fn bind_tcp(
        self,
        addr: SocketAddr,
        options: TcpOptions,
    ) -> Result<TcpServer, ServeError> {
        self.check_exposure("TCP", addr, options.authentication())?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        Ok(TcpServer {
            server: self,
            listener,
            options,
        })
    }

    /// [`bind_tcp`](Self::bind_tcp) then [`TcpServer::serve`].
    pub async fn serve_tcp(self, addr: SocketAddr, options: TcpOptions) -> Result<(), ServeError> {
        self.bind_tcp(addr, options).await?.serve().await
    }

    pub(super) fn check_exposure(
        &self,
        transport: &'static str,
        addr: SocketAddr,
        authentication: Authentication,
    ) -> Result<(), ServeError> {
        exposure::check(
            transport,
            addr,
            authentication,
            self.unauthenticated_network_access,
        )
    }

    /// Listen on a Unix domain socket at `path`, each connection one MCP session of
    /// newline-delimited JSON-RPC, without serving yet. The socket file gets mode `0600`:
    /// the kernel lets only this process's user (and root) connect; each peer's user id is
    /// logged. A stale socket at `path` (nobody accepting) is replaced; any other file
    /// there is an error. The file is removed when serving ends.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::os::unix::fs::PermissionsExt;
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let path = std::env::temp_dir().join(format!("mcp-doc-{}.sock", std::process::id()));
    /// let server = mcp_toolbelt::server::Server::new(registry).bind_unix(&path).await.unwrap();
    /// let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    /// assert_eq!(mode & 0o777, 0o600);
    /// drop(server);
    /// assert!(!path.exists());
    /// # });
    /// ```
    #[cfg(unix)]
    pub async fn bind_unix(self, path: impl AsRef<Path>) -> Result<UnixServer, ServeError> {
        let listener = unix::bind(path.as_ref())?;
        Ok(UnixServer {
            server: self,
            listener,
        })
    }

    /// [`bind_unix`](Self::bind_unix) then [`UnixServer::serve`].
    #[cfg(unix)]
    pub async fn serve_unix(self, path: impl AsRef<Path>) -> Result<(), ServeError> {
        self.bind_unix(path).await?.serve().await
    }
}

/// Advertise `resources` (with `subscribe`), `prompts` and `completions` when the registry
/// serves resources or prompts.
fn add_offering_capabilities(capabilities: &mut ServerCapabilities, registry: &ToolRegistry) {
    if super::protocol::declares_subscriptions(registry) {
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        capabilities.resources = Some(resources);
    }
    if registry.has_prompts() {
        capabilities.prompts = Some(PromptsCapability::default());
    }
    if registry.has_resources() || registry.has_prompts() {
        capabilities.completions = Some(Default::default());
    }
}

/// How often clients are told to poll a task (`pollIntervalMs`).
const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// The task settings of a [`Server`] before it is built.
#[derive(Clone)]
struct TaskOptions {
    store: Option<Arc<dyn TaskStore>>,
    limits: TaskLimits,
    ttl: Duration,
    lease: Duration,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            store: None,
            limits: TaskLimits::default(),
            ttl: super::tasks::DEFAULT_TASK_TTL,
            lease: super::tasks::DEFAULT_TASK_LEASE,
        }
    }
}

/// A [`Server`] listening for TCP connections (from [`Server::bind_tcp`]).
pub struct TcpServer {
    server: Server,
    listener: TcpListener,
    options: TcpOptions,
}

impl TcpServer {
    /// The address actually bound.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// What this listener exposes, in one line: address and reach, authentication, tools
    /// (logged when serving starts; the command line prints it).
    pub fn exposure(&self) -> std::io::Result<String> {
        Ok(exposure::summary(
            "TCP",
            self.local_addr()?,
            self.options.authentication(),
            &self.server.registry,
        ))
    }

    /// Accept and serve connections until the shutdown token fires.
    pub async fn serve(self) -> Result<(), ServeError> {
        let addr = self.local_addr()?;
        let authentication = self.options.authentication();
        exposure::log("TCP", addr, authentication, false, &self.server.registry);
        let shared = self.server.shared();
        shared.list_changed.start_pump();
        tcp::serve(
            shared,
            self.listener,
            self.options,
            self.server.stream_limits(),
            self.server.drain(),
        )
        .await
    }
}

/// A [`Server`] listening on a Unix domain socket (from [`Server::bind_unix`]); the
/// socket file is removed when it is dropped.
#[cfg(unix)]
pub struct UnixServer {
    server: Server,
    listener: unix::Listener,
}

#[cfg(unix)]
impl UnixServer {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.listener.path
    }

    /// What this listener exposes, in one line: path and who may connect, tools (logged
    /// when serving starts; the command line prints it).
    pub fn exposure(&self) -> String {
        exposure::summary_at(
            "Unix socket",
            &self.listener.path.display().to_string(),
            "this machine only",
            Authentication::PeerCredentials,
            &self.server.registry,
        )
    }

    /// Accept and serve connections until the shutdown token fires.
    pub async fn serve(self) -> Result<(), ServeError> {
        tracing::info!("{}", self.exposure());
        let shared = self.server.shared();
        shared.list_changed.start_pump();
        let limits = self.server.stream_limits();
        unix::serve(shared, self.listener, limits, self.server.drain()).await
    }
}
