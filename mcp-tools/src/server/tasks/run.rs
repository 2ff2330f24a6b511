//! Running a task: its fn goes on in the background after the call answered with the
//! task's handle; its questions wait in the store for `tasks/update`; its outcome,
//! cancellation and lease are recorded there.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use rmcp::model::{ErrorCode, InputRequest};
use serde_json::{Map, Value};
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use super::counts::{TaskCounts, TaskTally};
use super::wire::error_object;
use super::{TaskRecord, TaskSignal, TaskState, TaskStore, now_ms};
use crate::context::ClientFeature;
use crate::output::error::{ErrorKind, ToolError};
use crate::output::result::ToolResult;
use crate::poison::LockIgnoringPoison;
use crate::registry::ToolNotFound;
use crate::server::convert;

/// How a task runs: where it is kept, how long its lease is.
#[derive(Clone)]
pub(crate) struct TaskRuntime {
    pub(crate) store: Arc<dyn TaskStore>,
    /// How long a lease holds without being refreshed (refreshed every third of it).
    pub(crate) lease: Duration,
    /// The tasks run here, by status (for the metrics).
    pub(crate) counts: TaskCounts,
}

/// What a running task's questions reach: each is recorded in the store (the task turns
/// `input_required`) and answered when `tasks/update` delivers its key.
pub(crate) struct TaskInput {
    id: String,
    runtime: TaskRuntime,
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    /// Wakes the driver to look for answers now.
    poke: Notify,
}

impl TaskInput {
    pub(crate) fn new(id: String, runtime: TaskRuntime) -> Arc<TaskInput> {
        Arc::new(TaskInput {
            id,
            runtime,
            waiting: Mutex::new(HashMap::new()),
            poke: Notify::new(),
        })
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Value>>> {
        self.waiting.lock_ignoring_poison()
    }

    /// Ask the client `request` under `key` and wait for the answer `tasks/update` brings.
    pub(crate) fn ask(
        self: &Arc<Self>,
        key: String,
        feature: ClientFeature,
        request: InputRequest,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        let (sender, answer) = oneshot::channel();
        self.waiting().insert(key.clone(), sender);
        let this = self.clone();
        Box::pin(async move {
            let request = serde_json::to_value(&request).map_err(|e| {
                ToolError::internal(format!(
                    "cannot record the {} request: {e}",
                    feature.method()
                ))
            })?;
            let asked = this
                .runtime
                .store
                .modify(&this.id, &|task: &mut TaskRecord| {
                    if task.state == TaskState::Working {
                        task.state = TaskState::InputRequired {
                            requests: Map::new(),
                        };
                    }
                    let TaskState::InputRequired { requests } = &mut task.state else {
                        return false;
                    };
                    requests.insert(key.clone(), request.clone());
                    task.updated_at_ms = now_ms();
                    true
                })
                .await;
            if let Err(error) = asked {
                return Err(ToolError::upstream(format!(
                    "cannot ask the client through the task store: {error}"
                )));
            }
            this.poke.notify_one();
            answer
                .await
                .map_err(|_| ToolError::internal("the task ended before the client answered"))
        })
    }

    /// Record `message` as the task's status message (the fn's progress); a store that
    /// fails is logged, and the fn goes on.
    pub(crate) async fn note(&self, message: String) {
        let noted = self
            .runtime
            .store
            .modify(&self.id, &|task: &mut TaskRecord| {
                if task.state.is_terminal() || task.status_message.as_ref() == Some(&message) {
                    return false;
                }
                task.status_message = Some(message.clone());
                task.updated_at_ms = now_ms();
                true
            })
            .await;
        if let Err(error) = noted {
            tracing::warn!(task = %self.id, %error, "cannot record a task's progress");
        }
    }

    /// Hand the answers the store holds to the questions waiting for them, and take
    /// them out of the record.
    async fn deliver(&self) -> Result<Option<TaskRecord>, super::TaskStoreError> {
        let Some(task) = self.runtime.store.get(&self.id).await? else {
            return Ok(None);
        };
        let taken: Vec<String> = {
            let mut waiting = self.waiting();
            task.responses
                .iter()
                .filter_map(|(key, value)| {
                    let sender = waiting.remove(key)?;
                    let _ = sender.send(value.clone());
                    Some(key.clone())
                })
                .collect()
        };
        if taken.is_empty() {
            return Ok(Some(task));
        }
        self.runtime
            .store
            .modify(&self.id, &|task: &mut TaskRecord| {
                for key in &taken {
                    task.responses.remove(key);
                }
                true
            })
            .await
    }
}

/// What a task's fn returns.
pub(crate) type Outcome = Result<ToolResult, ToolNotFound>;

/// Drive a task's fn (already polled once, by the call that created the task) to its end:
/// record the outcome, hand it answers, follow cancellation, keep the lease; `tally`
/// follows the task's status as the driver writes and reads it.
pub(crate) async fn drive(
    mut run: Pin<Box<dyn Future<Output = Outcome> + Send>>,
    input: Arc<TaskInput>,
    cancellation: CancellationToken,
    mut tally: TaskTally,
) {
    let runtime = input.runtime.clone();
    let id = input.id.clone();
    let mine = id.clone();
    let mut signals = runtime
        .store
        .signals()
        .filter(move |signal| std::future::ready(signal.task_id() == mine));
    let mut refresh = tokio::time::interval(runtime.lease / 3);
    refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let look = tokio::select! {
            outcome = &mut run => {
                if let Some(task) = finish(&runtime, &id, outcome).await {
                    tally.saw(&task.state);
                }
                return;
            }
            signal = signals.next() => {
                // A cancel is signalled only after the store recorded it.
                let cancelled = matches!(signal, Some(TaskSignal::Cancelled(_)));
                if cancelled {
                    tally.saw(&TaskState::Cancelled);
                }
                !cancelled
            }
            () = input.poke.notified() => true,
            _ = refresh.tick() => {
                let lease_until = now_ms().saturating_add(super::millis(runtime.lease));
                let kept = runtime.store.modify(&id, &|task: &mut TaskRecord| {
                    if task.state.is_terminal() {
                        return false;
                    }
                    task.lease_until_ms = lease_until;
                    true
                }).await;
                match kept {
                    Ok(Some(task)) => tally.saw(&task.state),
                    Ok(None) => {}
                    // The store is down: the fn goes on; the lease is tried again.
                    Err(error) => tracing::warn!(task = %id, %error, "cannot refresh a task's lease"),
                }
                true
            }
        };
        if !look {
            break;
        }
        match input.deliver().await {
            // Cancelled, failed for a lost lease, or expired: the fn stops.
            Ok(Some(task)) if task.state.is_terminal() => {
                tally.saw(&task.state);
                break;
            }
            Ok(None) => break,
            Ok(Some(task)) => tally.saw(&task.state),
            Err(error) => tracing::warn!(task = %id, %error, "cannot read a task's answers"),
        }
    }
    tracing::debug!(task = %id, "a task stops before its fn finished");
    cancellation.cancel();
}

