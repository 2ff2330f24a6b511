//! [`Principal`]: who is calling, as a verified access token says.

use serde_json::{Map, Value};

use crate::permissions::PermissionSet;

/// The caller behind a verified access token.
///
/// Built by [`JwtVerifier::verify`](super::JwtVerifier::verify): the subject and client from the
/// `sub` and `client_id` claims (RFC 9068), the granted scopes from `scope`, the permissions the
/// [`ScopeMap`](super::ScopeMap) derived from them, and the claims the verifier was told to keep.
///
/// ```
/// use mcp_tools::{PermissionSet, server::oauth::Principal};
/// let caller = Principal::new(Some("alice".into()), None, vec!["notes:read".into()],
///     PermissionSet::new(["NOTE_VIEW"]), Default::default());
/// assert_eq!(caller.subject(), Some("alice"));
/// assert!(caller.permissions().contains("NOTE_VIEW"));
/// ```
#[derive(Debug, Clone)]
pub struct Principal {
    subject: Option<String>,
    client_id: Option<String>,
    scopes: Vec<String>,
    permissions: PermissionSet,
    claims: Map<String, Value>,
}

impl Principal {
    /// A principal from its parts (the verifier builds them; tests and custom
    /// authenticators may too).
    ///
    /// ```
    /// let p = mcp_tools::server::oauth::Principal::new(None, Some("ci".into()), vec![],
    ///     mcp_tools::PermissionSet::empty(), Default::default());
    /// assert_eq!(p.client_id(), Some("ci"));
    /// ```
    pub fn new(
        subject: Option<String>,
        client_id: Option<String>,
        scopes: Vec<String>,
        permissions: PermissionSet,
        claims: Map<String, Value>,
    ) -> Principal {
        Principal {
            subject,
            client_id,
            scopes,
            permissions,
            claims,
        }
    }

    /// The `sub` claim: the user, or for a client-credentials token the client itself.
    ///
    /// ```
    /// # let p = mcp_tools::server::oauth::Principal::new(Some("u1".into()), None, vec![], mcp_tools::PermissionSet::empty(), Default::default());
    /// assert_eq!(p.subject(), Some("u1"));
    /// ```
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The `client_id` claim: the OAuth client the token was issued to.
    ///
    /// ```
    /// # let p = mcp_tools::server::oauth::Principal::new(None, Some("c1".into()), vec![], mcp_tools::PermissionSet::empty(), Default::default());
    /// assert_eq!(p.client_id(), Some("c1"));
    /// ```
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The granted scopes, in the token's order.
    ///
    /// ```
    /// # let p = mcp_tools::server::oauth::Principal::new(None, None, vec!["a".into()], mcp_tools::PermissionSet::empty(), Default::default());
    /// assert_eq!(p.scopes(), ["a"]);
    /// ```
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The permissions the scope map derived from the token.
    ///
    /// ```
    /// # let p = mcp_tools::server::oauth::Principal::new(None, None, vec![], mcp_tools::PermissionSet::new(["P"]), Default::default());
    /// assert!(p.permissions().contains("P"));
    /// ```
    pub fn permissions(&self) -> &PermissionSet {
        &self.permissions
    }

    /// The claims the verifier was configured to keep
    /// ([`OAuthConfig::keep_claims`](super::OAuthConfig::keep_claims)).
    ///
    /// ```
    /// # let mut claims = serde_json::Map::new();
    /// # claims.insert("email".into(), "a@example.org".into());
    /// # let p = mcp_tools::server::oauth::Principal::new(None, None, vec![], mcp_tools::PermissionSet::empty(), claims);
    /// assert_eq!(p.claim("email").and_then(|v| v.as_str()), Some("a@example.org"));
    /// ```
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }

    /// All kept claims.
    ///
    /// ```
    /// # let p = mcp_tools::server::oauth::Principal::new(None, None, vec![], mcp_tools::PermissionSet::empty(), Default::default());
    /// assert!(p.claims().is_empty());
    /// ```
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }
}
