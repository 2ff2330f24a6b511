//! [`Authenticator`]: who is calling over HTTP, from the request's `Authorization` header —
//! a static bearer token (a [`TokenResolver`], e.g. a tokens file) or, with the `oauth`
//! feature, an OAuth 2.1 access token — and the answer to a request it refuses.

use std::sync::Arc;

use http::{HeaderMap, HeaderValue, Response, StatusCode, header};

use super::auth::{TokenResolver, bearer_token};
use crate::Caller;
use crate::registry::Registry;

/// Checks the credentials of HTTP requests and says who is calling.
///
/// Built from static bearer tokens ([`Authenticator::tokens`]), from an OAuth 2.1 access-token
/// verifier ([`Authenticator::oauth`], feature `oauth`), or both (a token the static table
/// knows is taken from it; any other goes to the verifier). It is what
/// [`HttpOptions::tokens`](super::HttpOptions::tokens) and
/// [`HttpOptions::authenticator`](super::HttpOptions::authenticator) install in front of the
/// MCP endpoint, and what a tower layer of your own can call: two calls per request.
///
/// 1. [`authenticate`](Self::authenticate) with the request's headers gives the [`Caller`] (put
///    it into the `http::Request`'s extensions: the MCP handler reads it from there and shows
///    the caller its own view of the tools), or a [`Refusal`];
/// 2. [`refusal_response`](Self::refusal_response) turns a refusal into the `401`/`403`/`503`
///    answer with its RFC 6750 / RFC 9728 `WWW-Authenticate` header.
///
/// With OAuth, [`metadata_response`](Self::metadata_response) also answers the RFC 9728
/// protected-resource metadata document at `/.well-known/oauth-protected-resource…`.
///
/// ```
/// use mcp_tools::{PermissionSet, server::{Authenticator, Refusal, TokenTable}};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let auth = Authenticator::tokens(TokenTable::new([("r3ad3r", PermissionSet::new(["WIKI_VIEW"]))]));
/// let mut headers = http::HeaderMap::new();
/// headers.insert("authorization", "Bearer r3ad3r".parse().unwrap());
/// let caller = auth.authenticate(&headers).await.unwrap();
/// assert!(caller.permissions().is_some_and(|p| p.contains("WIKI_VIEW")));
///
/// let refusal = auth.authenticate(&http::HeaderMap::new()).await.unwrap_err();
/// assert!(matches!(refusal, Refusal::Missing));
/// let response = auth.refusal_response(&refusal);
/// assert_eq!(response.status(), 401);
/// assert_eq!(response.headers()["www-authenticate"], r#"Bearer realm="mcp""#);
/// # });
/// ```
#[derive(Clone, Default)]
pub struct Authenticator {
    tokens: Option<Arc<dyn TokenResolver>>,
    #[cfg(feature = "oauth")]
    oauth: Option<Arc<OAuth>>,
    step_up: bool,
}

/// The OAuth half of an [`Authenticator`].
#[cfg(feature = "oauth")]
struct OAuth {
    verifier: Arc<super::oauth::JwtVerifier>,
    resource: super::oauth::ProtectedResource,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("Authenticator");
        out.field("tokens", &self.tokens.is_some());
        #[cfg(feature = "oauth")]
        out.field(
            "oauth",
            &self.oauth.as_ref().map(|o| o.verifier.config().issuer()),
        );
        out.field("step_up", &self.step_up).finish()
    }
}

/// Why a request is refused, and so how it is answered
/// ([`Authenticator::refusal_response`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// No `Authorization: Bearer` credentials: `401` with no error code (RFC 6750 §3.1).
    Missing,
    /// The token was refused: `401` with `error="invalid_token"` and the reason.
    Token(TokenError),
    /// The token could not be checked now (the issuer's keys or introspection endpoint did
    /// not answer): `503`; the caller is not at fault.
    Unavailable(String),
    /// The token is valid but lacks scope for what was asked: `403` with
    /// `error="insufficient_scope"` and these scopes to ask for (step-up authorization; only
    /// when enabled with [`Authenticator::step_up`]).
    InsufficientScope(Vec<String>),
}

