//! The [`ClientPeer`] a tool sees during a protocol request: progress and log notifications
//! sent through rmcp's peer, tied to the request's progress token and log level; sampling,
//! elicitation and roots requests (`client_requests.rs`, or a resumable call's round on
//! 2026-07-28: `request_state.rs`).

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
// rmcp marks the logging types deprecated (SEP-2577) while the protocol still has them.
use rmcp::model::{ClientCapabilities, ProgressNotificationParam, ProgressToken};
#[expect(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use super::client_requests;
use super::request_state::Round;
use crate::context::{ClientFeature, ClientPeer, LogLevel};
use crate::output::error::ToolError;

/// Which log messages a request may send to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFilter {
    /// None (a 2026-07-28 request that did not opt in).
    Off,
    /// Messages at this level or above.
    AtLeast(LogLevel),
}

impl LogFilter {
    fn admits(self, level: LogLevel) -> bool {
        match self {
            LogFilter::Off => false,
            LogFilter::AtLeast(min) => level >= min,
        }
    }
}

/// The client of one `tools/call` request.
pub(crate) struct RequestPeer {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) logs: LogFilter,
    /// What the client declared it can do (sampling, elicitation).
    pub(crate) capabilities: Option<ClientCapabilities>,
    /// How long a sampling or elicitation request may wait for the client.
    pub(crate) client_timeout: Duration,
    /// The request runs on protocol 2026-07-28 or later, where a server may not send
    /// requests to the client.
    pub(crate) modern: bool,
    /// On 2026-07-28 and later, the round of a resumable `tools/call`: client requests
    /// are answered from it or end the round with `input_required`.
    pub(crate) round: Option<Arc<Round>>,
}

impl ClientPeer for RequestPeer {
    fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'static, ()> {
        // In a task (the request that started it has been answered) the message becomes
        // the task's `statusMessage`, which `tasks/get` shows.
        if let Some(task) = self.round.as_ref().and_then(|round| round.task()) {
            let task = task.clone();
            let note = message.unwrap_or_else(|| match total {
                Some(total) => format!("{progress} of {total}"),
                None => format!("{progress}"),
            });
            return Box::pin(async move { task.note(note).await });
        }
        let Some(token) = self.progress_token.clone() else {
            return Box::pin(async {});
        };
        let peer = self.peer.clone();
        Box::pin(async move {
            let mut param = ProgressNotificationParam::new(token, progress);
            param.total = total;
            param.message = message;
            if let Err(error) = peer.notify_progress(param).await {
                tracing::debug!(%error, "could not send a progress notification");
            }
        })
    }

    #[expect(deprecated)] // logging
    fn log(&self, level: LogLevel, logger: Option<String>, data: Value) -> BoxFuture<'static, ()> {
        if !self.logs.admits(level) {
            return Box::pin(async {});
        }
        let peer = self.peer.clone();
        Box::pin(async move {
            let mut param = LoggingMessageNotificationParam::new(to_rmcp(level), data);
            param.logger = logger;
            if let Err(error) = peer.notify_logging_message(param).await {
                tracing::debug!(%error, "could not send a log notification");
            }
        })
    }

    fn create_message(&self, params: Value) -> BoxFuture<'static, Result<Value, ToolError>> {
        self.request_input(None, ClientFeature::Sampling, params)
    }

    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ToolError>> {
        self.request_input(None, ClientFeature::Elicitation, params)
    }

    fn request_input(
        &self,
        key: Option<&str>,
        feature: ClientFeature,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        if let Some(round) = &self.round {
            return round.ask(key, feature, params, self.capabilities.as_ref());
        }
        if self.modern {
            return Box::pin(async move { Err(client_requests::not_on_modern(feature)) });
        }
        Box::pin(client_requests::send(
            feature,
            self.peer.clone(),
            self.capabilities.clone(),
            self.client_timeout,
            params,
        ))
    }

    fn declares(&self, feature: ClientFeature) -> bool {
        client_requests::declared(feature, self.capabilities.as_ref())
    }

    fn resumed(&self) -> bool {
        self.round.as_ref().is_some_and(|round| round.resumed())
    }
}

/// The protocol's level for ours.
#[expect(deprecated)] // logging
pub(crate) fn to_rmcp(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// Our level for the protocol's.
#[expect(deprecated)] // logging
pub(crate) fn from_rmcp(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_levels() {
        assert!(!LogFilter::Off.admits(LogLevel::Emergency));
        assert!(LogFilter::AtLeast(LogLevel::Warning).admits(LogLevel::Error));
        assert!(!LogFilter::AtLeast(LogLevel::Warning).admits(LogLevel::Info));
        for level in [LogLevel::Debug, LogLevel::Notice, LogLevel::Emergency] {
            assert_eq!(from_rmcp(to_rmcp(level)), level);
        }
    }
}
