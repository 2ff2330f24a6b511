//! The tasks extension in the handler: a call of a task-supporting tool that outlives its
//! first wait becomes a task (`tools/call` answers `CreateTaskResult`), and `tasks/get`,
//! `tasks/update` and `tasks/cancel` serve it from the task store. A task belongs to the
//! caller that created it: any other caller is told it does not exist.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ErrorCode, GetTaskParams,
    GetTaskResult, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::{McpHandler, tool_outcome};
use crate::Caller;
use crate::context::ClientFeature;
use crate::definition::TaskSupport;
use crate::output::result::ToolResult;
use crate::server::convert;
use crate::server::protocol::is_modern;
use crate::server::request_state::{self, checked_answer};
use crate::server::tasks::run::{self, Outcome, TaskInput};
use crate::server::tasks::wire::{self, unknown_task};
use crate::server::tasks::{TaskRecord, TaskSignal, TaskState, millis, now_ms};

/// Who owns the tasks a caller creates: its subject, client and permissions.
fn owner(caller: &Caller) -> String {
    let permissions: Option<Vec<&str>> = caller.permissions().map(|p| p.names().collect());
    json!([caller.subject(), caller.client_id(), permissions]).to_string()
}

/// A new task id: 128 random bits, hex.
fn new_task_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// True when the request's `_meta` declares the tasks extension.
fn declares_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks())
}

