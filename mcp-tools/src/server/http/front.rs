//! The front door in front of rmcp's `StreamableHttpService`: the body read and checked
//! by our codec (every bad body gets a JSON-RPC error with `400`), sessions (the cap, their
//! owners, no second `initialize`, the session each request serves, for parking), the bound
//! on requests in flight, and the disconnect policy. Authentication runs first
//! (`service.rs`). A batch in a session on protocol 2025-03-26 (the one revision with
//! batches), or sent to a stateless server on that revision (its `MCP-Protocol-Version`
//! header, or none), is served element by element, each as a request of its own, and
//! answered with the array of their replies; elsewhere a batch is `-32600`.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Either, Full, Limited};
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ClientRequest, ProtocolVersion};
use rmcp::service::{Peer, RoleServer};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::authenticate::{Authenticator, ByCredential, authenticate};
use super::body::RequestBody;
use super::direct::{Direct, Eligible, header_version};
use super::media::{Accepts, body_is_json};
use super::options::HttpLimits;
use super::reply::{
    Holds, Reply, SessionCall, from_rmcp, is_event_stream, json_error, listening, orphaned, plain,
    respond, settle_stream,
};
use super::sessions::{Activity, HttpSessions, Principal, Serving};
use super::site::SiteRule;
use crate::Caller;
use crate::output::error::echo;
use crate::server::decode::{batch_elements, decode_document, removed_request};
use crate::server::handler::McpHandler;
use crate::server::protocol::code::{
    INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RATE_LIMITED, SERVER_BUSY, SESSION_NOT_FOUND,
};
use crate::server::protocol::error_reply;
use crate::server::protocol::header::SESSION_ID;
use crate::server::protocol::{ALREADY_INITIALIZED, takes_batches};
use crate::server::protocol::{method_not_found, speaks_modern};
use crate::server::rate_limit::refusal_data;
use crate::server::state::Session;
use crate::server::telemetry::AuthRefusal;

/// A request entered in its session: the session's id, the request's activity (the session
/// is not idle while it lives) and what rmcp serves it with.
type Entered = (Arc<str>, Activity, Serving);

/// A request's checked message (`None`: not read, see `read_message`) and the request,
/// with the body read or not.
type ReadMessage = (
    Option<ClientJsonRpcMessage>,
    Request<Either<Full<Bytes>, RequestBody>>,
);

/// A request the direct path serves: it, and in a session the session's state and the
/// peer it lends.
type DirectRoute = (Eligible, Option<(Arc<Session>, Peer<RoleServer>)>);

/// Put in a request's extensions by the accept loop: fires when the client closes its
/// side of the connection (a mounted endpoint has none and never sees it fire).
#[derive(Clone)]
pub(super) struct ClientGone(pub(super) CancellationToken);

/// Everything between the HTTP server and rmcp's service.
pub(super) struct Front<M> {
    pub(super) service: StreamableHttpService<McpHandler, M>,
    /// [`HttpOptions::authenticator`](super::HttpOptions::authenticator)'s check, when set.
    pub(super) authenticator: Option<Arc<dyn Authenticator>>,
    /// The OAuth resource server among the authenticators, for step-up.
    #[cfg(feature = "oauth")]
    pub(super) oauth: Option<Arc<crate::server::oauth::ResourceServer>>,
    /// The server's registry, for the step-up check of a `tools/call`.
    pub(super) registry: crate::registry::ToolRegistry,
    /// Stateful mode's sessions (`None` when stateless).
    pub(super) sessions: Option<Arc<HttpSessions>>,
    /// Which `Host` and `Origin` requests may carry (checked before anything else).
    pub(super) site: SiteRule,
    /// The direct path for everyday requests, stateless or in a live session.
    pub(super) direct: Direct,
    pub(super) in_flight: Arc<Semaphore>,
    pub(super) max_in_flight: usize,
    /// Whether everyday requests take the direct path (`Server::fast_paths`).
    pub(super) fast_paths: bool,
    pub(super) limits: HttpLimits,
    /// The server's rate limits: a caller past its overall one is refused here.
    pub(super) rate: crate::server::rate_limit::RateLimiter,
    /// Where authentication refusals are counted.
    pub(super) metrics: crate::server::telemetry::Metrics,
}

