//! `notifications/tools/list_changed`: the registry's change listener wakes a pump task that
//! tells every live session — legacy sessions through their peer, 2026-07-28 clients through
//! their `subscriptions/listen` streams. Changes that land while a broadcast is running are
//! coalesced into the next one (the notification says only "list again").

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rmcp::service::{Peer, RoleServer, SubscriptionSink};
use tokio::sync::Notify;

use crate::poison::LockIgnoringPoison;
use crate::registry::listeners::Listening;
use crate::registry::{ChangeListener, ToolRegistry};

/// Sessions to tell about list changes, and the change counter cursors carry.
pub(crate) struct ListChanged {
    /// The registry's change listener, removed when this broadcaster (the server) drops.
    _listening: Listening<ChangeListener>,
    generation: AtomicU64,
    wake: Arc<Notify>,
    pump_started: AtomicBool,
    peers: Mutex<Vec<Peer<RoleServer>>>,
    sinks: Sinks,
}

impl ListChanged {
    /// A broadcaster fed by `registry`'s change listener (which holds it weakly and is
    /// removed from the registry when the broadcaster drops).
    pub(crate) fn attach(registry: &ToolRegistry) -> Arc<ListChanged> {
        Arc::new_cyclic(|weak: &Weak<ListChanged>| {
            let weak = weak.clone();
            let listening = registry.on_change_until_dropped(move |change| {
                if let Some(this) = weak.upgrade() {
                    tracing::debug!(?change, "tool list changed");
                    this.generation.fetch_add(1, Ordering::SeqCst);
                    this.wake.notify_one();
                }
            });
            ListChanged {
                _listening: listening,
                generation: AtomicU64::new(0),
                wake: Arc::default(),
                pump_started: AtomicBool::new(false),
                peers: Mutex::default(),
                sinks: Sinks::default(),
            }
        })
    }

    /// Tell every session the list changed on another replica (its change reached this
    /// one through [`SharedNotifications`](super::fanout::SharedNotifications)).
    #[cfg(feature = "redis")]
    pub(crate) fn changed_elsewhere(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.wake.notify_one();
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

    /// Let go of the peers of sessions that ended.
    #[cfg(feature = "http")]
    pub(crate) fn forget_closed(&self) {
        let mut peers = self.peers.lock_ignoring_poison();
        peers.retain(|p| !p.is_transport_closed());
    }

    /// Remember a legacy session's peer.
    pub(crate) fn add_peer(&self, peer: Peer<RoleServer>) {
        let mut peers = self.peers.lock_ignoring_poison();
        peers.retain(|p| !p.is_transport_closed());
        peers.push(peer);
    }

    /// Remember a `subscriptions/listen` stream until the returned guard is dropped.
    pub(crate) fn subscribe(&self, sink: SubscriptionSink) -> SinkGuard<'_> {
        self.sinks.add(sink)
    }

    async fn broadcast(&self) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.peers.lock_ignoring_poison();
            peers.retain(|p| !p.is_transport_closed());
            peers.clone()
        };
        let sinks: Vec<SubscriptionSink> = self.sinks.matching(|_| true);
        tracing::debug!(
            sessions = peers.len(),
            subscriptions = sinks.len(),
            "sending notifications/tools/list_changed"
        );
        fan_out(
            &peers,
            &sinks,
            "tools/list_changed",
            "subscription",
            |peer| peer.notify_tool_list_changed(),
            |sink| sink.notify_tool_list_changed(),
        )
        .await;
    }
}

impl Drop for ListChanged {
    /// Wake the pump so it sees the broadcaster gone and ends: otherwise every server
    /// built on a long-lived registry would leave a task parked forever (found by the
    /// `line_codec` fuzz campaign's memory growth, one server per input).
    fn drop(&mut self) {
        self.wake.notify_one();
    }
}