impl McpHandler {
    /// Whether `tools/call` of `request` may become a task: `true` for a task-supporting
    /// tool called on protocol 2026-07-28 by a client that declared the tasks extension;
    /// `false` when it answers in the request as always. Refuses (-32021) a tool that
    /// must run as a task for a 2026-07-28 client that cannot take one.
    ///
    /// Legacy sessions (2025-11-25 and earlier) have no tasks: their calls answer in the
    /// request, whatever the tool declares; they pay nothing for this check.
    pub(super) fn task_support(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<bool, McpError> {
        if !is_modern(context) {
            return Ok(false);
        }
        // The tool as the server has it first (one lookup; most tools are never tasks),
        // then as this caller sees it: a hidden tool must answer as an unknown one, never
        // with -32021.
        let declared = self
            .shared
            .registry
            .get(&request.name)
            .map_or(TaskSupport::Forbidden, |def| def.task_support());
        if declared == TaskSupport::Forbidden {
            return Ok(false);
        }
        let (registry, _) = self.caller_view(context);
        let support = registry
            .get(&request.name)
            .map_or(TaskSupport::Forbidden, |def| def.task_support());
        let can = declares_tasks(context);
        match support {
            TaskSupport::Forbidden => Ok(false),
            TaskSupport::Required if !can => Err(wire::tasks_not_declared()),
            TaskSupport::Optional | TaskSupport::Required => Ok(can),
        }
    }

    /// `tools/call` of a tool that may run as a task: the fn runs in the request until it
    /// first waits. It finished: the result. It asked the client (and nothing else): an
    /// `input_required` round as for any call. It waits on anything else: the call becomes
    /// a task, stored before the answer goes out, and the fn goes on in the background.
    pub(super) async fn call_as_task(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (registry, _) = self.caller_view(context);
        let caller = self.caller(context);
        let arguments = request.arguments.map_or(Value::Null, Value::Object);
        let binding = request_state::binding("tools/call", &request.name, &arguments, &caller);
        let (round, mut ends, ctx) = self.open_round(
            context,
            &binding,
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
        )?;
        let cancellation = CancellationToken::new();
        let ctx = ctx.with_cancellation(cancellation.clone());
        let name = request.name.to_string();
        let run = async move { registry.call_tool(&name, arguments, ctx).await };
        // The run goes on after the request is answered, still in the request's trace.
        #[cfg(feature = "otel")]
        let run = crate::server::telemetry::request_span::in_current_trace(run);
        let mut run: Pin<Box<dyn Future<Output = Outcome> + Send>> = Box::pin(run);
        if let Poll::Ready(outcome) =
            std::future::poll_fn(|cx| Poll::Ready(run.as_mut().poll(cx))).await
        {
            return tool_outcome(outcome);
        }
        if ends.try_recv().is_ok() {
            drop(run);
            return match self.end_round(&round, &binding)? {
                Ok(input_required) => Ok(input_required.into()),
                Err(error) => Ok(convert::call_result(ToolResult::error(&error, None)).into()),
            };
        }
        let tasks = &self.shared.tasks;
        let now = now_ms();
        let record = TaskRecord {
            id: new_task_id(),
            owner: owner(&caller),
            tool: request.name.to_string(),
            state: TaskState::Working,
            status_message: None,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms: millis(tasks.ttl),
            lease_until_ms: now.saturating_add(millis(tasks.runtime.lease)),
            responses: Map::new(),
        };
        // Durable before the answer: a tasks/get right after it finds the task.
        if let Err(error) = tasks
            .runtime
            .store
            .create(record.clone(), tasks.limits)
            .await
        {
            cancellation.cancel();
            return Err(wire::store_error(error));
        }
        let tally = tasks.runtime.counts.started();
        let input = TaskInput::new(record.id.clone(), tasks.runtime.clone());
        round.attach_task(input.clone());
        tracing::debug!(task = %record.id, tool = %record.tool, "a call became a task");
        tokio::spawn(run::drive(run, input, cancellation, tally));
        Ok(CallToolResponse::Task(wire::created(
            &record,
            millis(tasks.poll_interval),
        )))
    }

    /// The task `id` if it is this request's caller's; a task whose replica stopped
    /// vouching for it is failed first.
    async fn own_task(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<TaskRecord, McpError> {
        let store = &self.shared.tasks.runtime.store;
        let task = store
            .get(id)
            .await
            .map_err(wire::store_error)?
            .filter(|task| task.owner == owner(&self.caller(context)))
            .ok_or_else(|| unknown_task(id))?;
        let now = now_ms();
        if !task.lease_lost(now) {
            return Ok(task);
        }
        tracing::warn!(task = %id, "a task's lease ran out: the server running it stopped");
        let failed = store
            .modify(id, &|task: &mut TaskRecord| {
                if !task.lease_lost(now) {
                    return false;
                }
                task.state = TaskState::Failed {
                    error: wire::error_object(
                        ErrorCode::INTERNAL_ERROR,
                        "the server running this task stopped before it finished",
                    ),
                };
                task.updated_at_ms = now;
                true
            })
            .await
            .map_err(wire::store_error)?;
        failed.ok_or_else(|| unknown_task(id))
    }

    pub(super) async fn task_get(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let task = self.own_task(&request.task_id, &context).await?;
        let poll = millis(self.shared.tasks.poll_interval);
        Ok(GetTaskResult::new(wire::detailed(&task, poll)?))
    }

    /// `tasks/update`: answers for the questions the task waits on (each checked against
    /// the result type of its question; keys it does not wait on are ignored). The task is
    /// `working` again once every question is answered.
    pub(super) async fn task_update(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let task = self.own_task(&request.task_id, &context).await?;
        let TaskState::InputRequired { requests } = &task.state else {
            return Ok(());
        };
        let mut answers = Map::new();
        for (key, answer) in &request.input_responses {
            let Some(asked) = requests.get(key) else {
                continue;
            };
            let feature = asked["method"]
                .as_str()
                .and_then(ClientFeature::of_method)
                .ok_or_else(|| unknown_task(&request.task_id))?;
            let answer = checked_answer(feature, answer.clone()).map_err(|problem| {
                McpError::invalid_params(
                    format!(
                        "inputResponses[`{}`] is not a valid {problem}",
                        crate::output::error::echo(key)
                    ),
                    None,
                )
            })?;
            answers.insert(key.clone(), answer);
        }
        if answers.is_empty() {
            return Ok(());
        }
        let store = &self.shared.tasks.runtime.store;
        store
            .modify(&request.task_id, &|task: &mut TaskRecord| {
                let TaskState::InputRequired { requests } = &mut task.state else {
                    return false;
                };
                for (key, answer) in &answers {
                    if requests.remove(key).is_some() {
                        task.responses.insert(key.clone(), answer.clone());
                    }
                }
                if requests.is_empty() {
                    task.state = TaskState::Working;
                }
                task.updated_at_ms = now_ms();
                true
            })
            .await
            .map_err(wire::store_error)?;
        store
            .signal(TaskSignal::Answered(request.task_id.clone()))
            .await
            .map_err(wire::store_error)
    }

    /// `tasks/cancel`: a task not finished yet is cancelled (its fn stops); a finished one
    /// is left as it is. Either way the answer is the same empty acknowledgement.
    pub(super) async fn task_cancel(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let task = self.own_task(&request.task_id, &context).await?;
        if task.state.is_terminal() {
            return Ok(());
        }
        let store = &self.shared.tasks.runtime.store;
        store
            .modify(&request.task_id, &|task: &mut TaskRecord| {
                if task.state.is_terminal() {
                    return false;
                }
                task.state = TaskState::Cancelled;
                task.status_message = None;
                task.updated_at_ms = now_ms();
                true
            })
            .await
            .map_err(wire::store_error)?;
        store
            .signal(TaskSignal::Cancelled(request.task_id.clone()))
            .await
            .map_err(wire::store_error)
    }
}
