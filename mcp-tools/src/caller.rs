//! [`Caller`]: who is calling, as the transport's authentication established it.

use std::fmt;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use crate::permissions::PermissionSet;

/// Who is calling: the subject, client, scopes and permissions a transport's authentication
/// established, or the local caller when there was none.
///
/// A stdio caller, and a TCP or HTTP caller on a server without tokens, is
/// [`Caller::local`]: it sees every tool the registry serves. A caller that presented a token
/// sees the view its [`permissions`](Caller::permissions) allow; a tool outside that view
/// answers exactly like an unknown one.
///
/// ```
/// use mcp_toolbelt::{Caller, PermissionSet};
/// let caller = Caller::new(Some("alice".into()), None, vec!["notes:read".into()],
///     PermissionSet::new(["NOTE_VIEW"]), Default::default());
/// assert_eq!(caller.subject(), Some("alice"));
/// assert!(caller.permissions().is_some_and(|p| p.contains("NOTE_VIEW")));
/// assert!(Caller::local().permissions().is_none());
/// ```
///
/// Its `Debug` output names the kept claims but never prints their values, so a caller in a
/// log line or a panic message does not leak what the token said.
///
/// ```
/// # use mcp_toolbelt::{Caller, PermissionSet};
/// let mut claims = serde_json::Map::new();
/// claims.insert("email".into(), "alice@example.org".into());
/// let caller = Caller::new(Some("alice".into()), None, vec![], PermissionSet::empty(), claims);
/// let shown = format!("{caller:?}");
/// assert!(shown.contains("alice") && shown.contains("email"));
/// assert!(!shown.contains("alice@example.org"));
/// ```
#[derive(Clone, Default)]
pub struct Caller {
    subject: Option<String>,
    client_id: Option<String>,
    scopes: Vec<String>,
    /// `None`: the local caller, limited only by the registry's own filter.
    permissions: Option<PermissionSet>,
    claims: Map<String, Value>,
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("subject", &self.subject)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("permissions", &self.permissions)
            .field("claims", &self.claims.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The local caller, for contexts that carry none of their own.
pub(crate) static LOCAL: LazyLock<Caller> = LazyLock::new(Caller::local);

impl Caller {
    /// The caller on a transport without authentication (stdio, or TCP and HTTP served
    /// without tokens): no subject, and no permission view of its own.
    ///
    /// ```
    /// let local = mcp_toolbelt::Caller::local();
    /// assert!(local.is_local());
    /// assert_eq!(local.subject(), None);
    /// ```
    pub fn local() -> Caller {
        Caller::default()
    }

    /// A caller that authenticated with a static token granting `permissions`.
    ///
    /// ```
    /// let caller = mcp_toolbelt::Caller::with_permissions(mcp_toolbelt::PermissionSet::new(["READ"]));
    /// assert!(!caller.is_local());
    /// assert!(caller.permissions().is_some_and(|p| p.contains("READ")));
    /// ```
    pub fn with_permissions(permissions: PermissionSet) -> Caller {
        Caller {
            permissions: Some(permissions),
            ..Caller::default()
        }
    }

    /// A caller from the parts a verified access token carries (the OAuth verifier builds
    /// them; tests and custom authenticators may too).
    ///
    /// ```
    /// let caller = mcp_toolbelt::Caller::new(None, Some("ci".into()), vec![],
    ///     mcp_toolbelt::PermissionSet::empty(), Default::default());
    /// assert_eq!(caller.client_id(), Some("ci"));
    /// ```
    pub fn new(
        subject: Option<String>,
        client_id: Option<String>,
        scopes: Vec<String>,
        permissions: PermissionSet,
        claims: Map<String, Value>,
    ) -> Caller {
        Caller {
            subject,
            client_id,
            scopes,
            permissions: Some(permissions),
            claims,
        }
    }

    /// True for the caller of a transport without authentication.
    ///
    /// ```
    /// assert!(mcp_toolbelt::Caller::local().is_local());
    /// ```
    pub fn is_local(&self) -> bool {
        self.permissions.is_none()
    }

    /// The `sub` claim: the user, or for a client-credentials token the client itself.
    ///
    /// ```
    /// # let c = mcp_toolbelt::Caller::new(Some("u1".into()), None, vec![], mcp_toolbelt::PermissionSet::empty(), Default::default());
    /// assert_eq!(c.subject(), Some("u1"));
    /// ```
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The `client_id` claim: the OAuth client the token was issued to.
    ///
    /// ```
    /// # let c = mcp_toolbelt::Caller::new(None, Some("c1".into()), vec![], mcp_toolbelt::PermissionSet::empty(), Default::default());
    /// assert_eq!(c.client_id(), Some("c1"));
    /// ```
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The granted scopes, in the token's order (empty for the local caller and static
    /// tokens).
    ///
    /// ```
    /// # let c = mcp_toolbelt::Caller::new(None, None, vec!["a".into()], mcp_toolbelt::PermissionSet::empty(), Default::default());
    /// assert_eq!(c.scopes(), ["a"]);
    /// ```
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The permissions the caller's token grants; `None` for the local caller, who sees
    /// everything the registry serves.
    ///
    /// ```
    /// # let c = mcp_toolbelt::Caller::with_permissions(mcp_toolbelt::PermissionSet::new(["P"]));
    /// assert!(c.permissions().is_some_and(|p| p.contains("P")));
    /// ```
    pub fn permissions(&self) -> Option<&PermissionSet> {
        self.permissions.as_ref()
    }

    /// One of the claims the authenticator was configured to keep.
    ///
    /// ```
    /// # let mut claims = serde_json::Map::new();
    /// # claims.insert("email".into(), "a@example.org".into());
    /// # let c = mcp_toolbelt::Caller::new(None, None, vec![], mcp_toolbelt::PermissionSet::empty(), claims);
    /// assert_eq!(c.claim("email").and_then(|v| v.as_str()), Some("a@example.org"));
    /// ```
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }

    /// All kept claims.
    ///
    /// ```
    /// assert!(mcp_toolbelt::Caller::local().claims().is_empty());
    /// ```
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }
}

/// A caller known only by the permissions its token grants, so a
/// `server::TokenResolver` closure may return a `PermissionSet`.
///
/// ```
/// let caller: mcp_toolbelt::Caller = mcp_toolbelt::PermissionSet::new(["READ"]).into();
/// assert!(caller.permissions().is_some_and(|p| p.contains("READ")));
/// ```
impl From<PermissionSet> for Caller {
    fn from(permissions: PermissionSet) -> Caller {
        Caller::with_permissions(permissions)
    }
}
