//! Notifications shared by replicas through Redis pub/sub (feature `redis`): a runtime
//! change of the tool list (`ToolRegistry::enable`, `disable`, `register`, `unregister`)
//! and a resource update (`ToolRegistry::resource_updated`,
//! `ToolContext::resource_updated`) made on one replica are published, and every other
//! replica tells its own legacy sessions and `subscriptions/listen` streams.
//!
//! Each replica tags what it publishes with an id of its own and ignores its own messages
//! (it has told its clients already). A message lost while Redis is away is lost: the
//! notifications say only "list again" or "read again", and a client that reconnects
//! lists anyway.

use std::sync::{Arc, Weak};

use redis::{AsyncCommands, Client};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::notify::ListChanged;
use super::redis_conn::RedisUrlError;
use super::subscriptions::Subscriptions;
use crate::registry::ChangeListener;
use crate::registry::ToolRegistry;
use crate::registry::listeners::Listening;
use crate::registry::offerings::UpdateListener;

/// The Redis channel replicas share their notifications on (feature `redis`): give every
/// replica the same one with [`Server::share_notifications`](super::Server::share_notifications)
/// (`serve --share-notifications redis://…`).
///
/// ```
/// use mcp_toolbelt::server::SharedNotifications;
/// assert!(SharedNotifications::open("redis://127.0.0.1:6379/").is_ok());
/// assert!(SharedNotifications::open("not a url").is_err());
/// ```
#[derive(Clone)]
pub struct SharedNotifications {
    client: Client,
    channel: String,
}

impl std::fmt::Debug for SharedNotifications {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedNotifications")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl SharedNotifications {
    /// Notifications shared on the Redis server at `url`, on the channel
    /// `mcp-toolbelt:notifications`. Nothing is connected until the server serves.
    ///
    /// # Errors
    ///
    /// The URL is not a Redis URL.
    pub fn open(url: &str) -> Result<SharedNotifications, RedisUrlError> {
        Ok(SharedNotifications {
            client: Client::open(url).map_err(RedisUrlError)?,
            channel: "mcp-toolbelt:notifications".into(),
        })
    }

    /// Use the channel `channel` instead (several servers on one Redis).
    pub fn channel(mut self, channel: impl Into<String>) -> SharedNotifications {
        self.channel = channel.into();
        self
    }
}

/// One shared notification, as published.
#[derive(Debug, Serialize, Deserialize)]
struct Message {
    /// The replica that published it.
    from: String,
    #[serde(flatten)]
    event: Event,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Event {
    /// The tool list changed.
    ToolsChanged,
    /// A resource changed.
    ResourceUpdated { uri: String },
}

/// The running link between a server and the shared channel: the registry's listeners
/// (removed when it drops) and the tasks that publish and receive.
pub(crate) struct Fanout {
    _changes: Listening<ChangeListener>,
    _updates: Listening<UpdateListener>,
}

impl Fanout {
    /// Publish `registry`'s changes on `shared`'s channel and tell `list_changed` and
    /// `subscriptions` of the other replicas' (on the current tokio runtime).
    pub(crate) fn start(
        shared: &SharedNotifications,
        registry: &ToolRegistry,
        list_changed: &Arc<ListChanged>,
        subscriptions: &Arc<Subscriptions>,
    ) -> Fanout {
        let mut id = [0u8; 8];
        getrandom::fill(&mut id).expect("the operating system's random source");
        let me: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let (events, outgoing) = mpsc::channel::<Event>(1024);
        let changes = {
            let events = events.clone();
            registry.on_change_until_dropped(move |_| {
                // Full: the channel is behind; one more "list again" adds nothing.
                let _ = events.try_send(Event::ToolsChanged);
            })
        };
        let updates = registry.on_resource_updated_until_dropped(move |uri| {
            let _ = events.try_send(Event::ResourceUpdated { uri: uri.into() });
        });
        tokio::spawn(publish(shared.clone(), me.clone(), outgoing));
        tokio::spawn(receive(
            shared.clone(),
            me,
            Arc::downgrade(list_changed),
            Arc::downgrade(subscriptions),
        ));
        Fanout {
            _changes: changes,
            _updates: updates,
        }
    }
}

/// Publish this replica's events until the server (the senders) is gone.
async fn publish(shared: SharedNotifications, me: String, mut outgoing: mpsc::Receiver<Event>) {
    let mut connection = None;
    while let Some(event) = outgoing.recv().await {
        let text = match serde_json::to_string(&Message {
            from: me.clone(),
            event,
        }) {
            Ok(text) => text,
            Err(error) => {
                tracing::warn!(%error, "cannot encode a shared notification");
                continue;
            }
        };
        if connection.is_none() {
            connection = shared
                .client
                .get_multiplexed_async_connection()
                .await
                .map_err(
                    |error| tracing::warn!(%error, "cannot reach Redis to share a notification"),
                )
                .ok();
        }
        let Some(conn) = connection.as_mut() else {
            continue;
        };
        let published: redis::RedisResult<i64> = conn.publish(&shared.channel, text).await;
        if let Err(error) = published {
            tracing::warn!(%error, "cannot share a notification through Redis");
            connection = None;
        }
    }
}

/// Tell this replica's clients what the other replicas publish, reconnecting as needed,
/// until the server is gone.
async fn receive(
    shared: SharedNotifications,
    me: String,
    list_changed: Weak<ListChanged>,
    subscriptions: Weak<Subscriptions>,
) {
    let wanted = || list_changed.strong_count() > 0;
    let deliver = |message: Message| {
        if message.from == me {
            return;
        }
        let (Some(list_changed), Some(subscriptions)) =
            (list_changed.upgrade(), subscriptions.upgrade())
        else {
            return;
        };
        match message.event {
            Event::ToolsChanged => {
                list_changed.start_pump();
                list_changed.changed_elsewhere();
            }
            Event::ResourceUpdated { uri } => {
                subscriptions.start_pump();
                subscriptions.updated(&uri);
            }
        }
    };
    super::pubsub::follow(
        &shared.client,
        &shared.channel,
        "shared notifications",
        wanted,
        deliver,
    )
    .await;
}