impl<M: SessionManager> Front<M> {
    /// Answer one request. A call whose client left (and stayed away for the grace
    /// period) gets a reply whose body fails at once, which ends the connection.
    pub(super) async fn handle(&self, request: Request<RequestBody>) -> Response<Reply> {
        if let Err(refusal) = self.site.check(request.uri(), request.headers()) {
            return plain(refusal.status, refusal.message);
        }
        let mut batch = None;
        let response = self.handle_one(request, Some(&mut batch)).await;
        match batch {
            // Boxed: a rare path, kept out of every request's future.
            Some((parts, elements)) => Box::pin(self.serve_batch(parts, elements)).await,
            None => response,
        }
    }

    /// `429` with `Retry-After` (whole seconds, rounded up) and the `-32029` error (id
    /// `null`: the body is not read) when the POST's caller is past its overall rate limit.
    /// `caller`: the request's (`None`: the local caller).
    async fn rate_refusal(&self, caller: Option<Caller>) -> Option<Response<Reply>> {
        let caller = caller.as_ref().unwrap_or(&crate::caller::LOCAL);
        let refusal = self.rate.caller_refusal(caller).await?;
        let mut body = error_reply(Value::Null, RATE_LIMITED, refusal.to_string());
        body["error"]["data"] = refusal_data(&refusal, "");
        let mut response = respond(
            StatusCode::TOO_MANY_REQUESTS,
            "application/json",
            Bytes::from(body.to_string()),
        );
        let seconds = refusal.retry_after.as_micros().div_ceil(1_000_000).max(1);
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(u64::try_from(seconds).unwrap_or(u64::MAX)),
        );
        Some(response)
    }

    /// [`handle`](Self::handle), except that a batch of a session that takes batches is
    /// put into `batch` (when given) for the caller to serve, with a placeholder response.
    async fn handle_one(
        &self,
        request: Request<RequestBody>,
        batch: Option<&mut Option<Batch>>,
    ) -> Response<Reply> {
        let request = match self.authenticate(request).await {
            Ok(request) => request,
            Err(refusal) => return refusal,
        };
        if request.method() == Method::POST && self.rate.limits().has_caller_limits() {
            // The caller cloned: no borrow of the request (its body is not `Sync`) may
            // cross the await.
            let caller = request.extensions().get::<Caller>().cloned();
            if let Some(refusal) = Box::pin(self.rate_refusal(caller)).await {
                return refusal;
            }
        }
        let client_closed = request
            .extensions()
            .get::<ClientGone>()
            .map_or_else(CancellationToken::new, |gone| gone.0.clone());
        let principal = self.principal(&request);
        let entered = match self.enter_session(&request, principal) {
            Ok(entered) => entered,
            Err(refusal) => return *refusal,
        };
        let method = request.method().clone();
        let holds_permit = method == Method::POST;
        let accepts = Accepts::of(request.headers());
        let json = accepts.prefers_json();
        let batches = batch.is_some() && self.takes_batches(&request, entered.as_ref());
        let (message, request) = match self
            .read_message(request, &client_closed, batches, batch)
            .await
        {
            Ok(read) => read,
            Err(response) => return *response,
        };
        if let Some(refusal) = self.step_up(&request, &message) {
            return refusal;
        }
        let (id, initialize) = id_and_initialize(message.as_ref());
        if initialize && entered.is_some() {
            return json_error(
                StatusCode::BAD_REQUEST,
                id,
                INVALID_REQUEST,
                ALREADY_INITIALIZED.into(),
            );
        }
        let permit = if holds_permit {
            self.in_flight.clone().acquire_owned().await.ok()
        } else {
            None
        };
        let (session, activity, serving) = match entered {
            Some((id, activity, serving)) => (Some(id), Some(activity), Some(serving)),
            None => (None, None, None),
        };
        if let (Some(serving), Some(message)) = (&serving, &message) {
            cancel_direct_call(serving, message);
        }
        let holds = Holds {
            _busy: None,
            _permit: permit,
            _session: activity,
        };
        let opens_session = initialize && self.sessions.is_some();
        let (serving, opening) = match opens_session {
            true => match self.open_session(&id).await {
                Ok(guard) => (Some(HttpSessions::opening_for(principal)), guard),
                Err(refusal) => return *refusal,
            },
            false => (serving, None),
        };
        let call = match (&self.sessions, session, &message) {
            (Some(sessions), Some(session), Some(ClientJsonRpcMessage::Request(_))) => {
                Some(SessionCall::new(sessions.clone(), session, id))
            }
            _ => None,
        };
        let (direct, request) =
            self.route(request, message, serving.as_ref(), &accepts, opens_session);
        let grace = self.limits.disconnect_grace;
        // rmcp's futures are several kilobytes: boxed, so this one stays small (it is moved
        // whole into hyper's connection task for every request).
        let served = async {
            if let Some((eligible, in_session)) = direct {
                let (parts, _) = request.into_parts();
                return match in_session {
                    Some((state, peer)) => {
                        Box::pin(self.direct.serve_in_session(parts, eligible, state, peer)).await
                    }
                    None => Box::pin(self.direct.serve(parts, eligible)).await,
                };
            }
            let rmcp = Box::pin(self.service.handle(request));
            match serving {
                Some(serving) => HttpSessions::serve(serving, rmcp).await,
                None => rmcp.await,
            }
        };
        let response = tokio::select! {
            response = served => response,
            _ = orphaned(client_closed.clone(), grace) => return Reply::abandoned(),
        };
        drop(opening);
        self.settle(response, &method, json, holds, call, &client_closed)
            .await
    }

    /// The request's body, read and checked when it is a `POST` with a JSON body (bodies
    /// rmcp would refuse anyway, without a JSON `Content-Type`, go to it unread), with the
    /// request whose body it was; a batch (when `batches`) is put into `batch` for the
    /// caller to serve, answered here with a placeholder.
    async fn read_message(
        &self,
        request: Request<RequestBody>,
        client_closed: &CancellationToken,
        batches: bool,
        batch: Option<&mut Option<Batch>>,
    ) -> Result<ReadMessage, Box<Response<Reply>>> {
        if request.method() != Method::POST || !body_is_json(request.headers()) {
            return Ok((None, request.map(Either::Right)));
        }
        match self.read_body(request, client_closed, batches).await? {
            Read::Message(message, request) => Ok((Some(message), request.map(Either::Left))),
            Read::Batch(parts, elements) => {
                if let Some(batch) = batch {
                    *batch = Some((parts, elements));
                }
                Err(Box::new(respond(
                    StatusCode::ACCEPTED,
                    "application/json",
                    Bytes::new(),
                )))
            }
        }
    }

    /// The reply to a request of `method` from `response`, what served it: a JSON body as
    /// it is (a session ended on request answers `204`), a `GET` stream that ends when its
    /// client leaves, or a call's stream settled into JSON when it holds nothing but the
    /// result and the client prefers JSON (`json`).
    async fn settle(
        &self,
        mut response: Response<BoxBody<Bytes, Infallible>>,
        method: &Method,
        json: bool,
        holds: Holds,
        call: Option<SessionCall>,
        client_closed: &CancellationToken,
    ) -> Response<Reply> {
        if !is_event_stream(&response) {
            if method == Method::DELETE && response.status() == StatusCode::ACCEPTED {
                // A session ended on request: done, nothing to say. rmcp answers 202, which
                // clients (the Python SDK) report as a failed termination.
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            return from_rmcp(response, holds);
        }
        if method != Method::POST {
            // A `GET` stream: it ends when its client leaves, freeing the session to park.
            return listening(response, holds, client_closed);
        }
        let grace = self.limits.disconnect_grace;
        settle_stream(response, json, holds, call, client_closed, grace)
            .await
            .unwrap_or_else(|_| Reply::abandoned())
    }

    /// The session `request` names and, when it names one, the request entered in it; the
    /// `404` of an unknown session (another caller's looks the same) when it cannot be.
    /// A stateless server has no sessions: the header means nothing to it, whatever the
    /// method (it reaches rmcp, whose stateless mode ignores it too).
    fn enter_session<B>(
        &self,
        request: &Request<B>,
        principal: Principal,
    ) -> Result<Option<Entered>, Box<Response<Reply>>> {
        let Some(sessions) = &self.sessions else {
            return Ok(None);
        };
        let Some(id) = request
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(Arc::<str>::from)
        else {
            return Ok(None);
        };
        match sessions.enter(&id, principal) {
            Some((activity, serving)) => Ok(Some((id, activity, serving))),
            None => Err(Box::new(json_error(
                StatusCode::NOT_FOUND,
                Value::Null,
                SESSION_NOT_FOUND,
                "Session not found".into(),
            ))),
        }
    }

    /// True when `request` (in the session it `entered`, if any) may be a batch: a session
    /// on 2025-03-26 takes batches (the caller serves them element by element); so does a
    /// stateless request on 2025-03-26 (its `MCP-Protocol-Version`, or none: what the
    /// specification says to assume without one, as rmcp does).
    fn takes_batches<B>(&self, request: &Request<B>, entered: Option<&Entered>) -> bool {
        match (&self.sessions, entered) {
            (Some(_), entered) => entered
                .is_some_and(|(_, _, serving)| serving.state().batches.load(Ordering::SeqCst)),
            (None, _) => {
                header_version(request.headers()).is_some_and(|version| takes_batches(&version))
            }
        }
    }

    /// Hold the right to open a session (so concurrent `initialize`s cannot overshoot the
    /// cap) until the session is open; the `503` answering request `id` when the cap is
    /// reached.
    async fn open_session(
        &self,
        id: &Value,
    ) -> Result<Option<tokio::sync::MutexGuard<'_, ()>>, Box<Response<Reply>>> {
        let Some(sessions) = &self.sessions else {
            return Ok(None);
        };
        let guard = sessions.opening.lock().await;
        if sessions.full() && !sessions.evict_parked() {
            tracing::warn!(
                max = sessions.max(),
                "refused a session: the cap is reached"
            );
            return Err(Box::new(json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                id.clone(),
                SERVER_BUSY,
                format!(
                    "Server busy: {} sessions are open, the most this server allows; retry later",
                    sessions.max()
                ),
            )));
        }
        Ok(Some(guard))
    }

    /// Which path serves `message`: the direct one (with the session state and peer it
    /// lends, in a session) and the request's head, or rmcp with the checked message as
    /// the body.
    fn route(
        &self,
        request: Request<Either<Full<Bytes>, RequestBody>>,
        message: Option<ClientJsonRpcMessage>,
        serving: Option<&Serving>,
        accepts: &Accepts,
        opens_session: bool,
    ) -> (
        Option<DirectRoute>,
        Request<Either<Full<Bytes>, RequestBody>>,
    ) {
        let message_for_direct = message.as_ref().filter(|_| self.fast_paths);
        let direct = match (message_for_direct, serving, &self.sessions) {
            (Some(message), None, None) => {
                Direct::eligible(request.headers(), accepts, message).map(|version| (version, None))
            }
            (Some(message), Some(serving), Some(_)) if !opens_session => {
                let state = serving.state();
                Direct::eligible_in_session(request.headers(), accepts, message, state)
                    .map(|peer| (ProtocolVersion::default(), Some((state.clone(), peer))))
            }
            _ => None,
        };
        // A request served here needs no body for rmcp; any other gets the checked message.
        match (direct, message) {
            (Some((version, in_session)), Some(message)) => (
                Eligible::new(message, version).map(|eligible| (eligible, in_session)),
                request,
            ),
            (_, message) => (None, for_rmcp(request, message.as_ref())),
        }
    }

    /// [`HttpOptions::authenticator`]'s check, when set: the request with its caller, or the
    /// refusal.
    pub(super) async fn authenticate<B>(
        &self,
        request: Request<B>,
    ) -> Result<Request<B>, Response<Reply>> {
        let Some(authenticator) = &self.authenticator else {
            return Ok(request);
        };
        let refused = authenticate(authenticator.as_ref(), request).await;
        if let Err(response) = &refused {
            let reason = AuthRefusal::of_status(response.status().as_u16());
            self.metrics.auth_refused(reason);
        }
        refused
    }

    /// Who owns the sessions this request opens or uses (`None`: the local caller). A
    /// caller with a subject or client (OAuth, or a [`Caller`] the application inserted)
    /// keeps its sessions across token refreshes: they belong to the subject and client.
    /// Any other caller the authenticator checked owns its sessions by its credential (the
    /// `Authorization` header: a static token owns its own).
    fn principal<B>(&self, request: &Request<B>) -> Principal {
        let sessions = self.sessions.as_ref()?;
        let caller = request.extensions().get::<Caller>()?;
        if caller.is_local() {
            return None;
        }
        let by_credential = request.extensions().get::<ByCredential>().is_some();
        let owner = match (caller.subject(), caller.client_id()) {
            (None, None) if by_credential => {
                let mut owner = b"credential\0".to_vec();
                let credential = request.headers().get(header::AUTHORIZATION);
                owner.extend_from_slice(credential.map_or(&b""[..], HeaderValue::as_bytes));
                owner
            }
            (subject, client) => format!(
                "caller\0{}\0{}",
                subject.unwrap_or_default(),
                client.unwrap_or_default()
            )
            .into_bytes(),
        };
        Some(sessions.principal(&owner))
    }

    /// The `403 insufficient_scope` answer to a `tools/call` naming a tool the caller's
    /// scopes do not reach, when the OAuth resource server has step-up on.
    fn step_up<B>(
        &self,
        request: &Request<B>,
        message: &Option<ClientJsonRpcMessage>,
    ) -> Option<Response<Reply>> {
        #[cfg(feature = "oauth")]
        if let (Some(oauth), Some(ClientJsonRpcMessage::Request(r))) = (&self.oauth, message)
            && let ClientRequest::CallToolRequest(call) = &r.request
        {
            let caller = request.extensions().get::<Caller>()?;
            return oauth
                .insufficient_scope(caller, &self.registry, &call.params.name)
                .map(super::authenticate::Rejection::into_response);
        }
        let _ = (request, message, &self.registry);
        None
    }

    /// Answer `elements`, a batch of a session on 2025-03-26 whose request head is `parts`:
    /// each element as a request of its own (authenticated, bounded and served as one; at
    /// most `max_in_flight` of them at once), the replies gathered into one JSON array;
    /// `202` with no body when no element has a reply (notifications only).
    async fn serve_batch(
        &self,
        parts: http::request::Parts,
        elements: Vec<Box<RawValue>>,
    ) -> Response<Reply> {
        let replies: Vec<Option<Bytes>> = futures::stream::iter(elements)
            .map(|element| {
                let request = element_request(&parts, &element);
                async move { batch_entry(Box::pin(self.handle_one(request, None)).await).await }
            })
            .buffered(self.max_in_flight.max(1))
            .collect()
            .await;
        let mut array = b"[".to_vec();
        for reply in replies.into_iter().flatten() {
            if array.len() > 1 {
                array.push(b',');
            }
            array.extend_from_slice(&reply);
        }
        if array.len() == 1 {
            return respond(StatusCode::ACCEPTED, "application/json", Bytes::new());
        }
        array.push(b']');
        respond(StatusCode::OK, "application/json", Bytes::from(array))
    }

    /// Read the whole body (up to the cap) and check it with the codec: the message, and
    /// the request with the body as read (or, when `batches`, a batch's elements); or the
    /// error reply.
    async fn read_body(
        &self,
        request: Request<RequestBody>,
        client_closed: &CancellationToken,
        batches: bool,
    ) -> Result<Read, Box<Response<Reply>>> {
        let max = self.limits.max_body_bytes;
        let too_large = || {
            let mut response = json_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                INVALID_REQUEST,
                format!("Invalid Request: the body is longer than {max} bytes"),
            );
            // The rest of the body is not read: the connection cannot be reused.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Box::new(response)
        };
        let announced = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if announced.is_some_and(|length| length > max as u64) {
            return Err(too_large());
        }
        let (parts, body) = request.into_parts();
        let mut collect = std::pin::pin!(Limited::new(body, max).collect());
        let collected = tokio::select! {
            biased;
            collected = &mut collect => collected.map_err(Some),
            // The client closed its side: what was sent is buffered already; the rest
            // of a short body will never come.
            _ = client_closed.cancelled() => {
                match tokio::time::timeout(Duration::from_millis(100), collect).await {
                    Ok(collected) => collected.map_err(Some),
                    Err(_) => Err(None),
                }
            }
        };
        let bytes = match collected {
            Ok(collected) => collected.to_bytes(),
            Err(Some(error)) if error.is::<http_body_util::LengthLimitError>() => {
                return Err(too_large());
            }
            Err(error) => {
                let cause =
                    error.map_or("the client closed the connection".into(), |e| e.to_string());
                tracing::debug!(%cause, "an HTTP request body ended early");
                let mut response = json_error(
                    StatusCode::BAD_REQUEST,
                    Value::Null,
                    PARSE_ERROR,
                    format!("Parse error: the body ended before its end ({cause})"),
                );
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                return Err(Box::new(response));
            }
        };
        if speaks_modern(&parts.headers)
            && let Some((id, method)) = removed_request(&bytes)
        {
            tracing::debug!(method = %echo(&method), "a 2026-07-28 request of a removed method");
            let refusal = method_not_found(&method);
            return Err(Box::new(json_error(
                StatusCode::NOT_FOUND,
                id,
                METHOD_NOT_FOUND,
                refusal.message.into_owned(),
            )));
        }
        let batch = batches.then(|| batch_elements(&bytes)).flatten();
        let decoded = match batch {
            Some(Ok(elements)) => return Ok(Read::Batch(parts, elements)),
            Some(Err(reply)) => Err(reply),
            None => decode_document(&bytes),
        };
        match decoded {
            Ok(message) => Ok(Read::Message(
                message,
                Request::from_parts(parts, Full::new(bytes)),
            )),
            Err(reply) => {
                tracing::debug!(%reply, "answering a bad HTTP body");
                Err(Box::new(respond(
                    StatusCode::BAD_REQUEST,
                    "application/json",
                    Bytes::from(reply.to_string()),
                )))
            }
        }
    }
}

