//! TCP: one MCP session of newline-delimited JSON-RPC per connection, optionally behind an
//! authentication line.
//!
//! With tokens ([`TcpOptions::tokens`]) the first line a client sends must be the
//! notification
//!
//! ```text
//! {"jsonrpc":"2.0","method":"mcp-toolbelt/authenticate","params":{"token":"<token>"}}
//! ```
//!
//! It gets no reply when the token is known (sent as a request, with an `id`, it gets the
//! result `{}`, as JSON-RPC wants): the MCP session starts after it (`initialize`
//! may follow on the same write) and the caller sees the tools its token's permissions
//! allow, exactly as an HTTP caller with that bearer token. Anything else — no line within
//! [`TcpOptions::handshake_timeout`], a line longer than 8 KiB, another message, an
//! unknown token — gets one JSON-RPC error (code `-32003`, the message's `id` when it has
//! one, `null` otherwise) and the connection is closed; no MCP message is read or sent.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

use super::ServeError;
use super::auth::{TokenResolver, TokenTable, TokensFileError};
use super::drain::Drain;
use super::exposure::Authentication;
use super::linger;
use super::state::Shared;
use super::stream::{StreamLimits, accept_next, serve_stream};
use crate::Caller;

/// The method of the authentication line.
pub const AUTHENTICATE_METHOD: &str = "mcp-toolbelt/authenticate";

/// The longest authentication line read, in bytes.
const MAX_HANDSHAKE_LINE: u64 = 8 * 1024;

/// The default time a client has to send its authentication line.
const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Options of the TCP transport: whether callers authenticate, and with what.
///
/// Defaults: no tokens (every caller sees every tool, which
/// [`Server::bind_tcp`](super::Server::bind_tcp) only allows on a loopback address unless
/// [`Server::unauthenticated_network_access`](super::Server::unauthenticated_network_access)
/// was called), a 10 s authentication time-out.
///
/// ```
/// use mcp_toolbelt::{PermissionSet, server::{TcpOptions, TokenTable}};
/// let options = TcpOptions::default()
///     .tokens(TokenTable::new([("t0k3n", PermissionSet::new(["WIKI_VIEW"]))]))
///     .handshake_timeout(std::time::Duration::from_secs(5));
/// assert!(options.has_tokens());
/// ```
#[derive(Clone)]
pub struct TcpOptions {
    tokens: Option<Arc<dyn TokenResolver>>,
    handshake_timeout: Duration,
}

impl Default for TcpOptions {
    fn default() -> TcpOptions {
        TcpOptions {
            tokens: None,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
        }
    }
}

impl std::fmt::Debug for TcpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpOptions")
            .field("tokens", &self.tokens.is_some())
            .field("handshake_timeout", &self.handshake_timeout)
            .finish()
    }
}

impl TcpOptions {
    /// Require the authentication line (see the module docs) on every connection, and
    /// filter each caller's tools by the permissions `resolver` maps its token to.
    pub fn tokens(mut self, resolver: impl TokenResolver) -> TcpOptions {
        self.tokens = Some(Arc::new(resolver));
        self
    }

    /// [`tokens`](Self::tokens) from a tokens file (format and file-mode rules:
    /// [`TokenTable::from_file`]).
    pub fn tokens_file(self, path: impl AsRef<Path>) -> Result<TcpOptions, TokensFileError> {
        Ok(self.tokens(TokenTable::from_file(path)?))
    }

