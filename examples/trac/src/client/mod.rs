//! A typed async client for Trac's XML-RPC API (the TracXMLRPC plugin).
//!
//! ```no_run
//! # async fn demo() -> Result<(), trac_mcp::client::TracError> {
//! use trac_mcp::client::{NewTicket, TracClient, TracConfig};
//! let trac = TracClient::new(TracConfig::new("http://127.0.0.1:8124"))?;
//! let id = trac.create_ticket(&NewTicket::new("Crash on start", "Steps: ...")).await?;
//! let ticket = trac.get_ticket(id).await?;
//! assert_eq!(ticket.status(), "new");
//! # Ok(()) }
//! ```
//!
//! One [`TracClient`] is cheap to clone and shares one connection pool; every
//! call is one HTTP round trip with the configured timeout. Batches use
//! `system.multicall` (one round trip) and give a result per item.

mod config;
mod error;
mod milestone;
mod system;
mod ticket;
mod transport;
mod types;
mod value;
mod wiki;

use std::sync::Arc;

pub use config::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, ENV_PASSWORD, ENV_TIMEOUT, ENV_URL, ENV_USER,
    TracConfig,
};
pub use dxr::Value;
pub use error::{ErrorKind, TracError};
pub use types::{
    ActionInput, ApiVersion, ChangeLogEntry, Milestone, MilestoneChanges, NewTicket,
    PutPageOptions, SearchFilter, SearchResult, ServerInfo, Ticket, TicketAction, TicketField,
    TicketId, TicketUpdate, WikiPageInfo,
};
pub use value::{datetime_value, to_json};

use transport::Transport;

/// One call inside a [`TracClient::multicall`] batch.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcCall {
    /// XML-RPC method name, e.g. `ticket.get`.
    pub method: String,
    /// Positional parameters.
    pub params: Vec<Value>,
}

impl RpcCall {
    /// A call of `method` with `params`.
    pub fn new(method: impl Into<String>, params: Vec<Value>) -> Self {
        RpcCall {
            method: method.into(),
            params,
        }
    }
}

/// Async Trac XML-RPC client; clones share the connection pool.
#[derive(Clone)]
pub struct TracClient {
    transport: Arc<Transport>,
}

impl std::fmt::Debug for TracClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TracClient")
            .field("endpoint", &self.transport.endpoint())
            .field("user", &self.transport.user())
            .finish()
    }
}

impl TracClient {
    /// Checks `config` and builds a client (no request is made yet).
    pub fn new(config: TracConfig) -> Result<Self, TracError> {
        Ok(TracClient {
            transport: Arc::new(Transport::new(&config)?),
        })
    }

    /// A client configured from `TRAC_URL`, `TRAC_USER`, `TRAC_PASSWORD`, `TRAC_TIMEOUT_SECS`.
    pub fn from_env() -> Result<Self, TracError> {
        Self::new(TracConfig::from_env()?)
    }

    /// The XML-RPC endpoint URL (`.../rpc` or `.../login/rpc`).
    pub fn endpoint(&self) -> &str {
        self.transport.endpoint()
    }

    /// The user the client logs in as (`None`: anonymous).
    pub fn user(&self) -> Option<&str> {
        self.transport.user()
    }

    /// Calls any XML-RPC method and returns its raw result.
    pub async fn call(&self, method: &str, params: Vec<Value>) -> Result<Value, TracError> {
        Ok(self.transport.call(method, params).await?.value)
    }

    /// Runs `calls` in one `system.multicall` round trip. The outer error is
    /// for the round trip itself; each item gets its own result (value or
    /// fault), in the order of `calls`. An empty batch makes no request.
    pub async fn multicall(
        &self,
        calls: Vec<RpcCall>,
    ) -> Result<Vec<Result<Value, TracError>>, TracError> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        let methods: Vec<String> = calls.iter().map(|c| c.method.clone()).collect();
        let batch = Value::Array(
            calls
                .into_iter()
                .map(|c| {
                    Value::Struct(
                        [
                            ("methodName".to_string(), Value::String(c.method)),
                            ("params".to_string(), Value::Array(c.params)),
                        ]
                        .into(),
                    )
                })
                .collect(),
        );
        let answer = self.transport.call("system.multicall", vec![batch]).await?;
        let items = match &answer.value {
            Value::Array(items) if items.len() == methods.len() => items,
            other => {
                return Err(self.transport.malformed(
                    "system.multicall",
                    format!(
                        "expected {} results, got {}",
                        methods.len(),
                        value::describe(other)
                    ),
                ));
            }
        };
        Ok(items
            .iter()
            .zip(methods)
            .map(|(item, method)| self.multicall_item(item, method))
            .collect())
    }

    /// One multicall member: `[value]` on success, `{faultCode, faultString}` on failure.
    fn multicall_item(&self, item: &Value, method: String) -> Result<Value, TracError> {
        match item {
            Value::Array(one) if one.len() == 1 => Ok(one[0].clone()),
            Value::Struct(fault) => {
                let code = fault
                    .get("faultCode")
                    .and_then(|c| value::as_i32(c, "faultCode").ok());
                let message = fault.get("faultString").and_then(value::to_plain_string);
                match (code, message) {
                    (Some(code), Some(message)) => Err(TracError::Fault {
                        method,
                        code,
                        message,
                    }),
                    _ => Err(self.transport.malformed(
                        &method,
                        format!("bad multicall fault {}", value::describe(item)),
                    )),
                }
            }
            other => Err(self.transport.malformed(
                &method,
                format!("bad multicall result {}", value::describe(other)),
            )),
        }
    }

    /// Calls `method` and decodes the result with `decode`.
    async fn call_as<T>(
        &self,
        method: &str,
        params: Vec<Value>,
        decode: impl FnOnce(&Value) -> Result<T, String>,
    ) -> Result<T, TracError> {
        let value = self.call(method, params).await?;
        decode(&value).map_err(|detail| self.transport.malformed(method, detail))
    }

    /// Runs a batch and decodes every successful item with `decode`.
    async fn multicall_as<T>(
        &self,
        calls: Vec<RpcCall>,
        decode: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<Vec<Result<T, TracError>>, TracError> {
        let methods: Vec<String> = calls.iter().map(|c| c.method.clone()).collect();
        let results = self.multicall(calls).await?;
        Ok(results
            .into_iter()
            .zip(methods)
            .map(|(r, method)| {
                r.and_then(|v| {
                    decode(&v).map_err(|detail| self.transport.malformed(&method, detail))
                })
            })
            .collect())
    }
}

/// Decodes an array with `item`.
fn decode_list<T>(
    v: &Value,
    what: &str,
    item: impl Fn(&Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    value::as_array(v, what)?.iter().map(item).collect()
}

/// Rejects empty or whitespace-padded names before a call is made.
fn check_name(kind: &str, name: &str) -> Result<(), TracError> {
    if name.trim().is_empty() {
        return Err(TracError::InvalidArgument(format!(
            "{kind} name must not be empty"
        )));
    }
    if name.trim() != name {
        return Err(TracError::InvalidArgument(format!(
            "{kind} name {name:?} has leading or trailing whitespace"
        )));
    }
    Ok(())
}
