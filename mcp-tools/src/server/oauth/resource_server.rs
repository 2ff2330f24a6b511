//! [`ResourceServer`]: this server as an OAuth 2.1 resource server in front of the HTTP
//! endpoint — the [`Authenticator`] of OAuth access tokens (and, beside them, static bearer
//! tokens), the RFC 6750 / RFC 9728 answers of a refused request, the metadata document, and
//! the opt-in step-up answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use arc_swap::ArcSwap;
use http::{HeaderValue, Method, Response, StatusCode, header};

use super::{JwtVerifier, METADATA_PATH, OAuthError, ProtectedResource, TokenError};
use crate::Caller;
use crate::registry::ToolRegistry;
use crate::server::auth::{
    INSUFFICIENT_SCOPE, INVALID_REQUEST, INVALID_TOKEN, MANY_AUTHORIZATIONS, request_bearer,
};
use crate::server::{Authenticator, Rejection, TokenResolver};

/// This server as an OAuth 2.1 resource server: checks each request's access token with a
/// [`JwtVerifier`] and answers the ones it refuses the way the MCP authorization spec asks.
///
/// - As an [`Authenticator`] (install it with
///   [`HttpOptions::oauth`](crate::server::HttpOptions::oauth), or wrap an endpoint you mount
///   in [`AuthLayer`](crate::server::AuthLayer)): a valid token is a [`Caller`] with the
///   token's subject, client, scopes and the permissions its [`ScopeMap`](super::ScopeMap)
///   grants; a refused one gets `401` with `WWW-Authenticate: Bearer
///   resource_metadata="…", scope="…"` and, for a bad token, `error="invalid_token",
///   error_description="…"`; an issuer that cannot be reached gets `503`.
/// - [`metadata_response`](Self::metadata_response): the RFC 9728 document that
///   `resource_metadata` points to (`serve_http` answers it; a mounted endpoint routes it).
/// - [`with_tokens`](Self::with_tokens): static bearer tokens beside OAuth (a tokens file).
/// - [`step_up`](Self::step_up): `403 insufficient_scope` instead of hiding (off by default).
///
/// ```no_run
/// # async fn demo(registry: mcp_toolbelt::ToolRegistry) -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_toolbelt::server::{HttpOptions, Server};
/// use mcp_toolbelt::server::oauth::{JwtVerifier, OAuthConfig, ResourceServer};
/// let config = OAuthConfig::new("https://login.example.org", "https://mcp.example.org/mcp");
/// let oauth = ResourceServer::new(JwtVerifier::discover(config).await?);
/// Server::new(registry)
///     .serve_http("0.0.0.0:8000".parse()?, HttpOptions::default().oauth(oauth))
///     .await?;
/// # Ok(()) }
/// ```
pub struct ResourceServer {
    verifier: JwtVerifier,
    resource: ArcSwap<ProtectedResource>,
    tokens: Option<Arc<dyn TokenResolver>>,
    step_up: bool,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("issuer", &self.verifier.config().issuer())
            .field("resource", &self.verifier.config().resource())
            .field("tokens", &self.tokens.is_some())
            .field("step_up", &self.step_up)
            .finish()
    }
}

/// Why a request is refused.
#[derive(Debug)]
enum Refused {
    /// No `Authorization: Bearer` credentials.
    Missing,
    /// More than one `Authorization` header.
    ManyAuthorizations,
    /// A bad token.
    Token(TokenError),
    /// The token cannot be checked now (the issuer is unreachable).
    Unavailable(String),
}

impl ResourceServer {
    /// Tokens checked by `verifier`; the metadata lists its issuer and the scopes of
    /// [`ProtectedResource::of`] its configuration.
    ///
    /// ```no_run
    /// # async fn demo(verifier: mcp_toolbelt::server::oauth::JwtVerifier) {
    /// let oauth = mcp_toolbelt::server::oauth::ResourceServer::new(verifier);
    /// # let _ = oauth; }
    /// ```
    pub fn new(verifier: JwtVerifier) -> ResourceServer {
        let resource = ProtectedResource::of(verifier.config());
        ResourceServer {
            verifier,
            resource: ArcSwap::from_pointee(resource),
            tokens: None,
            step_up: false,
        }
    }

    /// Also accept the static bearer tokens `resolver` knows (e.g. a
    /// [`TokenTable`](crate::server::TokenTable) from a tokens file); they are looked up
    /// before the verifier is asked.
    ///
    /// ```no_run
    /// # async fn demo(verifier: mcp_toolbelt::server::oauth::JwtVerifier) {
    /// use mcp_toolbelt::{PermissionSet, server::{TokenTable, oauth::ResourceServer}};
    /// let oauth = ResourceServer::new(verifier)
    ///     .with_tokens(TokenTable::new([("ci-job-token", PermissionSet::new(["READ"]))]));
    /// # let _ = oauth; }
    /// ```
    pub fn with_tokens(mut self, resolver: impl TokenResolver) -> ResourceServer {
        self.tokens = Some(Arc::new(resolver));
        self
    }