/// A batch to serve: the request's head and the elements.
type Batch = (http::request::Parts, Vec<Box<RawValue>>);

/// A body read and checked.
// Short-lived, returned once per request: boxing the message would cost every request an
// allocation.
#[allow(clippy::large_enum_variant)]
enum Read {
    /// One message, and the request with the body as read.
    Message(ClientJsonRpcMessage, Request<Full<Bytes>>),
    /// A batch of a session that takes batches.
    Batch(http::request::Parts, Vec<Box<RawValue>>),
}

/// The request serving `element` of a batch sent with head `parts`: the same head (its
/// session, credentials, `Host`), the element as its body, and an `Accept` that ranks JSON
/// first, so its reply is one JSON body.
fn element_request(parts: &http::request::Parts, element: &RawValue) -> Request<RequestBody> {
    let body = Full::new(Bytes::copy_from_slice(element.get().as_bytes()))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut request = Request::new(body);
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = parts.uri.clone();
    *request.version_mut() = parts.version;
    *request.headers_mut() = parts.headers.clone();
    *request.extensions_mut() = parts.extensions.clone();
    let headers = request.headers_mut();
    headers.remove(header::CONTENT_LENGTH);
    headers.insert(
        header::ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    request
}

/// The entry a batch's element gets from its `response`: the JSON-RPC reply it holds, or
/// `None` (a notification's `202`, or nothing JSON-RPC to say).
async fn batch_entry(response: Response<Reply>) -> Option<Bytes> {
    if response.status() == StatusCode::ACCEPTED {
        return None;
    }
    let stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
    let body = response.into_body().collect().await.ok()?.to_bytes();
    let reply = if stream {
        // The last message of the stream is the reply (progress and logs come before it).
        let text = std::str::from_utf8(&body).ok()?;
        let data = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|data| !data.is_empty())?;
        Bytes::copy_from_slice(data.as_bytes())
    } else {
        body
    };
    reply
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
        .then_some(reply)
}

