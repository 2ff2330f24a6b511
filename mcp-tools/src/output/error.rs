//! Typed tool errors and their rendering as `Error (kind): message` + `Action: …`.

use std::fmt;

/// The class of a tool failure.
///
/// Every failure a client can see has exactly one kind; its [`as_str`](ErrorKind::as_str)
/// form is what appears in `Error (kind): …` texts.
///
/// ```
/// use mcp_toolbelt::ErrorKind;
/// assert_eq!(ErrorKind::NotFound.as_str(), "not_found");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The thing the tool was asked about does not exist.
    NotFound,
    /// The caller (or the backend's account) may not do this.
    PermissionDenied,
    /// The arguments are wrong: type, range, missing or unknown fields.
    Validation,
    /// The backend refused because of a concurrent change (stale version, duplicate).
    Conflict,
    /// The tool did not finish in its time budget.
    Timeout,
    /// The backend the tool talks to failed or could not be reached.
    Upstream,
    /// The call was cancelled: by the client, or by the server shutting down once its grace
    /// for calls in flight was over.
    Cancelled,
    /// A bug or unexpected condition inside the tool (including a panic).
    Internal,
}

impl ErrorKind {
    /// The snake_case name used in error texts and structured errors.
    ///
    /// ```
    /// assert_eq!(mcp_toolbelt::ErrorKind::Validation.as_str(), "validation_error");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::Validation => "validation_error",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Upstream => "upstream_error",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Internal => "internal_error",
        }
    }

    /// The default corrective action for this kind, phrased for the tool's category
    /// (the domain a model works in, e.g. `ticket`).
    ///
    /// ```
    /// let action = mcp_toolbelt::ErrorKind::NotFound.default_action(Some("ticket"));
    /// assert!(action.contains("ticket"));
    /// ```
    pub fn default_action(self, category: Option<&str>) -> String {
        // Phrased to be true in any domain: no tool, backend or data model is assumed.
        let identifier = category.map_or_else(
            || "the identifier".to_string(),
            |category| format!("the {category} identifier"),
        );
        match self {
            ErrorKind::NotFound => format!(
                "Check {identifier}; list what exists (if a tool lists or searches it) and call again with an existing one."
            ),
            ErrorKind::PermissionDenied => format!(
                "The caller may not do this{} operation; use a tool the caller may call, or ask an administrator for the permission.",
                category.map_or_else(String::new, |category| format!(" {category}"))
            ),
            ErrorKind::Validation => {
                "Fix the arguments to match the tool's input schema and call again.".to_string()
            }
            ErrorKind::Conflict => {
                "The request conflicts with the current state; read the current state again, then retry with a request that fits it.".to_string()
            }
            ErrorKind::Timeout => {
                "Retry later, or narrow the request so it finishes sooner.".to_string()
            }
            ErrorKind::Upstream => {
                "A service this tool depends on failed or is unreachable; retry later, and check that it is running if it keeps failing.".to_string()
            }
            ErrorKind::Cancelled => {
                "The call was cancelled; call again if still needed.".to_string()
            }
            ErrorKind::Internal => {
                "This is a server-side bug; report it with the message above.".to_string()
            }
        }
    }
}

impl ErrorKind {
    /// Every kind.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) const ALL: [ErrorKind; 8] = [
        ErrorKind::NotFound,
        ErrorKind::PermissionDenied,
        ErrorKind::Validation,
        ErrorKind::Conflict,
        ErrorKind::Timeout,
        ErrorKind::Upstream,
        ErrorKind::Cancelled,
        ErrorKind::Internal,
    ];

    /// The kind a text [`ToolError::render`] wrote names (`Error (kind): …`), if it is one.
    #[cfg(feature = "testing")]
    pub(crate) fn of_rendered(text: &str) -> Option<ErrorKind> {
        let name = text.strip_prefix("Error (")?.split_once("): ")?.0;
        ErrorKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The most characters of a client-supplied name or string echoed back in a message or a
/// log line; the rest is counted, so a 100 KB tool name costs a short line.
pub(crate) const MAX_ECHO: usize = 128;

/// `text` as it may be echoed to a client or a log: whole up to [`MAX_ECHO`] characters,
/// else its first [`MAX_ECHO`] and how many more there were.
pub(crate) fn echo(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_ECHO) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => std::borrow::Cow::Owned(format!(
            "{}… ({} more characters)",
            &text[..cut],
            text[cut..].chars().count()
        )),
    }
}

