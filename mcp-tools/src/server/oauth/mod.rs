//! OAuth 2.1 resource server: who is calling, from a JWT access token.
//!
//! A [`JwtVerifier`] trusts one issuer for one resource. It finds the issuer's metadata
//! (RFC 8414, else OpenID discovery) and signing keys (JWKS), checks each token's signature,
//! algorithm, issuer, audience (this server's resource URL, RFC 8707) and lifetime, and hands
//! back a [`Caller`](crate::Caller) whose permissions come from the token's scopes through a
//! [`ScopeMap`]. A [`ResourceServer`] puts it in front of the HTTP endpoint
//! ([`HttpOptions::oauth`](crate::server::HttpOptions::oauth)). See `docs/auth.md` for what is checked and how to set up an identity
//! provider.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_toolbelt::server::oauth::{JwtVerifier, OAuthConfig, ScopeMap};
//! let config = OAuthConfig::new("https://login.example.org", "https://mcp.example.org/mcp")
//!     .scope_map(ScopeMap::from_file("scopes.map")?);
//! let verifier = JwtVerifier::discover(config).await?;
//! match verifier.verify("eyJ...").await {
//!     Ok(caller) => println!("{:?}: {:?}", caller.subject(), caller.permissions()),
//!     Err(err) => println!("refused ({:?}): {err}", err.error_code()),
//! }
//! # Ok(()) }
//! ```

mod challenge;
mod introspection;
mod keys;
mod resource_server;
mod scope_map;
mod verified;
mod verifier;

pub use challenge::{METADATA_PATH, ProtectedResource};
pub use jsonwebtoken::Algorithm;
pub use keys::IssuerMetadata;
pub use resource_server::ResourceServer;
pub use scope_map::{ScopeMap, ScopeMapError};
pub use verifier::{DEFAULT_ALGORITHMS, JwtVerifier, OAuthConfig};

/// Why a token was refused. Every case is the caller's: RFC 6750 `invalid_token`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Not a JWS in compact form (or its parts do not decode).
    #[error("the token is not a well-formed JWT")]
    Malformed,
    /// The JOSE header decodes but a member is not what RFC 7515 says it is (a `kid` that is
    /// not a string, a `crit` that is not a non-empty array of names, …).
    #[error("the token's header is malformed: {0}")]
    MalformedHeader(String),
    /// The header's `crit` names an extension this server does not implement (RFC 7515
    /// §4.1.11: such a token must be refused). None is implemented.
    #[error(
        "the token's header marks the extension {0:?} critical, which this server does not implement"
    )]
    Critical(String),
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
    /// `iat` is ahead (beyond the leeway): the token claims to be issued in the future.
    #[error("the token's iat claim says it was issued in the future")]
    IssuedInFuture,
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

/// What went wrong in the verifier: a refused token, or the issuer could not be reached.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The token was refused (answer 401 with `error="invalid_token"`).
    #[error(transparent)]
    Token(#[from] TokenError),
    /// A metadata or key document could not be fetched or parsed (the server's problem: 503).
    #[error("cannot fetch {url}: {problem}")]
    Fetch {
        /// The document's URL.
        url: String,
        /// What failed.
        problem: String,
    },
    /// No metadata document could be fetched at any of the places it may be (RFC 8414, then
    /// OpenID discovery): each URL tried, and why it failed.
    #[error("cannot find the issuer's metadata: {}", tried.iter().map(|(url, problem)| format!("{url}: {problem}")).collect::<Vec<_>>().join("; "))]
    Discovery {
        /// Every URL tried, in order, with what failed there.
        tried: Vec<(String, String)>,
    },
    /// The metadata names another issuer than the configured one (RFC 8414 §3.3).
    #[error("{url} names the issuer {found:?}, not the configured one")]
    IssuerMismatch {
        /// The metadata document's URL.
        url: String,
        /// The issuer it names.
        found: String,
    },
}

impl OAuthError {
    /// The RFC 6750 error code for a `WWW-Authenticate` answer: `invalid_token` for a refused
    /// token; `None` when the server, not the caller, is at fault.
    ///
    /// ```
    /// use mcp_toolbelt::server::oauth::{OAuthError, TokenError};
    /// assert_eq!(OAuthError::from(TokenError::Expired).error_code(), Some("invalid_token"));
    /// ```
    pub fn error_code(&self) -> Option<&'static str> {
        match self {
            OAuthError::Token(_) => Some(crate::server::auth::INVALID_TOKEN),
            OAuthError::Fetch { .. }
            | OAuthError::Discovery { .. }
            | OAuthError::IssuerMismatch { .. } => None,
        }
    }
}