/// `request` as rmcp gets it: with `message`, when the body was read and checked, as its
/// body. rmcp parses the bytes itself and would refuse with a plain-text 415 what the codec
/// accepted (a byte-order mark, a member given twice, found by the http_body fuzz target).
fn for_rmcp<B>(
    request: Request<Either<Full<Bytes>, B>>,
    message: Option<&ClientJsonRpcMessage>,
) -> Request<Either<Full<Bytes>, B>> {
    let Some(checked) = message.and_then(|message| serde_json::to_vec(message).ok()) else {
        return request;
    };
    request.map(|_| Either::Left(Full::new(Bytes::from(checked))))
}

/// The id of `message` as JSON (`null` when it is no request), and whether it is an
/// `initialize`.
fn id_and_initialize(message: Option<&ClientJsonRpcMessage>) -> (Value, bool) {
    match message {
        Some(ClientJsonRpcMessage::Request(r)) => (
            serde_json::to_value(&r.id).unwrap_or(Value::Null),
            matches!(r.request, ClientRequest::InitializeRequest(_)),
        ),
        _ => (Value::Null, false),
    }
}

/// A client's `notifications/cancelled` in a session: a call served directly stops here;
/// rmcp gets the notification all the same (it cancels the calls it serves).
fn cancel_direct_call(serving: &Serving, message: &ClientJsonRpcMessage) {
    if let ClientJsonRpcMessage::Notification(notification) = message
        && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
        && let Some(request_id) = &cancelled.params.request_id
    {
        serving.state().live.cancel(request_id);
    }
}