/// Why a token was refused. Every case is the caller's: RFC 6750 `invalid_token`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Not a token this server knows: not in the static tokens, and no OAuth verifier.
    #[error("the bearer token is not valid")]
    Unknown,
    /// Not a JWS in compact form (or its parts do not decode).
    #[error("the token is not a well-formed JWT")]
    Malformed,
    /// The header names an algorithm outside the allow-list, or one its key does not pin.
    #[error("the token's algorithm {0} is not accepted")]
    Algorithm(String),
    /// No published key has the token's `kid` (even after refetching the key set).
    #[error("the token is signed with a key the issuer does not publish")]
    UnknownKey,
    /// The signature does not verify.
    #[error("the token's signature does not verify")]
    Signature,
    /// `exp` has passed (beyond the leeway).
    #[error("the token has expired")]
    Expired,
    /// `nbf` is still ahead (beyond the leeway).
    #[error("the token is not valid yet")]
    NotYetValid,
    /// `aud` does not name this server's resource.
    #[error("the token is not meant for this resource")]
    Audience,
    /// `iss` is not the trusted issuer.
    #[error("the token comes from another issuer")]
    Issuer,
    /// The introspection endpoint says the token is not active (unknown, revoked or expired).
    #[error("the token is not active")]
    Inactive,
    /// A required claim (`exp`, `iss`, `aud`) is missing or of the wrong type.
    #[error("the token's {0} claim is missing or malformed")]
    MissingClaim(String),
}

impl Authenticator {
    /// Static bearer tokens: a token `resolver` knows is a caller with the permissions it
    /// maps the token to (see [`TokenTable`](super::TokenTable) for the tokens file).
    ///
    /// ```
    /// use mcp_tools::{PermissionSet, server::Authenticator};
    /// let auth = Authenticator::tokens(|t: &str| (t == "s3cret").then(PermissionSet::empty));
    /// # let _ = auth;
    /// ```
    pub fn tokens(resolver: impl TokenResolver) -> Authenticator {
        Authenticator::default().with_tokens(resolver)
    }

    /// Also (or instead) accept the static tokens `resolver` knows; they are looked up
    /// before the OAuth verifier is asked.
    ///
    /// ```
    /// use mcp_tools::{PermissionSet, server::{Authenticator, TokenTable}};
    /// let auth = Authenticator::default().with_tokens(TokenTable::new([("t", PermissionSet::empty())]));
    /// assert!(auth.is_configured());
    /// ```
    pub fn with_tokens(mut self, resolver: impl TokenResolver) -> Authenticator {
        self.tokens = Some(Arc::new(resolver));
        self
    }

    /// OAuth 2.1 access tokens checked by `verifier` (feature `oauth`); the caller's
    /// permissions come from the token's scopes through the verifier's
    /// [`ScopeMap`](super::oauth::ScopeMap). Refusals point at this server's RFC 9728
    /// metadata, which lists the issuer and the scopes (see
    /// [`OAuthConfig::scopes_supported`](super::oauth::OAuthConfig::scopes_supported)).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_tools::server::{Authenticator, HttpOptions, oauth::{JwtVerifier, OAuthConfig}};
    /// let config = OAuthConfig::new("https://login.example.org", "https://mcp.example.org/mcp");
    /// let auth = Authenticator::oauth(JwtVerifier::discover(config).await?);
    /// let options = HttpOptions::default().authenticator(auth);
    /// # let _ = options; Ok(()) }
    /// ```
    #[cfg(feature = "oauth")]
    pub fn oauth(verifier: super::oauth::JwtVerifier) -> Authenticator {
        Authenticator::default().with_oauth(verifier)
    }

    /// [`oauth`](Self::oauth) on an authenticator that may also hold static tokens.
    ///
    /// ```no_run
    /// # async fn demo(verifier: mcp_tools::server::oauth::JwtVerifier) {
    /// use mcp_tools::{PermissionSet, server::{Authenticator, TokenTable}};
    /// let auth = Authenticator::tokens(TokenTable::new([("ci-job", PermissionSet::new(["READ"]))]))
    ///     .with_oauth(verifier);
    /// # let _ = auth; }
    /// ```
    #[cfg(feature = "oauth")]
    pub fn with_oauth(mut self, verifier: super::oauth::JwtVerifier) -> Authenticator {
        let resource = super::oauth::ProtectedResource::of(verifier.config());
        self.oauth = Some(Arc::new(OAuth {
            verifier: Arc::new(verifier),
            resource,
        }));
        self
    }

