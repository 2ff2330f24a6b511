//! Streamable HTTP on [`Server`] (feature `http`): the endpoint as a tower service
//! ([`Server::http_service`], [`Server::router`]), [`Server::bind_http`] /
//! [`Server::serve_http`], and the bound listener [`HttpServer`]. A `server`-only build
//! (stdio, TCP, Unix sockets) links none of the HTTP stack.

use std::net::SocketAddr;

use tokio::net::TcpListener;

use super::ServeError;
use super::builder::Server;
use super::exposure::{self, Authentication};
use super::http::{self, HttpOptions, McpService};

impl Server {
    /// The audit log names `options`' replica (unless it names one already).
    fn audit_replica(&self, options: &HttpOptions) {
        #[cfg(feature = "audit")]
        if let (Some(audit), Some(id)) = (&self.audit, &options.replica_id) {
            audit.set_replica(id.clone());
        }
        #[cfg(not(feature = "audit"))]
        let _ = options;
    }

    /// The MCP endpoint (streamable HTTP) as a tower service, to mount in an application
    /// of your own; see [`McpService`] for what it does and what stays with your server.
    /// `options`' path, TLS and connection limits are for
    /// [`serve_http`](Self::serve_http) and are not used here; add the `Host` names your
    /// application is reached by with [`HttpOptions::allow_host`]. Its sessions end when
    /// the [`shutdown_on`](Self::shutdown_on) token fires.
    ///
    /// ```
    /// use mcp_toolbelt::server::{HttpOptions, Server};
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let service = Server::new(registry)
    ///     .http_service(HttpOptions::default().allow_host("app.example.com").stateless());
    /// # let _ = service;
    /// ```
    pub fn http_service(&self, options: HttpOptions) -> McpService {
        self.audit_replica(&options);
        McpService::new(
            self.shared(),
            &options,
            self.max_in_flight,
            self.shutdown.child_token(),
        )
    }

    /// The MCP endpoint as an axum [`Router`](axum::Router) answering at its root, to
    /// [`nest`](axum::Router::nest) under a path of your application (feature `axum`; axum 0.8):
    /// [`http_service`](Self::http_service) as a route. Your other routes, and layers
    /// of your own, stay yours; the endpoint reads the [`Caller`](crate::Caller) your
    /// authentication put in the extensions, or authenticates itself with
    /// [`HttpOptions::authenticator`].
    ///
    /// ```
    /// use mcp_toolbelt::{PermissionSet, server::{HttpOptions, Server, TokenTable}};
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let tokens = TokenTable::new([("s3cret", PermissionSet::new(["NOTE_VIEW"]))]);
    /// let app: axum::Router = axum::Router::new()
    ///     .route("/healthz", axum::routing::get(|| async { "ok" }))
    ///     .nest("/mcp", Server::new(registry).router(HttpOptions::default().tokens(tokens)));
    /// # let _ = app;
    /// ```
    #[cfg(feature = "axum")]
    pub fn router(&self, options: HttpOptions) -> axum::Router {
        axum::Router::new().route_service("/", self.http_service(options))
    }

    /// Listen on `addr` for streamable HTTP at `options`' path, without serving yet.
    ///
    /// Fails with [`ServeError::Unauthenticated`], binding nothing, when `addr` is not a
    /// loopback address, `options` has no tokens and
    /// [`unauthenticated_network_access`](Self::unauthenticated_network_access) was not
    /// called.
    pub async fn bind_http(
        self,
        addr: SocketAddr,
        options: HttpOptions,
    ) -> Result<HttpServer, ServeError> {
        self.audit_replica(&options);
        let authentication = options.authentication();
        self.check_exposure("HTTP", addr, authentication)?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        Ok(HttpServer {
            server: self,
            listener,
            options,
        })
    }

    /// [`bind_http`](Self::bind_http) then [`HttpServer::serve`].
    pub async fn serve_http(
        self,
        addr: SocketAddr,
        options: HttpOptions,
    ) -> Result<(), ServeError> {
        self.bind_http(addr, options).await?.serve().await
    }
}

/// A [`Server`] listening for streamable HTTP (from [`Server::bind_http`]).
pub struct HttpServer {
    server: Server,
    listener: TcpListener,
    options: HttpOptions,
}

impl HttpServer {
    /// The address actually bound.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The endpoint's URL, e.g. `http://127.0.0.1:8080/mcp` (`https://` with TLS).
    pub fn url(&self) -> std::io::Result<String> {
        let scheme = if self.is_tls() { "https" } else { "http" };
        Ok(format!(
            "{scheme}://{}{}",
            self.local_addr()?,
            self.options.path
        ))
    }

    fn is_tls(&self) -> bool {
        self.options.tls_config().is_some()
    }

    /// `HTTPS` or `HTTP`.
    fn transport(&self) -> &'static str {
        if self.is_tls() { "HTTPS" } else { "HTTP" }
    }

    /// What this listener exposes, in one line: address and reach, authentication, tools
    /// (logged when serving starts; the command line prints it).
    pub fn exposure(&self) -> std::io::Result<String> {
        Ok(exposure::summary(
            self.transport(),
            self.local_addr()?,
            self.authentication(),
            &self.server.registry,
        ))
    }

    fn authentication(&self) -> Authentication {
        self.options.authentication()
    }

    /// Serve requests until the shutdown token fires (then shut down gracefully: see
    /// [`Server::shutdown_on`]). Besides the MCP endpoint it answers the health
    /// endpoints, without authentication (they reveal nothing): `GET`
    /// [`/healthz`](crate::server::HEALTH_PATH) `200` while the process serves, and `GET`
    /// [`/readyz`](crate::server::READY_PATH) `200` while accepting, `503` once draining.
    pub async fn serve(self) -> Result<(), ServeError> {
        let addr = self.local_addr()?;
        let (transport, encrypted) = (self.transport(), self.is_tls());
        exposure::log(
            transport,
            addr,
            self.authentication(),
            encrypted,
            &self.server.registry,
        );
        let shared = self.server.shared();
        shared.list_changed.start_pump();
        http::serve(
            shared,
            self.listener,
            self.options,
            self.server.max_in_flight,
            self.server.drain(),
        )
        .await
    }
}
