//! Streamable HTTP: rmcp's `StreamableHttpService` (sessions, SSE, Host/Origin checks)
//! behind our own edge, served with hyper (HTTP/1.1).
//!
//! The edge owns what rmcp leaves open, as the line codec does for stdio and TCP:
//! - sockets get `TCP_NODELAY`, and a reply that is just the result is sent as one JSON
//!   body with a length (headers and body in one write) instead of an event stream when
//!   the client's `Accept` prefers `application/json` (the SDK clients list it first);
//! - [`connections`]: a cap on open connections, separate from the bound on requests in
//!   flight; at the cap the connection idle longest is closed, or the new one gets `503`;
//!   a header-read time-out and an idle time-out;
//! - [`front`]: the body cap (`413`), every body checked by the codec before rmcp sees
//!   it (`400` with a JSON-RPC error), sessions capped and bound to the caller that
//!   opened them, a second `initialize` refused;
//! - [`direct`]: stateless everyday requests (`tools/call`, the lists, …) served through
//!   rmcp's dispatch without its per-request service loop, every check kept;
//! - the disconnect policy: a client that closed its side keeps its call for
//!   [`HttpOptions::disconnect_grace`]; then the call is cancelled (as if the client had
//!   sent `notifications/cancelled`) and the connection closed;
//! - [`service`]: the endpoint itself as a public tower `Service` ([`McpService`]) that an
//!   application can mount, and authentication as a tower `Layer` ([`AuthLayer`]);
//!   `serve_http` serves that same service;
//! - the health endpoints `/healthz` (liveness) and `/readyz` (readiness: `503` once
//!   draining), outside the endpoint and its authentication (they reveal nothing);
//! - graceful shutdown (`drain.rs`): `/readyz` answers `503` and the endpoint refuses new
//!   requests with `503` while the listener stays open, every connection closes once its
//!   request is answered, calls in flight get the shutdown grace; the listener closes
//!   once nothing is in flight (or the grace is over).

mod authenticate;
mod body;
mod connections;
mod direct;
mod front;
mod media;
mod options;
mod reply;
mod service;
mod sessions;
mod site;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::StreamableHttpServerConfig;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::ServeError;
use super::drain::Drain;
use super::linger;
use super::protocol::code;
use super::state::Shared;
use super::stream::accept_next;
pub use authenticate::{AuthLayer, Authenticated, Authenticator, Rejection};
use connections::{Connections, Socket};
use front::ClientGone;
pub use options::HttpOptions;
use options::Tls;
pub use reply::{Abandoned, Reply};
use reply::{json_error, plain, respond};
pub use service::McpService;

/// The liveness endpoint of `serve_http`: `GET` answers `200` while the process serves
/// (no token needed).
///
/// ```
/// assert_eq!(mcp_toolbelt::server::HEALTH_PATH, "/healthz");
/// ```
pub const HEALTH_PATH: &str = "/healthz";
/// The readiness endpoint of `serve_http`: `GET` answers `200` while accepting, `503` once
/// a graceful shutdown started (no token needed).
///
/// ```
/// assert_eq!(mcp_toolbelt::server::READY_PATH, "/readyz");
/// ```
pub const READY_PATH: &str = "/readyz";
/// The metrics endpoint of `serve_http`, present only with
/// [`HttpOptions::metrics_token`]: `GET` with that bearer token answers the Prometheus
/// text exposition.
///
/// ```
/// assert_eq!(mcp_toolbelt::server::METRICS_PATH, "/metrics");
/// ```
pub const METRICS_PATH: &str = "/metrics";

/// At most this many `/metrics` requests are answered at once on the MCP listener; more
/// get `503`.
const MAX_SCRAPES: usize = 4;