    /// Step-up authorization: a caller whose token is valid but whose scopes do not reach a
    /// tool it names in `tools/call` gets `403` with `error="insufficient_scope"` and the
    /// scopes to ask for, instead of the answer of an unknown tool. Off by default: a tool
    /// outside the caller's view then answers exactly like one that does not exist, so
    /// tokens learn nothing about tools they cannot use. Turning it on tells every valid
    /// token which tools exist. Applies to OAuth callers only (a static token cannot step
    /// up), and only when the scope map can say which scopes grant the permissions (the
    /// identity map and a mapping file can; a function cannot).
    ///
    /// ```
    /// let auth = mcp_tools::server::Authenticator::default().step_up(true);
    /// # let _ = auth;
    /// ```
    pub fn step_up(mut self, reveal: bool) -> Authenticator {
        self.step_up = reveal;
        self
    }

    /// True when some credentials are checked (static tokens or OAuth).
    ///
    /// ```
    /// assert!(!mcp_tools::server::Authenticator::default().is_configured());
    /// ```
    pub fn is_configured(&self) -> bool {
        self.tokens.is_some() || self.has_oauth()
    }

    /// True when OAuth access tokens are checked.
    ///
    /// ```
    /// assert!(!mcp_tools::server::Authenticator::default().has_oauth());
    /// ```
    pub fn has_oauth(&self) -> bool {
        #[cfg(feature = "oauth")]
        return self.oauth.is_some();
        #[cfg(not(feature = "oauth"))]
        false
    }

    /// True when static bearer tokens are checked.
    ///
    /// ```
    /// use mcp_tools::{PermissionSet, server::Authenticator};
    /// assert!(Authenticator::tokens(|_: &str| None::<PermissionSet>).has_tokens());
    /// ```
    pub fn has_tokens(&self) -> bool {
        self.tokens.is_some()
    }

    /// Who presents the request's `Authorization: Bearer` credentials, or why not.
    ///
    /// A token the static resolver knows is a [`Caller::with_permissions`]; any other goes
    /// to the OAuth verifier, if there is one ([`Caller::new`] with the token's subject,
    /// client, scopes and permissions); without one it is [`TokenError::Unknown`]. An
    /// authenticator with nothing configured lets every request through as
    /// [`Caller::local`]. Refusals are logged at debug, never with the token.
    ///
    /// ```
    /// use mcp_tools::server::{Authenticator, Refusal, TokenError, TokenTable};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let auth = Authenticator::tokens(TokenTable::parse("t0k A\n").unwrap());
    /// let mut headers = http::HeaderMap::new();
    /// headers.insert("authorization", "Bearer guess".parse().unwrap());
    /// assert_eq!(auth.authenticate(&headers).await.unwrap_err(), Refusal::Token(TokenError::Unknown));
    /// # });
    /// ```
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, Refusal> {
        if !self.is_configured() {
            return Ok(Caller::local());
        }
        let outcome = self.check(headers).await;
        if let Err(refusal) = &outcome {
            tracing::debug!(?refusal, "refused an HTTP request's credentials");
        }
        outcome
    }