    /// Step-up authorization: a caller whose token is valid but whose scopes do not reach a
    /// tool it names in `tools/call` gets `403` with `error="insufficient_scope"` and the
    /// scopes to ask for (its own plus the missing ones), instead of the answer of an
    /// unknown tool. Off by default: a tool outside the caller's view then answers exactly
    /// like one that does not exist, so a token learns nothing about tools it cannot use;
    /// turning it on tells every valid token which tools exist. Only when the scope map can
    /// say which scopes grant the permissions (the identity map and a mapping file can; a
    /// function cannot, and its tools stay hidden).
    ///
    /// ```no_run
    /// # async fn demo(verifier: mcp_toolbelt::server::oauth::JwtVerifier) {
    /// let oauth = mcp_toolbelt::server::oauth::ResourceServer::new(verifier).step_up(true);
    /// # let _ = oauth; }
    /// ```
    pub fn step_up(mut self, reveal: bool) -> ResourceServer {
        self.step_up = reveal;
        self
    }

    /// True when static tokens are accepted beside OAuth.
    pub(crate) fn has_tokens(&self) -> bool {
        self.tokens.is_some()
    }

    /// The verifier.
    ///
    /// ```no_run
    /// # fn demo(oauth: mcp_toolbelt::server::oauth::ResourceServer) {
    /// println!("tokens from {}", oauth.verifier().config().issuer());
    /// # }
    /// ```
    pub fn verifier(&self) -> &JwtVerifier {
        &self.verifier
    }

    /// This resource as its metadata describes it.
    ///
    /// ```no_run
    /// # fn demo(oauth: mcp_toolbelt::server::oauth::ResourceServer) {
    /// println!("metadata at {}", oauth.resource().metadata_url());
    /// # }
    /// ```
    pub fn resource(&self) -> Arc<ProtectedResource> {
        self.resource.load_full()
    }

    /// With the identity scope map and no scopes configured, advertise as
    /// `scopes_supported` the permissions `registry`'s tools, resources and prompts need
    /// (with the identity map each is a scope). The endpoint does this when it is built.
    ///
    /// Also warns, once per scope and permission, when a mapping file grants a permission no
    /// tool, resource or prompt of `registry` needs (a typo, or a map written for another
    /// server): the scope still grants it, and it opens nothing.
    pub(crate) fn advertise(&self, registry: &ToolRegistry) {
        let config = self.verifier.config();
        let mut needed = std::collections::BTreeSet::new();
        for tool in registry.list_tools().iter() {
            needed.extend(tool.permissions().names().map(str::to_string));
        }
        for resource in registry.list_resources().iter() {
            needed.extend(resource.permissions().names().map(str::to_string));
        }
        for prompt in registry.list_prompts().iter() {
            needed.extend(prompt.permissions().names().map(str::to_string));
        }
        for (scope, permissions) in config.mapping().grants() {
            for permission in permissions.iter().filter(|p| !needed.contains(*p)) {
                tracing::warn!(
                    scope,
                    permission = permission.as_str(),
                    "the scope map grants a permission no tool, resource or prompt of this \
                     server needs"
                );
            }
        }
        if !self.resource.load().scopes_supported().is_empty() || !config.mapping().is_identity() {
            return;
        }
        let resource = ProtectedResource::of(config).with_scopes(needed);
        self.resource.store(Arc::new(resource));
    }

    /// The RFC 9728 metadata document when `path` is one of its places —
    /// [`METADATA_PATH`] followed by nothing, by the resource URL's path, or by `endpoint`
    /// (the path the MCP endpoint is mounted at) — else `None`. `GET` and `HEAD` get the JSON
    /// document (any origin may read it); other methods `405`.
    ///
    /// ```no_run
    /// # fn demo(oauth: mcp_toolbelt::server::oauth::ResourceServer) {
    /// let response = oauth.metadata_response(&http::Method::GET, "/.well-known/oauth-protected-resource/mcp", "/mcp");
    /// assert_eq!(response.unwrap().status(), 200);
    /// # }
    /// ```
    pub fn metadata_response(
        &self,
        method: &Method,
        path: &str,
        endpoint: &str,
    ) -> Option<Response<String>> {
        let resource = self.resource.load();
        let suffix = path.strip_prefix(METADATA_PATH)?;
        if !(suffix.is_empty() || suffix == endpoint || suffix == resource.path()) {
            return None;
        }
        let mut response = if method == Method::GET || method == Method::HEAD {
            let mut response = Response::new(resource.metadata().to_string());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        } else {
            let mut response = Response::new("Method Not Allowed: use GET".to_string());
            *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            response
        };
        response.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        Some(response)
    }

