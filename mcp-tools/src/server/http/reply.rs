//! Response bodies: one type for every reply the front door sends, which keeps the
//! connection marked busy and the in-flight permit held until the reply ends, gives up a
//! streamed reply whose client left, and turns a reply stream that holds nothing but the
//! result into a plain JSON body written in one go.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame, SizeHint};
use serde::de::IgnoredAny;
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use super::connections::Busy;
use super::sessions::{Activity, HttpSessions};
use crate::server::protocol::error_reply;

/// The error of a [`Reply`] whose client left before it was complete: the call was given
/// up, and the server ends the connection.
///
/// ```
/// let error = mcp_toolbelt::server::Abandoned;
/// assert!(error.to_string().contains("closed the connection"));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("the client closed the connection before the reply was ready")]
pub struct Abandoned;

/// A call streamed from a stateful session, cancelled if its stream ends before the result.
pub(super) struct SessionCall {
    pub(super) sessions: Arc<HttpSessions>,
    pub(super) session: Arc<str>,
    pub(super) request_id: Value,
}

impl SessionCall {
    /// Call `request_id` in session `session` of `sessions`.
    pub(super) fn new(sessions: Arc<HttpSessions>, session: Arc<str>, request_id: Value) -> Self {
        SessionCall {
            sessions,
            session,
            request_id,
        }
    }

    pub(super) fn cancel(self) {
        let SessionCall {
            sessions,
            session,
            request_id,
        } = self;
        sessions.cancel(session, request_id);
    }
}

/// What a reply holds until it ends (released by dropping).
#[derive(Default)]
pub(super) struct Holds {
    pub(super) _busy: Option<Busy>,
    pub(super) _permit: Option<OwnedSemaphorePermit>,
    /// Keeps the session from being parked or expired while the reply runs.
    pub(super) _session: Option<Activity>,
}

