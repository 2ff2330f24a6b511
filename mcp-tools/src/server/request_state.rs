//! Resumable calls on protocol 2026-07-28: the `requestState` a `tools/call` answered with
//! `resultType: "input_required"` carries, sealed under a [`StateKey`], and what a retry
//! brings back.
//!
//! The state holds the answers the client gave in earlier rounds and the keys of the
//! requests asked last; the retry's `inputResponses` answers those by key. The
//! state is sealed with HMAC-SHA256 (rmcp's `RequestStateCodec`), carries an expiry, and
//! is bound to the method, the tool, its arguments and the caller, so it is verified before
//! anything in it is used and is worth nothing for another call or caller.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::oneshot;

use rmcp::ErrorData as McpError;
// rmcp marks the sampling types deprecated (SEP-2577) while the protocol still has them.
use rmcp::model::{
    ClientCapabilities, ElicitResult, ErrorCode, InputRequest, InputResponses, RequestStateCodec,
    RequestStateError, SealOptions,
};
#[expect(deprecated)]
use rmcp::model::{CreateMessageResult, ListRootsResult};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::client_requests;
use super::private_file::{self, ExposedFile, Refused};
use super::tasks::run::TaskInput;
use crate::Caller;
use crate::context::ClientFeature;
use crate::output::error::{ToolError, echo};
use crate::poison::LockIgnoringPoison;

/// The longest `requestState` accepted or issued, in bytes (64 KiB). A retry whose state
/// is longer is refused before it is verified; a call whose answers no longer fit ends
/// with a tool error.
pub const MAX_REQUEST_STATE_BYTES: usize = 64 * 1024;

/// How long a `requestState` stays valid by default (10 minutes): the time a client has
/// to answer one round's requests and retry.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(600);

/// The key that seals and verifies `requestState` (HMAC-SHA256), at least 32 bytes.
///
/// Replicas behind one load balancer must share it, so that a retry may land on any of
/// them: read it from a private file with [`StateKey::from_file`] (`serve
/// --state-key-file`). Without one, a server uses [`StateKey::random`], which only the
/// process that made it can verify (one replica).
///
/// ```
/// let key = mcp_toolbelt::server::StateKey::from_bytes(*b"0123456789abcdef0123456789abcdef").unwrap();
/// assert!(mcp_toolbelt::server::StateKey::from_bytes(*b"short").is_err());
/// # drop(key);
/// ```
#[derive(Clone)]
pub struct StateKey {
    codec: Arc<RequestStateCodec>,
    shared: bool,
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateKey")
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

/// Why a [`StateKey`] could not be made.
///
/// ```
/// let err = mcp_toolbelt::server::StateKey::from_bytes(*b"short").unwrap_err();
/// assert!(err.to_string().contains("at least 32 bytes"));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum StateKeyError {
    /// The key file could not be read.
    #[error("cannot read the request-state key file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The key file is accessible to other users.
    #[error(transparent)]
    Exposed(#[from] ExposedFile),
    /// The key is shorter than 32 bytes.
    #[error(
        "the request-state key{} has {actual} bytes; it needs at least 32 bytes (e.g. `head -c 32 \
         /dev/urandom | base64 > FILE && chmod 600 FILE`)",
        path.as_ref().map(|p| format!(" in {}", p.display())).unwrap_or_default()
    )]
    TooShort {
        /// The file it came from, if any.
        path: Option<PathBuf>,
        /// Its length in bytes.
        actual: usize,
    },
}

