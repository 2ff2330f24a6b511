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
#[expect(deprecated)]
use rmcp::model::{CreateMessageResult, ListRootsResult};
use rmcp::model::{
    ClientCapabilities, ElicitResult, ErrorCode, InputRequest, InputResponses, RequestStateCodec,
    RequestStateError, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::client_requests;
use super::private_file::{self, ExposedFile, Refused};
use crate::Caller;
use crate::context::ClientFeature;
use crate::output::error::{ToolError, echo};

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
        let payload: Payload = sealing
            .key
            .codec
            .open_json_with(state, binding)
            .map_err(|error| match error {
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
            })?;
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
fn checked_answer(feature: ClientFeature, answer: Value) -> Result<Value, String> {
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
        };
        (Arc::new(round), receiver)
    }

    /// True when the round continues a verified state.
    pub(crate) fn resumed(&self) -> bool {
        self.resumed
    }

    fn gathered(&self) -> std::sync::MutexGuard<'_, Gathered> {
        self.gathered.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn end(&self) {
        let sender = self.ends.lock().unwrap_or_else(|e| e.into_inner()).take();
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

    fn one_round(binding: &[u8]) -> String {
        seal(
            &sealing(),
            &[],
            "elicitation-0",
            ClientRequestKind::Elicitation,
            binding,
        )
        .unwrap()
    }

    #[test]
    fn a_first_round_has_no_answers_and_responses_need_a_state() {
        let binding = binding("tools/call", "t", &json!({}), &Caller::local());
        assert!(
            answers(&sealing(), None, None, &binding)
                .unwrap()
                .is_empty()
        );
        let responses = InputResponses::from([("elicitation-0".into(), elicited("x"))]);
        let error = answers(&sealing(), None, Some(&responses), &binding).unwrap_err();
        assert_eq!(reason(&error), "missing_request_state");
    }

    #[test]
    fn a_retry_adds_the_answer_to_the_sealed_ones() {
        let binding = binding(
            "tools/call",
            "t",
            &json!({"b": 1, "a": 2}),
            &Caller::local(),
        );
        let state = one_round(&binding);
        let responses = InputResponses::from([("elicitation-0".into(), elicited("Ada"))]);
        let got = answers(&sealing(), Some(&state), Some(&responses), &binding).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].kind, ClientRequestKind::Elicitation);
        assert_eq!(got[0].result["content"]["name"], "Ada");

        let error = answers(&sealing(), Some(&state), None, &binding).unwrap_err();
        assert_eq!(reason(&error), "missing_input_response");
        let wrong = InputResponses::from([("elicitation-0".into(), json!({"role": 1}))]);
        let error = answers(&sealing(), Some(&state), Some(&wrong), &binding).unwrap_err();
        assert_eq!(reason(&error), "invalid_input_response");
    }

    #[test]
    fn the_state_is_bound_to_the_caller_and_the_key() {
        let alice = Caller::with_permissions(PermissionSet::new(["A"]));
        let bob = Caller::with_permissions(PermissionSet::new(["B"]));
        let args = json!({"x": 1});
        let state = one_round(&binding("tools/call", "t", &args, &alice));
        let responses = InputResponses::from([("elicitation-0".into(), elicited("Ada"))]);
        let as_bob = binding("tools/call", "t", &args, &bob);
        let error = answers(&sealing(), Some(&state), Some(&responses), &as_bob).unwrap_err();
        assert_eq!(reason(&error), "invalid_request_state");

        let other_key = Sealing {
            key: StateKey::random(),
            ttl: Duration::from_secs(60),
        };
        let as_alice = binding("tools/call", "t", &args, &alice);
        let error = answers(&other_key, Some(&state), Some(&responses), &as_alice).unwrap_err();
        assert_eq!(reason(&error), "invalid_request_state");
    }

    #[test]
    fn a_round_replays_answers_in_order_then_asks() {
        let recorded = vec![Answer {
            kind: ClientRequestKind::Elicitation,
            result: elicited("Ada"),
        }];
        let (round, mut asked) = Round::new(recorded);
        let first = round
            .ask(ClientRequestKind::Elicitation, json!({}), None)
            .now_or_never()
            .unwrap()
            .unwrap();
        assert_eq!(first["content"]["name"], "Ada");
        // The next request has no answer: the round ends with it (capability declared).
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({ "sampling": {} })).unwrap();
        let params = json!({ "messages": [], "maxTokens": 5 });
        let pending = round.ask(ClientRequestKind::Sampling, params, Some(&capabilities));
        assert!(pending.now_or_never().is_none());
        let asked = asked.try_recv().unwrap();
        assert_eq!(asked.id(), "sampling-1");

        let (round, _) = Round::new(vec![Answer {
            kind: ClientRequestKind::Sampling,
            result: json!({}),
        }]);
        let error = round
            .ask(ClientRequestKind::Elicitation, json!({}), None)
            .now_or_never()
            .unwrap()
            .unwrap_err();
        assert!(error.message().contains("same order"), "{error:?}");
    }
}