    /// How long a new connection may take to send its authentication line (default 10 s;
    /// at least 1 ms).
    pub fn handshake_timeout(mut self, timeout: Duration) -> TcpOptions {
        self.handshake_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// True when callers must authenticate.
    pub fn has_tokens(&self) -> bool {
        self.tokens.is_some()
    }

    pub(crate) fn authentication(&self) -> Authentication {
        Authentication::with_tokens(self.tokens.is_some())
    }
}

/// Accept TCP connections until `drain` starts; each is authenticated (with tokens) and
/// served on its own task. Then the sessions finish their calls in flight (within the
/// shutdown grace) and end.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    listener: TcpListener,
    options: TcpOptions,
    limits: StreamLimits,
    drain: Drain,
) -> Result<(), ServeError> {
    let tasks = TaskTracker::new();
    loop {
        let Some((stream, peer)) = accept_next(&listener, &drain.draining, "a TCP").await else {
            drop(listener);
            tasks.close();
            drain.finish(tasks.wait(), &tasks).await;
            return Ok(());
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
        let (read, mut write) = stream.into_split();
        let shared = shared.clone();
        let options = options.clone();
        let drain = drain.watch();
        tasks.spawn(async move {
            tracing::debug!(%peer, "TCP connection opened");
            let mut read = BufReader::new(read);
            let caller = match &options.tokens {
                None => None,
                Some(resolver) => {
                    let timeout = options.handshake_timeout;
                    let handshake = handshake(&mut read, &mut write, resolver.as_ref(), timeout);
                    // A connection not yet authenticated has nothing in flight: a shutdown
                    // closes it at once instead of waiting out its handshake.
                    let outcome = tokio::select! {
                        outcome = handshake => outcome,
                        _ = drain.draining.cancelled() => {
                            tracing::debug!(%peer, "closed an unauthenticated connection: shutting down");
                            return;
                        }
                    };
                    match outcome {
                        Ok(caller) => Some(caller),
                        Err(refusal) => return refuse(read, write, peer, refusal).await,
                    }
                }
            };
            let served = serve_stream(shared, read, write, caller, limits, &drain).await;
            if let Err(error) = served {
                tracing::warn!(%peer, %error, "TCP session ended with an error");
            }
        });
    }
}

/// Why a connection's authentication failed: the JSON-RPC error to send.
#[derive(Debug)]
struct Refusal {
    id: Value,
    message: String,
}

impl Refusal {
    fn new(id: Value, message: impl Into<String>) -> Refusal {
        Refusal {
            id,
            message: format!("Unauthorized: {}", message.into()),
        }
    }
}

/// How to authenticate, for refusals that are not about the token itself.
fn expected_line() -> String {
    format!(
        "this server needs authentication: send {{\"jsonrpc\":\"2.0\",\"method\":\"{AUTHENTICATE_METHOD}\",\"params\":{{\"token\":\"<token>\"}}}} as the first line"
    )
}

/// [`authenticate`], then the result `{}` to an authentication line sent as a request (with
/// an `id`): JSON-RPC answers every request.
async fn handshake<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    read: &mut BufReader<R>,
    write: &mut W,
    resolver: &dyn TokenResolver,
    timeout: Duration,
) -> Result<Caller, Refusal> {
    let (caller, id) = authenticate(read, resolver, timeout).await?;
    if let Some(id) = id {
        let mut line = json!({"jsonrpc": "2.0", "id": id, "result": {}})
            .to_string()
            .into_bytes();
        line.push(b'\n');
        write
            .write_all(&line)
            .await
            .map_err(|error| Refusal::new(Value::Null, error.to_string()))?;
    }
    Ok(caller)
}

/// Read and check the authentication line; the token's caller when it is known, and the
/// line's `id` when it is a request. Never logs or echoes the token.
async fn authenticate<R: AsyncRead + Unpin>(
    read: &mut BufReader<R>,
    resolver: &dyn TokenResolver,
    timeout: Duration,
) -> Result<(Caller, Option<Value>), Refusal> {
    let mut line = Vec::new();
    let mut limited = (&mut *read).take(MAX_HANDSHAKE_LINE);
    let reading = limited.read_until(b'\n', &mut line);
    match tokio::time::timeout(timeout, reading).await {
        Err(_) => {
            return Err(Refusal::new(
                Value::Null,
                format!(
                    "no authentication line within {} ms; {}",
                    timeout.as_millis(),
                    expected_line()
                ),
            ));
        }
        Ok(Err(error)) => return Err(Refusal::new(Value::Null, error.to_string())),
        Ok(Ok(_)) => {}
    }
    if line.last() != Some(&b'\n') && line.len() as u64 >= MAX_HANDSHAKE_LINE {
        return Err(Refusal::new(
            Value::Null,
            format!("the authentication line is longer than {MAX_HANDSHAKE_LINE} bytes"),
        ));
    }
    let message: Value = serde_json::from_slice(&line)
        .map_err(|_| Refusal::new(Value::Null, format!("not JSON; {}", expected_line())))?;
    let id = match message.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let is_authenticate = message.get("jsonrpc") == Some(&json!("2.0"))
        && message.get("method") == Some(&json!(AUTHENTICATE_METHOD));
    if !is_authenticate {
        return Err(Refusal::new(id, expected_line()));
    }
    let Some(token) = message.pointer("/params/token").and_then(Value::as_str) else {
        return Err(Refusal::new(
            id,
            format!("{AUTHENTICATE_METHOD} needs \"params\": {{\"token\": \"<token>\"}}"),
        ));
    };
    let request_id = (!id.is_null()).then(|| id.clone());
    resolver
        .resolve(token)
        .map(|caller| (caller, request_id))
        .ok_or_else(|| Refusal::new(id, "the token is not valid"))
}