impl StateKey {
    /// A key of these bytes (at least 32), meant to be shared by every replica.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Result<StateKey, StateKeyError> {
        let bytes = bytes.into();
        let actual = bytes.len();
        match RequestStateCodec::try_new(bytes) {
            Ok(codec) => Ok(StateKey {
                codec: Arc::new(codec),
                shared: true,
            }),
            Err(_) => Err(StateKeyError::TooShort { path: None, actual }),
        }
    }

    /// The key in `path`: the file's text without its trailing white space (at least 32
    /// bytes). The file must be private to its owner (`chmod 600`).
    ///
    /// ```
    /// use std::os::unix::fs::PermissionsExt;
    /// let path = std::env::temp_dir().join(format!("state-key-doc-{}", std::process::id()));
    /// std::fs::write(&path, "c2VjcmV0LXNoYXJlZC1ieS1ldmVyeS1yZXBsaWNhLW9mLXRoaXMtc2VydmVy\n").unwrap();
    /// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    /// assert!(mcp_toolbelt::server::StateKey::from_file(&path).is_err()); // readable by others
    /// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    /// assert!(mcp_toolbelt::server::StateKey::from_file(&path).is_ok());
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<StateKey, StateKeyError> {
        let path = path.as_ref();
        let text = private_file::read(path, "the request-state key file").map_err(|e| match e {
            Refused::Io(source) => StateKeyError::Io {
                path: path.to_path_buf(),
                source,
            },
            Refused::Exposed(exposed) => StateKeyError::Exposed(exposed),
        })?;
        StateKey::from_bytes(text.trim_end().as_bytes()).map_err(|e| match e {
            StateKeyError::TooShort { actual, .. } => StateKeyError::TooShort {
                path: Some(path.to_path_buf()),
                actual,
            },
            other => other,
        })
    }

    /// A random key known only to this process: state it seals cannot be verified by
    /// another replica or after a restart.
    ///
    /// ```
    /// let key = mcp_toolbelt::server::StateKey::random();
    /// assert!(!key.is_shared());
    /// ```
    pub fn random() -> StateKey {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the operating system's random source");
        let codec = RequestStateCodec::try_new(bytes.to_vec()).expect("a 32-byte key");
        StateKey {
            codec: Arc::new(codec),
            shared: false,
        }
    }

    /// False for [`StateKey::random`]: only this process can verify what it seals.
    pub fn is_shared(&self) -> bool {
        self.shared
    }
}

/// How a server seals `requestState`: the key and how long a state stays valid.
#[derive(Clone, Debug)]
pub(crate) struct Sealing {
    pub(crate) key: StateKey,
    pub(crate) ttl: Duration,
}

/// One answer the client gave: the key of the request it answers, what the tool asked for,
/// and the client's result (checked against that request's result type).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub(crate) key: String,
    pub(crate) feature: ClientFeature,
    pub(crate) result: Value,
}

/// A request the last round asked: its key and what it asks for.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Pending {
    pub(crate) key: String,
    pub(crate) feature: ClientFeature,
}

/// What the sealed state says.
#[derive(Serialize, Deserialize)]
struct Payload {
    /// The answers of the rounds before.
    answers: Vec<Answer>,
    /// The requests the last round asked.
    pending: Vec<Pending>,
}

/// What a call is bound to: the method, the tool (or prompt, or resource) and its
/// arguments, and the caller. Authenticated with the state, never stored in it.
pub(crate) fn binding(method: &str, target: &str, arguments: &Value, caller: &Caller) -> Vec<u8> {
    let permissions: Option<Vec<&str>> = caller.permissions().map(|p| p.names().collect());
    serde_json::to_vec(&json!([
        method,
        target,
        arguments,
        caller.subject(),
        caller.client_id(),
        permissions,
    ]))
    .expect("JSON values encode")
}

fn refused(reason: &'static str, message: String) -> McpError {
    McpError::invalid_params(message, Some(json!({ "reason": reason })))
}

const START_OVER: &str = "start the call again without requestState";

/// What a round of a resumable call starts from: the answers of earlier rounds (from the
/// verified `requestState`) and the retry's `inputResponses`, each checked when the tool
/// asks for it. A retry may come without a state (a one-round request needs none: the
/// client answers by key) and may carry keys nobody asked for (ignored).
pub(crate) struct Known {
    answers: Vec<Answer>,
    responses: InputResponses,
    /// A verified state came with the retry.
    resumed: bool,
}

