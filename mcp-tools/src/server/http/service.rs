//! The MCP endpoint as a tower [`Service`]: [`McpService`] (authentication as a tower
//! layer in front of it is `authenticate.rs`).
//!
//! `serve_http` serves exactly this service behind its accept loop; the loop adds only
//! what belongs to a connection (`TCP_NODELAY`, the header and idle time-outs, the
//! connection cap, noticing a client that closed its side) and the health endpoints.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use hyper::body::Body;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use super::body::{BoxError, RequestBody, into_bytes_body};
use super::direct::Direct;
use super::front::Front;
use super::options::HttpOptions;
use super::reply::Reply;
use super::sessions::{self, HttpSessions};
use super::site::SiteRule;
use crate::server::handler::McpHandler;
use crate::server::notify::ListChanged;
use crate::server::state::Shared;

/// A boxed future, as tower services return.
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The MCP endpoint (streamable HTTP) as a tower [`Service`], to mount in an application
/// of your own (axum, hyper, any tower stack); built by
/// [`Server::http_service`](crate::server::Server::http_service).
///
/// Everything about one request is inside it, the same as under
/// [`Server::serve_http`](crate::server::Server::serve_http), which serves this very
/// service: the `Host`/`Origin` checks, the body cap (`413`), every body checked by our
/// codec before rmcp sees it (`400` with a JSON-RPC error), sessions (their cap, each bound
/// to the caller that opened it, no second `initialize`, idle ones parked after
/// [`HttpOptions::session_park_after`] and rebuilt by their next request), the bound on requests in flight
/// ([`Server::max_in_flight`](crate::server::Server::max_in_flight)), and the tokens of
/// [`HttpOptions::authenticator`] (or [`HttpOptions::tokens`]) when set.
///
/// It answers whatever path it is given: route to it (e.g. `/mcp`). What belongs to a
/// connection stays with the server you mount it in: its time-outs, its connection cap, and
/// noticing a client that left (hyper drops the reply of a closed connection, which cancels
/// a streamed session call; [`HttpOptions::disconnect_grace`] applies under `serve_http`
/// only).
///
/// **Who is calling.** The endpoint reads the [`Caller`](crate::Caller) from the request's extensions:
/// put there by [`AuthLayer`](super::AuthLayer) (or [`HttpOptions::authenticator`]), or by your
/// application from its own authentication. A request with no `Caller` is the local caller
/// and sees every tool, so mount it without authentication only where every client is
/// trusted.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use mcp_toolbelt::server::{HttpOptions, Server};
/// use tower_service::Service;
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let mut service = Server::new(registry).http_service(HttpOptions::default().stateless());
/// let request = http::Request::post("/mcp")
///     .header("host", "localhost")
///     .header("content-type", "application/json")
///     .header("accept", "application/json, text/event-stream")
///     .body(http_body_util::Full::new(bytes::Bytes::from("{not json")))
///     .unwrap();
/// let response = service.call(request).await.unwrap();
/// assert_eq!(response.status(), 400); // a JSON-RPC parse error, from our codec
/// # });
/// ```
#[derive(Clone)]
pub struct McpService {
    endpoint: Arc<Endpoint>,
    /// Started on the first request (building the service needs no runtime).
    list_changed: Arc<ListChanged>,
}

/// The front door, with the session manager of its mode.
enum Endpoint {
    Stateful(Front<HttpSessions>),
    Stateless(Front<NeverSessionManager>),
}

