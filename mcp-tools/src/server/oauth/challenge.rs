//! What a protected resource tells its callers about itself: the RFC 9728 metadata document.
//! The `WWW-Authenticate` challenge of a refused request pointing at it is written by the
//! [`ResourceServer`](super::ResourceServer).

use serde_json::{Value, json};

use super::OAuthConfig;
use super::keys::well_known;

/// Where RFC 9728 puts a protected resource's metadata: this path on the resource's host,
/// followed by the resource URL's path (if it has one).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// This server as an OAuth protected resource (RFC 9728): its resource URL, the
/// authorization servers it trusts and the scopes it understands.
///
/// ```
/// use mcp_toolbelt::server::oauth::{OAuthConfig, ProtectedResource, ScopeMap};
/// let config = OAuthConfig::new("https://login.example.org", "https://mcp.example.org/mcp")
///     .scope_map(ScopeMap::parse("notes:read = NOTE_VIEW\nnotes:write = NOTE_EDIT\n").unwrap());
/// let resource = ProtectedResource::of(&config);
/// assert_eq!(resource.metadata_url(), "https://mcp.example.org/.well-known/oauth-protected-resource/mcp");
/// assert_eq!(resource.metadata()["authorization_servers"][0], "https://login.example.org");
/// assert_eq!(resource.scopes_supported(), ["notes:read", "notes:write"]);
/// ```
#[derive(Debug, Clone)]
pub struct ProtectedResource {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    /// The `scope` hint of a `401`; empty: [`scopes_supported`](Self::scopes_supported).
    challenge_scopes: Vec<String>,
}

impl ProtectedResource {
    /// The resource of `config`, its issuer as the authorization server, and as
    /// `scopes_supported` the scopes set with
    /// [`OAuthConfig::scopes_supported`](super::OAuthConfig::scopes_supported), else the ones a
    /// [`ScopeMap`](super::ScopeMap) file lists.
    ///
    /// ```
    /// # use mcp_toolbelt::server::oauth::{OAuthConfig, ProtectedResource};
    /// let r = ProtectedResource::of(&OAuthConfig::new("https://idp", "https://rs").scopes_supported(["s"]));
    /// assert_eq!(r.metadata()["scopes_supported"][0], "s");
    /// ```
    pub fn of(config: &OAuthConfig) -> ProtectedResource {
        let scopes = match config.advertised_scopes() {
            [] => config.mapping().listed_scopes(),
            listed => listed.to_vec(),
        };
        ProtectedResource {
            resource: config.resource().to_string(),
            authorization_servers: vec![config.issuer().to_string()],
            scopes_supported: scopes,
            challenge_scopes: config.asked_scopes().to_vec(),
        }
    }

    /// The same resource advertising `scopes`.
    pub(crate) fn with_scopes(
        mut self,
        scopes: impl IntoIterator<Item = String>,
    ) -> ProtectedResource {
        self.scopes_supported = scopes.into_iter().collect();
        self
    }

    /// Where the metadata document is served: [`METADATA_PATH`] on the resource's host,
    /// followed by the resource's path (RFC 9728 §3.1).
    ///
    /// ```
    /// # use mcp_toolbelt::server::oauth::{OAuthConfig, ProtectedResource};
    /// let r = ProtectedResource::of(&OAuthConfig::new("https://idp", "https://rs"));
    /// assert_eq!(r.metadata_url(), "https://rs/.well-known/oauth-protected-resource");
    /// ```
    pub fn metadata_url(&self) -> String {
        well_known(&self.resource, "oauth-protected-resource")
    }

    /// The resource URL's path (`/mcp` for `https://rs/mcp`; empty for `https://rs`).
    ///
    /// ```
    /// # use mcp_toolbelt::server::oauth::{OAuthConfig, ProtectedResource};
    /// let r = ProtectedResource::of(&OAuthConfig::new("https://idp", "https://rs/a/mcp"));
    /// assert_eq!(r.path(), "/a/mcp");
    /// ```
    pub fn path(&self) -> &str {
        let trimmed = self.resource.trim_end_matches('/');
        let after_scheme = trimmed.find("://").map_or(0, |i| i + 3);
        trimmed[after_scheme..]
            .find('/')
            .map_or("", |slash| &trimmed[after_scheme + slash..])
    }

    /// The scopes this resource advertises (`scopes_supported`).
    ///
    /// ```
    /// # use mcp_toolbelt::server::oauth::{OAuthConfig, ProtectedResource};
    /// assert!(ProtectedResource::of(&OAuthConfig::new("https://idp", "https://rs")).scopes_supported().is_empty());
    /// ```
    pub fn scopes_supported(&self) -> &[String] {
        &self.scopes_supported
    }

    /// The scopes a refused request is told to ask for (the `scope` of a `401`'s
    /// `WWW-Authenticate`): those set with
    /// [`OAuthConfig::challenge_scopes`](super::OAuthConfig::challenge_scopes), else every
    /// advertised scope.
    ///
    /// ```
    /// # use mcp_toolbelt::server::oauth::{OAuthConfig, ProtectedResource};
    /// let config = OAuthConfig::new("https://idp", "https://rs")
    ///     .scopes_supported(["notes:read", "notes:write", "admin"]);
    /// assert_eq!(ProtectedResource::of(&config).challenge_scopes(), ["notes:read", "notes:write", "admin"]);
    /// let least = ProtectedResource::of(&config.challenge_scopes(["notes:read"]));
    /// assert_eq!(least.challenge_scopes(), ["notes:read"]);
    /// assert_eq!(least.scopes_supported().len(), 3);
    /// ```
    pub fn challenge_scopes(&self) -> &[String] {
        match self.challenge_scopes.as_slice() {
            [] => &self.scopes_supported,
            asked => asked,
        }
    }

    /// The metadata document (`application/json`).
    ///
    /// ```
    /// # use mcp_toolbelt::server::oauth::{OAuthConfig, ProtectedResource};
    /// let r = ProtectedResource::of(&OAuthConfig::new("https://idp", "https://rs"));
    /// assert_eq!(r.metadata()["bearer_methods_supported"][0], "header");
    /// assert_eq!(r.metadata()["resource"], "https://rs");
    /// ```
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes_supported,
            "bearer_methods_supported": ["header"],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_metadata_urls() {
        let r = ProtectedResource::of(&OAuthConfig::new("https://idp", "https://rs/a/mcp"));
        assert_eq!(
            r.metadata_url(),
            "https://rs/.well-known/oauth-protected-resource/a/mcp"
        );
        assert_eq!(r.path(), "/a/mcp");
        let bare = ProtectedResource::of(&OAuthConfig::new("https://idp", "http://127.0.0.1:9/"));
        assert_eq!(bare.path(), "");
    }
}
