//! The HTTP fast path: everyday requests served without rmcp's per-request machinery.
//!
//! For a stateless request rmcp parses the body again, builds a handler, starts a service
//! loop over a one-message transport and passes the reply back through two channels. A
//! request that takes the fast path ([`takes_fast_path`], with an `Accept` naming JSON and
//! event streams plainly and an `MCP-Protocol-Version` before 2026-07-28, or none) goes to
//! the same dispatch (`Service::handle_request` of the handler, every check rmcp makes
//! there included) inside the HTTP request's own task. The handler still gets a peer
//! (rmcp's `serve_directly` over a transport carrying only its own messages into this
//! reply), so progress and logs stream as through rmcp: a result alone is one JSON body,
//! anything sent before it makes the reply an event stream. A `tools/list` page already
//! serialized for the caller's view (`tool_pages.rs`) is answered from its bytes.
//!
//! In a live stateful session ([`Direct::serve_in_session`]) the same requests are served
//! with the session's state and the peer of its rmcp service
//! ([`LiveSession`](crate::server::state::LiveSession): only for a client that declared no
//! capability), when the client ranks `application/json` first and the call has no
//! progress token (those ride the call's own resumable stream in rmcp). A call the client
//! cancels ends with an empty event stream and no result, as rmcp drops it.

use std::borrow::Cow;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame};
use rmcp::Service;
use rmcp::model::{
    ClientCapabilities, ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData,
    GetExtensions, GetMeta, Implementation, InitializeRequestParams, JsonRpcMessage,
    JsonRpcRequest, ProtocolVersion, RequestId, ServerConfig, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, RoleServer, RxJsonRpcMessage, TxJsonRpcMessage,
    serve_directly_with_ct,
};
use rmcp::transport::Transport;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::media::Accepts;
use crate::Caller;
use crate::server::handler::McpHandler;
use crate::server::protocol::{
    code, error_reply, header::PROTOCOL_VERSION, is_modern_version, request_context,
    takes_fast_path,
};
use crate::server::state::{DirectCall, Session, Shared};

/// Messages a call may send before its reply is read (progress, logs).
const OUTGOING: usize = 16;

/// What a request needs to be served directly: the request and the protocol version a
/// stateless handler sees (from `MCP-Protocol-Version`, as rmcp derives it).
pub(super) struct Eligible {
    request: JsonRpcRequest<ClientRequest>,
    version: ProtocolVersion,
}

impl Eligible {
    /// `message`, found eligible with `version`; `None` when it is not a request.
    pub(super) fn new(message: ClientJsonRpcMessage, version: ProtocolVersion) -> Option<Self> {
        match message {
            ClientJsonRpcMessage::Request(request) => Some(Eligible { request, version }),
            _ => None,
        }
    }
}

/// Serves everyday requests without rmcp's service loop (see the module docs).
pub(super) struct Direct {
    /// One handler for every direct stateless request: the methods served here read no
    /// session state (the caller comes with each request).
    handler: McpHandler,
    /// How often a streamed reply sends a keep-alive comment (rmcp's setting).
    keep_alive: Option<Duration>,
    /// Fires when the server stops: replies in progress end.
    shutdown: CancellationToken,
}

impl Direct {
    pub(super) fn new(
        shared: Arc<Shared>,
        keep_alive: Option<Duration>,
        shutdown: CancellationToken,
    ) -> Direct {
        Direct {
            handler: McpHandler::new_session(shared),
            keep_alive,
            shutdown,
        }
    }

