//! Task records in the protocol's shapes: the `CreateTaskResult` a call answers with, the
//! `DetailedTask` of `tasks/get`, and the errors of the task methods.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, CreateTaskResult, DetailedTask, ErrorCode, Task, TaskPayload, TaskStatus,
};
use serde_json::{Map, Value, json};

use super::{TaskRecord, TaskState, TaskStoreError};
use crate::server::protocol::code::TASKS_UNAVAILABLE;

/// RFC 3339 text of `ms` milliseconds since the Unix epoch (UTC, millisecond precision).
pub(crate) fn timestamp(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (hour, minute, second) = (rest / 3600, rest % 3600 / 60, rest % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{:03}Z",
        ms % 1000
    )
}

fn status(state: &TaskState) -> TaskStatus {
    match state {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired { .. } => TaskStatus::InputRequired,
        TaskState::Completed { .. } => TaskStatus::Completed,
        TaskState::Failed { .. } => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    }
}

/// The protocol's `Task` of `record`, telling clients to poll every `poll_interval_ms`.
pub(crate) fn task(record: &TaskRecord, poll_interval_ms: u64) -> Task {
    let mut task = Task::new(
        record.id.clone(),
        status(&record.state),
        timestamp(record.created_at_ms),
        timestamp(record.updated_at_ms),
    )
    .with_ttl_ms(record.ttl_ms);
    if !record.state.is_terminal() {
        task = task.with_poll_interval_ms(poll_interval_ms);
    }
    if let Some(message) = &record.status_message {
        task = task.with_status_message(message.clone());
    }
    task
}

/// The `CreateTaskResult` answering the call that created `record`.
pub(crate) fn created(record: &TaskRecord, poll_interval_ms: u64) -> CreateTaskResult {
    CreateTaskResult::new(task(record, poll_interval_ms))
}

/// The `DetailedTask` of `tasks/get`: the task, with its questions, result or error.
pub(crate) fn detailed(
    record: &TaskRecord,
    poll_interval_ms: u64,
) -> Result<DetailedTask, McpError> {
    let payload = match &record.state {
        TaskState::Working => TaskPayload::Working,
        TaskState::Cancelled => TaskPayload::Cancelled,
        TaskState::InputRequired { requests } => TaskPayload::InputRequired {
            input_requests: serde_json::from_value(Value::Object(requests.clone())).map_err(
                |e| {
                    McpError::internal_error(
                        format!("a stored input request is unreadable: {e}"),
                        None,
                    )
                },
            )?,
        },
        TaskState::Completed { result } => TaskPayload::Completed {
            result: result.clone(),
        },
        TaskState::Failed { error } => TaskPayload::Failed {
            error: error.clone(),
        },
    };
    Ok(DetailedTask::new(task(record, poll_interval_ms), payload))
}

/// A JSON-RPC error object as a task's `error`.
pub(crate) fn error_object(code: ErrorCode, message: impl Into<String>) -> Map<String, Value> {
    let mut error = Map::new();
    error.insert("code".into(), code.0.into());
    error.insert("message".into(), Value::String(message.into()));
    error
}

/// The answer for a task id that names no task of this caller's (the same for a task of
/// another caller's, which must stay invisible).
pub(crate) fn unknown_task(id: &str) -> McpError {
    McpError::invalid_params(
        format!("unknown task: {}", crate::output::error::echo(id)),
        None,
    )
}

/// The answer when the store fails, or refuses a new task past a bound (-32004, retry
/// later).
pub(crate) fn store_error(error: TaskStoreError) -> McpError {
    match &error {
        TaskStoreError::Unavailable(_) => tracing::warn!(%error, "the task store failed"),
        _ => tracing::debug!(%error, "a task was refused"),
    }
    McpError::new(
        ErrorCode(TASKS_UNAVAILABLE as i32),
        error.to_string(),
        Some(json!({ "retryable": true })),
    )
}

/// The -32021 answer for a request that needs the tasks extension the client did not
/// declare.
pub(crate) fn tasks_not_declared() -> McpError {
    let mut required = ClientCapabilities::default();
    required.extensions = Some(
        [(rmcp::model::TASKS_EXTENSION_ID.to_string(), Map::new())]
            .into_iter()
            .collect(),
    );
    McpError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "this tool runs only as a task, and the request's _meta does not declare the tasks \
         extension (io.modelcontextprotocol/tasks)",
        Some(json!({ "requiredCapabilities": required })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(timestamp(1_795_778_498_504), "2026-11-27T11:21:38.504Z");
    }
}
