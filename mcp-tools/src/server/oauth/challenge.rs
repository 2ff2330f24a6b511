//! What a protected resource tells its callers: the RFC 9728 metadata document and the
//! RFC 6750 `WWW-Authenticate` challenge of a refused request.

use serde_json::{Value, json};

use super::keys::well_known;
use super::{OAuthConfig, OAuthError};

/// This server as an OAuth protected resource (RFC 9728): its resource URL, the
/// authorization servers it trusts and the scopes it understands.
///
/// ```
/// use mcp_tools::server::oauth::{OAuthConfig, ProtectedResource};
/// let config = OAuthConfig::new("https://login.example.org", "https://mcp.example.org/mcp");
/// let resource = ProtectedResource::new(&config, ["notes:read", "notes:write"]);
/// assert_eq!(resource.metadata_url(), "https://mcp.example.org/.well-known/oauth-protected-resource/mcp");
/// assert_eq!(resource.metadata()["authorization_servers"][0], "https://login.example.org");
/// ```
#[derive(Debug, Clone)]
pub struct ProtectedResource {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
}

impl ProtectedResource {
    /// The resource of `config`, its issuer as the authorization server, and `scopes` as
    /// `scopes_supported` (for example the scopes a [`ScopeMap`](super::ScopeMap) file lists).
    ///
    /// ```
    /// # use mcp_tools::server::oauth::{OAuthConfig, ProtectedResource};
    /// let r = ProtectedResource::new(&OAuthConfig::new("https://idp", "https://rs"), ["s"]);
    /// assert_eq!(r.metadata()["scopes_supported"][0], "s");
    /// ```
    pub fn new<I, S>(config: &OAuthConfig, scopes: I) -> ProtectedResource
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ProtectedResource {
            resource: config.resource().to_string(),
            authorization_servers: vec![config.issuer().to_string()],
            scopes_supported: scopes.into_iter().map(Into::into).collect(),
        }
    }

    /// Where the metadata document is served: `/.well-known/oauth-protected-resource` on the
    /// resource's host, followed by the resource's path (RFC 9728 §3.1).
    ///
    /// ```
    /// # use mcp_tools::server::oauth::{OAuthConfig, ProtectedResource};
    /// let r = ProtectedResource::new(&OAuthConfig::new("https://idp", "https://rs"), ["s"]);
    /// assert_eq!(r.metadata_url(), "https://rs/.well-known/oauth-protected-resource");
    /// ```
    pub fn metadata_url(&self) -> String {
        well_known(&self.resource, "oauth-protected-resource")
    }

    /// The metadata document (`application/json`).
    ///
    /// ```
    /// # use mcp_tools::server::oauth::{OAuthConfig, ProtectedResource};
    /// let r = ProtectedResource::new(&OAuthConfig::new("https://idp", "https://rs"), ["s"]);
    /// assert_eq!(r.metadata()["bearer_methods_supported"][0], "header");
    /// ```
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes_supported,
            "bearer_methods_supported": ["header"],
        })
    }

    /// The status and `WWW-Authenticate` value for a request refused for `refusal`.
    ///
    /// ```
    /// use mcp_tools::server::oauth::{OAuthConfig, ProtectedResource, Refusal, TokenError};
    /// let r = ProtectedResource::new(&OAuthConfig::new("https://idp", "https://rs/mcp"), ["read"]);
    /// let (status, header) = r.challenge(&Refusal::Token(TokenError::Expired.into()));
    /// assert_eq!(status, 401);
    /// assert_eq!(header, concat!(
    ///     r#"Bearer resource_metadata="https://rs/.well-known/oauth-protected-resource/mcp", "#,
    ///     r#"error="invalid_token", error_description="the token has expired""#));
    /// ```
    pub fn challenge(&self, refusal: &Refusal) -> (u16, String) {
        let mut header = format!(
            "Bearer resource_metadata=\"{}\"",
            quoted(&self.metadata_url())
        );
        let status = match refusal {
            // RFC 6750 §3.1: no error code when the request carried no credentials.
            Refusal::Missing => 401,
            Refusal::Token(err) => match err.error_code() {
                Some(code) => {
                    header.push_str(&format!(
                        ", error=\"{code}\", error_description=\"{}\"",
                        quoted(&err.to_string())
                    ));
                    401
                }
                // The issuer's keys could not be fetched: the caller is not at fault.
                None => 503,
            },
            Refusal::InsufficientScope(scopes) => {
                header.push_str(&format!(
                    ", error=\"insufficient_scope\", scope=\"{}\"",
                    quoted(&scopes.join(" "))
                ));
                403
            }
        };
        (status, header)
    }
}

/// Why a request to the protected resource is refused.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Refusal {
    /// No `Authorization: Bearer` credentials (401 without an error code).
    Missing,
    /// The token was refused, or could not be checked (401 `invalid_token`, or 503).
    Token(OAuthError),
    /// The token is valid but lacks these scopes for the request (403 `insufficient_scope`,
    /// the scopes to step up to).
    InsufficientScope(Vec<String>),
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
    use crate::server::oauth::TokenError;

    fn resource() -> ProtectedResource {
        ProtectedResource::new(
            &OAuthConfig::new("https://idp", "https://rs/a/mcp"),
            ["x", "y"],
        )
    }

    #[test]
    fn missing_credentials_get_no_error_code() {
        let (status, header) = resource().challenge(&Refusal::Missing);
        assert_eq!(status, 401);
        assert_eq!(
            header,
            r#"Bearer resource_metadata="https://rs/.well-known/oauth-protected-resource/a/mcp""#
        );
    }

    #[test]
    fn each_refusal_has_its_status_and_code() {
        let r = resource();
        let (status, header) = r.challenge(&Refusal::Token(TokenError::UnknownKey.into()));
        assert_eq!(status, 401);
        assert!(header.contains(r#"error="invalid_token""#), "{header}");
        let (status, header) =
            r.challenge(&Refusal::InsufficientScope(vec!["x".into(), "y".into()]));
        assert_eq!(status, 403);
        assert!(
            header.ends_with(r#"error="insufficient_scope", scope="x y""#),
            "{header}"
        );
        let unreachable = OAuthError::Fetch {
            url: "https://idp/jwks".into(),
            problem: "timed out".into(),
        };
        let (status, header) = r.challenge(&Refusal::Token(unreachable));
        assert_eq!(status, 503);
        assert!(!header.contains("error="), "{header}");
    }

    #[test]
    fn quoted_values_lose_quotes_and_backslashes() {
        assert_eq!(quoted("a\"b\\c\nd"), "abcd");
    }
}
