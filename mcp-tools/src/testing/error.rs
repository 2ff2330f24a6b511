//! [`ClientError`]: why a request of the test client got no result.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// Why a request of the [`TestClient`](super::TestClient) got no result: the server
/// answered a JSON-RPC error, did not answer in time, closed the session, or answered
/// something that is not the result the method has.
///
/// ```
/// use mcp_toolbelt::testing::ClientError;
/// let error = ClientError::Rpc { code: -32602, message: "unknown tool".into(), data: None };
/// assert_eq!(error.code(), Some(-32602));
/// assert_eq!(error.to_string(), "JSON-RPC error -32602: unknown tool");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// The error code (e.g. -32602 for an unknown tool or bad params).
        code: i64,
        /// The error message.
        message: String,
        /// The error's `data`, when it has one.
        data: Option<Value>,
    },
    /// No answer came within the client's time-out.
    Timeout {
        /// The method of the request.
        method: String,
        /// How long the client waited.
        after: Duration,
    },
    /// The session ended before the answer came.
    Closed {
        /// The method of the request.
        method: String,
    },
    /// The answer is not what the method returns (or the handshake failed).
    Unexpected {
        /// The method of the request.
        method: String,
        /// What was wrong with the answer.
        detail: String,
    },
}

impl ClientError {
    /// The JSON-RPC error code, for an [`Rpc`](ClientError::Rpc) error.
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The JSON-RPC error's `data`, for an [`Rpc`](ClientError::Rpc) error that has one.
    pub fn data(&self) -> Option<&Value> {
        match self {
            ClientError::Rpc { data, .. } => data.as_ref(),
            _ => None,
        }
    }

    pub(crate) fn unexpected(method: &str, detail: impl fmt::Display) -> ClientError {
        ClientError::Unexpected {
            method: method.to_string(),
            detail: detail.to_string(),
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Rpc {
                code,
                message,
                data,
            } => {
                write!(f, "JSON-RPC error {code}: {message}")?;
                match data {
                    Some(data) => write!(f, " (data: {data})"),
                    None => Ok(()),
                }
            }
            ClientError::Timeout { method, after } => {
                write!(f, "no answer to {method} within {after:?}")
            }
            ClientError::Closed { method } => {
                write!(f, "the session closed before the answer to {method} came")
            }
            ClientError::Unexpected { method, detail } => {
                write!(f, "unexpected answer to {method}: {detail}")
            }
        }
    }
}

impl std::error::Error for ClientError {}