impl McpService {
    /// The endpoint for `shared` as `options` say; rmcp's sessions end when `cancel`
    /// fires.
    pub(crate) fn new(
        shared: Arc<Shared>,
        options: &HttpOptions,
        max_in_flight: usize,
        cancel: CancellationToken,
    ) -> McpService {
        let mut config = super::rmcp_config(options, cancel.clone());
        let list_changed = shared.list_changed.clone();
        let registry = shared.registry.clone();
        let handlers = shared.clone();
        // A stateful request's handler takes over its session's state (a parked session
        // being rebuilt keeps its log level and subscriptions).
        let factory = move || {
            Ok(match sessions::serving_state() {
                Some(state) => McpHandler::with_session(handlers.clone(), state),
                None => McpHandler::new_session(handlers.clone()),
            })
        };
        let in_flight = Arc::new(Semaphore::new(max_in_flight.max(1)));
        let authenticator = options.authenticator.clone();
        let fast_paths = shared.fast_paths;
        let metrics = shared.telemetry.metrics.clone();
        let site = SiteRule::new(&options.allowed_hosts, &options.allowed_origins);
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &options.oauth {
            oauth.advertise(&registry);
        }
        let endpoint = if options.stateful {
            let limits = options.limits;
            let sessions = Arc::new(HttpSessions::new(
                shared.clone(),
                limits.max_sessions,
                limits.session_park_after,
                limits.session_idle_timeout,
                cancel.clone(),
            ));
            let source: std::sync::Weak<HttpSessions> = Arc::downgrade(&sessions);
            shared.telemetry.metrics.add_source(source);
            // Without a runtime yet, the first request starts the sweep.
            if tokio::runtime::Handle::try_current().is_ok() {
                sessions.start_sweep();
            }
            // rmcp rebuilds a parked session from what `HttpSessions` keeps as its store.
            config.session_store = Some(sessions.clone());
            let rate = shared.rate.clone();
            let direct = Direct::new(shared, config.sse_keep_alive, cancel);
            Endpoint::Stateful(Front {
                rate,
                service: StreamableHttpService::new(factory, sessions.clone(), config),
                authenticator: authenticator.clone(),
                #[cfg(feature = "oauth")]
                oauth: options.oauth.clone(),
                registry: registry.clone(),
                sessions: Some(sessions),
                site,
                direct,
                in_flight,
                max_in_flight: max_in_flight.max(1),
                fast_paths,
                limits: options.limits,
                metrics: metrics.clone(),
            })
        } else {
            let manager = Arc::new(NeverSessionManager::default());
            let keep_alive = config.sse_keep_alive;
            let rate = shared.rate.clone();
            let direct = Direct::new(shared, keep_alive, cancel);
            Endpoint::Stateless(Front {
                rate,
                service: StreamableHttpService::new(factory, manager, config),
                authenticator: authenticator.clone(),
                #[cfg(feature = "oauth")]
                oauth: options.oauth.clone(),
                registry: registry.clone(),
                sessions: None,
                site,
                direct,
                in_flight,
                max_in_flight: max_in_flight.max(1),
                fast_paths,
                limits: options.limits,
                metrics: metrics.clone(),
            })
        };
        McpService {
            endpoint: Arc::new(endpoint),
            list_changed,
        }
    }

    /// Answer one request.
    pub(super) async fn handle(&self, request: Request<RequestBody>) -> Response<Reply> {
        self.list_changed.start_pump();
        match &*self.endpoint {
            Endpoint::Stateful(front) => {
                if let Some(sessions) = &front.sessions {
                    sessions.start_sweep();
                }
                front.handle(request).await
            }
            Endpoint::Stateless(front) => front.handle(request).await,
        }
    }

    /// The stateful endpoint's sessions.
    #[cfg(test)]
    pub(super) fn sessions(&self) -> Option<&Arc<HttpSessions>> {
        match &*self.endpoint {
            Endpoint::Stateful(front) => front.sessions.as_ref(),
            Endpoint::Stateless(_) => None,
        }
    }

    /// Completes when no request is in flight (every reply has ended).
    pub(super) async fn idle(&self) {
        let (in_flight, max) = match &*self.endpoint {
            Endpoint::Stateful(front) => (front.in_flight.clone(), front.max_in_flight),
            Endpoint::Stateless(front) => (front.in_flight.clone(), front.max_in_flight),
        };
        let _all = in_flight.acquire_many(max as u32).await;
    }
}

impl<B> Service<Request<B>> for McpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<Reply>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Response<Reply>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Requests past the in-flight bound wait inside `call`, keeping their order.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let service = self.clone();
        let request = request.map(into_bytes_body);
        Box::pin(async move { Ok(service.handle(request).await) })
    }
}
