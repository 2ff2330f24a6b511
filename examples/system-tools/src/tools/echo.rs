//! `echo`: returns the message it was given.

use serde::Serialize;

/// Result of [`echo`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct EchoOutput {
    /// `Echo: <message>`.
    pub echo: String,
}

/// Echoes a message back as `Echo: <message>`.
pub async fn echo(message: &str) -> EchoOutput {
    EchoOutput {
        echo: format!("Echo: {message}"),
    }
}