    async fn check(&self, headers: &HeaderMap) -> Result<Caller, Refusal> {
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(bearer_token)
            .ok_or(Refusal::Missing)?;
        if let Some(permissions) = self.tokens.as_ref().and_then(|t| t.resolve(token)) {
            return Ok(Caller::with_permissions(permissions));
        }
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth.verifier.verify(token).await.map_err(Refusal::from);
        }
        Err(Refusal::Token(TokenError::Unknown))
    }

    /// The answer to a refused request: the status (`401`, `403` or `503`), a
    /// `WWW-Authenticate` header and a one-line `text/plain` body.
    ///
    /// With OAuth the header is `Bearer resource_metadata="…"` (RFC 9728: where the
    /// metadata naming the authorization server is), `scope="…"` (the scopes this server
    /// understands, or for `403` the ones to step up to), and for a refused token
    /// `error="invalid_token", error_description="…"`. With static tokens only it is
    /// `Bearer realm="mcp"` with the same error parts.
    ///
    /// ```
    /// use mcp_tools::server::{Authenticator, Refusal, TokenError};
    /// let response = Authenticator::default().refusal_response(&Refusal::Token(TokenError::Expired));
    /// assert_eq!(response.status(), 401);
    /// assert_eq!(response.headers()["www-authenticate"],
    ///     r#"Bearer realm="mcp", error="invalid_token", error_description="the token has expired""#);
    /// ```
    pub fn refusal_response(&self, refusal: &Refusal) -> Response<String> {
        let mut params: Vec<(&str, String)> = Vec::new();
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            params.push(("resource_metadata", oauth.resource.metadata_url()));
            let scopes = oauth.resource.scopes_supported();
            if !scopes.is_empty() && !matches!(refusal, Refusal::InsufficientScope(_)) {
                params.push(("scope", scopes.join(" ")));
            }
        }
        if params.is_empty() {
            params.push(("realm", "mcp".into()));
        }
        let (status, text) = match refusal {
            Refusal::Missing => (
                StatusCode::UNAUTHORIZED,
                "this server needs an 'Authorization: Bearer <token>' header".to_string(),
            ),
            Refusal::Token(err) => {
                params.push(("error", "invalid_token".into()));
                params.push(("error_description", err.to_string()));
                (StatusCode::UNAUTHORIZED, err.to_string())
            }
            Refusal::Unavailable(problem) => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the token cannot be checked now ({problem}); retry later"),
            ),
            Refusal::InsufficientScope(scopes) => {
                let text = format!(
                    "the token's scopes do not reach this tool; ask for: {}",
                    scopes.join(" ")
                );
                params.push(("error", "insufficient_scope".into()));
                params.push(("scope", scopes.join(" ")));
                params.push(("error_description", text.clone()));
                (StatusCode::FORBIDDEN, text)
            }
        };
        let challenge = params
            .iter()
            .map(|(name, value)| format!("{name}=\"{}\"", quoted(value)))
            .collect::<Vec<_>>()
            .join(", ");
        let reason = status.canonical_reason().unwrap_or("Refused");
        let mut response = Response::new(format!("{reason}: {text}"));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        if let Ok(value) = HeaderValue::from_str(&format!("Bearer {challenge}")) {
            headers.insert(header::WWW_AUTHENTICATE, value);
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response
    }

    /// The RFC 9728 protected-resource metadata document when `path` is one of its places —
    /// `/.well-known/oauth-protected-resource`, followed by nothing, by the resource URL's
    /// path, or by `endpoint` (the path the MCP endpoint is served at) — and OAuth is
    /// configured; `None` otherwise. `GET` (and `HEAD`) get the JSON document (any origin may
    /// read it), other methods `405`.
    ///
    /// ```
    /// // Without OAuth there is no document.
    /// let auth = mcp_tools::server::Authenticator::default();
    /// assert!(auth.metadata_response(&http::Method::GET, "/.well-known/oauth-protected-resource", "/mcp").is_none());
    /// ```
    pub fn metadata_response(
        &self,
        method: &http::Method,
        path: &str,
        endpoint: &str,
    ) -> Option<Response<String>> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            let suffix = path.strip_prefix(super::oauth::METADATA_PATH)?;
            if !(suffix.is_empty() || suffix == endpoint || suffix == oauth.resource.path()) {
                return None;
            }
            let mut response = if method == http::Method::GET || method == http::Method::HEAD {
                let mut response = Response::new(oauth.resource.metadata().to_string());
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
            return Some(response);
        }
        let _ = (method, path, endpoint);
        None
    }

    /// With the identity scope map and no scopes configured, advertise as
    /// `scopes_supported` the permissions `registry`'s tools, resources and prompts need
    /// (with the identity map each is a scope). The server does this when it starts serving
    /// HTTP; call it when you mount the endpoint yourself.
    ///
    /// ```
    /// let registry = mcp_tools::Registry::builder().include_linked(false).build().unwrap();
    /// let auth = mcp_tools::server::Authenticator::default().scopes_from(&registry);
    /// # let _ = auth;
    /// ```
    pub fn scopes_from(self, registry: &Registry) -> Authenticator {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth
            && oauth.resource.scopes_supported().is_empty()
            && oauth.verifier.config().mapping().is_identity()
        {
            let mut scopes = std::collections::BTreeSet::new();
            for tool in registry.list_tools().iter() {
                scopes.extend(tool.permissions().names().map(str::to_string));
            }
            for resource in registry.list_resources().iter() {
                scopes.extend(resource.permissions().names().map(str::to_string));
            }
            for prompt in registry.list_prompts().iter() {
                scopes.extend(prompt.permissions().names().map(str::to_string));
            }
            let resource = oauth.resource.clone().with_scopes(scopes);
            let verifier = oauth.verifier.clone();
            return Authenticator {
                oauth: Some(Arc::new(OAuth { verifier, resource })),
                ..self
            };
        }
        let _ = registry;
        self
    }

    /// With [`step_up`](Self::step_up) on: the `403` refusal for `caller` naming `tool`
    /// when the tool exists in `registry` (the server's, unfiltered by any caller) but the
    /// caller's permissions do not reach it, with the scopes that would (the caller's own
    /// plus the missing ones). `None` when the call should go on as usual (the tool is
    /// visible, unknown, or step-up is off or cannot name the scopes).
    ///
    /// ```
    /// use mcp_tools::{Caller, PermissionSet};
    /// let registry = mcp_tools::Registry::builder().include_linked(false).build().unwrap();
    /// let auth = mcp_tools::server::Authenticator::default().step_up(true);
    /// let caller = Caller::new(None, None, vec![], PermissionSet::empty(), Default::default());
    /// assert!(auth.insufficient_scope(&caller, &registry, "no_such_tool").is_none());
    /// ```
    pub fn insufficient_scope(
        &self,
        caller: &Caller,
        registry: &Registry,
        tool: &str,
    ) -> Option<Refusal> {
        #[cfg(feature = "oauth")]
        if self.step_up
            && let (Some(oauth), Some(permissions)) = (&self.oauth, caller.permissions())
            && caller.client_id().or(caller.subject()).is_some()
        {
            let def = registry.get(tool)?;
            if registry.view(permissions).get(tool).is_some() {
                return None;
            }
            let missing: Vec<&str> = def
                .permissions()
                .names()
                .filter(|name| !permissions.contains(name))
                .collect();
            let needed = oauth
                .verifier
                .config()
                .mapping()
                .scopes_granting(&missing)?;
            let mut scopes: Vec<String> = caller.scopes().to_vec();
            for scope in needed {
                if !scopes.contains(&scope) {
                    scopes.push(scope);
                }
            }
            return Some(Refusal::InsufficientScope(scopes));
        }
        let _ = (caller, registry, tool);
        None
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
    use super::*;
    use crate::PermissionSet;
    use crate::server::TokenTable;

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, authorization.parse().unwrap());
        headers
    }

    #[tokio::test]
    async fn static_tokens_give_their_permissions_and_others_are_refused() {
        let auth = Authenticator::tokens(TokenTable::new([("t1", PermissionSet::new(["A"]))]));
        let caller = auth.authenticate(&headers("Bearer t1")).await.unwrap();
        assert!(caller.permissions().unwrap().contains("A"));
        assert_eq!(
            auth.authenticate(&headers("Bearer t2")).await.unwrap_err(),
            Refusal::Token(TokenError::Unknown)
        );
        assert_eq!(
            auth.authenticate(&headers("Basic dDE6")).await.unwrap_err(),
            Refusal::Missing
        );
        assert_eq!(
            auth.authenticate(&HeaderMap::new()).await.unwrap_err(),
            Refusal::Missing
        );
        let open = Authenticator::default();
        assert!(
            open.authenticate(&HeaderMap::new())
                .await
                .unwrap()
                .is_local()
        );
    }

    #[test]
    fn each_refusal_has_its_status_and_challenge() {
        let auth = Authenticator::default();
        let challenge = |refusal: Refusal| {
            let response = auth.refusal_response(&refusal);
            let header = response.headers()[header::WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .to_string();
            (response.status().as_u16(), header)
        };
        assert_eq!(
            challenge(Refusal::Missing),
            (401, r#"Bearer realm="mcp""#.into())
        );
        assert_eq!(
            challenge(Refusal::Token(TokenError::Unknown)),
            (
                401,
                r#"Bearer realm="mcp", error="invalid_token", error_description="the bearer token is not valid""#
                    .into()
            )
        );
        let (status, header) = challenge(Refusal::Unavailable("timed out".into()));
        assert_eq!(status, 503);
        assert!(!header.contains("error="), "{header}");
        let (status, header) = challenge(Refusal::InsufficientScope(vec!["a".into(), "b".into()]));
        assert_eq!(status, 403);
        assert!(
            header.contains(r#"error="insufficient_scope", scope="a b""#),
            "{header}"
        );
    }

    #[test]
    fn quoted_values_lose_quotes_and_backslashes() {
        assert_eq!(quoted("a\"b\\c\nd"), "abcd");
    }
}