impl Known {
    /// What a retry with `state` and `responses` knows; `None`, `None`: a first round.
    ///
    /// # Errors
    ///
    /// -32602 when the state is too long, expired, altered, or sealed for another call,
    /// caller or key.
    pub(crate) fn of_retry(
        sealing: &Sealing,
        state: Option<&str>,
        responses: Option<&InputResponses>,
        binding: &[u8],
    ) -> Result<Known, McpError> {
        let responses = responses.cloned().unwrap_or_default();
        let Some(state) = state else {
            return Ok(Known {
                answers: Vec::new(),
                responses,
                resumed: false,
            });
        };
        if state.len() > MAX_REQUEST_STATE_BYTES {
            return Err(refused(
                "request_state_too_large",
                format!(
                    "requestState has {} bytes, more than the {MAX_REQUEST_STATE_BYTES} this \
                     server accepts; {START_OVER}",
                    state.len()
                ),
            ));
        }
        let payload: Payload = sealing.key.codec.open_json_with(state, binding).map_err(
            |error| match error {
                RequestStateError::Expired => refused(
                    "expired_request_state",
                    format!("requestState has expired; {START_OVER}"),
                ),
                other => {
                    // The reason stays in the log: the client learns only that it is not valid.
                    tracing::debug!(error = %other, "requestState refused");
                    refused(
                        "invalid_request_state",
                        format!(
                            "requestState is not valid for this call: it was altered, or issued \
                             for another caller, tool or arguments, or by a server with another \
                             key; {START_OVER}"
                        ),
                    )
                }
            },
        )?;
        Ok(Known {
            answers: payload.answers,
            responses,
            resumed: true,
        })
    }
}

/// The state for the next round: the `answers` so far and the requests `pending` asked.
pub(crate) fn seal(
    sealing: &Sealing,
    answers: &[Answer],
    pending: &[Pending],
    binding: &[u8],
) -> Result<String, ToolError> {
    let payload = Payload {
        answers: answers.to_vec(),
        pending: pending.to_vec(),
    };
    let state = sealing
        .key
        .codec
        .seal_json_with(
            &payload,
            &SealOptions::new().associated_data(binding).ttl(sealing.ttl),
        )
        .map_err(|e| ToolError::internal(format!("cannot seal the requestState: {e}")))?;
    if state.len() > MAX_REQUEST_STATE_BYTES {
        return Err(ToolError::validation(format!(
            "the client's answers so far make a requestState of {} bytes, more than the \
             {MAX_REQUEST_STATE_BYTES} allowed",
            state.len()
        ))
        .with_action("Ask for shorter answers, or fewer of them in one call."));
    }
    Ok(state)
}

/// The client's answer to a `feature` request, checked against the protocol's result type.
#[expect(deprecated)] // sampling and roots
pub(crate) fn checked_answer(feature: ClientFeature, answer: Value) -> Result<Value, String> {
    fn checked<T: serde::de::DeserializeOwned + Serialize>(
        answer: Value,
        what: &str,
    ) -> Result<Value, String> {
        serde_json::from_value::<T>(answer)
            .and_then(serde_json::to_value)
            .map_err(|e| format!("{what}: {e}"))
    }
    match feature {
        ClientFeature::Elicitation => checked::<ElicitResult>(answer, "elicitation result"),
        ClientFeature::Sampling => checked::<CreateMessageResult>(answer, "sampling result"),
        ClientFeature::Roots => checked::<ListRootsResult>(answer, "roots/list result"),
    }
}

/// A request that ends a round: the tool asked for something no answer covers.
pub(crate) struct Asked {
    pub(crate) key: String,
    pub(crate) feature: ClientFeature,
    pub(crate) request: InputRequest,
}

/// How a round ended when the tool did not finish.
pub(crate) enum RoundOutcome {
    /// The tool asked the client: these requests (at least one), with the answers so far.
    Asked {
        asked: Vec<Asked>,
        answers: Vec<Answer>,
    },
    /// The request cannot go on: a response was not a valid answer, or the tool needs a
    /// capability the client did not declare (-32021).
    Refused(McpError),
}

/// What a round has gathered since it began.
#[derive(Default)]
struct Gathered {
    /// Earlier rounds' answers, then the responses checked in this one.
    answers: Vec<Answer>,
    asked: Vec<Asked>,
    refusal: Option<McpError>,
}

/// One round of a resumable call, as the tool's client requests see it: the answers and
/// responses so far, handed out by key, and the requests nothing answers, which end the
/// round. Every request the tool awaits together (`join!`) lands in the same round: the
/// round ends once the tool's future has returned `Pending` with at least one of them.
pub(crate) struct Round {
    responses: InputResponses,
    resumed: bool,
    /// The position of the next request without a key of the tool's (`elicitation-0`).
    next: AtomicUsize,
    gathered: Mutex<Gathered>,
    /// Told (once) that the round ends.
    ends: Mutex<Option<oneshot::Sender<()>>>,
    /// Set when the call became a task: questions from then on wait in the task.
    task: std::sync::OnceLock<Arc<TaskInput>>,
}