/// Serve streamable HTTP on `listener` until `drain` says stop; at most `max_in_flight`
/// requests are handled at once.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    listener: TcpListener,
    options: HttpOptions,
    max_in_flight: usize,
    drain: Drain,
) -> Result<(), ServeError> {
    let bound = listener.local_addr()?;
    tracing::info!(
        url = %format!("http://{bound}{}", options.path),
        stateful = options.stateful,
        replica = options.replica_id.as_deref().unwrap_or(""),
        authenticated = options.authenticator.is_some(),
        limits = ?options.limits,
        "serving MCP over streamable HTTP"
    );
    let shared_metrics = shared.telemetry.metrics.clone();
    let mut endpoint_options = options.clone();
    // The literal address bound is never a DNS-rebinding vector; accept it.
    if !bound.ip().is_unspecified() {
        endpoint_options = endpoint_options.allow_host(bound.ip().to_string());
    }
    let service = McpService::new(
        shared,
        &endpoint_options,
        max_in_flight,
        drain.hard.child_token(),
    );
    let tasks = TaskTracker::new();
    let metrics = options.metrics_token.clone().map(|token| MetricsRoute {
        token,
        metrics: shared_metrics,
        scrapes: Arc::new(tokio::sync::Semaphore::new(MAX_SCRAPES)),
    });
    let site = Arc::new(Site {
        metrics,
        service: service.clone(),
        path: options.path.clone(),
        #[cfg(feature = "oauth")]
        oauth: options.oauth.clone(),
        ready: AtomicBool::new(true),
        replica: options
            .replica_id
            .as_deref()
            .and_then(|id| http::HeaderValue::from_str(id).ok()),
    });
    // While draining the listener stays open, so probes and balancers hear `503` rather
    // than "connection refused"; it closes once nothing is in flight or the grace is over.
    let drained = async {
        drain.draining.cancelled().await;
        site.ready.store(false, Ordering::Release);
        drain.settle(service.idle()).await;
    };
    tokio::select! {
        () = accept_loop(listener, site.clone(), &options, &drain, &tasks) => {}
        () = drained => {}
    }
    drop(site);
    drain.end(&tasks).await;
    Ok(())
}

/// rmcp's configuration for `options`; its sessions end when `cancel` fires.
fn rmcp_config(options: &HttpOptions, cancel: CancellationToken) -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        // The front door checks `Host` and `Origin` itself (`site.rs`), for every path.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_legacy_session_mode(options.stateful)
        // A stateless result alone goes out as JSON (rmcp streams when there is more).
        .with_json_response(true)
        .with_max_request_body_bytes(options.limits.max_body_bytes)
        .with_cancellation_token(cancel)
}

/// An answer built as `Response<String>` (the OAuth metadata document) as a reply.
#[cfg(feature = "oauth")]
fn from_text(response: Response<String>) -> Response<Reply> {
    let (parts, body) = response.into_parts();
    let mut reply = respond(parts.status, "text/plain", Bytes::from(body));
    reply.headers_mut().extend(parts.headers);
    reply
}

/// What `serve_http` answers: the endpoint at its path, and the health endpoints.
struct Site {
    /// `/metrics`, when [`HttpOptions::metrics_token`] is set.
    metrics: Option<MetricsRoute>,
    service: McpService,
    path: String,
    /// The OAuth resource server, whose metadata document this site serves.
    #[cfg(feature = "oauth")]
    oauth: Option<Arc<crate::server::oauth::ResourceServer>>,
    /// False once draining.
    ready: AtomicBool,
    /// The `Mcp-Replica` header's value ([`HttpOptions::replica_id`]).
    replica: Option<http::HeaderValue>,
}

impl Site {
    async fn route(&self, request: Request<Incoming>) -> Response<Reply> {
        let path = request.uri().path();
        #[cfg(feature = "oauth")]
        if let Some(metadata) = self
            .oauth
            .as_ref()
            .and_then(|oauth| oauth.metadata_response(request.method(), path, &self.path))
        {
            return from_text(metadata);
        }
        if path == self.path {
            if !self.ready.load(Ordering::Acquire) {
                return shutting_down();
            }
            return self
                .service
                .handle(request.map(body::into_bytes_body))
                .await;
        }
        if path == METRICS_PATH
            && let Some(route) = &self.metrics
        {
            return route.answer(&request);
        }
        let probe = matches!(*request.method(), Method::GET | Method::HEAD);
        match path {
            HEALTH_PATH if probe => respond(StatusCode::OK, "text/plain", Bytes::from("ok\n")),
            READY_PATH if probe => readiness(self.ready.load(Ordering::Acquire)),
            _ => plain(
                StatusCode::NOT_FOUND,
                &format!("Not Found: the MCP endpoint is {}", self.path),
            ),
        }
    }
}