    /// The protocol version the handler of `message` sees when it can be served directly
    /// statelessly, or `None` when rmcp must serve it (whether it qualifies depends on the
    /// message and the headers only).
    pub(super) fn eligible(
        headers: &HeaderMap,
        accepts: &Accepts,
        message: &ClientJsonRpcMessage,
    ) -> Option<ProtocolVersion> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        let served_here = takes_fast_path(&request.request) && accepts.names_both_plainly();
        header_version(headers).filter(|_| served_here)
    }

    /// The peer `session` lends when `message` can be served directly in that live
    /// session, or `None` when rmcp must serve it (the client's `Accept` must rank
    /// `application/json` first).
    pub(super) fn eligible_in_session(
        headers: &HeaderMap,
        accepts: &Accepts,
        message: &ClientJsonRpcMessage,
        session: &Session,
    ) -> Option<Peer<RoleServer>> {
        if !accepts.prefers_json() {
            return None;
        }
        Direct::eligible(headers, accepts, message)?;
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        if request.request.get_meta().get_progress_token().is_some() {
            return None;
        }
        session.live.peer()
    }

    /// Serve `eligible` for the request whose head is `parts`: rmcp's response shape (a
    /// JSON body, or an event stream when the handler sends something before its result).
    pub(super) async fn serve(
        &self,
        parts: http::request::Parts,
        eligible: Eligible,
    ) -> Response<BoxBody<Bytes, Infallible>> {
        let Eligible { request, version } = eligible;
        let JsonRpcRequest {
            id, mut request, ..
        } = request;
        // A `tools/list` page: from its serialized bytes when cached, else rmcp's answer
        // below, kept as the page (tool_pages.rs). A list never streams.
        let page = match &request {
            ClientRequest::ListToolsRequest(list) => {
                let cursor = list.params.as_ref().and_then(|p| p.cursor.as_deref());
                let page = self.handler.page_request(
                    cursor,
                    parts.extensions.get::<Caller>(),
                    is_modern_version(&version),
                );
                if let Some(line) = self.handler.cached_page_line(&id, &page) {
                    return json_body(line);
                }
                Some(page)
            }
            _ => None,
        };
        let (sender, mut outgoing) = mpsc::channel(OUTGOING);
        let cancel = CancellationToken::new();
        // The handler's peer: what it sends goes to `outgoing`; nothing comes in.
        let peer_info =
            InitializeRequestParams::new(ClientCapabilities::default(), Implementation::default())
                .with_protocol_version(version);
        let running = serve_directly_with_ct(
            PeerOnly,
            ReplyTransport(sender.clone()),
            Some(peer_info),
            cancel.clone(),
        );
        request.extensions_mut().insert(parts);
        let mut context = request_context(id.clone(), &mut request, running.peer().clone());
        context.ct = cancel.child_token();
        let handler = self.handler.clone();
        let id_of_call = id.clone();
        let mut call = Box::pin(async move {
            match handler.handle_request(request, context).await {
                Ok(result) => {
                    if let Some(page) = page {
                        handler.keep_page(page, &result);
                    }
                    JsonRpcMessage::response(result, id)
                }
                Err(error) => JsonRpcMessage::error(error, Some(id)),
            }
        });
        let first = tokio::select! {
            biased;
            Some(first) = outgoing.recv() => first,
            reply = &mut call => {
                cancel.cancel();
                return json_response(&reply);
            }
            _ = self.shutdown.cancelled() => {
                cancel.cancel();
                return json_response(&stopped(id_of_call));
            }
        };
        // Something came before the result: stream, with the rest of the call in a task.
        let shutdown = self.shutdown.clone();
        let ended = cancel.clone();
        tokio::spawn(async move {
            let _running = running;
            tokio::select! {
                reply = call => {
                    let _ = sender.send(reply).await;
                }
                _ = ended.cancelled() => {}
                _ = shutdown.cancelled() => {
                    // The stream ends with the call's error, not cut off.
                    let _ = sender.send(stopped(id_of_call)).await;
                }
            }
            ended.cancel();
        });
        event_stream(
            Stream {
                first: Some(first),
                outgoing,
                keep_alive: self.keep_alive.map(|every| {
                    let mut ticks =
                        tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                    ticks
                }),
                cancel_on_drop: Some(cancel.drop_guard()),
            }
            .boxed(),
        )
    }
}

