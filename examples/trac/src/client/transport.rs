//! One XML-RPC round trip over HTTP: encode, POST, classify, decode.

use std::borrow::Cow;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use dxr::{FaultResponse, MethodCall, MethodResponse, Value};
use reqwest::{StatusCode, Url, header};

use super::{TracConfig, TracError};

/// A decoded successful answer plus the server's `Date` header.
pub(crate) struct Answer {
    pub(crate) value: Value,
    pub(crate) date: Option<DateTime<Utc>>,
}

/// HTTP side of the client. Connections are pooled by `reqwest`; the pool is
/// replaced after any non-200 answer (see [`Transport::call`]).
pub(crate) struct Transport {
    endpoint: Url,
    endpoint_text: String,
    user: Option<String>,
    password: Option<String>,
    timeout: Duration,
    connect_timeout: Duration,
    http: RwLock<reqwest::Client>,
}

impl Transport {
    pub(crate) fn new(config: &TracConfig) -> Result<Self, TracError> {
        let endpoint = config.endpoint()?;
        let http = build_http(config.timeout, config.connect_timeout)?;
        Ok(Transport {
            endpoint_text: endpoint.to_string(),
            endpoint,
            user: config.user.clone(),
            password: config.password.clone(),
            timeout: config.timeout,
            connect_timeout: config.connect_timeout,
            http: RwLock::new(http),
        })
    }

    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint_text
    }

    pub(crate) fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// Calls `method`. A fault comes back as [`TracError::Fault`].
    ///
    /// A pooled keep-alive connection may have been closed by the server
    /// (tracd restarted) without the pool noticing; sending on it fails before
    /// any answer. The pool is then replaced, and a read-only call is retried
    /// once on a fresh connection. A write is not retried (it is reported as
    /// [`TracError::Transport`]): the client cannot prove it was not applied.
    pub(crate) async fn call(&self, method: &str, params: Vec<Value>) -> Result<Answer, TracError> {
        let body = encode_call(method, &params).map_err(TracError::InvalidArgument)?;
        let retry_allowed = is_read_only(method, &params);
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.round_trip(method, body.clone()).await {
                Err(Failure::Stale(e)) => {
                    self.reset_pool();
                    if retry_allowed && attempt == 1 {
                        tracing::debug!(method, error = %error_chain(&e), "stale pooled connection; retrying");
                        continue;
                    }
                    return Err(TracError::Transport {
                        url: self.endpoint_text.clone(),
                        reason: format!(
                            "the server closed the connection before answering ({}); Trac may have been \
                             restarted: check whether the change was applied before retrying",
                            root_cause(&e)
                        ),
                    });
                }
                Err(Failure::Other(e)) => return Err(e),
                Ok(answer) => return Ok(answer),
            }
        }
    }

    async fn round_trip(&self, method: &str, body: String) -> Result<Answer, Failure> {
        let started = Instant::now();
        let client = self.http.read().unwrap_or_else(|e| e.into_inner()).clone();
        let mut request = client
            .post(self.endpoint.clone())
            .header(header::CONTENT_TYPE, "text/xml; charset=utf-8")
            .header(header::ACCEPT, "text/xml")
            .body(body);
        if let (Some(user), Some(password)) = (&self.user, &self.password) {
            request = request.basic_auth(user, Some(password));
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) if is_stale_connection(&e) => return Err(Failure::Stale(e)),
            Err(e) => return Err(Failure::Other(self.wire_error(&e))),
        };
        let status = response.status();
        let date = response
            .headers()
            .get(header::DATE)
            .and_then(|d| d.to_str().ok())
            .and_then(|d| DateTime::parse_from_rfc2822(d).ok())
            .map(|d| d.with_timezone(&Utc));
        if status != StatusCode::OK {
            // tracd answers e.g. 401 without reading the request body and keeps
            // the connection open: the unread body would be parsed as the next
            // request. Drop the whole pool so that connection is never reused.
            self.reset_pool();
            tracing::debug!(method, %status, "Trac RPC HTTP error");
            return Err(Failure::Other(TracError::Http {
                url: self.endpoint_text.clone(),
                status: status.as_u16(),
                message: self.status_message(status),
            }));
        }
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|c| c.to_str().ok())
            .unwrap_or("")
            .to_string();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| Failure::Other(self.wire_error(&e)))?;
        tracing::debug!(
            method,
            elapsed_ms = started.elapsed().as_millis() as u64,
            bytes = bytes.len(),
            "Trac RPC"
        );
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            Failure::Other(self.malformed(method, format!("body is not UTF-8: {e}")))
        })?;
        if !content_type.contains("xml") {
            return Err(Failure::Other(self.malformed(
                method,
                format!(
                    "expected an XML-RPC answer, got {content_type:?}: {}",
                    excerpt(text)
                ),
            )));
        }
        match decode_answer(text) {
            Ok(Ok(value)) => Ok(Answer { value, date }),
            Ok(Err((code, message))) => Err(Failure::Other(TracError::Fault {
                method: method.to_string(),
                code,
                message,
            })),
            Err(detail) => Err(Failure::Other(self.malformed(method, detail))),
        }
    }

    pub(crate) fn malformed(&self, method: &str, detail: String) -> TracError {
        TracError::MalformedResponse {
            url: self.endpoint_text.clone(),
            method: method.to_string(),
            detail,
        }
    }

    fn reset_pool(&self) {
        match build_http(self.timeout, self.connect_timeout) {
            Ok(fresh) => *self.http.write().unwrap_or_else(|e| e.into_inner()) = fresh,
            Err(e) => tracing::warn!(error = %e, "could not rebuild the HTTP client"),
        }
    }

    fn status_message(&self, status: StatusCode) -> String {
        match status.as_u16() {
            401 => match &self.user {
                Some(user) => format!("Trac rejected the credentials of user {user:?} (check TRAC_USER / TRAC_PASSWORD)"),
                None => "Trac requires a login for RPC (set TRAC_USER / TRAC_PASSWORD)".to_string(),
            },
            403 => "access to the RPC endpoint is forbidden (the user may lack XML_RPC)".to_string(),
            404 => "no RPC endpoint here: check the project URL and that the TracXMLRPC plugin is enabled".to_string(),
            415 => "the server does not accept XML-RPC here (TracXMLRPC plugin missing?)".to_string(),
            _ => status.canonical_reason().unwrap_or("unexpected HTTP status").to_string(),
        }
    }

    fn wire_error(&self, e: &reqwest::Error) -> TracError {
        let url = self.endpoint_text.clone();
        if e.is_timeout() {
            TracError::Timeout {
                url,
                timeout: if e.is_connect() {
                    self.connect_timeout
                } else {
                    self.timeout
                },
            }
        } else if e.is_connect() {
            TracError::Connect {
                url,
                reason: root_cause(e),
            }
        } else {
            TracError::Transport {
                url,
                reason: error_chain(e),
            }
        }
    }
}

