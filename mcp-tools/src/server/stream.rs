//! Byte-stream transports: stdio, any read/write pair, and the connections of TCP
//! (`tcp.rs`). Each stream is our newline-delimited JSON-RPC codec (answers bad lines)
//! behind the in-flight bound, in front of rmcp's service.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::service::{QuitReason, ServerInitializeError, serve_server_with_ct};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::ServeError;
use super::bounded::{Bounded, Direct};
use super::codec::LineCodec;
use super::drain::Drain;
use super::handler::McpHandler;
use super::state::Shared;
use crate::Caller;

/// Per-connection limits of the byte-stream transports.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamLimits {
    /// Requests in flight at once.
    pub(crate) max_in_flight: usize,
    /// Bytes in one incoming line.
    pub(crate) max_line_length: usize,
}

/// Serve one MCP session over `read`/`write` until the peer closes it or `drain` ends it
/// (once draining, nothing more is read; the calls in flight finish, or are cancelled when
/// the grace is over);
/// `caller`: the caller an authenticated peer's token makes it (`None`: the local caller).
pub(crate) async fn serve_stream<R, W>(
    shared: Arc<Shared>,
    read: R,
    write: W,
    caller: Option<Caller>,
    limits: StreamLimits,
    drain: &Drain,
) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let codec = LineCodec::new(read, write, limits.max_line_length);
    let _session = super::telemetry::SessionClock::line(&shared.telemetry.metrics);
    let handler = McpHandler::new_session_as(shared, caller);
    let peer = Arc::new(OnceLock::new());
    let direct = codec
        .sender()
        .filter(|_| handler.shared.fast_paths)
        .map(|lines| Direct::new(handler.clone(), peer.clone(), lines).cancelled_by(&drain.hard));
    let transport =
        Bounded::new(codec, limits.max_in_flight, direct).draining(drain.draining.child_token());
    let running = match serve_server_with_ct(handler, transport, drain.hard.child_token()).await {
        Ok(running) => {
            // From here on the transport serves `tools/call` itself.
            let _ = peer.set(running.peer().clone());
            running
        }
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("the client closed the connection before initializing");
            return Ok(());
        }
        Err(ServerInitializeError::Cancelled) => return Ok(()),
        Err(error) => return Err(ServeError::Session(error.to_string())),
    };
    match running.waiting().await {
        Ok(QuitReason::JoinError(error)) => Err(ServeError::Session(error.to_string())),
        Ok(reason) => {
            tracing::info!(?reason, "MCP session ended");
            Ok(())
        }
        Err(error) => Err(ServeError::Session(error.to_string())),
    }
}

/// The next connection `listener` accepts, or `None` once `shutdown` fires. A failed accept
/// (out of descriptors and the like) is logged (`kind`: "a TCP", "an HTTP") and retried
/// shortly: the listener is kept.
pub(crate) async fn accept_next(
    listener: &TcpListener,
    shutdown: &CancellationToken,
    kind: &str,
) -> Option<(TcpStream, SocketAddr)> {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.cancelled() => return None,
        };
        match accepted {
            Ok(pair) => return Some(pair),
            Err(error) => {
                tracing::warn!(%error, "accepting {kind} connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