impl Direct {
    /// Serve `eligible` in the session whose state is `session`, with its service's `peer`
    /// (see the module docs): the result as one JSON body, or an empty event stream when the
    /// client cancelled the call.
    pub(super) async fn serve_in_session(
        &self,
        parts: http::request::Parts,
        eligible: Eligible,
        session: Arc<Session>,
        peer: Peer<RoleServer>,
    ) -> Response<BoxBody<Bytes, Infallible>> {
        let JsonRpcRequest {
            id, mut request, ..
        } = eligible.request;
        let call = DirectCall::start(session.clone(), id.clone());
        request.extensions_mut().insert(parts);
        let mut context = request_context(id.clone(), &mut request, peer);
        context.ct = call.token().child_token();
        let handler = McpHandler::with_session(self.handler.shared.clone(), session);
        let request = match request {
            // A page from its serialized bytes when cached (tool_pages.rs), as on stdio.
            ClientRequest::ListToolsRequest(list) => {
                return json_body(handler.tools_list_line(&id, list, context).await);
            }
            request => request,
        };
        let reply = tokio::select! {
            biased;
            // First: a cancelled call's handler may answer at once, but no answer is owed.
            _ = call.token().cancelled() => {
                tracing::debug!(%id, "a directly served call was cancelled by its client");
                return event_stream(http_body_util::Empty::new().boxed());
            }
            reply = handler.handle_request(request, context) => reply,
            _ = self.shutdown.cancelled() => return json_response(&stopped(id)),
        };
        json_response(&match reply {
            Ok(result) => JsonRpcMessage::response(result, id),
            Err(error) => JsonRpcMessage::error(error, Some(id)),
        })
    }
}

/// The protocol version a stateless request's handler sees: the `MCP-Protocol-Version`
/// header's (2025-03-26 without one, as rmcp assumes); `None` when rmcp must judge the
/// header (unknown, not text, repeated) or it is 2026-07-28 or later.
pub(super) fn header_version(headers: &HeaderMap) -> Option<ProtocolVersion> {
    let mut values = headers.get_all(PROTOCOL_VERSION).iter();
    let Some(value) = values.next() else {
        return Some(ProtocolVersion::V_2025_03_26);
    };
    if values.next().is_some() {
        return None;
    }
    let value = value.to_str().ok()?;
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|known| known.as_str() == value)
        .filter(|known| known.as_str() < ProtocolVersion::V_2026_07_28.as_str())
        .cloned()
}

/// `reply` as the whole response, a JSON body (as rmcp answers a stateless request whose
/// first message is its result: `200` whether a result or an error).
fn json_response(reply: &ServerJsonRpcMessage) -> Response<BoxBody<Bytes, Infallible>> {
    match serde_json::to_vec(reply) {
        Ok(body) => json_body(body),
        Err(error) => {
            tracing::error!(%error, "cannot serialize a reply");
            internal_error("the reply could not be serialized")
        }
    }
}