/// How one round trip failed.
enum Failure {
    /// The request went out on a connection the server had already closed.
    Stale(reqwest::Error),
    /// Anything else, already classified.
    Other(TracError),
}

/// True for errors of a request written to a connection that then turned out
/// to be closed: no answer byte arrived (as opposed to refused or timed out).
fn is_stale_connection(e: &reqwest::Error) -> bool {
    if e.is_timeout() || e.is_connect() {
        return false;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(h) = err.downcast_ref::<hyper::Error>()
            && (h.is_incomplete_message() || h.is_canceled())
        {
            return true;
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            )
        {
            return true;
        }
        source = err.source();
    }
    false
}

/// Whether repeating the call cannot change anything in Trac: getters,
/// queries, listings, search, and multicalls made only of those.
fn is_read_only(method: &str, params: &[Value]) -> bool {
    if method == "system.multicall" {
        return match params {
            [Value::Array(calls)] => calls.iter().all(|c| match c {
                Value::Struct(m) => match (m.get("methodName"), m.get("params")) {
                    (Some(Value::String(name)), Some(Value::Array(p))) => {
                        name != "system.multicall" && is_read_only(name, p)
                    }
                    _ => false,
                },
                _ => false,
            }),
            _ => false,
        };
    }
    let last = method.rsplit('.').next().unwrap_or(method);
    last.starts_with("get")
        || last.starts_with("list")
        || matches!(
            last,
            "query"
                | "changeLog"
                | "performSearch"
                | "methodHelp"
                | "methodSignature"
                | "wikiToHtml"
        )
}

fn build_http(timeout: Duration, connect_timeout: Duration) -> Result<reqwest::Client, TracError> {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(connect_timeout)
        .pool_idle_timeout(Duration::from_secs(30))
        .user_agent(concat!("trac-mcp/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| {
            TracError::Config(format!("cannot build the HTTP client: {}", error_chain(&e)))
        })
}

