//! Following a Redis pub/sub channel (feature `redis`): how the task store's signals
//! (`tasks/redis.rs`) and the notifications shared by replicas (`fanout.rs`) listen.

use std::time::Duration;

use futures::StreamExt;
use redis::Client;
use serde::de::DeserializeOwned;

/// How long to wait before subscribing again once Redis went away.
const RESUBSCRIBE: Duration = Duration::from_secs(1);

/// Subscribe to `channel` and hand each message whose JSON payload reads as `T` to
/// `deliver`, for as long as `wanted` says so (checked before each message and each new
/// subscription). A message that does not read is logged (debug) and skipped. While Redis
/// is away it subscribes again every second; what is published meanwhile is lost, and each
/// listener makes up for that in its own way. `what` names the channel in logs.
pub(crate) async fn follow<T: DeserializeOwned>(
    client: &Client,
    channel: &str,
    what: &str,
    wanted: impl Fn() -> bool,
    mut deliver: impl FnMut(T),
) {
    while wanted() {
        match client.get_async_pubsub().await {
            Ok(mut pubsub) => match pubsub.subscribe(channel).await {
                Ok(()) => {
                    let mut messages = pubsub.on_message();
                    while let Some(message) = messages.next().await {
                        if !wanted() {
                            return;
                        }
                        let Ok(payload) = message.get_payload::<String>() else {
                            continue;
                        };
                        match serde_json::from_str::<T>(&payload) {
                            Ok(item) => deliver(item),
                            Err(error) => {
                                tracing::debug!(%error, "an unreadable message on the {what} channel")
                            }
                        }
                    }
                }
                Err(error) => tracing::warn!(%error, "cannot subscribe to the {what} channel"),
            },
            Err(error) => tracing::warn!(%error, "cannot reach Redis for the {what} channel"),
        }
        tokio::time::sleep(RESUBSCRIBE).await;
    }
}
