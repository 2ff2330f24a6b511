//! Stateful sessions as the front door sees them: how many are live (and the cap), which
//! caller each belongs to, and cancelling a call in a session whose client is gone.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};

/// Who opened a session: a keyed hash of its credential (`None`: the local caller).
pub(super) type Principal = Option<u64>;

/// The live sessions of a stateful server.
pub(super) struct Sessions {
    pub(super) manager: Arc<LocalSessionManager>,
    max: usize,
    /// The principal of each session opened with a token.
    owners: Mutex<HashMap<Arc<str>, u64>>,
    keys: std::hash::RandomState,
    /// Held while an `initialize` checks the cap and opens its session, so concurrent
    /// ones cannot overshoot it.
    pub(super) opening: tokio::sync::Mutex<()>,
}

impl Sessions {
    pub(super) fn new(manager: Arc<LocalSessionManager>, max: usize) -> Sessions {
        Sessions {
            manager,
            max,
            owners: Mutex::default(),
            keys: std::hash::RandomState::new(),
            opening: tokio::sync::Mutex::new(()),
        }
    }

    /// The principal presenting `credential`.
    pub(super) fn principal(&self, credential: &[u8]) -> u64 {
        self.keys.hash_one(credential)
    }

    /// The cap on live sessions.
    pub(super) fn max(&self) -> usize {
        self.max
    }

    /// True when no new session may open.
    pub(super) async fn full(&self) -> bool {
        self.manager.sessions.read().await.len() >= self.max
    }

    /// True when session `id` is live and `principal` may use it.
    pub(super) async fn usable(&self, id: &str, principal: Principal) -> bool {
        if !self.manager.sessions.read().await.contains_key(id) {
            return false;
        }
        let owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        match (owners.get(id), principal) {
            (Some(owner), Some(caller)) => *owner == caller,
            (None, None) => true,
            _ => false,
        }
    }

    /// Record that `principal` opened session `id` (forgetting sessions that ended).
    pub(super) async fn opened(&self, id: &str, principal: Principal) {
        let Some(principal) = principal else { return };
        let live = self.manager.sessions.read().await;
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        if owners.len() >= self.max {
            owners.retain(|id, _| live.contains_key(id));
        }
        owners.insert(id.into(), principal);
    }

    /// Cancel request `request_id` of session `id`, as `notifications/cancelled` from the
    /// client would: nobody is left to receive its result.
    pub(super) fn cancel(self: &Arc<Self>, id: Arc<str>, request_id: Value) {
        let sessions = self.clone();
        tokio::spawn(async move {
            let notification = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request_id, "reason": "the client disconnected"},
            });
            let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(notification) else {
                return;
            };
            if let Err(error) = sessions.manager.accept_message(&id, message).await {
                tracing::debug!(%error, "cannot cancel a disconnected client's call");
            }
        });
    }
}