/// Record how the fn ended, unless the task ended already (cancelled, or failed for a
/// lost lease): a tool error is a completed task with an `isError` result; an internal
/// error (a panic, a failing server) or a tool gone from the registry fails the task.
/// The record as it is after, when the store answered.
async fn finish(runtime: &TaskRuntime, id: &str, outcome: Outcome) -> Option<TaskRecord> {
    let state = match outcome {
        Ok(result) if result.error_kind() == Some(ErrorKind::Internal) => TaskState::Failed {
            error: error_object(ErrorCode::INTERNAL_ERROR, text_of(&result)),
        },
        Ok(result) => match serde_json::to_value(convert::call_result(result)) {
            Ok(Value::Object(result)) => TaskState::Completed { result },
            Ok(_) | Err(_) => TaskState::Failed {
                error: error_object(
                    ErrorCode::INTERNAL_ERROR,
                    "the tool's result could not be encoded",
                ),
            },
        },
        Err(not_found) => TaskState::Failed {
            error: error_object(ErrorCode::INVALID_PARAMS, not_found.to_string()),
        },
    };
    let finished = runtime
        .store
        .modify(id, &|task: &mut TaskRecord| {
            if task.state.is_terminal() {
                return false;
            }
            task.state = state.clone();
            task.status_message = None;
            task.updated_at_ms = now_ms();
            true
        })
        .await;
    finished
        .inspect_err(|error| tracing::warn!(task = %id, %error, "cannot record a task's outcome"))
        .ok()
        .flatten()
}

/// The text of a result's content.
fn text_of(result: &ToolResult) -> String {
    result
        .content()
        .iter()
        .filter_map(|block| block.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}
