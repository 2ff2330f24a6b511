//! What the test client answers when a tool asks the client something (elicitation,
//! sampling, roots): the test's closures, and the results they usually return.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{self as wire, ConstString as _};
use serde_json::{Value, json};

/// One answering closure: the request's params in, the result out.
pub(crate) type Answer = Arc<dyn Fn(Value) -> BoxFuture<'static, Value> + Send + Sync>;

/// A synchronous closure as an [`Answer`].
pub(crate) fn sync_answer<F>(answer: F) -> Answer
where
    F: Fn(Value) -> Value + Send + Sync + 'static,
{
    Arc::new(move |params| {
        let result = answer(params);
        Box::pin(async move { result })
    })
}

/// An asynchronous closure as an [`Answer`].
pub(crate) fn async_answer<F, Fut>(answer: F) -> Answer
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Value> + Send + 'static,
{
    Arc::new(move |params| Box::pin(answer(params)))
}

/// The closures and roots a client answers the server's questions with.
#[derive(Clone, Default)]
pub(crate) struct Answers {
    pub(crate) elicitation: Option<Answer>,
    pub(crate) sampling: Option<Answer>,
    #[expect(deprecated)] // roots: deprecated by SEP-2577, still in the protocol
    pub(crate) roots: Option<Vec<wire::Root>>,
}

impl Answers {
    /// The client capabilities these answers declare: each question the client can answer.
    pub(crate) fn capabilities(&self) -> Value {
        let mut capabilities = serde_json::Map::new();
        if self.elicitation.is_some() {
            capabilities.insert("elicitation".into(), json!({}));
        }
        if self.sampling.is_some() {
            capabilities.insert("sampling".into(), json!({}));
        }
        if self.roots.is_some() {
            capabilities.insert("roots".into(), json!({}));
        }
        Value::Object(capabilities)
    }

    /// The result of the server's request `method`, or a JSON-RPC error (code, message)
    /// for a method this client does not answer.
    pub(crate) async fn answer(&self, method: &str, params: Value) -> Result<Value, (i64, String)> {
        let closure = match method {
            wire::ElicitationCreateRequestMethod::VALUE => self.elicitation.as_ref(),
            wire::CreateMessageRequestMethod::VALUE => self.sampling.as_ref(),
            wire::ListRootsRequestMethod::VALUE => {
                if let Some(roots) = &self.roots {
                    return Ok(json!({ "roots": roots }));
                }
                None
            }
            wire::PingRequestMethod::VALUE => return Ok(json!({})),
            _ => None,
        };
        match closure {
            Some(answer) => Ok(answer(params).await),
            None => Err((
                wire::ErrorCode::METHOD_NOT_FOUND.0 as i64,
                format!("the test client answers no {method} (give it a closure for it)"),
            )),
        }
    }
}

fn elicit_result(result: wire::ElicitResult) -> Value {
    serde_json::to_value(result).expect("an elicitation result serializes")
}

/// The elicitation result of a user who accepted and entered `content` (an object matching
/// the request's `requestedSchema`).
///
/// ```
/// let answer = mcp_toolbelt::testing::accept(serde_json::json!({"name": "Ada"}));
/// assert_eq!(answer["action"], "accept");
/// assert_eq!(answer["content"]["name"], "Ada");
/// ```
pub fn accept(content: Value) -> Value {
    elicit_result(wire::ElicitResult::new(wire::ElicitationAction::Accept).with_content(content))
}

/// The elicitation result of a user who declined to answer.
///
/// ```
/// assert_eq!(mcp_toolbelt::testing::decline()["action"], "decline");
/// ```
pub fn decline() -> Value {
    elicit_result(wire::ElicitResult::new(wire::ElicitationAction::Decline))
}

/// The elicitation result of a user who dismissed the question.
///
/// ```
/// assert_eq!(mcp_toolbelt::testing::cancel()["action"], "cancel");
/// ```
pub fn cancel() -> Value {
    elicit_result(wire::ElicitResult::new(wire::ElicitationAction::Cancel))
}

/// The sampling result of a model (named `test-model`) that answered `text`.
///
/// ```
/// let answer = mcp_toolbelt::testing::sampled_text("four");
/// assert_eq!(answer["role"], "assistant");
/// assert_eq!(answer["content"]["text"], "four");
/// ```
pub fn sampled_text(text: impl Into<String>) -> Value {
    #[expect(deprecated)] // sampling: deprecated by SEP-2577, still in the protocol
    let result = wire::CreateMessageResult::new(
        wire::SamplingMessage::assistant_text(text),
        "test-model".to_string(),
    );
    serde_json::to_value(result).expect("a sampling result serializes")
}
