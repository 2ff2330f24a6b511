//! Who is calling: the [`Authenticator`] trait (every [`TokenResolver`] is one), the
//! [`Rejection`] it answers with, and authentication as a tower [`Layer`]
//! ([`AuthLayer`]), which hands the [`Caller`] to the endpoint in the request's
//! extensions.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{HeaderName, HeaderValue, Request, Response, StatusCode, header};
use tower_layer::Layer;
use tower_service::Service;

use super::reply::{Reply, plain};
use crate::Caller;
use crate::server::TokenResolver;
use crate::server::auth::{INVALID_REQUEST, INVALID_TOKEN, MANY_AUTHORIZATIONS, request_bearer};

/// A boxed future, as tower services return.
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Decides who is calling from a request's head: the [`Caller`], or the [`Rejection`] to
/// answer instead. [`AuthLayer`] runs it before the endpoint.
///
/// Every [`TokenResolver`] (a [`TokenTable`](crate::server::TokenTable), a closure) is an
/// authenticator of `Authorization: Bearer` tokens whose caller gets the permissions the
/// token maps to. Write your own for anything else (a session cookie, a header set by a
/// trusted proxy, an identity provider):
///
/// ```
/// use mcp_toolbelt::{Caller, PermissionSet};
/// use mcp_toolbelt::server::{Authenticator, Rejection};
/// use std::{future::Future, pin::Pin};
///
/// /// Trusts the user name a front proxy put in `x-user`.
/// struct ProxyUser;
///
/// impl Authenticator for ProxyUser {
///     fn authenticate<'a>(
///         &'a self,
///         request: &'a http::request::Parts,
///     ) -> Pin<Box<dyn Future<Output = Result<Caller, Rejection>> + Send + 'a>> {
///         Box::pin(async move {
///             let user = request.headers.get("x-user").and_then(|v| v.to_str().ok());
///             match user {
///                 Some(user) => Ok(Caller::new(Some(user.into()), None, vec![],
///                     PermissionSet::new(["NOTE_VIEW"]), Default::default())),
///                 None => Err(Rejection::unauthorized(None, "no x-user header")),
///             }
///         })
///     }
/// }
/// # let _ = mcp_toolbelt::server::AuthLayer::new(ProxyUser);
/// ```
pub trait Authenticator: Send + Sync + 'static {
    /// The caller `request` comes from, or why it is refused.
    fn authenticate<'a>(
        &'a self,
        request: &'a http::request::Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Caller, Rejection>> + Send + 'a>>;
}

impl<R: TokenResolver> Authenticator for R {
    fn authenticate<'a>(
        &'a self,
        request: &'a http::request::Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Caller, Rejection>> + Send + 'a>> {
        Box::pin(std::future::ready(resolve_bearer(self, request)))
    }
}

/// The caller of `request`'s bearer token according to `resolver`.
fn resolve_bearer<R: TokenResolver + ?Sized>(
    resolver: &R,
    request: &http::request::Parts,
) -> Result<Caller, Rejection> {
    let token = request_bearer(&request.headers).map_err(|_| {
        tracing::debug!("refused an HTTP request with more than one Authorization header");
        Rejection::invalid_request(MANY_AUTHORIZATIONS)
    })?;
    let Some(token) = token else {
        return Err(Rejection::unauthorized(
            None,
            "this server needs an 'Authorization: Bearer <token>' header",
        ));
    };
    match resolver.resolve(token) {
        Some(caller) => Ok(caller),
        None => {
            tracing::debug!("rejected an HTTP request with an unknown bearer token");
            Err(Rejection::unauthorized(
                Some(INVALID_TOKEN),
                "the bearer token is not valid",
            ))
        }
    }
}

