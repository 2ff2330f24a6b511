//! Resource subscriptions: `resources/subscribe` / `resources/unsubscribe` per session, and
//! `notifications/resources/updated` when the application calls
//! [`ToolRegistry::resource_updated`]. Legacy sessions get the notification through their
//! peer; 2026-07-28 clients through the `subscriptions/listen` streams whose filter names
//! the URI. Updates of a URI nobody subscribed to are dropped at once; repeated updates
//! that land while a broadcast runs are coalesced (the notification says only "read again").

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer, SubscriptionSink};
use tokio::sync::Notify;

use crate::registry::ToolRegistry;
use crate::registry::listeners::Listening;
use crate::registry::offerings::UpdateListener;

use super::notify::{SinkGuard, Sinks, fan_out};
use crate::poison::LockIgnoringPoison;

/// The URIs one session subscribed to.
#[derive(Default)]
pub(crate) struct SessionSubscriptions {
    uris: Mutex<HashSet<String>>,
    /// Whether the session is in the server's list yet.
    listed: AtomicBool,
}

impl SessionSubscriptions {
    fn contains(&self, uri: &str) -> bool {
        self.uris.lock_ignoring_poison().contains(uri)
    }
}

/// Every session's subscriptions, and the task that sends the notifications.
pub(crate) struct Subscriptions {
    /// The registry's resource-updated listener, removed when these subscriptions (the
    /// server) drop.
    _listening: Listening<UpdateListener>,
    sessions: Mutex<Vec<(Weak<SessionSubscriptions>, Peer<RoleServer>)>>,
    sinks: Sinks,
    pending: Mutex<BTreeSet<String>>,
    wake: Arc<Notify>,
    pump_started: AtomicBool,
}

impl Subscriptions {
    /// Subscriptions fed by `registry`'s resource-updated listener (which holds them
    /// weakly and is removed from the registry when they drop).
    pub(crate) fn attach(registry: &ToolRegistry) -> Arc<Subscriptions> {
        Arc::new_cyclic(|weak: &Weak<Subscriptions>| {
            let weak = weak.clone();
            let listening = registry.on_resource_updated_until_dropped(move |uri| {
                if let Some(this) = weak.upgrade() {
                    this.updated(uri);
                }
            });
            Subscriptions {
                _listening: listening,
                sessions: Mutex::default(),
                sinks: Sinks::default(),
                pending: Mutex::default(),
                wake: Arc::default(),
                pump_started: AtomicBool::new(false),
            }
        })
    }

    /// `uri` changed (here, or on another replica): its subscribers are told.
    pub(crate) fn updated(&self, uri: &str) {
        if !self.is_watched(uri) {
            return;
        }
        tracing::debug!(uri, "resource updated; notifying subscribers");
        self.pending.lock_ignoring_poison().insert(uri.to_string());
        self.wake.notify_one();
    }

    /// Subscribe `session` (reachable through `peer`) to `uri`.
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        session: &Arc<SessionSubscriptions>,
        peer: Peer<RoleServer>,
        uri: String,
    ) {
        session.uris.lock_ignoring_poison().insert(uri);
        if !session.listed.swap(true, Ordering::SeqCst) {
            let mut sessions = self.sessions.lock_ignoring_poison();
            sessions.retain(|(s, p)| s.strong_count() > 0 && !p.is_transport_closed());
            sessions.push((Arc::downgrade(session), peer));
        }
        self.start_pump();
    }

    /// Reach `session` (already subscribed to something) through `peer` from now on: its
    /// service was rebuilt.
    pub(crate) fn rebind(&self, session: &Arc<SessionSubscriptions>, peer: &Peer<RoleServer>) {
        if !session.listed.load(Ordering::SeqCst) {
            return;
        }
        let mut sessions = self.sessions.lock_ignoring_poison();
        sessions.retain(|(s, p)| {
            s.strong_count() > 0 && !p.is_transport_closed() && !s.ptr_eq(&Arc::downgrade(session))
        });
        sessions.push((Arc::downgrade(session), peer.clone()));
    }

    /// Let go of the peers of sessions that ended.
    #[cfg(feature = "http")]
    pub(crate) fn forget_closed(&self) {
        let mut sessions = self.sessions.lock_ignoring_poison();
        sessions.retain(|(s, p)| s.strong_count() > 0 && !p.is_transport_closed());
    }

    /// Stop notifying `session` about `uri`.
    pub(crate) fn unsubscribe(&self, session: &SessionSubscriptions, uri: &str) {
        session.uris.lock_ignoring_poison().remove(uri);
    }

    /// Remember a `subscriptions/listen` stream (its accepted filter names the URIs) until
    /// the returned guard is dropped.
    pub(crate) fn listen(self: &Arc<Self>, sink: SubscriptionSink) -> SinkGuard<'_> {
        let guard = self.sinks.add(sink);
        self.start_pump();
        guard
    }

    /// True when some live session or stream is subscribed to `uri`.
    fn is_watched(&self, uri: &str) -> bool {
        let by_session = self
            .sessions
            .lock_ignoring_poison()
            .iter()
            .any(|(s, _)| s.upgrade().is_some_and(|s| s.contains(uri)));
        by_session || self.sinks_for(uri).next().is_some()
    }

    fn sinks_for(&self, uri: &str) -> std::vec::IntoIter<SubscriptionSink> {
        self.sinks
            .matching(|sink| {
                sink.accepted()
                    .resource_subscriptions
                    .as_ref()
                    .is_some_and(|uris| uris.iter().any(|u| u == uri))
            })
            .into_iter()
    }

    pub(super) fn start_pump(self: &Arc<Self>) {
        if self.pump_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(self);
        let wake = self.wake.clone();
        tokio::spawn(async move {
            loop {
                wake.notified().await;
                let Some(this) = weak.upgrade() else { return };
                let batch = std::mem::take(&mut *this.pending.lock_ignoring_poison());
                for uri in batch {
                    this.broadcast(&uri).await;
                }
            }
        });
    }

    async fn broadcast(&self, uri: &str) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut sessions = self.sessions.lock_ignoring_poison();
            sessions.retain(|(s, p)| s.strong_count() > 0 && !p.is_transport_closed());
            sessions
                .iter()
                .filter(|(s, _)| s.upgrade().is_some_and(|s| s.contains(uri)))
                .map(|(_, p)| p.clone())
                .collect()
        };
        let sinks: Vec<SubscriptionSink> = self.sinks_for(uri).collect();
        tracing::debug!(
            uri,
            sessions = peers.len(),
            streams = sinks.len(),
            "sending notifications/resources/updated"
        );
        fan_out(
            &peers,
            &sinks,
            "resources/updated",
            "stream",
            |peer| peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)),
            |sink| sink.notify_resource_updated(uri),
        )
        .await;
    }
}

impl Drop for Subscriptions {
    /// Wake the pump so it sees the subscriptions gone and ends (as `ListChanged` does):
    /// a server dropped after a session subscribed would otherwise leave it parked.
    fn drop(&mut self) {
        self.wake.notify_one();
    }
}
