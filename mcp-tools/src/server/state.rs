//! What the server keeps between requests: [`Shared`] by every connection of one server,
//! [`Session`] per MCP session (a stdio, TCP or Unix connection, an HTTP session), and
//! (feature `http`) a live HTTP session's [`LiveSession`]: the peer of its rmcp service,
//! lent to the calls the front door serves itself (`http/direct.rs`) only while it can
//! carry everything they may send as rmcp's session worker would — never when the client
//! declared a capability, which lets the server ask it something on the call's own
//! stream — and those calls in progress, so that `notifications/cancelled` reaches them.

use std::sync::atomic::AtomicBool;
#[cfg(feature = "http")]
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::ServerConfig;
#[cfg(feature = "http")]
use rmcp::model::{ClientCapabilities, RequestId};
#[cfg(feature = "http")]
use rmcp::service::{Peer, RoleServer};
#[cfg(feature = "http")]
use tokio_util::sync::CancellationToken;

use super::notify::ListChanged;
use super::request_state::Sealing;
use super::subscriptions::{SessionSubscriptions, Subscriptions};
use super::tool_pages::ToolPages;
use crate::Caller;
use crate::context::LogLevel;
#[cfg(feature = "http")]
use crate::poison::LockIgnoringPoison;
use crate::registry::ToolRegistry;

/// What every connection of one server shares.
pub(crate) struct Shared {
    pub(crate) registry: ToolRegistry,
    pub(crate) config: ServerConfig,
    pub(crate) page_size: Option<usize>,
    pub(crate) list_ttl: Option<Duration>,
    pub(crate) list_changed: Arc<ListChanged>,
    /// Resource subscriptions of every session (`resources/subscribe`).
    pub(crate) subscriptions: Arc<Subscriptions>,
    /// How long a tool's sampling or elicitation request may wait for the client.
    pub(crate) client_timeout: Duration,
    /// How `requestState` is sealed for resumable calls (2026-07-28).
    pub(crate) sealing: Sealing,
    /// `tools/list` pages serialized once, for the transports that write their own replies.
    pub(crate) tool_pages: ToolPages,
    /// Whether everyday requests take the fast paths (`Server::fast_paths`).
    pub(crate) fast_paths: bool,
    /// Where tasks live, with their bounds and times.
    pub(crate) tasks: Tasks,
    /// The rate limits of `tools/call` (each tool's `rate`, the operator's rules).
    pub(crate) rate: super::rate_limit::RateLimiter,
    /// Where a line per call that reached a tool, resource or prompt goes.
    #[cfg(feature = "audit")]
    pub(crate) audit: Option<super::AuditLog>,
    /// The metrics and what each request's span says of this replica.
    pub(crate) telemetry: super::telemetry::Telemetry,
    /// The link to the other replicas' notifications (`Server::share_notifications`).
    #[cfg(feature = "redis")]
    pub(crate) _fanout: Option<super::fanout::Fanout>,
}

/// The server's tasks: the store and its settings.
pub(crate) struct Tasks {
    pub(crate) runtime: super::tasks::run::TaskRuntime,
    pub(crate) limits: super::tasks::TaskLimits,
    /// How long a finished task stays readable.
    pub(crate) ttl: Duration,
    /// How often clients are told to poll.
    pub(crate) poll_interval: Duration,
}

/// State of one MCP session (a stdio or TCP connection, an HTTP session).
#[derive(Default)]
pub(crate) struct Session {
    /// The level set by `logging/setLevel`; `None`: every level is sent.
    pub(crate) log_level: Mutex<Option<LogLevel>>,
    /// Whether this session's peer is registered for `tools/list_changed`.
    pub(crate) registered: AtomicBool,
    /// The resources this session subscribed to.
    pub(crate) subscriptions: Arc<SessionSubscriptions>,
    /// The caller of a peer that authenticated when it connected (TCP with tokens).
    pub(crate) caller: Option<Caller>,
    /// The list-change generation at each accepted `subscriptions/listen` whose stream is
    /// not registered yet: rmcp acknowledges a stream before [`ServerHandler::listen`] runs,
    /// so a change in between must still reach it.
    pub(crate) listens_pending: Mutex<Vec<u64>>,
    /// What the HTTP front door's direct calls use of a live session.
    #[cfg(feature = "http")]
    pub(crate) live: LiveSession,
    /// The session was initialized on a revision that takes JSON-RPC batches
    /// ([`takes_batches`](super::protocol::takes_batches)): the HTTP front door answers them.
    #[cfg(feature = "http")]
    pub(crate) batches: AtomicBool,
}

impl Session {
    /// This session's service ended (an HTTP session was parked): the handler that
    /// rebuilds it registers its own peer.
    #[cfg(feature = "http")]
    pub(crate) fn parked(&self) {
        self.registered.store(false, Ordering::SeqCst);
        self.live.ended();
    }
}