/// The answer to a request its [`Authenticator`] refused: a status, a plain-text message
/// and headers (for `401`, a `WWW-Authenticate` challenge).
///
/// ```
/// use mcp_toolbelt::server::Rejection;
/// let refused = Rejection::unauthorized(Some("invalid_token"), "the token expired");
/// assert_eq!(refused.status(), 401);
/// let busy = Rejection::new(http::StatusCode::SERVICE_UNAVAILABLE, "the issuer is unreachable")
///     .header(http::header::RETRY_AFTER, http::HeaderValue::from_static("5"));
/// assert_eq!(busy.status(), 503);
/// ```
#[derive(Debug, Clone)]
pub struct Rejection {
    status: StatusCode,
    message: String,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Rejection {
    /// Answer `status` with `message` (sent as `text/plain`).
    pub fn new(status: StatusCode, message: impl Into<String>) -> Rejection {
        Rejection {
            status,
            message: message.into(),
            headers: Vec::new(),
        }
    }

    /// `401 Unauthorized` with the challenge `Bearer realm="mcp"` and, when given, the
    /// RFC 6750 `error` code (`invalid_token`, …); the message says why.
    pub fn unauthorized(error: Option<&str>, message: &str) -> Rejection {
        Rejection::new(StatusCode::UNAUTHORIZED, format!("Unauthorized: {message}"))
            .challenge(error)
    }

    /// With the challenge `Bearer realm="mcp"` and, when given, the RFC 6750 `error` code.
    fn challenge(self, error: Option<&str>) -> Rejection {
        let challenge = match error {
            Some(code) => format!("Bearer realm=\"mcp\", error=\"{code}\""),
            None => "Bearer realm=\"mcp\"".to_string(),
        };
        match HeaderValue::from_str(&challenge) {
            Ok(value) => self.header(header::WWW_AUTHENTICATE, value),
            Err(_) => self,
        }
    }

    /// `400 Bad Request` with the challenge `Bearer realm="mcp", error="invalid_request"`
    /// (RFC 6750 §3.1: a malformed request, such as one with two `Authorization` headers).
    pub(crate) fn invalid_request(message: &str) -> Rejection {
        Rejection::new(StatusCode::BAD_REQUEST, format!("Bad Request: {message}"))
            .challenge(Some(INVALID_REQUEST))
    }

    /// Also send header `name` (replacing one of the same name set before).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Rejection {
        self.headers.retain(|(set, _)| *set != name);
        self.headers.push((name, value));
        self
    }