/// `/metrics` on the MCP listener: its own token, its own bound on scrapes at once.
struct MetricsRoute {
    token: Arc<str>,
    metrics: crate::server::telemetry::Metrics,
    scrapes: Arc<tokio::sync::Semaphore>,
}

impl MetricsRoute {
    fn answer<B>(&self, request: &Request<B>) -> Response<Reply> {
        if request.method() != Method::GET {
            let mut response = plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "Method Not Allowed: GET only",
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET"));
            return response;
        }
        let authorization = request.headers().get(header::AUTHORIZATION);
        if !crate::server::telemetry::bearer_matches(
            authorization.map(HeaderValue::as_bytes),
            &self.token,
        ) {
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: the metrics token is required",
            );
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"metrics\""),
            );
            return response;
        }
        let Ok(_permit) = self.scrapes.try_acquire() else {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: too many scrapes at once",
            );
        };
        respond(
            StatusCode::OK,
            crate::server::telemetry::CONTENT_TYPE,
            Bytes::from(self.metrics.prometheus_text()),
        )
    }
}

/// The readiness endpoint's answer.
fn readiness(ready: bool) -> Response<Reply> {
    let (status, body) = match ready {
        true => (StatusCode::OK, "ready\n"),
        false => (StatusCode::SERVICE_UNAVAILABLE, "draining\n"),
    };
    respond(status, "text/plain", Bytes::from(body))
}

