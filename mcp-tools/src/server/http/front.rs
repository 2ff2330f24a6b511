//! The front door in front of rmcp's `StreamableHttpService`: the body read and checked
//! by our codec (every bad body gets a JSON-RPC error with `400`), sessions (the cap, their
//! owners, no second `initialize`, the session each request serves, for parking), the bound
//! on requests in flight, and the disconnect policy. Authentication runs first
//! (`service.rs`).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Either, Full, Limited};
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ClientRequest, ProtocolVersion};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::direct::{Direct, Eligible};
use super::options::HttpLimits;
use super::reply::{
    Holds, Reply, SessionCall, from_rmcp, is_event_stream, json_error, listening, orphaned,
    respond, settle_stream,
};
use super::service::{Authenticator, ByCredential, RequestBody};
use super::sessions::{Principal, Sessions};
use crate::Caller;
use crate::server::codec::{INVALID_REQUEST, PARSE_ERROR, decode_document};
use crate::server::handler::McpHandler;

/// JSON-RPC code of a server that cannot take more work now.
const SERVER_BUSY: i64 = -32000;
/// JSON-RPC code the MCP SDKs use for an unknown session.
const SESSION_NOT_FOUND: i64 = -32001;

const SESSION_HEADER: &str = "mcp-session-id";

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
    pub(super) sessions: Option<Arc<Sessions>>,
    /// The direct path for everyday requests, stateless or in a live session.
    pub(super) direct: Direct,
    pub(super) in_flight: Arc<Semaphore>,
    pub(super) max_in_flight: usize,
    pub(super) limits: HttpLimits,
}