    /// The status answered.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub(super) fn into_response(self) -> Response<Reply> {
        let mut response = plain(self.status, &self.message);
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

/// Marks a request whose caller [`AuthLayer`] established from its `Authorization`
/// header: a session then belongs to that credential.
#[derive(Debug, Clone, Copy)]
pub(super) struct ByCredential;

/// Run `authenticator` on `request`: the request with its [`Caller`] attached, or the
/// refusal to answer.
pub(super) async fn authenticate<B>(
    authenticator: &dyn Authenticator,
    request: Request<B>,
) -> Result<Request<B>, Response<Reply>> {
    let (mut parts, body) = request.into_parts();
    let caller = authenticator
        .authenticate(&parts)
        .await
        .map_err(|rejection| {
            let mut response = rejection.into_response();
            // The body is left unread, so the connection cannot carry another request: say so,
            // or a client may send its retry (with a token) on a connection about to close.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        })?;
    parts.extensions.insert(caller);
    parts.extensions.insert(ByCredential);
    Ok(Request::from_parts(parts, body))
}

/// Authentication as a tower [`Layer`]: every request goes through the [`Authenticator`]
/// first; a refused one gets its [`Rejection`], an accepted one reaches the inner service
/// (usually [`McpService`](super::McpService)) with its [`Caller`] in the extensions.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use mcp_toolbelt::PermissionSet;
/// use mcp_toolbelt::server::{AuthLayer, HttpOptions, Server, TokenTable};
/// use tower_layer::Layer;
/// use tower_service::Service;
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let tokens = TokenTable::new([("s3cret", PermissionSet::new(["NOTE_VIEW"]))]);
/// let endpoint = Server::new(registry).http_service(HttpOptions::default());
/// let mut service = AuthLayer::new(tokens).layer(endpoint);
/// let request = http::Request::post("/mcp")
///     .header("authorization", "Bearer guess")
///     .body(http_body_util::Empty::<bytes::Bytes>::new())
///     .unwrap();
/// assert_eq!(service.call(request).await.unwrap().status(), 401);
/// # });
/// ```
#[derive(Clone)]
pub struct AuthLayer {
    authenticator: Arc<dyn Authenticator>,
}

impl AuthLayer {
    /// A layer running `authenticator` (a [`TokenResolver`] or your own).
    pub fn new(authenticator: impl Authenticator) -> AuthLayer {
        AuthLayer {
            authenticator: Arc::new(authenticator),
        }
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Authenticated<S>;

    fn layer(&self, inner: S) -> Authenticated<S> {
        Authenticated {
            inner,
            authenticator: self.authenticator.clone(),
        }
    }
}

/// A service behind [`AuthLayer`].
///
/// ```
/// use mcp_toolbelt::server::{AuthLayer, Authenticated, HttpOptions, McpService, Server, TokenTable};
/// use tower_layer::Layer;
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let endpoint = Server::new(registry).http_service(HttpOptions::default());
/// let _service: Authenticated<McpService> = AuthLayer::new(TokenTable::default()).layer(endpoint);
/// ```
#[derive(Clone)]
pub struct Authenticated<S> {
    inner: S,
    authenticator: Arc<dyn Authenticator>,
}

impl<S, B> Service<Request<B>> for Authenticated<S>
where
    S: Service<Request<B>, Response = Response<Reply>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = Response<Reply>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Response<Reply>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The inner service was polled ready: call that one, keep a fresh clone.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let authenticator = self.authenticator.clone();
        Box::pin(async move {
            match authenticate(authenticator.as_ref(), request).await {
                Ok(request) => inner.call(request).await,
                Err(refusal) => Ok(refusal),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;
    use serde_json::{Value, json};
    use tower_layer::Layer;

    use super::*;
    use crate::PermissionSet;
    use crate::server::{HttpOptions, Server, TokenTable};
    use bytes::Bytes;

    fn registry() -> crate::ToolRegistry {
        crate::ToolRegistry::builder()
            .include_linked(false)
            .build()
            .unwrap()
    }

    fn tokens() -> TokenTable {
        TokenTable::new([("good-token", PermissionSet::new(["READ"]))])
    }

    /// POST `body` with these `Authorization` values (in order): the status, the
    /// `WWW-Authenticate` value and the body.
    async fn post<S>(service: &mut S, authorizations: &[&str], body: Value) -> (u16, String, String)
    where
        S: Service<Request<http_body_util::Full<Bytes>>, Response = Response<Reply>>,
        S::Error: std::fmt::Debug,
    {
        let mut request = Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for value in authorizations {
            request = request.header(header::AUTHORIZATION, *value);
        }
        let request = request
            .body(http_body_util::Full::new(Bytes::from(body.to_string())))
            .unwrap();
        let response = service.call(request).await.unwrap();
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            challenge,
            String::from_utf8_lossy(&body).into_owned(),
        )
    }

    /// RFC 6750 §3.1: two `Authorization` headers are one method too many, whichever comes
    /// first; on the direct path (stateless `tools/list`, `tools/call`), on rmcp's
    /// (`initialize`), and behind an `AuthLayer`.
    #[tokio::test]
    async fn two_authorization_headers_are_a_bad_request_on_every_path() {
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "nothing", "arguments": {}}});
        let initialize = json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let stateless = HttpOptions::default().stateless().tokens(tokens());
        let mut endpoint = Server::new(registry()).http_service(stateless);
        let mut stateful =
            Server::new(registry()).http_service(HttpOptions::default().tokens(tokens()));
        let mut layered = AuthLayer::new(tokens())
            .layer(Server::new(registry()).http_service(HttpOptions::default().stateless()));
        // The control case: one good header passes.
        let (status, _, body) = post(&mut endpoint, &["Bearer good-token"], list.clone()).await;
        assert_eq!(status, 200, "{body}");
        for pair in [
            ["Bearer good-token", "Bearer garbage"],
            ["Bearer garbage", "Bearer good-token"],
            ["Bearer good-token", "Bearer good-token"],
        ] {
            for (label, message) in [
                ("list", &list),
                ("call", &call),
                ("initialize", &initialize),
            ] {
                for (status, challenge, body) in [
                    post(&mut endpoint, &pair, message.clone()).await,
                    post(&mut stateful, &pair, message.clone()).await,
                    post(&mut layered, &pair, message.clone()).await,
                ] {
                    assert_eq!(status, 400, "{label} {pair:?}: {body}");
                    assert_eq!(
                        challenge, "Bearer realm=\"mcp\", error=\"invalid_request\"",
                        "{label} {pair:?}"
                    );
                    assert!(
                        body.contains("more than one Authorization header"),
                        "{body}"
                    );
                    assert!(!body.contains("good-token"), "{body}");
                }
            }
        }
    }
}
