//! `notifications/tools/list_changed`: the registry's change listener wakes a pump task that
//! tells every live session — legacy sessions through their peer, 2026-07-28 clients through
//! their `subscriptions/listen` streams. Changes that land while a broadcast is running are
//! coalesced into the next one (the notification says only "list again").

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rmcp::service::{Peer, RoleServer, SubscriptionSink};
use tokio::sync::Notify;

use crate::registry::ToolRegistry;

/// Sessions to tell about list changes, and the change counter cursors carry.
#[derive(Default)]
pub(crate) struct ListChanged {
    generation: AtomicU64,
    wake: Arc<Notify>,
    pump_started: AtomicBool,
    peers: Mutex<Vec<Peer<RoleServer>>>,
    sinks: Mutex<Vec<(u64, SubscriptionSink)>>,
    next_sink: AtomicU64,
}

impl ListChanged {
    /// A broadcaster fed by `registry`'s change listener (held weakly by the listener).
    pub(crate) fn attach(registry: &ToolRegistry) -> Arc<ListChanged> {
        let this = Arc::new(ListChanged::default());
        let weak: Weak<ListChanged> = Arc::downgrade(&this);
        registry.on_change(move |change| {
            if let Some(this) = weak.upgrade() {
                tracing::debug!(?change, "tool list changed");
                this.generation.fetch_add(1, Ordering::SeqCst);
                this.wake.notify_one();
            }
        });
        this
    }

    /// How many runtime changes the registry has had.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Start the broadcasting task on the current tokio runtime (once).
    pub(crate) fn start_pump(self: &Arc<Self>) {
        if self.pump_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let wake = self.wake.clone();
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                wake.notified().await;
                let Some(this) = weak.upgrade() else { return };
                this.broadcast().await;
            }
        });
    }

    /// Remember a legacy session's peer.
    pub(crate) fn add_peer(&self, peer: Peer<RoleServer>) {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.retain(|p| !p.is_transport_closed());
        peers.push(peer);
    }

    /// Remember a `subscriptions/listen` stream until the returned guard is dropped.
    pub(crate) fn subscribe(&self, sink: SubscriptionSink) -> Subscribed<'_> {
        let key = self.next_sink.fetch_add(1, Ordering::Relaxed);
        self.sinks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((key, sink));
        Subscribed { owner: self, key }
    }

    async fn broadcast(&self) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
            peers.retain(|p| !p.is_transport_closed());
            peers.clone()
        };
        let sinks: Vec<SubscriptionSink> = self
            .sinks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(_, s)| s.clone())
            .collect();
        tracing::debug!(
            sessions = peers.len(),
            subscriptions = sinks.len(),
            "sending notifications/tools/list_changed"
        );
        let to_peers = peers.iter().map(|peer| async move {
            if let Err(error) = peer.notify_tool_list_changed().await {
                tracing::debug!(%error, "could not send tools/list_changed to a session");
            }
        });
        let to_sinks = sinks.iter().map(|sink| async move {
            if let Err(error) = sink.notify_tool_list_changed().await {
                tracing::debug!(%error, "could not send tools/list_changed to a subscription");
            }
        });
        futures::future::join(
            futures::future::join_all(to_peers),
            futures::future::join_all(to_sinks),
        )
        .await;
    }
}

/// Keeps a `subscriptions/listen` stream registered while alive.
pub(crate) struct Subscribed<'a> {
    owner: &'a ListChanged,
    key: u64,
}

impl Drop for Subscribed<'_> {
    fn drop(&mut self) {
        self.owner
            .sinks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(k, _)| *k != self.key);
    }
}
