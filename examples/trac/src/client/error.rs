//! Errors of the Trac client, and their classification.

use std::time::Duration;

/// Everything a [`TracClient`](super::TracClient) call can fail with.
///
/// Use [`TracError::kind`] to decide what to tell the caller (not found,
/// permission denied, conflict, ...); the variants keep the raw details.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TracError {
    /// Trac answered with an XML-RPC fault.
    #[error("Trac fault {code} in {method}: {message}")]
    Fault {
        /// The XML-RPC method that failed (for batches: the item's method).
        method: String,
        /// The fault code: 404 not found, 403 permission, 1 generic Trac error, -32xxx protocol.
        code: i32,
        /// Trac's fault string.
        message: String,
    },
    /// The HTTP exchange completed with a non-200 status (401 bad credentials, ...).
    #[error("HTTP {status} from {url}: {message}")]
    Http {
        /// The RPC endpoint that was called.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// What the status most likely means for a Trac RPC endpoint.
        message: String,
    },
    /// No TCP/HTTP connection could be made (refused, unreachable, DNS).
    #[error("cannot connect to Trac at {url}: {reason}")]
    Connect {
        /// The RPC endpoint that was called.
        url: String,
        /// The underlying I/O error, e.g. "Connection refused (os error 111)".
        reason: String,
    },
    /// The server did not answer within the configured timeout.
    #[error("no answer from Trac at {url} within {}s", timeout.as_secs_f64())]
    Timeout {
        /// The RPC endpoint that was called.
        url: String,
        /// The request timeout that expired.
        timeout: Duration,
    },
    /// Any other HTTP transport failure (connection reset mid-response, ...).
    #[error("HTTP transport error talking to {url}: {reason}")]
    Transport {
        /// The RPC endpoint that was called.
        url: String,
        /// The underlying error chain.
        reason: String,
    },
    /// The server answered, but not with an XML-RPC response of the expected shape.
    #[error("malformed response from {url} to {method}: {detail}")]
    MalformedResponse {
        /// The RPC endpoint that was called.
        url: String,
        /// The XML-RPC method whose answer could not be understood.
        method: String,
        /// What was wrong, with an excerpt of the offending data.
        detail: String,
    },
    /// The client configuration is unusable (bad URL, half-given credentials, ...).
    #[error("invalid Trac client configuration: {0}")]
    Config(String),
    /// A call argument was rejected before anything was sent.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

/// The category of a [`TracError`], for error reporting and retry decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The ticket, page or milestone does not exist (fault 404).
    NotFound,
    /// The Trac user lacks a permission (fault 403, or HTTP 403).
    PermissionDenied,
    /// The object changed since it was read (stale ticket `_ts`).
    Conflict,
    /// An object with that name already exists.
    AlreadyExists,
    /// Trac rejected the input (generic Trac error, fault code 1).
    InvalidInput,
    /// The credentials were rejected (HTTP 401).
    AuthenticationFailed,
    /// Trac could not be reached in time (refused, timeout, transport failure).
    Unavailable,
    /// Trac answered with something else that went wrong (other faults/statuses, bad data).
    Upstream,
    /// The client was misconfigured or called with an invalid argument.
    Usage,
}