/// Send `refusal` as the connection's only message and close it.
async fn refuse<R, W>(mut read: R, mut write: W, peer: SocketAddr, refusal: Refusal)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    tracing::debug!(%peer, reason = %refusal.message, "refused a TCP connection");
    let reply = json!({"jsonrpc": "2.0", "id": refusal.id,
                       "error": {"code": crate::server::protocol::code::UNAUTHORIZED, "message": refusal.message}});
    let mut line = reply.to_string().into_bytes();
    line.push(b'\n');
    linger::reply_and_close(&mut read, &mut write, &line).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::PermissionSet;

    fn resolver() -> TokenTable {
        let caller = Caller::new(
            Some("alice".into()),
            None,
            vec![],
            PermissionSet::new(["A"]),
            Default::default(),
        );
        TokenTable::new([("good-token", caller)])
    }

    async fn attempt(input: &str) -> Result<Caller, Refusal> {
        let mut read = BufReader::new(input.as_bytes());
        let mut written = Vec::new();
        handshake(&mut read, &mut written, &resolver(), Duration::from_secs(5)).await
    }

    #[tokio::test]
    async fn an_authentication_request_with_an_id_gets_a_result() {
        let input = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"mcp-toolbelt/authenticate\",\"params\":{\"token\":\"good-token\"}}\n";
        let mut read = BufReader::new(input.as_bytes());
        let mut written = Vec::new();
        handshake(&mut read, &mut written, &resolver(), Duration::from_secs(5))
            .await
            .expect("the token is known");
        let reply: Value = serde_json::from_slice(&written).expect("one JSON line");
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
        // As a notification it gets no reply.
        let input = input.replace("\"id\":3,", "");
        let mut read = BufReader::new(input.as_bytes());
        let mut written = Vec::new();
        handshake(&mut read, &mut written, &resolver(), Duration::from_secs(5))
            .await
            .expect("the token is known");
        assert!(written.is_empty(), "{}", String::from_utf8_lossy(&written));
    }

    #[tokio::test]
    async fn a_known_token_yields_its_caller_and_keeps_the_rest() {
        let input = "{\"jsonrpc\":\"2.0\",\"method\":\"mcp-toolbelt/authenticate\",\"params\":{\"token\":\"good-token\"}}\n{\"next\":1}\n";
        let mut read = BufReader::new(input.as_bytes());
        let (caller, id) = authenticate(&mut read, &resolver(), Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(id, None);
        assert!(caller.permissions().unwrap().contains("A"));
        assert_eq!(caller.subject(), Some("alice"));
        let mut rest = String::new();
        read.read_to_string(&mut rest).await.unwrap();
        assert_eq!(rest, "{\"next\":1}\n");
    }

    #[tokio::test]
    async fn everything_else_is_refused_without_echoing_the_token() {
        let cases = [
            ("", Value::Null, "not JSON"),
            ("garbage\n", Value::Null, "not JSON"),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":{}}\n",
                json!(7),
                "needs authentication",
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"method\":\"mcp-toolbelt/authenticate\"}\n",
                Value::Null,
                "needs \"params\"",
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"mcp-toolbelt/authenticate\",\"params\":{\"token\":\"wrong-secret\"}}\n",
                json!("a"),
                "not valid",
            ),
        ];
        for (input, id, expected) in cases {
            let refusal = attempt(input).await.unwrap_err();
            assert_eq!(refusal.id, id, "{input}");
            assert!(
                refusal.message.contains(expected),
                "{input}: {}",
                refusal.message
            );
            assert!(!refusal.message.contains("wrong-secret"));
        }
        let long = format!("{}\n", "x".repeat(20_000));
        let refusal = attempt(&long).await.unwrap_err();
        assert!(
            refusal.message.contains("longer than"),
            "{}",
            refusal.message
        );
    }

    #[tokio::test]
    async fn a_silent_client_is_refused_after_the_timeout() {
        let (client, server) = tokio::io::duplex(64);
        let mut read = BufReader::new(server);
        let refusal = authenticate(&mut read, &resolver(), Duration::from_millis(20))
            .await
            .unwrap_err();
        assert!(
            refusal.message.contains("within 20 ms"),
            "{}",
            refusal.message
        );
        drop(client);
    }
}