/// Send one notification to every legacy session's peer and every `subscriptions/listen`
/// stream at once. A failed send is only logged (debug): the session may have just gone.
/// `what` names the notification and `stream` what a sink is called, for the log line.
pub(super) async fn fan_out<'a, PF, PFut, PE, SF, SFut, SE>(
    peers: &'a [Peer<RoleServer>],
    sinks: &'a [SubscriptionSink],
    what: &str,
    stream: &str,
    to_peer: PF,
    to_sink: SF,
) where
    PF: Fn(&'a Peer<RoleServer>) -> PFut,
    PFut: Future<Output = Result<(), PE>>,
    PE: fmt::Display,
    SF: Fn(&'a SubscriptionSink) -> SFut,
    SFut: Future<Output = Result<(), SE>>,
    SE: fmt::Display,
{
    let to_peers = peers.iter().map(|peer| {
        let sent = to_peer(peer);
        async move {
            if let Err(error) = sent.await {
                tracing::debug!(%error, "could not send {what} to a session");
            }
        }
    });
    let to_sinks = sinks.iter().map(|sink| {
        let sent = to_sink(sink);
        async move {
            if let Err(error) = sent.await {
                tracing::debug!(%error, "could not send {what} to a {stream}");
            }
        }
    });
    futures::future::join(
        futures::future::join_all(to_peers),
        futures::future::join_all(to_sinks),
    )
    .await;
}

/// The open `subscriptions/listen` streams, each kept under a key until its guard drops.
#[derive(Default)]
pub(super) struct Sinks {
    open: Mutex<Vec<(u64, SubscriptionSink)>>,
    next_key: AtomicU64,
}

impl Sinks {
    /// Remember `sink` until the returned guard is dropped.
    pub(super) fn add(&self, sink: SubscriptionSink) -> SinkGuard<'_> {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        self.open.lock_ignoring_poison().push((key, sink));
        SinkGuard { sinks: self, key }
    }

    /// The open streams `keep` accepts, in the order they were added.
    pub(super) fn matching(
        &self,
        keep: impl Fn(&SubscriptionSink) -> bool,
    ) -> Vec<SubscriptionSink> {
        self.open
            .lock_ignoring_poison()
            .iter()
            .filter(|(_, sink)| keep(sink))
            .map(|(_, sink)| sink.clone())
            .collect()
    }
}

/// Keeps a `subscriptions/listen` stream registered while alive.
pub(crate) struct SinkGuard<'a> {
    sinks: &'a Sinks,
    key: u64,
}

impl Drop for SinkGuard<'_> {
    fn drop(&mut self) {
        self.sinks
            .open
            .lock_ignoring_poison()
            .retain(|(k, _)| *k != self.key);
    }
}

#[cfg(test)]
mod tests {
    use tokio::runtime::RuntimeMetrics;

    use super::ListChanged;
    use crate::registry::ToolRegistry;
    use crate::server::Server;
    use crate::server::subscriptions::Subscriptions;

    /// Wait (a bounded number of scheduler turns) for every spawned task to end.
    async fn tasks_end(metrics: &RuntimeMetrics) -> bool {
        for _ in 0..100 {
            if metrics.num_alive_tasks() == 0 {
                return true;
            }
            tokio::task::yield_now().await;
        }
        false
    }

    /// A server built on a registry that outlives it leaves no task behind (each such
    /// server used to leave its pumps parked forever).
    #[tokio::test]
    async fn the_pumps_end_with_their_server() {
        let registry = ToolRegistry::builder()
            .include_linked(false)
            .build()
            .unwrap();
        let metrics = tokio::runtime::Handle::current().metrics();
        let list_changed = ListChanged::attach(&registry);
        let subscriptions = Subscriptions::attach(&registry);
        list_changed.start_pump();
        subscriptions.start_pump();
        tokio::task::yield_now().await;
        assert_eq!(metrics.num_alive_tasks(), 2);
        drop(list_changed);
        drop(subscriptions);
        assert!(tasks_end(&metrics).await, "a pump still runs");
    }

    /// Servers built and dropped one after another on one registry leave none of their
    /// listeners in it (each used to leave two, about 0.4 KB, for the registry's life);
    /// the application's own listeners stay.
    #[test]
    fn dropped_servers_leave_no_listener_in_the_registry() {
        let registry = ToolRegistry::builder()
            .include_linked(false)
            .build()
            .unwrap();
        registry.on_change(|_| {});
        registry.on_resource_updated(|_| {});
        let listening = |registry: &ToolRegistry| {
            (
                registry.shared.listeners.len(),
                registry.shared.offerings.updated.len(),
            )
        };
        let live = Server::new(registry.clone());
        let _ = live.handler();
        for _ in 0..50 {
            let server = Server::new(registry.clone());
            let _ = server.handler();
            assert_eq!(listening(&registry), (3, 3));
        }
        assert_eq!(listening(&registry), (2, 2));
        drop(live);
        assert_eq!(listening(&registry), (1, 1));
    }
}