impl TracError {
    /// Classifies the error; see [`ErrorKind`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            TracError::Fault { code, message, .. } => classify_fault(*code, message),
            TracError::Http { status: 401, .. } => ErrorKind::AuthenticationFailed,
            TracError::Http { status: 403, .. } => ErrorKind::PermissionDenied,
            TracError::Http { .. } | TracError::MalformedResponse { .. } => ErrorKind::Upstream,
            TracError::Connect { .. } | TracError::Timeout { .. } | TracError::Transport { .. } => {
                ErrorKind::Unavailable
            }
            TracError::Config(_) | TracError::InvalidArgument(_) => ErrorKind::Usage,
        }
    }

    /// The XML-RPC fault code, if this is a fault.
    pub fn fault_code(&self) -> Option<i32> {
        match self {
            TracError::Fault { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The endpoint URL involved, for errors that happened on the wire.
    pub fn url(&self) -> Option<&str> {
        match self {
            TracError::Http { url, .. }
            | TracError::Connect { url, .. }
            | TracError::Timeout { url, .. }
            | TracError::Transport { url, .. }
            | TracError::MalformedResponse { url, .. } => Some(url),
            _ => None,
        }
    }

    /// For generic Trac faults, the message without TracXMLRPC's
    /// `'...' while executing 'method()'` wrapper; otherwise the display text.
    pub fn trac_message(&self) -> String {
        match self {
            TracError::Fault { message, .. } => unwrap_executing(message).to_string(),
            other => other.to_string(),
        }
    }
}

/// Texts Trac uses when a ticket changed after the caller read it.
const CONFLICT_MARKERS: &[&str] = &[
    "has been modified by someone else",
    "modified since you started editing",
    "has been updated since last get",
];

fn classify_fault(code: i32, message: &str) -> ErrorKind {
    match code {
        404 => ErrorKind::NotFound,
        403 => ErrorKind::PermissionDenied,
        _ => {
            let lower = message.to_lowercase();
            if CONFLICT_MARKERS.iter().any(|m| lower.contains(m)) {
                ErrorKind::Conflict
            } else if lower.contains("already exists") {
                ErrorKind::AlreadyExists
            } else if lower.contains("does not exist") {
                ErrorKind::NotFound
            } else if code == 1 {
                ErrorKind::InvalidInput
            } else {
                ErrorKind::Upstream
            }
        }
    }
}

/// TracXMLRPC wraps generic errors as `'<message>' while executing '<method>()'`.
fn unwrap_executing(message: &str) -> &str {
    if let Some(rest) = message.strip_prefix('\'')
        && let Some(pos) = rest.rfind("' while executing '")
    {
        return &rest[..pos];
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(code: i32, message: &str) -> TracError {
        TracError::Fault {
            method: "m".into(),
            code,
            message: message.into(),
        }
    }

    #[test]
    fn faults_are_classified() {
        assert_eq!(
            fault(404, "Ticket 9 does not exist.").kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            fault(403, "TICKET_ADMIN privileges").kind(),
            ErrorKind::PermissionDenied
        );
        assert_eq!(
            fault(1, "'Sorry, can not save your changes. This ticket has been modified by someone else since you started' while executing 'ticket.update()'").kind(),
            ErrorKind::Conflict
        );
        assert_eq!(
            fault(
                1,
                "'Milestone m1 already exists.' while executing 'ticket.milestone.create()'"
            )
            .kind(),
            ErrorKind::AlreadyExists
        );
        assert_eq!(
            fault(
                1,
                "'Tickets must contain a summary.' while executing 'ticket.create()'"
            )
            .kind(),
            ErrorKind::InvalidInput
        );
        assert_eq!(fault(-32601, "no such method").kind(), ErrorKind::Upstream);
    }

    #[test]
    fn executing_wrapper_is_removed() {
        let e = fault(1, "'Page not modified' while executing 'wiki.putPage()'");
        assert_eq!(e.trac_message(), "Page not modified");
        assert_eq!(fault(404, "plain").trac_message(), "plain");
    }

    #[test]
    fn transport_errors_are_unavailable_and_name_the_url() {
        let e = TracError::Connect {
            url: "http://127.0.0.1:1/rpc".into(),
            reason: "Connection refused".into(),
        };
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert!(e.to_string().contains("http://127.0.0.1:1/rpc"));
        let t = TracError::Timeout {
            url: "http://h/rpc".into(),
            timeout: Duration::from_millis(1500),
        };
        assert_eq!(
            t.to_string(),
            "no answer from Trac at http://h/rpc within 1.5s"
        );
    }

    #[test]
    fn http_statuses_are_classified() {
        let h = |status| TracError::Http {
            url: "u".into(),
            status,
            message: String::new(),
        };
        assert_eq!(h(401).kind(), ErrorKind::AuthenticationFailed);
        assert_eq!(h(403).kind(), ErrorKind::PermissionDenied);
        assert_eq!(h(500).kind(), ErrorKind::Upstream);
    }
}