/// The body of every response the MCP endpoint ([`McpService`](super::McpService)) sends:
/// JSON, plain text, or a stream of server-sent events. It holds the request's place among
/// those in flight until it ends; dropping it early (the client left) cancels a streamed
/// session call.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use http_body_util::BodyExt;
/// use mcp_toolbelt::server::{HttpOptions, Server};
/// use tower_service::Service;
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let mut service = Server::new(registry).http_service(HttpOptions::default().stateless());
/// let request = http::Request::post("/")
///     .header("host", "localhost")
///     .header("content-type", "application/json")
///     .body(http_body_util::Full::new(bytes::Bytes::from("[]")))
///     .unwrap();
/// let reply: mcp_toolbelt::server::Reply = service.call(request).await.unwrap().into_body();
/// let text = reply.collect().await.unwrap().to_bytes();
/// assert!(std::str::from_utf8(&text).unwrap().contains("-32600"));
/// # });
/// ```
pub struct Reply {
    inner: BoxBody<Bytes, Infallible>,
    /// An event already read from `inner`, sent first.
    first: Option<Bytes>,
    /// The events of a streamed session call, read as they pass until its result.
    events: EventReader,
    holds: Holds,
    /// A streamed session call still waiting for its result.
    call: Option<SessionCall>,
    /// Completes when the client has been gone for the grace period.
    orphaned: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl Reply {
    fn new(inner: BoxBody<Bytes, Infallible>) -> Reply {
        Reply {
            inner,
            first: None,
            events: EventReader::default(),
            holds: Holds::default(),
            call: None,
            orphaned: None,
        }
    }

    /// The reply to a call given up because its client left: its body fails at once,
    /// which ends the connection.
    pub(super) fn abandoned() -> Response<Reply> {
        let mut reply = Reply::new(http_body_util::Empty::new().map_err(|e| match e {}).boxed());
        reply.orphaned = Some(Box::pin(std::future::ready(())));
        Response::new(reply)
    }

    /// Keep the connection marked `busy` until this reply ends.
    pub(super) fn hold(&mut self, busy: Busy) {
        self.holds._busy = Some(busy);
    }

    /// Release what the reply held (it ended).
    fn finish(&mut self) {
        self.holds = Holds::default();
        self.call = None;
        self.orphaned = None;
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(call) = self.call.take() {
            call.cancel();
        }
    }
}

impl Body for Reply {
    type Data = Bytes;
    type Error = Abandoned;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Abandoned>>> {
        let this = self.get_mut();
        if let Some(first) = this.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        }
        if let Some(orphaned) = &mut this.orphaned
            && orphaned.as_mut().poll(cx).is_ready()
        {
            tracing::debug!("giving up a streamed reply: its client left");
            this.holds = Holds::default();
            return Poll::Ready(Some(Err(Abandoned)));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if this.call.is_some()
                    && let Some(data) = frame.data_ref()
                    && this.events.feed(data).any(|message| is_final(&message))
                {
                    this.call = None;
                    this.events = EventReader::default();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(None) => {
                this.finish();
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        // A reply that may still be given up is never known to be over.
        self.first.is_none() && self.orphaned.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        if self.orphaned.is_some() {
            return SizeHint::default();
        }
        let mut hint = self.inner.size_hint();
        if let Some(first) = &self.first {
            let extra = first.len() as u64;
            hint.set_lower(hint.lower() + extra);
            if let Some(upper) = hint.upper() {
                hint.set_upper(upper + extra);
            }
        }
        hint
    }
}

/// A response with `body` and `content_type`.
pub(super) fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: Bytes,
) -> Response<Reply> {
    let mut response = Response::new(Reply::new(
        http_body_util::Full::new(body)
            .map_err(|e| match e {})
            .boxed(),
    ));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A JSON-RPC error object as the whole response.
pub(super) fn json_error(
    status: StatusCode,
    id: Value,
    code: i64,
    message: String,
) -> Response<Reply> {
    let body = error_reply(id, code, message).to_string();
    respond(status, "application/json", Bytes::from(body))
}

/// A plain-text response.
pub(super) fn plain(status: StatusCode, message: &str) -> Response<Reply> {
    respond(
        status,
        "text/plain; charset=utf-8",
        Bytes::from(message.to_string()),
    )
}

/// rmcp's response as ours: a 4xx without a `Content-Type` gets `text/plain` (all of
/// rmcp's bare replies are text).
pub(super) fn from_rmcp(
    response: Response<BoxBody<Bytes, Infallible>>,
    holds: Holds,
) -> Response<Reply> {
    let (mut parts, body) = response.into_parts();
    if parts.status.is_client_error() && !parts.headers.contains_key(header::CONTENT_TYPE) {
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
    }
    let mut reply = Reply::new(body);
    reply.holds = holds;
    Response::from_parts(parts, reply)
}

/// rmcp's `GET` stream as ours: it ends as soon as its client closes its side (nothing
/// in it is owed to anyone).
pub(super) fn listening(
    response: Response<BoxBody<Bytes, Infallible>>,
    holds: Holds,
    client_closed: &CancellationToken,
) -> Response<Reply> {
    let mut response = from_rmcp(response, holds);
    response.body_mut().orphaned = Some(Box::pin(orphaned(client_closed.clone(), Duration::ZERO)));
    response
}

/// True for a reply stream (`text/event-stream`).
pub(super) fn is_event_stream(response: &Response<BoxBody<Bytes, Infallible>>) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"))
}

/// Read a reply stream up to its first message, then answer with that message as JSON
/// when it is the result and `json` allows (the client prefers JSON), or stream on (what
/// was read included) otherwise. While waiting, a client gone for `grace` abandons the
/// call.
pub(super) async fn settle_stream(
    response: Response<BoxBody<Bytes, Infallible>>,
    json: bool,
    holds: Holds,
    call: Option<SessionCall>,
    client_closed: &CancellationToken,
    grace: Duration,
) -> Result<Response<Reply>, Abandoned> {
    let (mut parts, mut body) = response.into_parts();
    let mut events = EventReader::default();
    let first = tokio::select! {
        first = first_event(&mut body, &mut events) => first,
        _ = orphaned(client_closed.clone(), grace) => {
            if let Some(call) = call {
                call.cancel();
            }
            return Err(Abandoned);
        }
    };
    let mut reply = Reply::new(body);
    reply.holds = holds;
    match first {
        (_, Some(message)) if json && is_final(&message) => {
            // The result alone: one JSON body with a length, written in one go.
            parts.headers.remove(header::CACHE_CONTROL);
            parts.headers.remove("x-accel-buffering");
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            reply.inner = http_body_util::Full::new(Bytes::from(message))
                .map_err(|e| match e {})
                .boxed();
        }
        (read, message) => {
            let finished = message.as_deref().is_some_and(is_final);
            reply.first = (!read.is_empty()).then_some(read);
            if !finished {
                reply.call = call;
                reply.events = events;
            }
            reply.orphaned = Some(Box::pin(orphaned(client_closed.clone(), grace)));
        }
    }
    Ok(Response::from_parts(parts, reply))
}

/// Completes `grace` after the client closed its side.
pub(super) async fn orphaned(client_closed: CancellationToken, grace: Duration) {
    client_closed.cancelled_owned().await;
    tokio::time::sleep(grace).await;
}

/// Everything a reply stream sent up to and including its first event with a message
/// (priming events included), and that message (`None`: the stream ended first). Events
/// are read whatever frames they come in (`events` keeps an event begun in the last
/// frame read).
async fn first_event(
    body: &mut BoxBody<Bytes, Infallible>,
    events: &mut EventReader,
) -> (Bytes, Option<Vec<u8>>) {
    let mut read = bytes::BytesMut::new();
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(bytes) = frame.into_data() {
            read.extend_from_slice(&bytes);
            if let Some(message) = events.feed(&bytes).next() {
                return (read.freeze(), Some(message));
            }
        }
    }
    (read.freeze(), None)
}

/// Splits a stream of server-sent events into events, however its bytes are cut into
/// frames: an event ends at a blank line; lines end with CR LF, LF or CR (the event
/// stream format of the HTML standard).
#[derive(Default)]
struct EventReader {
    /// The bytes of an event not yet ended.
    pending: Vec<u8>,
}

impl EventReader {
    /// Take `bytes`; the data of each event they complete that has data, in order.
    fn feed(&mut self, bytes: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
        self.pending.extend_from_slice(bytes);
        std::iter::from_fn(move || {
            loop {
                let end = event_end(&self.pending)?;
                let event: Vec<u8> = self.pending.drain(..end).collect();
                if let Some(data) = sse_data(&event) {
                    return Some(data);
                }
            }
        })
    }
}

/// The length of the first whole event in `bytes` (through the blank line that ends it),
/// `None` when no event is whole yet. A CR last in `bytes` may be the first half of a CR
/// LF: the event waits for the next byte.
fn event_end(bytes: &[u8]) -> Option<usize> {
    let mut line_start = 0;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte != b'\n' && byte != b'\r' {
            at += 1;
            continue;
        }
        let mut next = at + 1;
        if byte == b'\r' {
            match bytes.get(next) {
                None => return None,
                Some(b'\n') => next += 1,
                Some(_) => {}
            }
        }
        if at == line_start {
            return Some(next);
        }
        line_start = next;
        at = next;
    }
    None
}

