//! Streamable HTTP: rmcp's `StreamableHttpService` (sessions, SSE, Host/Origin checks)
//! behind a small front door of our own that routes the endpoint path and checks bearer
//! tokens, served with hyper (HTTP/1.1).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::auth::bearer_token;
use super::builder::HttpOptions;
use super::handler::{CallerPermissions, McpHandler, Shared};
use super::stream::accept_next;
use super::{ServeError, TokenResolver};

type Body = BoxBody<Bytes, Infallible>;

/// Serve streamable HTTP on `listener` until `shutdown` fires.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    listener: TcpListener,
    options: HttpOptions,
    max_connections: usize,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let bound = listener.local_addr()?;
    let config = rmcp_config(&options, bound, shutdown.child_token());
    let factory = move || Ok(McpHandler::new_session(shared.clone()));
    tracing::info!(
        url = %format!("http://{bound}{}", options.path),
        stateful = options.stateful,
        tokens = options.tokens.is_some(),
        "serving MCP over streamable HTTP"
    );
    if options.stateful {
        let service =
            StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
        accept_loop(listener, service, options, max_connections, shutdown).await
    } else {
        let service =
            StreamableHttpService::new(factory, Arc::new(NeverSessionManager::default()), config);
        accept_loop(listener, service, options, max_connections, shutdown).await
    }
}

fn rmcp_config(
    options: &HttpOptions,
    bound: SocketAddr,
    cancel: CancellationToken,
) -> StreamableHttpServerConfig {
    let mut hosts = options.allowed_hosts.clone();
    // The literal address bound is never a DNS-rebinding vector; accept it.
    if !bound.ip().is_unspecified() {
        hosts.push(bound.ip().to_string());
    }
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_legacy_session_mode(options.stateful)
        .with_cancellation_token(cancel)
}

async fn accept_loop<M: SessionManager>(
    listener: TcpListener,
    service: StreamableHttpService<McpHandler, M>,
    options: HttpOptions,
    max_connections: usize,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let front = Arc::new(Front {
        service,
        path: options.path,
        tokens: options.tokens,
    });
    let connections = Arc::new(Semaphore::new(max_connections));
    loop {
        // Back-pressure: past the bound, new connections wait in the listen backlog.
        let permit = tokio::select! {
            permit = connections.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return Ok(()),
            },
            _ = shutdown.cancelled() => return Ok(()),
        };
        let Some((stream, peer)) = accept_next(&listener, &shutdown, "an HTTP").await else {
            return Ok(());
        };
        let front = front.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let front = front.clone();
                async move { Ok::<_, Infallible>(front.handle(request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler);
            tokio::select! {
                outcome = connection => if let Err(error) = outcome {
                    tracing::debug!(%peer, %error, "HTTP connection ended with an error");
                },
                _ = shutdown.cancelled() => {}
            }
        });
    }
}

/// Path routing and the bearer-token check in front of rmcp's service.
struct Front<M> {
    service: StreamableHttpService<McpHandler, M>,
    path: String,
    tokens: Option<Arc<dyn TokenResolver>>,
}

impl<M: SessionManager> Front<M> {
    async fn handle(&self, mut request: Request<Incoming>) -> Response<Body> {
        if request.uri().path() != self.path {
            return plain(
                StatusCode::NOT_FOUND,
                &format!("Not Found: the MCP endpoint is {}", self.path),
            );
        }
        if let Some(resolver) = &self.tokens {
            let token = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(bearer_token);
            match token.map(|t| (t, resolver.resolve(t))) {
                Some((_, Some(permissions))) => {
                    request
                        .extensions_mut()
                        .insert(CallerPermissions(permissions));
                }
                Some((_, None)) => {
                    tracing::warn!("rejected an HTTP request with an unknown bearer token");
                    return unauthorized(Some("invalid_token"), "the bearer token is not valid");
                }
                None => {
                    return unauthorized(
                        None,
                        "this server needs an 'Authorization: Bearer <token>' header",
                    );
                }
            }
        }
        self.service.handle(request).await
    }
}

fn plain(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(message.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn unauthorized(error: Option<&str>, message: &str) -> Response<Body> {
    let mut response = plain(
        StatusCode::UNAUTHORIZED,
        &format!("Unauthorized: {message}"),
    );
    let challenge = match error {
        Some(code) => format!("Bearer realm=\"mcp\", error=\"{code}\""),
        None => "Bearer realm=\"mcp\"".to_string(),
    };
    if let Ok(value) = header::HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