impl<M: SessionManager> Front<M> {
    /// Answer one request. A call whose client left (and stayed away for the grace
    /// period) gets a reply whose body fails at once, which ends the connection.
    pub(super) async fn handle(&self, request: Request<RequestBody>) -> Response<Reply> {
        let request = match self.authenticate(request).await {
            Ok(request) => request,
            Err(refusal) => return refusal,
        };
        let client_closed = request
            .extensions()
            .get::<ClientGone>()
            .map_or_else(CancellationToken::new, |gone| gone.0.clone());
        let principal = self.principal(&request);
        // A stateless server has no sessions: the header means nothing to it, whatever the
        // method (it reaches rmcp, whose stateless mode ignores it too).
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .filter(|_| self.sessions.is_some())
            .and_then(|v| v.to_str().ok())
            .map(Arc::<str>::from);
        let mut entered = None;
        if let (Some(sessions), Some(id)) = (&self.sessions, &session) {
            match sessions.enter(id, principal) {
                Some(entry) => entered = Some(entry),
                None => {
                    // An unknown session and another caller's session look the same.
                    return json_error(
                        StatusCode::NOT_FOUND,
                        Value::Null,
                        SESSION_NOT_FOUND,
                        "Session not found".into(),
                    );
                }
            }
        }
        let holds_permit = request.method() == Method::POST;
        let deleting = request.method() == Method::DELETE;
        let json = prefers_json(request.headers());
        // Bodies rmcp would refuse anyway (no JSON `Content-Type`) go to it unread.
        let (message, request) = if holds_permit && is_json(&request) {
            match self.read_body(request, &client_closed).await {
                Ok((message, request)) => (Some(message), request.map(Either::Left)),
                Err(response) => return *response,
            }
        } else {
            (None, request.map(Either::Right))
        };
        if let Some(refusal) = self.step_up(&request, &message) {
            return refusal;
        }
        let (id, initialize) = match &message {
            Some(ClientJsonRpcMessage::Request(r)) => (
                serde_json::to_value(&r.id).unwrap_or(Value::Null),
                matches!(r.request, ClientRequest::InitializeRequest(_)),
            ),
            _ => (Value::Null, false),
        };
        if initialize && session.is_some() {
            return json_error(
                StatusCode::BAD_REQUEST,
                id,
                INVALID_REQUEST,
                "Invalid Request: this session is already initialized".into(),
            );
        }
        let permit = if holds_permit {
            self.in_flight.clone().acquire_owned().await.ok()
        } else {
            None
        };
        let (activity, serving) = entered.unzip();
        if let (Some(serving), Some(ClientJsonRpcMessage::Notification(notification))) =
            (&serving, &message)
            && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            && let Some(request_id) = &cancelled.params.request_id
        {
            // A directly served call stops here; rmcp gets the notification all the same
            // (it cancels the calls it serves).
            serving.state().live.cancel(request_id);
        }
        let holds = Holds {
            _busy: None,
            _permit: permit,
            _session: activity,
        };
        let opens_session = initialize && self.sessions.is_some();
        let serving = match opens_session {
            true => Some(Sessions::opening_for(principal)),
            false => serving,
        };
        let _opening = match (&self.sessions, opens_session) {
            (Some(sessions), true) => {
                let guard = sessions.opening.lock().await;
                if sessions.full() {
                    tracing::warn!(
                        max = sessions.max(),
                        "refused a session: the cap is reached"
                    );
                    return json_error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        id,
                        SERVER_BUSY,
                        format!(
                            "Server busy: {} sessions are open, the most this server allows; \
                             retry later",
                            sessions.max()
                        ),
                    );
                }
                Some(guard)
            }
            _ => None,
        };
        let call = match (&self.sessions, session, &message) {
            (Some(sessions), Some(session), Some(ClientJsonRpcMessage::Request(_))) => {
                Some(SessionCall {
                    sessions: sessions.clone(),
                    session,
                    request_id: id,
                })
            }
            _ => None,
        };
        let direct = match (&message, &serving, &self.sessions) {
            (Some(message), None, None) => {
                Direct::eligible(request.headers(), message).map(|version| (version, None))
            }
            (Some(message), Some(serving), Some(_)) if !opens_session => {
                let state = serving.state();
                Direct::eligible_in_session(request.headers(), message, json, state)
                    .map(|peer| (ProtocolVersion::default(), Some((state.clone(), peer))))
            }
            _ => None,
        };
        // A request served here needs no body for rmcp; any other gets the checked message.
        let (direct, request) = match (direct, message) {
            (Some((version, in_session)), Some(message)) => (
                Eligible::new(message, version).map(|eligible| (eligible, in_session)),
                request,
            ),
            (_, message) => (None, for_rmcp(request, message.as_ref())),
        };
        let grace = self.limits.disconnect_grace;
        // rmcp's futures are several kilobytes: boxed, so this one stays small (it is moved
        // whole into hyper's connection task for every request).
        let served = async {
            let mut request = request;
            if let Some((eligible, in_session)) = direct {
                let (parts, body) = request.into_parts();
                if self.direct.site_accepted(&self.service, &parts).await {
                    return match in_session {
                        Some((state, peer)) => {
                            Box::pin(self.direct.serve_in_session(parts, eligible, state, peer))
                                .await
                        }
                        None => Box::pin(self.direct.serve(parts, eligible)).await,
                    };
                }
                request = for_rmcp(
                    Request::from_parts(parts, body),
                    Some(&eligible.into_message()),
                );
            }
            let rmcp = Box::pin(self.service.handle(request));
            match serving {
                Some(serving) => Sessions::serve(serving, rmcp).await,
                None => rmcp.await,
            }
        };
        let response = tokio::select! {
            response = served => response,
            _ = orphaned(client_closed.clone(), grace) => return Reply::abandoned(),
        };
        drop(_opening);
        if !is_event_stream(&response) {
            let mut response = response;
            if deleting && response.status() == StatusCode::ACCEPTED {
                // A session ended on request: done, nothing to say. rmcp answers 202, which
                // clients (the Python SDK) report as a failed termination.
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            return from_rmcp(response, holds);
        }
        if !holds_permit {
            // A `GET` stream: it ends when its client leaves, freeing the session to park.
            return listening(response, holds, &client_closed);
        }
        settle_stream(response, json, holds, call, &client_closed, grace)
            .await
            .unwrap_or_else(|_| Reply::abandoned())
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
                .map(super::service::Rejection::into_response);
        }
        let _ = (request, message, &self.registry);
        None
    }

    /// Read the whole body (up to the cap) and check it with the codec: the message, and
    /// the request with the body as read; or the error reply.
    async fn read_body(
        &self,
        request: Request<RequestBody>,
        client_closed: &CancellationToken,
    ) -> Result<(ClientJsonRpcMessage, Request<Full<Bytes>>), Box<Response<Reply>>> {
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
        match decode_document(&bytes) {
            Ok(message) => Ok((message, Request::from_parts(parts, Full::new(bytes)))),
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

/// True when the request says its body is JSON.
fn is_json<B>(request: &Request<B>) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// True when the client's `Accept` ranks `application/json` above `text/event-stream`
/// (by weight, then by order).
fn prefers_json(headers: &http::HeaderMap) -> bool {
    let mut json = None;
    let mut stream = None;
    let ranges = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','));
    for (position, range) in ranges.enumerate() {
        let mut pieces = range.split(';');
        let essence = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
        let weight = pieces
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        let rank = Some((weight, std::cmp::Reverse(position)));
        match essence.as_str() {
            "application/json" if json.is_none() => json = rank,
            "text/event-stream" if stream.is_none() => stream = rank,
            _ => {}
        }
    }
    match (json, stream) {
        (Some(json), Some(stream)) => json.partial_cmp(&stream).is_some_and(|o| o.is_gt()),
        (Some(_), None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::prefers_json;

    fn accept(value: &str) -> bool {
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::ACCEPT, value.parse().unwrap());
        prefers_json(&headers)
    }

    #[test]
    fn the_clients_order_and_weights_choose_json_or_a_stream() {
        assert!(accept("application/json, text/event-stream"));
        assert!(!accept("text/event-stream, application/json"));
        assert!(accept("text/event-stream;q=0.5, application/json"));
        assert!(!accept("application/json;q=0.1, text/event-stream"));
        assert!(accept("application/json"));
        assert!(!accept("text/event-stream"));
    }
}