    /// With [`step_up`](Self::step_up) on: the `403 insufficient_scope` answer for an OAuth
    /// `caller` naming `tool`, when the tool exists in `registry` (the server's, not narrowed
    /// to any caller) but the caller's permissions do not reach it. `None` when the call
    /// should go on as usual (the tool is visible or unknown, the caller holds a static
    /// token, step-up is off, or the scope map cannot name the scopes).
    pub(crate) fn insufficient_scope(
        &self,
        caller: &Caller,
        registry: &ToolRegistry,
        tool: &str,
    ) -> Option<Rejection> {
        if !self.step_up || caller.client_id().or(caller.subject()).is_none() {
            return None;
        }
        let permissions = caller.permissions()?;
        let def = registry.get(tool)?;
        if registry.view(permissions).get(tool).is_some() {
            return None;
        }
        let missing: Vec<&str> = def
            .permissions()
            .names()
            .filter(|name| !permissions.contains(name))
            .collect();
        let needed = self.verifier.config().mapping().scopes_granting(&missing)?;
        let mut scopes: Vec<String> = caller.scopes().to_vec();
        for scope in needed {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        let scopes = scopes.join(" ");
        let text = format!("the token's scopes do not reach this tool; ask for: {scopes}");
        let challenge = self.challenge(&[
            ("error", INSUFFICIENT_SCOPE),
            ("scope", &scopes),
            ("error_description", &text),
        ]);
        Some(
            Rejection::new(StatusCode::FORBIDDEN, format!("Forbidden: {text}"))
                .header(header::WWW_AUTHENTICATE, challenge),
        )
    }

    /// `Bearer resource_metadata="…"` followed by `params` (with `scope="…"`, the advertised
    /// scopes, unless `params` names a scope of its own).
    fn challenge(&self, params: &[(&str, &str)]) -> HeaderValue {
        let resource = self.resource.load();
        let mut all = vec![("resource_metadata", resource.metadata_url())];
        let asked = resource.challenge_scopes().join(" ");
        if !asked.is_empty() && !params.iter().any(|(name, _)| *name == "scope") {
            all.push(("scope", asked));
        }
        all.extend(
            params
                .iter()
                .map(|(name, value)| (*name, value.to_string())),
        );
        let text = all
            .iter()
            .map(|(name, value)| format!("{name}=\"{}\"", quoted(value)))
            .collect::<Vec<_>>()
            .join(", ");
        HeaderValue::from_str(&format!("Bearer {text}"))
            .unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
    }

    /// The answer to a refused request.
    fn rejection(&self, refused: &Refused) -> Rejection {
        tracing::debug!(?refused, "refused an HTTP request's credentials");
        match refused {
            Refused::Missing => Rejection::new(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: this server needs an 'Authorization: Bearer <token>' header",
            )
            .header(header::WWW_AUTHENTICATE, self.challenge(&[])),
            Refused::ManyAuthorizations => {
                let challenge = self.challenge(&[
                    ("error", INVALID_REQUEST),
                    ("error_description", MANY_AUTHORIZATIONS),
                ]);
                Rejection::new(
                    StatusCode::BAD_REQUEST,
                    format!("Bad Request: {MANY_AUTHORIZATIONS}"),
                )
                .header(header::WWW_AUTHENTICATE, challenge)
            }
            Refused::Token(err) => {
                let text = err.to_string();
                let challenge =
                    self.challenge(&[("error", INVALID_TOKEN), ("error_description", &text)]);
                Rejection::new(StatusCode::UNAUTHORIZED, format!("Unauthorized: {text}"))
                    .header(header::WWW_AUTHENTICATE, challenge)
            }
            Refused::Unavailable(problem) => {
                tracing::warn!(%problem, "cannot check an access token: the issuer is unreachable");
                Rejection::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Service Unavailable: the token cannot be checked now; retry later",
                )
                .header(header::WWW_AUTHENTICATE, self.challenge(&[]))
                .header(header::RETRY_AFTER, HeaderValue::from_static("5"))
            }
        }
    }

    async fn check(&self, request: &http::request::Parts) -> Result<Caller, Refused> {
        let token = request_bearer(&request.headers)
            .map_err(|_| Refused::ManyAuthorizations)?
            .ok_or(Refused::Missing)?;
        if let Some(caller) = self.tokens.as_ref().and_then(|t| t.resolve(token)) {
            return Ok(caller);
        }
        self.verifier.verify(token).await.map_err(|err| match err {
            OAuthError::Token(token) => Refused::Token(token),
            other => Refused::Unavailable(other.to_string()),
        })
    }
}

impl Authenticator for ResourceServer {
    fn authenticate<'a>(
        &'a self,
        request: &'a http::request::Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Caller, Rejection>> + Send + 'a>> {
        Box::pin(async move {
            self.check(request)
                .await
                .map_err(|refused| self.rejection(&refused))
        })
    }
}

/// The characters RFC 6750 allows in its quoted values (%x20-21 / %x23-5B / %x5D-7E); others
/// are dropped.
fn quoted(text: &str) -> String {
    text.chars()
        .filter(|&c| matches!(c, '\x20'..='\x21' | '\x23'..='\x5B' | '\x5D'..='\x7E'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn quoted_values_lose_quotes_and_backslashes() {
        assert_eq!(quoted("a\"b\\c\nd"), "abcd");
    }
}