/// The part of a session's state that direct calls use (in [`Session`]).
#[cfg(feature = "http")]
#[derive(Default)]
pub(crate) struct LiveSession {
    /// The session's rmcp peer, while its service runs, it was initialized, and its
    /// client can be served directly.
    peer: Mutex<Option<Peer<RoleServer>>>,
    /// Directly served calls in progress, by request id.
    calls: Mutex<Vec<(RequestId, CancellationToken)>>,
}

#[cfg(feature = "http")]
impl LiveSession {
    /// The session's service was initialized with `peer` (the client's
    /// `notifications/initialized`, or a rebuilt session's replayed handshake).
    pub(crate) fn initialized(&self, peer: &Peer<RoleServer>) {
        let lent = peer
            .peer_info()
            .is_some_and(|info| served_directly(&info.capabilities));
        *self.peer.lock_ignoring_poison() = lent.then(|| peer.clone());
    }

    /// The session's service ended (parked, expired, deleted): its peer is gone.
    pub(crate) fn ended(&self) {
        *self.peer.lock_ignoring_poison() = None;
    }

    /// The peer a direct call in this session uses; `None` when rmcp must serve it.
    pub(crate) fn peer(&self) -> Option<Peer<RoleServer>> {
        self.peer
            .lock_ignoring_poison()
            .as_ref()
            .filter(|peer| !peer.is_transport_closed())
            .cloned()
    }

    /// Cancel the directly served call `id`, as the client asked; false when no such call
    /// runs here.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        let calls = self.calls.lock_ignoring_poison();
        match calls.iter().find(|(call, _)| call == id) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

/// True when a session whose client declared `capabilities` can be served directly: the
/// client declared no capability at all. Every client capability the protocol has
/// (roots, sampling, elicitation, tasks, experimental ones, extensions) lets the server
/// ask the client something, so the rule is read from the capabilities as they serialize,
/// not from a list of fields: a capability the protocol adds later takes the session off
/// the direct path by itself.
#[cfg(feature = "http")]
fn served_directly(capabilities: &ClientCapabilities) -> bool {
    serde_json::to_value(capabilities)
        .is_ok_and(|declared| declared.as_object().is_some_and(serde_json::Map::is_empty))
}

/// A call the HTTP front door serves directly in a session, in progress: its cancellation
/// token, registered under its request id until this is dropped.
#[cfg(feature = "http")]
pub(crate) struct DirectCall {
    session: Arc<Session>,
    id: RequestId,
    token: CancellationToken,
}

#[cfg(feature = "http")]
impl DirectCall {
    /// Register call `id` in `session`.
    pub(crate) fn start(session: Arc<Session>, id: RequestId) -> DirectCall {
        let token = CancellationToken::new();
        session
            .live
            .calls
            .lock_ignoring_poison()
            .push((id.clone(), token.clone()));
        DirectCall { session, id, token }
    }

    /// Fires when the client cancels the call.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }
}

#[cfg(feature = "http")]
impl Drop for DirectCall {
    fn drop(&mut self) {
        let mut calls = self.session.live.calls.lock_ignoring_poison();
        if let Some(at) = calls.iter().position(|(id, _)| *id == self.id) {
            calls.swap_remove(at);
        }
    }
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;
    use rmcp::model::{ElicitationCapability, RootsCapabilities, SamplingCapability};

    #[test]
    fn only_clients_the_server_cannot_ask_anything_are_served_directly() {
        assert!(served_directly(&ClientCapabilities::default()));
        let mut sampling = ClientCapabilities::default();
        sampling.sampling = Some(SamplingCapability::default());
        assert!(!served_directly(&sampling));
        let mut elicitation = ClientCapabilities::default();
        elicitation.elicitation = Some(ElicitationCapability::default());
        assert!(!served_directly(&elicitation));
        let mut roots = ClientCapabilities::default();
        roots.roots = Some(RootsCapabilities::default());
        assert!(!served_directly(&roots));
        // Whatever else a client declares, it is not served directly either.
        let experimental: ClientCapabilities =
            serde_json::from_value(serde_json::json!({"experimental": {"x": {}}})).unwrap();
        assert!(!served_directly(&experimental));
        let empty: ClientCapabilities = serde_json::from_value(serde_json::json!({})).unwrap();
        assert!(served_directly(&empty));
    }

    #[test]
    fn a_call_is_cancelled_by_its_id_while_it_runs() {
        let session = Arc::new(Session::default());
        let call = DirectCall::start(session.clone(), RequestId::Number(7));
        let other = DirectCall::start(session.clone(), RequestId::String("7".into()));
        assert!(!session.live.cancel(&RequestId::Number(8)));
        assert!(session.live.cancel(&RequestId::Number(7)));
        assert!(call.token().is_cancelled());
        assert!(!other.token().is_cancelled(), "ids of another type differ");
        drop(call);
        assert!(
            !session.live.cancel(&RequestId::Number(7)),
            "an ended call is forgotten"
        );
    }
}