impl Round {
    /// A round starting from `known`, and the receiver told when it ends.
    pub(crate) fn new(known: Known) -> (Arc<Round>, oneshot::Receiver<()>) {
        let (sender, receiver) = oneshot::channel();
        let round = Round {
            responses: known.responses,
            resumed: known.resumed,
            next: AtomicUsize::new(0),
            gathered: Mutex::new(Gathered {
                answers: known.answers,
                ..Gathered::default()
            }),
            ends: Mutex::new(Some(sender)),
            task: std::sync::OnceLock::new(),
        };
        (Arc::new(round), receiver)
    }

    /// From now on, questions no answer covers wait in `task` (the call became a task)
    /// instead of ending the round.
    pub(crate) fn attach_task(&self, task: Arc<TaskInput>) {
        let _ = self.task.set(task);
    }

    /// The task the call became, if it did.
    pub(crate) fn task(&self) -> Option<&Arc<TaskInput>> {
        self.task.get()
    }

    /// True when the round continues a verified state.
    pub(crate) fn resumed(&self) -> bool {
        self.resumed
    }

    fn gathered(&self) -> std::sync::MutexGuard<'_, Gathered> {
        self.gathered.lock_ignoring_poison()
    }

    fn end(&self) {
        let sender = self.ends.lock_ignoring_poison().take();
        if let Some(sender) = sender {
            // The handler may be gone already (the call finished); nothing to tell then.
            let _ = sender.send(());
        }
    }

    /// How the round ended (called once it has).
    pub(crate) fn outcome(&self) -> RoundOutcome {
        let mut gathered = self.gathered();
        if let Some(refusal) = gathered.refusal.take() {
            return RoundOutcome::Refused(refusal);
        }
        RoundOutcome::Asked {
            asked: std::mem::take(&mut gathered.asked),
            answers: std::mem::take(&mut gathered.answers),
        }
    }

    /// The tool's `feature` request under `key` (`None`: the feature and its position):
    /// the recorded answer or the retry's response when there is one; otherwise the round
    /// ends with this request (the future never completes: the handler drops the tool's
    /// future and answers `input_required`).
    pub(crate) fn ask(
        &self,
        key: Option<&str>,
        feature: ClientFeature,
        params: Value,
        capabilities: Option<&ClientCapabilities>,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        let key = match key {
            Some(key) => key.to_owned(),
            None => format!(
                "{}-{}",
                feature.capability(),
                self.next.fetch_add(1, Ordering::SeqCst)
            ),
        };
        let ready = |result| -> BoxFuture<'static, Result<Value, ToolError>> {
            Box::pin(async move { result })
        };
        let mut gathered = self.gathered();
        if let Some(answer) = gathered.answers.iter().find(|a| a.key == key) {
            if answer.feature == feature {
                return ready(Ok(answer.result.clone()));
            }
            return ready(Err(changed_request(&key, answer.feature, feature)));
        }
        if let Some(response) = self.responses.get(&key) {
            match checked_answer(feature, response.clone()) {
                Ok(result) => {
                    gathered.answers.push(Answer {
                        key,
                        feature,
                        result: result.clone(),
                    });
                    return ready(Ok(result));
                }
                Err(problem) => {
                    gathered.refusal.get_or_insert_with(|| {
                        refused(
                            "invalid_input_response",
                            format!("inputResponses[`{}`] is not a valid {problem}", echo(&key)),
                        )
                    });
                    drop(gathered);
                    self.end();
                    return Box::pin(std::future::pending());
                }
            }
        }
        if let Some(task) = self.task.get() {
            drop(gathered);
            if let Err(error) = client_requests::check_declared(feature, capabilities) {
                return ready(Err(error));
            }
            return match client_requests::input_request(feature, params) {
                Ok(request) => task.ask(key, feature, request),
                Err(error) => ready(Err(error)),
            };
        }
        if !client_requests::declared(feature, capabilities) {
            gathered
                .refusal
                .get_or_insert_with(|| missing_capability(feature));
            drop(gathered);
            self.end();
            return Box::pin(std::future::pending());
        }
        if let Some(earlier) = gathered.asked.iter().find(|a| a.key == key) {
            // The same request twice in one round is asked once.
            if earlier.feature != feature {
                return ready(Err(changed_request(&key, earlier.feature, feature)));
            }
        } else {
            let request = match client_requests::input_request(feature, params) {
                Ok(request) => request,
                Err(error) => return ready(Err(error)),
            };
            gathered.asked.push(Asked {
                key,
                feature,
                request,
            });
        }
        drop(gathered);
        self.end();
        Box::pin(std::future::pending())
    }
}