/// Serialises a method call as an XML-RPC request document.
fn encode_call(method: &str, params: &[Value]) -> Result<String, String> {
    let call = MethodCall {
        name: Cow::Borrowed(method),
        params: params.to_vec(),
    };
    let xml = call
        .to_xml()
        .map_err(|e| format!("cannot encode call to {method}: {e}"))?;
    Ok(format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{xml}"))
}

/// Decodes a response document: `Ok(Ok(value))`, `Ok(Err((code, message)))`
/// for a fault, or `Err(detail)` if it is neither.
pub(crate) fn decode_answer(text: &str) -> Result<Result<Value, (i32, String)>, String> {
    let body = strip_declaration(text);
    if let Ok(response) = MethodResponse::from_xml(body) {
        return Ok(Ok(response.value));
    }
    match FaultResponse::from_xml(body) {
        Ok(fault) => Ok(Err((fault.fault.code(), fault.fault.string().to_string()))),
        Err(_) => Err(format!("not an XML-RPC methodResponse: {}", excerpt(text))),
    }
}

/// dxr parses from the root element; drop a leading `<?xml ...?>` declaration.
fn strip_declaration(text: &str) -> &str {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    match trimmed.strip_prefix("<?xml") {
        Some(rest) => rest
            .split_once("?>")
            .map_or(trimmed, |(_, after)| after.trim_start()),
        None => trimmed,
    }
}

/// First 200 characters of a body, for error messages.
fn excerpt(text: &str) -> String {
    let flat: String = text
        .chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() > 200 {
        format!("{flat}…")
    } else {
        flat
    }
}

fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// The innermost cause, e.g. "Connection refused (os error 111)".
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last: &(dyn std::error::Error + 'static) = e;
    while let Some(s) = last.source() {
        last = s;
    }
    last.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_values_faults_and_garbage() {
        let ok = "<?xml version='1.0'?>\n<methodResponse><params><param><value><array><data>\
                  <value><int>1</int></value><value><int>1</int></value><value><int>9</int></value>\
                  </data></array></value></param></params></methodResponse>";
        assert_eq!(
            decode_answer(ok).unwrap().unwrap(),
            Value::Array(vec![
                Value::Integer(1),
                Value::Integer(1),
                Value::Integer(9)
            ])
        );
        let fault = "<?xml version='1.0'?>\n<methodResponse><fault><value><struct>\
                     <member><name>faultCode</name><value><int>404</int></value></member>\
                     <member><name>faultString</name><value><string>Ticket 9 does not exist.</string></value></member>\
                     </struct></value></fault></methodResponse>";
        assert_eq!(
            decode_answer(fault).unwrap().unwrap_err(),
            (404, "Ticket 9 does not exist.".to_string())
        );
        let err = decode_answer("<html><body>Oops</body></html>").unwrap_err();
        assert!(
            err.contains("not an XML-RPC methodResponse") && err.contains("Oops"),
            "{err}"
        );
    }

    #[test]
    fn encodes_a_call_with_declaration() {
        let xml = encode_call("ticket.get", &[Value::Integer(7)]).unwrap();
        assert!(xml.starts_with("<?xml version=\"1.0\""));
        assert!(
            xml.contains("<methodName>ticket.get</methodName>") && xml.contains("<i4>7</i4>"),
            "{xml}"
        );
    }

    #[test]
    fn read_only_detection() {
        assert!(is_read_only("ticket.get", &[]));
        assert!(is_read_only("ticket.milestone.getAll", &[]));
        assert!(is_read_only("search.performSearch", &[]));
        assert!(!is_read_only("ticket.create", &[]));
        assert!(!is_read_only("wiki.putPage", &[]));
        let call = |name: &str| {
            Value::Struct(
                [
                    ("methodName".to_string(), Value::String(name.into())),
                    ("params".to_string(), Value::Array(vec![])),
                ]
                .into(),
            )
        };
        let reads = [Value::Array(vec![call("ticket.get"), call("wiki.getPage")])];
        assert!(is_read_only("system.multicall", &reads));
        let mixed = [Value::Array(vec![
            call("ticket.get"),
            call("ticket.delete"),
        ])];
        assert!(!is_read_only("system.multicall", &mixed));
    }

    #[test]
    fn excerpt_is_bounded() {
        let long = "x".repeat(500);
        assert_eq!(excerpt(&long).chars().count(), 201);
    }
}