/// A reply serialized already as the whole response ([`json_response`]).
fn json_body(body: Vec<u8>) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(http_body_util::Full::new(Bytes::from(body)).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The answer to call `id` that the server's shutdown cut short (the grace ran out).
fn stopped(id: RequestId) -> ServerJsonRpcMessage {
    JsonRpcMessage::error(
        ErrorData::internal_error(
            "Internal error: the server shut down before the call finished (its shutdown grace ran out)",
            None,
        ),
        Some(id),
    )
}

/// The answer to a request the server could not finish: `500` with a JSON-RPC error
/// saying `why` (as rmcp answers a stateless request that got no reply).
fn internal_error(why: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let body = error_reply(
        serde_json::Value::Null,
        code::INTERNAL_ERROR,
        format!("Internal error: {why}"),
    )
    .to_string();
    let mut response = Response::new(http_body_util::Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A streamed reply with rmcp's headers.
fn event_stream(body: BoxBody<Bytes, Infallible>) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// A directly served call's reply as server-sent events: each message the call sent, then
/// its result, with a keep-alive comment while nothing comes. Dropping it (the client
/// left) cancels the call.
struct Stream {
    first: Option<ServerJsonRpcMessage>,
    outgoing: mpsc::Receiver<ServerJsonRpcMessage>,
    keep_alive: Option<tokio::time::Interval>,
    /// Cancels the call when the reply is dropped before its end; `None` once ended.
    cancel_on_drop: Option<DropGuard>,
}

impl Body for Stream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.cancel_on_drop.is_none() {
            return Poll::Ready(None);
        }
        let message = match this.first.take() {
            Some(first) => Some(first),
            None => match this.outgoing.poll_recv(cx) {
                Poll::Ready(message) => message,
                Poll::Pending => {
                    if let Some(ticks) = &mut this.keep_alive
                        && ticks.poll_tick(cx).is_ready()
                    {
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
                            b": keep-alive\n\n",
                        )))));
                    }
                    return Poll::Pending;
                }
            },
        };
        let Some(message) = message else {
            // The call ended without a result (cancelled, or the server stopped).
            this.cancel_on_drop = None;
            return Poll::Ready(None);
        };
        if matches!(
            message,
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_)
        ) {
            // The result ends the stream; the call is over, nothing to cancel.
            if let Some(guard) = this.cancel_on_drop.take() {
                guard.disarm();
            }
        }
        let mut event = b"data: ".to_vec();
        if let Err(error) = serde_json::to_writer(&mut event, &message) {
            tracing::error!(%error, "cannot serialize a streamed message");
            return Poll::Ready(None);
        }
        event.extend_from_slice(b"\n\n");
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(event)))))
    }
}

/// The transport under a directly served call's peer: what the handler sends through the
/// peer goes into the request's reply; nothing ever comes in (the request itself was
/// handed to the handler directly).
struct ReplyTransport(mpsc::Sender<ServerJsonRpcMessage>);

/// A message sent after its reply ended.
#[derive(Debug, thiserror::Error)]
#[error("the reply this message belongs to has ended")]
struct ReplyEnded;

impl Transport<RoleServer> for ReplyTransport {
    type Error = ReplyEnded;

    fn name() -> Cow<'static, str> {
        "stateless HTTP reply".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), ReplyEnded>> + Send + 'static {
        let sender = self.0.clone();
        async move { sender.send(item).await.map_err(|_| ReplyEnded) }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        std::future::pending()
    }

    async fn close(&mut self) -> Result<(), ReplyEnded> {
        Ok(())
    }
}

/// The service of a directly served call's peer loop: it carries the handler's outgoing
/// messages only, and is never asked anything (its transport brings nothing in).
struct PeerOnly;

impl Service<RoleServer> for PeerOnly {
    async fn handle_request(
        &self,
        _request: ClientRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        Err(ErrorData::internal_error(
            "this peer serves no requests",
            None,
        ))
    }

    async fn handle_notification(
        &self,
        _notification: ClientNotification,
        _context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        headers
    }

    #[test]
    fn protocol_versions_rmcp_serves_the_same_way_qualify() {
        let version = |value: &str| header_version(&headers(&[("mcp-protocol-version", value)]));
        assert_eq!(
            header_version(&HeaderMap::new()),
            Some(ProtocolVersion::V_2025_03_26)
        );
        assert_eq!(version("2025-11-25"), Some(ProtocolVersion::V_2025_11_25));
        assert_eq!(version("2025-06-18"), Some(ProtocolVersion::V_2025_06_18));
        assert_eq!(version("2026-07-28"), None, "standard headers: rmcp's");
        assert_eq!(version("1999-01-01"), None, "unknown: rmcp answers");
        let twice = headers(&[
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-protocol-version", "2025-06-18"),
        ]);
        assert_eq!(header_version(&twice), None);
    }
}
