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
//! - [`front`]: the path, tokens, the body cap (`413`), every body checked by the codec
//!   before rmcp sees it (`400` with a JSON-RPC error), sessions capped and bound to the
//!   token that opened them, a second `initialize` refused;
//! - the disconnect policy: a client that closed its side keeps its call for
//!   [`HttpOptions::disconnect_grace`]; then the call is cancelled (as if the client had
//!   sent `notifications/cancelled`) and the connection closed.

mod connections;
mod front;
mod options;
mod reply;
mod sessions;

use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::ServeError;
use super::handler::{McpHandler, Shared};
use super::linger;
use super::stream::accept_next;
use connections::{Connections, Socket};
use front::Front;
pub use options::HttpOptions;
use options::Tls;
use sessions::Sessions;

/// Serve streamable HTTP on `listener` until `shutdown` fires; at most `max_in_flight`
/// requests are handled at once.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    listener: TcpListener,
    options: HttpOptions,
    max_in_flight: usize,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let bound = listener.local_addr()?;
    let mut config = rmcp_config(&options, bound, shutdown.child_token());
    let handlers = shared.clone();
    // A stateful request's handler takes over its session's state (a parked session
    // being rebuilt keeps its log level and subscriptions).
    let factory = move || {
        Ok(match sessions::serving_state() {
            Some(state) => McpHandler::with_session(handlers.clone(), state),
            None => McpHandler::new_session(handlers.clone()),
        })
    };
    tracing::info!(
        url = %format!("http://{bound}{}", options.path),
        stateful = options.stateful,
        tokens = options.tokens.is_some(),
        limits = ?options.limits,
        "serving MCP over streamable HTTP"
    );
    if options.stateful {
        let limits = options.limits;
        let sessions = Arc::new(Sessions::new(
            shared,
            limits.max_sessions,
            limits.session_park_after,
            limits.session_idle_timeout,
        ));
        sessions.sweep_until(shutdown.clone());
        // rmcp rebuilds a parked session from what `Sessions` keeps as its store.
        config.session_store = Some(sessions.clone());
        let service = StreamableHttpService::new(factory, sessions.clone(), config);
        accept_loop(
            listener,
            service,
            Some(sessions),
            options,
            max_in_flight,
            shutdown,
        )
        .await
    } else {
        let service =
            StreamableHttpService::new(factory, Arc::new(NeverSessionManager::default()), config);
        accept_loop(listener, service, None, options, max_in_flight, shutdown).await
    }
}

fn rmcp_config(
    options: &HttpOptions,
    bound: SocketAddr,
    cancel: CancellationToken,
) -> StreamableHttpServerConfig {
    let mut hosts = options.allowed_hosts.clone();
    // The literal address bound is never a DNS-rebinding vector; accept it.
    if !bound.ip().is_unspecified() {
        hosts.push(bound.ip().to_string());
    }
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_legacy_session_mode(options.stateful)
        // A stateless result alone goes out as JSON (rmcp streams when there is more).
        .with_json_response(true)
        .with_max_request_body_bytes(options.limits.max_body_bytes)
        .with_cancellation_token(cancel)
}

async fn accept_loop<M: SessionManager>(
    listener: TcpListener,
    service: StreamableHttpService<McpHandler, M>,
    sessions: Option<Arc<Sessions>>,
    options: HttpOptions,
    max_in_flight: usize,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let limits = options.limits;
    let tls = options.tls_config();
    let front = Arc::new(Front {
        service,
        path: options.path,
        tokens: options.tokens,
        sessions,
        in_flight: Arc::new(Semaphore::new(max_in_flight.max(1))),
        limits,
    });
    let connections = Arc::new(Connections::new(limits.max_connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    // hyper's `half_close` stays off: `Socket` keeps a half-closed client's reply.
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let http = Arc::new(http);
    loop {
        let Some((stream, peer)) = accept_next(&listener, &shutdown, "an HTTP").await else {
            return Ok(());
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
        let Some(admitted) = connections.admit() else {
            tracing::warn!(%peer, "refused an HTTP connection: every connection is busy");
            // A TLS client cannot read a plain 503: it is closed without one.
            if tls.is_none() {
                tokio::spawn(refuse(stream));
            }
            continue;
        };
        let front = front.clone();
        let http = http.clone();
        let shutdown = shutdown.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let connection = admitted.connection.clone();
            let handler = hyper::service::service_fn(move |request| {
                let front = front.clone();
                let connection = connection.clone();
                // Busy from the moment the request's head is read.
                let busy = connection.busy();
                async move { front.handle(request, &connection, busy).await }
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
                }
                _ = shutdown.cancelled() => return,
            }
            // An idle connection closes at once; one that took a request meanwhile
            // gets a moment to finish it.
            tokio::select! {
                _ = tokio::time::timeout(connections::CLOSING_GRACE, served) => {}
                _ = shutdown.cancelled() => {}
            }
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
mod tests {
    #[test]
    fn the_refusal_has_the_length_it_announces() {
        let text = std::str::from_utf8(super::REFUSED).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("Content-Length: {}", body.len())));
        let error: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(error["error"]["code"], -32000);
    }
}
