//! A bound on the requests in flight on one connection, as a transport wrapped around
//! rmcp's: rmcp spawns a task per request with no limit, so the wrapper hands rmcp a
//! request only when a slot is free. A slot is taken when a request is passed on and freed
//! once its response has been written (or the client cancelled it). When every slot is
//! taken, the next request read waits (one request, parked) and nothing more is read, so a
//! pipelining client is held back by the pipe or socket buffer instead of by the server's
//! memory. Notifications read before that request still go through at once, so a client
//! that is not over the bound can always cancel a running call.
//!
//! Once draining (graceful shutdown), nothing more is read: when the requests in flight
//! have been answered the transport ends, which ends the session.
//!
//! Two more guards live here because they sit on the same path:
//! - a notification before the first request is dropped (rmcp ends the whole session with
//!   `ExpectedInitializeRequest` on one, which over stdio ends the process);
//! - a request reusing the id of a request still in flight gets an `-32600` error at once
//!   (rmcp would run both and answer only one).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientNotification, ClientRequest, ErrorData, GetMeta, JsonRpcMessage, JsonRpcRequest,
    ProtocolVersion, RequestId,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

type Held = Arc<Mutex<HashMap<RequestId, OwnedSemaphorePermit>>>;

/// `inner` with at most `limit` requests in flight.
pub(crate) struct Bounded<T> {
    inner: T,
    slots: Arc<Semaphore>,
    limit: usize,
    held: Held,
    /// Fires when the server drains: read nothing more.
    draining: Option<CancellationToken>,
    /// A request read while every slot was taken; it waits here for one.
    parked: Option<JsonRpcRequest<ClientRequest>>,
    /// Whether rmcp has left its pre-initialization loop (see [`ends_initialization`]):
    /// before that, a notification would end the session, so none is passed on.
    seen_request: bool,
}

/// True for the requests after which rmcp's pre-initialization loop is over: `initialize`,
/// or (protocol 2026-07-28) a request other than `ping` and `server/discover` that carries
/// the complete per-request metadata. A `ping` or `server/discover` first does not end it.
fn ends_initialization(request: &ClientRequest) -> bool {
    match request {
        ClientRequest::InitializeRequest(_) => true,
        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
        other => {
            let meta = other.get_meta();
            meta.protocol_version().is_some()
                && meta
                    .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                    .is_empty()
        }
    }
}

impl<T> Bounded<T> {
    pub(crate) fn new(inner: T, limit: usize) -> Bounded<T> {
        Bounded {
            inner,
            slots: Arc::new(Semaphore::new(limit.max(1))),
            limit: limit.max(1),
            held: Arc::default(),
            draining: None,
            parked: None,
            seen_request: false,
        }
    }

    /// Stop reading once `draining` fires; end once the requests in flight are answered.
    pub(crate) fn draining(mut self, draining: CancellationToken) -> Bounded<T> {
        self.draining = Some(draining);
        self
    }

    /// Completes when every request in flight has been answered.
    fn drained(&self) -> impl Future<Output = ()> + Send + 'static {
        let (slots, limit) = (self.slots.clone(), self.limit as u32);
        async move {
            let _all = slots.acquire_many_owned(limit).await;
        }
    }
}

fn lock(held: &Held) -> std::sync::MutexGuard<'_, HashMap<RequestId, OwnedSemaphorePermit>> {
    held.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Bounded<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let send = self.inner.send(item);
        let held = self.held.clone();
        async move {
            let outcome = send.await;
            if let Some(id) = answered {
                // Freed only once written: a client that does not read its replies keeps
                // its slots busy, so unwritten replies cannot pile up either.
                lock(&held).remove(&id);
            }
            outcome
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let Some(draining) = self.draining.clone() else {
            return self.next().await;
        };
        if !draining.is_cancelled() {
            let next = tokio::select! {
                next = self.next() => Some(next),
                _ = draining.cancelled() => None,
            };
            if let Some(next) = next {
                return next;
            }
        }
        self.drained().await;
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

impl<T: Transport<RoleServer>> Bounded<T> {
    /// The next message to pass on (see the module docs).
    async fn next(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(request) = self.parked.take() {
                // Cancel-safe: if this wait is dropped, the request stays parked.
                self.parked = Some(request);
                let slot = self.slots.clone().acquire_owned().await.ok()?;
                let request = self.parked.take()?;
                lock(&self.held).insert(request.id.clone(), slot);
                return Some(JsonRpcMessage::Request(request));
            }
            let message = self.inner.receive().await?;
            match message {
                JsonRpcMessage::Request(request) => {
                    self.seen_request |= ends_initialization(&request.request);
                    if !lock(&self.held).contains_key(&request.id) {
                        // Wait for a slot at the top of the loop. Until one frees, nothing
                        // more is read: notifications already read went through, so a
                        // client can still cancel a running call to make room.
                        self.parked = Some(request);
                        continue;
                    }
                    let id = request.id.clone();
                    tracing::debug!(%id, "request id reused while in flight; answering -32600");
                    let error = ErrorData::invalid_request(
                        format!(
                            "request id {id} is already in flight; use a new id for each request"
                        ),
                        None,
                    );
                    if self
                        .inner
                        .send(JsonRpcMessage::error(error, Some(id)))
                        .await
                        .is_err()
                    {
                        return None;
                    }
                }
                JsonRpcMessage::Notification(notification) => {
                    if !self.seen_request {
                        tracing::debug!(
                            "ignoring a notification received before the first request"
                        );
                        continue;
                    }
                    if let ClientNotification::CancelledNotification(cancelled) =
                        &notification.notification
                        && let Some(id) = &cancelled.params.request_id
                    {
                        // rmcp drops the reply of a cancelled request, so free its slot now.
                        lock(&self.held).remove(id);
                    }
                    return Some(JsonRpcMessage::Notification(notification));
                }
                other => return Some(other),
            }
        }
    }
}
