//! A bound on the requests in flight on one connection, as a transport wrapped around
//! rmcp's: rmcp spawns a task per request with no limit, so the wrapper hands rmcp a
//! request only when a slot is free. A slot is taken when a request is passed on and freed
//! once its response has been written (or the client cancelled it). When every slot is
//! taken, the next request read waits (one request, parked) and nothing more is read, so a
//! pipelining client is held back by the pipe or socket buffer instead of by the server's
//! memory. Notifications read before that request still go through at once, so a client
//! that is not over the bound can always cancel a running call.
//!
//! `tools/call` and `tools/list` requests of an initialized session are served here
//! directly ([`Direct`]; `tools/list` pages from bytes serialized once, `tool_pages.rs`):
//! the transport hands them to the session's handler itself (rmcp's own request dispatch,
//! `Service::handle_request`, so every check rmcp makes still runs) in one task and writes
//! the reply through the codec, instead of passing them through rmcp's service loop, which
//! costs two more task spawns, a channel hop and a lock per call. A `tools/list` page
//! already serialized needs no task at all: its line is queued as the request is read.
//! Cancellation, the in-flight bound and the drain on end of input work as for the
//! requests rmcp serves.
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
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use rmcp::Service;
use rmcp::model::{
    ClientNotification, ClientRequest, ErrorData, GetMeta, JsonRpcMessage, JsonRpcRequest,
    ProtocolVersion, RequestId,
};
use rmcp::service::{Peer, RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::codec::LineSender;
use super::handler::McpHandler;
use super::protocol::{ALREADY_INITIALIZED, request_context, takes_fast_path};
use crate::poison::LockIgnoringPoison;

/// A request in flight: its slot, and the cancellation of a call served directly.
struct InFlight {
    _slot: OwnedSemaphorePermit,
    cancel: Option<CancellationToken>,
}

/// The requests in flight by id (hashed with `foldhash`: three lookups a request, and the
/// map holds at most the in-flight bound).
type Held = Arc<Mutex<HashMap<RequestId, InFlight, foldhash::fast::RandomState>>>;

/// How long direct calls still running at the end of input may finish and answer (rmcp
/// drains its own handlers the same 5 s), then they are cancelled.
const DRAIN: Duration = Duration::from_secs(5);

/// Serving `tools/call` without rmcp's service loop (see the module docs).
pub(crate) struct Direct {
    handler: McpHandler,
    /// The session's peer, set once rmcp has answered `initialize` (`stream.rs`); until
    /// then every request goes through rmcp.
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    lines: LineSender,
    calls: JoinSet<()>,
    /// Parent of every direct call's cancellation: cancelled when the transport closes.
    closing: CancellationToken,
}

impl Direct {
    pub(crate) fn new(
        handler: McpHandler,
        peer: Arc<OnceLock<Peer<RoleServer>>>,
        lines: LineSender,
    ) -> Direct {
        Direct {
            handler,
            peer,
            lines,
            calls: JoinSet::new(),
            closing: CancellationToken::new(),
        }
    }

    /// Cancel the direct calls when `hard` fires (the end of a shutdown grace), too.
    pub(crate) fn cancelled_by(mut self, hard: &CancellationToken) -> Direct {
        self.closing = hard.child_token();
        self
    }

    /// The session's peer when `request` can be served directly: one that takes the fast
    /// path ([`takes_fast_path`]) in a session that completed the `initialize` handshake on
    /// a protocol before 2026-07-28.
    fn peer_for(&self, request: &ClientRequest) -> Option<Peer<RoleServer>> {
        if !takes_fast_path(request) {
            return None;
        }
        let peer = self.peer.get()?;
        let legacy = peer
            .peer_info()
            .is_some_and(|info| info.protocol_version < ProtocolVersion::V_2026_07_28);
        legacy.then(|| peer.clone())
    }

    /// Serve `request`; its slot is freed once the reply is written (by the writer,
    /// [`LineSender::queue_line_then`]). A cached `tools/list` page is answered here and
    /// now; anything else in a task of its own.
    fn start(
        &mut self,
        request: JsonRpcRequest<ClientRequest>,
        peer: Peer<RoleServer>,
        slot: OwnedSemaphorePermit,
        held: &Held,
    ) {
        let JsonRpcRequest {
            id, mut request, ..
        } = request;
        let page = match &request {
            ClientRequest::ListToolsRequest(list) => {
                // Which page, without building the request's context: a byte stream
                // carries no HTTP caller, so the view is the session's own, and
                // `peer_for` serves only sessions on a protocol before 2026-07-28 whose
                // requests carry no version of their own (`McpHandler::list_page` reads
                // the same from a context).
                let cursor = list.params.as_ref().and_then(|p| p.cursor.as_deref());
                let page = self.handler.page_request(cursor, None, false);
                if let Some(line) = self.handler.cached_page_line(&id, &page) {
                    self.lines
                        .queue_line_then(line, hold(held, &id, slot, None));
                    return;
                }
                Some(page)
            }
            _ => None,
        };
        let mut context = request_context(id.clone(), &mut request, peer);
        let cancel = self.closing.child_token();
        let free = hold(held, &id, slot, Some(cancel.clone()));
        context.ct = cancel.clone();
        let handler = self.handler.clone();
        // Boxed: the task then holds a pointer, not the handler's whole future, which
        // spawning would copy.
        let reply: Pin<Box<dyn Future<Output = Reply> + Send>> = match (request, page) {
            // A page not cached when the request was read.
            (ClientRequest::ListToolsRequest(list), Some(page)) => {
                let mut line =
                    Box::pin(async move { handler.page_line(&id, page, list, context).await });
                // Serializing it awaits nothing (rmcp's dispatch of this server's own
                // list), so it is done here when it can be: the requests for the same page
                // read next then find it cached instead of each waiting in a task.
                if let Poll::Ready(line) =
                    line.as_mut().poll(&mut Context::from_waker(Waker::noop()))
                {
                    self.lines.queue_line_then(line, free);
                    return;
                }
                Box::pin(async move { Reply::Line(line.await) })
            }
            (request, _) => Box::pin(async move {
                Reply::Message(Box::new(
                    match handler.handle_request(request, context).await {
                        Ok(result) => JsonRpcMessage::response(result, id.clone()),
                        Err(error) => JsonRpcMessage::error(error, Some(id)),
                    },
                ))
            }),
        };
        let lines = self.lines.clone();
        self.calls.spawn(async move {
            let reply = reply.await;
            // A cancelled request gets no reply (as rmcp does), and its slot was freed
            // when the cancellation came in.
            if cancel.is_cancelled() {
                return;
            }
            // The writer frees the slot once the reply is written; this task ends here.
            let written = match reply {
                Reply::Line(line) => lines.send_line_then(line, free).await,
                Reply::Message(message) => lines.send_then(&message, free).await,
            };
            if let Err(error) = written {
                tracing::debug!(%error, "writing a reply failed");
            }
        });
        // Reap finished calls so the set holds only running ones.
        while self.calls.try_join_next().is_some() {}
    }

    /// At the end of input: let running calls answer for up to [`DRAIN`], then cancel them.
    async fn drain(&mut self) {
        let finished = async { while self.calls.join_next().await.is_some() {} };
        if tokio::time::timeout(DRAIN, finished).await.is_err() {
            tracing::warn!("timed out draining in-flight tool calls");
        }
        self.closing.cancel();
        self.calls.shutdown().await;
    }
}

/// What a call served in the transport answers: a message to serialize, or a line already
/// serialized (a cached `tools/list` page in its envelope).
enum Reply {
    Message(Box<TxJsonRpcMessage<RoleServer>>),
    Line(Vec<u8>),
}

impl Drop for Direct {
    fn drop(&mut self) {
        self.closing.cancel();
    }
}

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
    /// Whether an `initialize` was passed on: a second one is refused here.
    initialized: bool,
    /// Serves `tools/call` itself when set.
    direct: Option<Direct>,
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
    /// `inner` with at most `limit` requests in flight; `direct`: serve `tools/call` here.
    pub(crate) fn new(inner: T, limit: usize, direct: Option<Direct>) -> Bounded<T> {
        Bounded {
            inner,
            slots: Arc::new(Semaphore::new(limit.max(1))),
            limit: limit.max(1),
            held: Arc::default(),
            draining: None,
            parked: None,
            seen_request: false,
            initialized: false,
            direct,
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

/// Hold `slot` for request `id` (cancelled through `cancel`, if given) until the returned
/// closure runs: the writer runs it once the reply is written.
fn hold(
    held: &Held,
    id: &RequestId,
    slot: OwnedSemaphorePermit,
    cancel: Option<CancellationToken>,
) -> impl FnOnce() + Send + 'static {
    held.lock_ignoring_poison().insert(
        id.clone(),
        InFlight {
            _slot: slot,
            cancel,
        },
    );
    let (held, id) = (held.clone(), id.clone());
    move || drop(held.lock_ignoring_poison().remove(&id))
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
                held.lock_ignoring_poison().remove(&id);
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
        // Dropped once drained: its handle on the codec's writer must go before the
        // codec's close waits for the writer to finish.
        if let Some(mut direct) = self.direct.take() {
            direct.drain().await;
        }
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
                if let Some(direct) = &mut self.direct
                    && let Some(peer) = direct.peer_for(&request.request)
                {
                    direct.start(request, peer, slot, &self.held);
                    continue;
                }
                self.held.lock_ignoring_poison().insert(
                    request.id.clone(),
                    InFlight {
                        _slot: slot,
                        cancel: None,
                    },
                );
                return Some(JsonRpcMessage::Request(request));
            }
            let message = self.inner.receive().await?;
            match message {
                JsonRpcMessage::Request(request) => {
                    self.seen_request |= ends_initialization(&request.request);
                    let initialize = matches!(request.request, ClientRequest::InitializeRequest(_));
                    if initialize && self.initialized {
                        // The first one fixed the session's protocol version and
                        // capabilities; the HTTP front door answers the same.
                        tracing::debug!("a second initialize in a session; answering -32600");
                        let error = ErrorData::invalid_request(ALREADY_INITIALIZED, None);
                        let refusal = JsonRpcMessage::error(error, Some(request.id));
                        if self.inner.send(refusal).await.is_err() {
                            return None;
                        }
                        continue;
                    }
                    self.initialized |= initialize;
                    if !self.held.lock_ignoring_poison().contains_key(&request.id) {
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
                        // rmcp drops the reply of a cancelled request, so free its slot now;
                        // a call served here is cancelled here.
                        let freed = self.held.lock_ignoring_poison().remove(id);
                        if let Some(cancel) = freed.and_then(|f| f.cancel) {
                            cancel.cancel();
                        }
                    }
                    return Some(JsonRpcMessage::Notification(notification));
                }
                other => return Some(other),
            }
        }
    }
}