/// The error when one key names two kinds of request.
fn changed_request(key: &str, before: ClientFeature, now: ClientFeature) -> ToolError {
    ToolError::internal(format!(
        "the request `{}` of this tool was {} and is {} now; a tool must ask the same \
         things under the same keys (and in the same order) on every round",
        echo(key),
        before.method(),
        now.method()
    ))
    .with_action(
        "Make the code before each client request deterministic (it runs again on every \
         round), and give each request its own key.",
    )
}

/// The -32021 answer when the tool needs `feature` and the request's `_meta` does not
/// declare its capability (streamable HTTP sends it with 400).
fn missing_capability(feature: ClientFeature) -> McpError {
    McpError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "this request needs the client capability `{}` ({}), which the request's \
             _meta does not declare",
            feature.capability(),
            feature.method()
        ),
        Some(json!({ "requiredCapabilities": client_requests::required(feature) })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PermissionSet;
    use futures::FutureExt;

    fn sealing() -> Sealing {
        Sealing {
            key: StateKey::from_bytes(*b"a-key-shared-by-the-unit-tests!!").unwrap(),
            ttl: Duration::from_secs(60),
        }
    }

    fn reason(error: &McpError) -> &str {
        error.data.as_ref().unwrap()["reason"].as_str().unwrap()
    }

    fn elicited(name: &str) -> Value {
        json!({ "action": "accept", "content": { "name": name } })
    }

    fn asked(key: &str) -> Pending {
        Pending {
            key: key.into(),
            feature: ClientFeature::Elicitation,
        }
    }

    fn one_round(binding: &[u8], answers: &[Answer]) -> String {
        seal(&sealing(), answers, &[asked("elicitation-0")], binding).unwrap()
    }

    fn declared(features: Value) -> ClientCapabilities {
        serde_json::from_value(features).unwrap()
    }

    /// `round`'s answer to `key` when it has one at once; `None` when the ask pends.
    fn ask_now(
        round: &Round,
        key: Option<&str>,
        feature: ClientFeature,
        capabilities: &ClientCapabilities,
    ) -> Option<Result<Value, ToolError>> {
        let params = match feature {
            ClientFeature::Sampling => json!({ "messages": [], "maxTokens": 5 }),
            _ => json!({
                "message": "?",
                "requestedSchema": { "type": "object", "properties": {} },
            }),
        };
        round
            .ask(key, feature, params, Some(capabilities))
            .now_or_never()
    }

    #[test]
    fn a_retry_without_state_answers_by_key_and_is_not_resumed() {
        let binding = binding("tools/call", "t", &json!({}), &Caller::local());
        let responses = InputResponses::from([("user_name".into(), elicited("Ada"))]);
        let known = Known::of_retry(&sealing(), None, Some(&responses), &binding).unwrap();
        let (round, _) = Round::new(known);
        assert!(!round.resumed());
        let caps = declared(json!({ "elicitation": {} }));
        let answer = ask_now(&round, Some("user_name"), ClientFeature::Elicitation, &caps);
        assert_eq!(answer.unwrap().unwrap()["content"]["name"], "Ada");
    }

    #[test]
    fn a_sealed_state_carries_earlier_answers_and_is_bound() {
        let alice = Caller::with_permissions(PermissionSet::new(["A"]));
        let bob = Caller::with_permissions(PermissionSet::new(["B"]));
        let args = json!({"b": 1, "a": 2});
        let earlier = Answer {
            key: "step1".into(),
            feature: ClientFeature::Elicitation,
            result: elicited("Ada"),
        };
        let as_alice = binding("tools/call", "t", &args, &alice);
        let state = one_round(&as_alice, std::slice::from_ref(&earlier));
        let known = Known::of_retry(&sealing(), Some(&state), None, &as_alice).unwrap();
        let (round, _) = Round::new(known);
        assert!(round.resumed());
        let caps = declared(json!({}));
        let answer = ask_now(&round, Some("step1"), ClientFeature::Elicitation, &caps);
        assert_eq!(answer.unwrap().unwrap()["content"]["name"], "Ada");

        let as_bob = binding("tools/call", "t", &args, &bob);
        let refused = Known::of_retry(&sealing(), Some(&state), None, &as_bob).err();
        assert_eq!(reason(&refused.unwrap()), "invalid_request_state");
        let other_key = Sealing {
            key: StateKey::random(),
            ttl: Duration::from_secs(60),
        };
        let refused = Known::of_retry(&other_key, Some(&state), None, &as_alice).err();
        assert_eq!(reason(&refused.unwrap()), "invalid_request_state");
        let mut altered = state.clone();
        altered.insert(altered.len() / 2, 'x');
        let refused = Known::of_retry(&sealing(), Some(&altered), None, &as_alice).err();
        assert_eq!(reason(&refused.unwrap()), "invalid_request_state");
    }

    #[test]
    fn requests_awaited_together_end_one_round_together() {
        let (round, mut ends) = Round::new(Known {
            answers: Vec::new(),
            responses: InputResponses::new(),
            resumed: false,
        });
        let caps = declared(json!({ "elicitation": {}, "sampling": {} }));
        assert!(ask_now(&round, Some("name"), ClientFeature::Elicitation, &caps).is_none());
        assert!(ask_now(&round, None, ClientFeature::Sampling, &caps).is_none());
        // The same key twice in a round is one request.
        assert!(ask_now(&round, Some("name"), ClientFeature::Elicitation, &caps).is_none());
        let changed = ask_now(&round, Some("name"), ClientFeature::Sampling, &caps);
        assert!(
            changed
                .unwrap()
                .unwrap_err()
                .message()
                .contains("same keys")
        );
        assert!(ends.try_recv().is_ok());
        let RoundOutcome::Asked { asked, answers } = round.outcome() else {
            panic!("the round asked");
        };
        let keys: Vec<&str> = asked.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["name", "sampling-0"]);
        assert!(answers.is_empty());
    }

    #[test]
    fn an_invalid_response_or_an_undeclared_capability_refuses_the_request() {
        let responses = InputResponses::from([("user_name".into(), json!(12345))]);
        let (round, mut ends) = Round::new(Known {
            answers: Vec::new(),
            responses,
            resumed: false,
        });
        let caps = declared(json!({ "elicitation": {} }));
        assert!(ask_now(&round, Some("user_name"), ClientFeature::Elicitation, &caps).is_none());
        assert!(ends.try_recv().is_ok());
        let RoundOutcome::Refused(refusal) = round.outcome() else {
            panic!("refused");
        };
        assert_eq!(reason(&refusal), "invalid_input_response");

        let (round, _) = Round::new(Known {
            answers: Vec::new(),
            responses: InputResponses::new(),
            resumed: false,
        });
        assert!(ask_now(&round, None, ClientFeature::Sampling, &caps).is_none());
        let RoundOutcome::Refused(refusal) = round.outcome() else {
            panic!("refused");
        };
        assert_eq!(refusal.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            refusal.data.unwrap()["requiredCapabilities"],
            json!({ "sampling": {} })
        );
    }

    #[test]
    fn an_earlier_answer_of_another_kind_is_a_changed_request() {
        let (round, _) = Round::new(Known {
            answers: vec![Answer {
                key: "sampling-0".into(),
                feature: ClientFeature::Sampling,
                result: json!({}),
            }],
            responses: InputResponses::new(),
            resumed: true,
        });
        let caps = declared(json!({ "elicitation": {} }));
        let error = ask_now(
            &round,
            Some("sampling-0"),
            ClientFeature::Elicitation,
            &caps,
        )
        .unwrap()
        .unwrap_err();
        assert!(error.message().contains("same keys"), "{error:?}");
    }
}