/// A failure returned by a tool, or produced by the registry on the tool's behalf.
///
/// It becomes an `isError: true` result whose text is
/// `Error (kind): message` followed by a blank line and `Action: …`.
///
/// ```
/// use mcp_toolbelt::{ErrorKind, ToolError};
/// let err = ToolError::not_found("Ticket #999 does not exist").with_action("Search tickets first.");
/// assert_eq!(err.kind(), ErrorKind::NotFound);
/// assert_eq!(err.render(None), "Error (not_found): Ticket #999 does not exist\n\nAction: Search tickets first.");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    kind: ErrorKind,
    message: String,
    action: Option<String>,
    /// A stable code finer than the kind (`session_not_found`), for return types that show
    /// one (an `Envelope`'s error form); the plain text form does not.
    code: Option<std::borrow::Cow<'static, str>>,
}

macro_rules! kind_constructors {
    ($($(#[$doc:meta])* $fn_name:ident => $kind:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            pub fn $fn_name(message: impl Into<String>) -> Self {
                Self::new(ErrorKind::$kind, message)
            }
        )*
    };
}

impl ToolError {
    /// An error of `kind` with `message`; the action defaults to the kind's, per category.
    ///
    /// ```
    /// let e = mcp_toolbelt::ToolError::new(mcp_toolbelt::ErrorKind::Conflict, "stale version");
    /// assert_eq!(e.message(), "stale version");
    /// ```
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            action: None,
            code: None,
        }
    }

    kind_constructors! {
        /// A [`ErrorKind::NotFound`] error. `ToolError::not_found("no such page")`.
        not_found => NotFound,
        /// A [`ErrorKind::PermissionDenied`] error.
        permission_denied => PermissionDenied,
        /// A [`ErrorKind::Validation`] error.
        validation => Validation,
        /// A [`ErrorKind::Conflict`] error.
        conflict => Conflict,
        /// A [`ErrorKind::Timeout`] error.
        timeout => Timeout,
        /// A [`ErrorKind::Upstream`] error.
        upstream => Upstream,
        /// A [`ErrorKind::Internal`] error.
        internal => Internal,
    }

    /// Replace the default action line with a specific one.
    ///
    /// ```
    /// let e = mcp_toolbelt::ToolError::conflict("stale").with_action("Re-read the ticket.");
    /// assert_eq!(e.action(), Some("Re-read the ticket."));
    /// ```
    pub fn with_action(mut self, action: impl Into<String>) -> Self {
        self.action = Some(action.into());
        self
    }

    /// Give the error a stable code finer than its kind, such as `session_not_found`. The
    /// plain text form (`Error (kind): …`) is unchanged; an
    /// [`Envelope`](crate::envelope::Envelope) shows the code.
    ///
    /// ```
    /// let e = mcp_toolbelt::ToolError::not_found("no session 's9'").with_code("session_not_found");
    /// assert_eq!(e.code(), Some("session_not_found"));
    /// assert!(e.render(None).starts_with("Error (not_found): "));
    /// ```
    pub fn with_code(mut self, code: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The stable code, if one was set.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The error's kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The error's message (without kind or action).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The explicit action line, if one was set.
    pub fn action(&self) -> Option<&str> {
        self.action.as_deref()
    }

    /// The full text a client sees: `Error (kind): message\n\nAction: action`, where a
    /// missing explicit action is derived from the kind and the tool's `category`.
    ///
    /// ```
    /// let text = mcp_toolbelt::ToolError::not_found("no such page").render(Some("wiki"));
    /// assert!(text.starts_with("Error (not_found): no such page\n\nAction: "));
    /// assert!(text.contains("the wiki identifier"));
    /// ```
    pub fn render(&self, category: Option<&str>) -> String {
        let action = match &self.action {
            Some(action) => action.clone(),
            None => self.kind.default_action(category),
        };
        format!(
            "Error ({}): {}\n\nAction: {}",
            self.kind.as_str(),
            self.message,
            action
        )
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} error: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<std::io::Error> for ToolError {
    fn from(err: std::io::Error) -> Self {
        use std::io::ErrorKind as Io;
        let kind = match err.kind() {
            Io::NotFound => ErrorKind::NotFound,
            Io::PermissionDenied => ErrorKind::PermissionDenied,
            Io::TimedOut => ErrorKind::Timeout,
            Io::InvalidInput | Io::InvalidData => ErrorKind::Validation,
            Io::AlreadyExists => ErrorKind::Conflict,
            Io::ConnectionRefused
            | Io::ConnectionReset
            | Io::ConnectionAborted
            | Io::NotConnected
            | Io::BrokenPipe
            | Io::HostUnreachable
            | Io::NetworkUnreachable => ErrorKind::Upstream,
            _ => ErrorKind::Internal,
        };
        ToolError::new(kind, err.to_string())
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(err: serde_json::Error) -> Self {
        let kind = if err.is_io() {
            ErrorKind::Internal
        } else {
            ErrorKind::Validation
        };
        ToolError::new(kind, format!("invalid JSON: {err}"))
    }
}

impl From<String> for ToolError {
    /// A plain message is an internal error; use a kind constructor to say more.
    fn from(message: String) -> Self {
        ToolError::internal(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::internal(message)
    }
}

impl From<(ErrorKind, String)> for ToolError {
    fn from((kind, message): (ErrorKind, String)) -> Self {
        ToolError::new(kind, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_kinds() {
        let e: ToolError = std::io::Error::new(std::io::ErrorKind::NotFound, "gone").into();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        let e: ToolError =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused").into();
        assert_eq!(e.kind(), ErrorKind::Upstream);
    }

    #[test]
    fn default_action_names_category() {
        let text = ToolError::not_found("Ticket #9 not found").render(Some("ticket"));
        assert_eq!(
            text,
            "Error (not_found): Ticket #9 not found\n\nAction: Check the ticket identifier; list what exists (if a tool lists or searches it) and call again with an existing one."
        );
    }

    #[test]
    fn echoed_strings_are_capped() {
        assert_eq!(echo("short"), "short");
        let exact = "é".repeat(MAX_ECHO);
        assert_eq!(echo(&exact), exact);
        let long = "x".repeat(100_000);
        let shown = echo(&long);
        assert!(shown.starts_with(&"x".repeat(MAX_ECHO)), "{shown}");
        assert!(shown.ends_with("… (99872 more characters)"), "{shown}");
        assert!(shown.len() < 200);
    }

    #[cfg(feature = "testing")]
    #[test]
    fn a_rendered_error_names_its_kind() {
        for kind in ErrorKind::ALL {
            let text = ToolError::new(kind, "it (broke): badly").render(Some("memo"));
            assert_eq!(ErrorKind::of_rendered(&text), Some(kind), "{text}");
        }
        assert_eq!(ErrorKind::of_rendered("Error (no_such_kind): x"), None);
        assert_eq!(ErrorKind::of_rendered("all fine"), None);
    }

    #[test]
    fn default_actions_hold_in_any_domain() {
        for kind in ErrorKind::ALL {
            for category in [None, Some("stock"), Some("item")] {
                let action = kind.default_action(category);
                // No article glued to a category ("a item"), no invented search tool or
                // backend, one sentence ending in a full stop.
                assert!(
                    !action.contains(" a item") && !action.contains(" a stock"),
                    "{action}"
                );
                assert!(!action.contains("search tool to find"), "{action}");
                assert!(!action.contains("changed since it was read"), "{action}");
                assert!(
                    action.ends_with('.') && action.starts_with(char::is_uppercase),
                    "{action}"
                );
            }
        }
    }
}