/// The endpoint's answer to a request that arrives once draining: nothing was done, so a
/// balancer may send it to another replica (`deploy/haproxy.cfg` retries on `503`).
fn shutting_down() -> Response<Reply> {
    let mut response = json_error(
        StatusCode::SERVICE_UNAVAILABLE,
        Value::Null,
        code::SERVER_BUSY,
        "Server shutting down: the request was not handled; send it again (to another replica)"
            .to_string(),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// Accept connections until the grace is over (`serve` stops sooner once drained); each
/// is served on a task of `tasks`. A connection open when draining starts is closed
/// gracefully (its request in progress finishes); one accepted while draining gets its
/// answers (`503` from the endpoint, the probes as ever) with `Connection: close`.
async fn accept_loop(
    listener: TcpListener,
    site: Arc<Site>,
    options: &HttpOptions,
    drain: &Drain,
    tasks: &TaskTracker,
) {
    let limits = options.limits;
    let tls = options.tls_config();
    let connections = Arc::new(Connections::new(limits.max_connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    // hyper's `half_close` stays off: `Socket` keeps a half-closed client's reply.
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let http = Arc::new(http);
    loop {
        let Some((stream, peer)) = accept_next(&listener, &drain.hard, "an HTTP").await else {
            return;
        };
        let late = drain.draining.is_cancelled();
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
        let Some(admitted) = connections.admit() else {
            tracing::warn!(%peer, "refused an HTTP connection: every connection is busy");
            // A TLS client cannot read a plain 503: it is closed without one.
            if tls.is_none() {
                tasks.spawn(refuse(stream));
            }
            continue;
        };
        let site = site.clone();
        let http = http.clone();
        let (draining, hard) = (drain.draining.clone(), drain.hard.clone());
        let tls = tls.clone();
        tasks.spawn(async move {
            let connection = admitted.connection.clone();
            let handler = hyper::service::service_fn(move |mut request: Request<Incoming>| {
                let site = site.clone();
                // Busy from the moment the request's head is read.
                let busy = connection.busy();
                request
                    .extensions_mut()
                    .insert(ClientGone(connection.client_closed.clone()));
                async move {
                    let mut response = site.route(request).await;
                    response.body_mut().hold(busy);
                    if !site.ready.load(Ordering::Acquire) {
                        response
                            .headers_mut()
                            .insert(header::CONNECTION, HeaderValue::from_static("close"));
                    }
                    if let Some(replica) = &site.replica {
                        response
                            .headers_mut()
                            .insert(crate::server::protocol::header::REPLICA, replica.clone());
                    }
                    Ok::<_, Infallible>(response)
                }
            });
            let socket = Socket::new(stream, admitted.connection.clone());
            let Some(socket) = secure(socket, tls.as_ref(), limits.header_timeout, peer).await
            else {
                return;
            };
            let mut served = pin!(http.serve_connection(TokioIo::new(socket), handler));
            let closing = admitted.connection.closing(limits.idle_timeout);
            tokio::select! {
                outcome = served.as_mut() => {
                    if let Err(error) = outcome {
                        tracing::debug!(%peer, %error, "HTTP connection ended with an error");
                    }
                    return;
                }
                why = closing => {
                    tracing::debug!(%peer, ?why, "closing an HTTP connection");
                    served.as_mut().graceful_shutdown();
                    // An idle connection closes at once; one that took a request
                    // meanwhile gets a moment to finish it.
                    tokio::select! {
                        _ = tokio::time::timeout(connections::CLOSING_GRACE, served) => {}
                        _ = hard.cancelled() => {}
                    }
                    return;
                }
                _ = draining.cancelled(), if !late => {
                    // Finish the request in progress (within the shutdown grace), then close.
                    served.as_mut().graceful_shutdown();
                }
                _ = hard.cancelled() => {}
            }
            tokio::select! {
                _ = served.as_mut() => return,
                _ = hard.cancelled() => {}
            }
            // The grace is over: the calls cut short answer with their error; give the
            // connection a moment to send it.
            served.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(connections::LAST_WORDS, served).await;
        });
    }
}

/// The byte stream one HTTP connection is served over: the socket, or TLS over it.
trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}

impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Stream for T {}

/// `socket` itself, or (with `tls`) the TLS stream over it once the handshake is done,
/// within `timeout` (the header time-out); `None` when the handshake fails.
async fn secure(
    socket: Socket,
    tls: Option<&Tls>,
    timeout: Duration,
    peer: SocketAddr,
) -> Option<Box<dyn Stream>> {
    let Some(tls) = tls else {
        return Some(Box::new(socket));
    };
    #[cfg(feature = "tls")]
    match tokio::time::timeout(timeout, tls.acceptor().accept(socket)).await {
        Ok(Ok(stream)) => Some(Box::new(stream)),
        Ok(Err(error)) => {
            tracing::debug!(%peer, %error, "TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!(%peer, "no TLS handshake within the header time-out");
            None
        }
    }
    #[cfg(not(feature = "tls"))]
    {
        let _ = (timeout, peer);
        match *tls {}
    }
}

/// The reply to a connection past the cap when no connection is idle.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
Content-Type: application/json\r\n\
Retry-After: 1\r\n\
Connection: close\r\n\
Content-Length: 122\r\n\r\n\
{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,\"message\":\"Server busy: every connection is in use; retry in a moment\"}}";

/// Answer `503` and close without resetting the connection before the client reads it.
async fn refuse(mut stream: TcpStream) {
    let (mut read, mut write) = stream.split();
    linger::reply_and_close(&mut read, &mut write, REFUSED).await;
}

#[cfg(test)]
mod tests_wire;

#[cfg(test)]
mod tests {
    #[test]
    fn readiness_turns_503_when_draining() {
        assert_eq!(super::readiness(true).status(), 200);
        let draining = super::readiness(false);
        assert_eq!(draining.status(), 503);
        assert_eq!(draining.headers()["content-type"], "text/plain");
    }

    #[test]
    fn the_refusal_has_the_length_it_announces() {
        let text = std::str::from_utf8(super::REFUSED).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("Content-Length: {}", body.len())));
        let error: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(error["error"]["code"], -32000);
    }
}
