//! What a live stateful session lends to the requests the front door serves itself
//! ([`Direct::serve_in_session`](super::direct::Direct::serve_in_session)): the peer of
//! its rmcp service, and its directly served calls in progress, so that the client's
//! `notifications/cancelled` reaches them.
//!
//! The peer is lent only while it can carry everything such a call may send the way
//! rmcp's session worker would: a log message or a list change goes to the session's
//! `GET` stream either way. A peer is not lent when the client declared any capability:
//! each lets the server ask it something (sampling, elicitation, roots, tasks), and those
//! requests ride the call's own stream in rmcp, which a direct call does not have.
//! Calls in such sessions go through rmcp's session worker, as before.

use std::sync::{Arc, Mutex};

use rmcp::model::{ClientCapabilities, RequestId};
use rmcp::service::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::server::handler::Session;

/// The part of a session's state that direct calls use (in [`Session`]).
#[derive(Default)]
pub(in crate::server) struct LiveSession {
    /// The session's rmcp peer, while its service runs, it was initialized, and its
    /// client can be served directly.
    peer: Mutex<Option<Peer<RoleServer>>>,
    /// Directly served calls in progress, by request id.
    calls: Mutex<Vec<(RequestId, CancellationToken)>>,
}

impl LiveSession {
    /// The session's service was initialized with `peer` (the client's
    /// `notifications/initialized`, or a rebuilt session's replayed handshake).
    pub(in crate::server) fn initialized(&self, peer: &Peer<RoleServer>) {
        let lent = peer
            .peer_info()
            .is_some_and(|info| served_directly(&info.capabilities));
        *self.peer.lock().unwrap_or_else(|e| e.into_inner()) = lent.then(|| peer.clone());
    }

    /// The session's service ended (parked, expired, deleted): its peer is gone.
    pub(in crate::server) fn ended(&self) {
        *self.peer.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The peer a direct call in this session uses; `None` when rmcp must serve it.
    pub(super) fn peer(&self) -> Option<Peer<RoleServer>> {
        self.peer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .filter(|peer| !peer.is_transport_closed())
            .cloned()
    }

    /// Cancel the directly served call `id`, as the client asked; false when no such call
    /// runs here.
    pub(super) fn cancel(&self, id: &RequestId) -> bool {
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
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
fn served_directly(capabilities: &ClientCapabilities) -> bool {
    serde_json::to_value(capabilities)
        .is_ok_and(|declared| declared.as_object().is_some_and(serde_json::Map::is_empty))
}

/// A directly served call in progress in a session: its cancellation token, registered
/// under its request id until this is dropped.
pub(super) struct InFlight {
    session: Arc<Session>,
    id: RequestId,
    token: CancellationToken,
}

impl InFlight {
    /// Register call `id` in `session`.
    pub(super) fn start(session: Arc<Session>, id: RequestId) -> InFlight {
        let token = CancellationToken::new();
        session
            .live
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id.clone(), token.clone()));
        InFlight { session, id, token }
    }

    /// Fires when the client cancels the call.
    pub(super) fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut calls = self
            .session
            .live
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(at) = calls.iter().position(|(id, _)| *id == self.id) {
            calls.swap_remove(at);
        }
    }
}

#[cfg(test)]
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
        let call = InFlight::start(session.clone(), RequestId::Number(7));
        let other = InFlight::start(session.clone(), RequestId::String("7".into()));
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