/// The lines of one event, without their ends.
fn event_lines(event: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = event;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.iter().position(|&b| b == b'\n' || b == b'\r');
        let (line, after) = match end {
            None => (rest, &rest[rest.len()..]),
            Some(end) => {
                let skip = match &rest[end..] {
                    [b'\r', b'\n', ..] => 2,
                    _ => 1,
                };
                (&rest[..end], &rest[end + skip..])
            }
        };
        rest = after;
        Some(line)
    })
}

/// The `data` of one server-sent event, `None` when it has none (a priming event or a
/// keep-alive comment).
fn sse_data(event: &[u8]) -> Option<Vec<u8>> {
    let mut data: Option<Vec<u8>> = None;
    for line in event_lines(event) {
        let value = match line.strip_prefix(b"data") {
            Some([]) => &[][..],
            Some([b':', value @ ..]) => value.strip_prefix(b" ").unwrap_or(value),
            _ => continue,
        };
        match &mut data {
            None => data = Some(value.to_vec()),
            Some(data) => {
                data.push(b'\n');
                data.extend_from_slice(value);
            }
        }
    }
    data.filter(|d| !d.is_empty())
}

/// True when `message` is a response or an error (the last message of a call's stream).
fn is_final(message: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        method: Option<IgnoredAny>,
        result: Option<IgnoredAny>,
        error: Option<IgnoredAny>,
    }
    serde_json::from_slice::<Probe>(message)
        .is_ok_and(|p| p.method.is_none() && (p.result.is_some() || p.error.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_and_results_told_from_notifications() {
        let event = b"id: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let data = sse_data(event).unwrap();
        assert!(is_final(&data));
        assert_eq!(sse_data(b"id: 0\nretry: 3000\ndata:\n\n"), None);
        assert_eq!(sse_data(b": keep-alive\n\n"), None);
        let progress = sse_data(
            b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n",
        )
        .unwrap();
        assert!(!is_final(&progress));
        let error = br#"{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}"#;
        assert!(is_final(error));
    }

    /// An event is found whatever frames carry it: split inside a line, inside a CR LF,
    /// or several events in one frame.
    #[test]
    fn events_are_found_across_and_within_frames() {
        let stream = b"id: 0\r\nretry: 3000\r\ndata:\r\n\r\n\
            data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\n\r\n\
            id: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n";
        for cut in 1..stream.len() {
            let mut reader = EventReader::default();
            let mut messages: Vec<Vec<u8>> = reader.feed(&stream[..cut]).collect();
            messages.extend(reader.feed(&stream[cut..]));
            assert_eq!(messages.len(), 2, "cut at {cut}");
            assert!(!is_final(&messages[0]), "cut at {cut}");
            assert!(is_final(&messages[1]), "cut at {cut}");
            assert_eq!(
                messages[1],
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\n\"result\":{}}".to_vec()
            );
        }
        // Bare CR line ends, and a field named only `data`.
        let mut reader = EventReader::default();
        let found: Vec<_> = reader.feed(b"data\rdata: x\r\r\n").collect();
        assert_eq!(found, vec![b"\nx".to_vec()]);
        // An event not yet ended waits.
        let mut reader = EventReader::default();
        assert_eq!(reader.feed(b"data: {}\n").count(), 0);
        assert_eq!(reader.feed(b"\n").count(), 1);
    }
}
