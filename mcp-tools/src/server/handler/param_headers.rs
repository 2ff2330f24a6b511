//! SEP-2243 on streamable HTTP: a `tools/call` on 2026-07-28 or later mirrors each argument
//! its tool annotates with `x-mcp-header` into an `Mcp-Param-{Name}` header, and the
//! server refuses (-32020, which streamable HTTP answers with 400) a call whose headers
//! and body disagree, so an intermediary routing on the header routes what the server runs.
//!
//! The check is the handler's, after the caller's view is taken: a tool the caller cannot
//! see is not checked at all and answers exactly like an unknown one, whatever its headers
//! (rmcp could check them itself through `ServerHandler::get_tool`, which has no caller).
//! rmcp checks `Mcp-Method` and `Mcp-Name` before the request reaches the handler.

use std::borrow::Cow;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::McpHandler;
use crate::definition::param_headers::ParamHeader;
use crate::schema::JsonObject;
use crate::server::protocol::{header, is_modern};

impl McpHandler {
    /// Refuse (-32020) a 2026-07-28 `tools/call` over HTTP whose `Mcp-Param-…` headers do
    /// not mirror the arguments of a tool the caller can see. Other requests (earlier
    /// revisions, stdio, TCP, a tool the caller cannot see) pass unchecked.
    pub(super) fn check_param_headers(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !is_modern(context) {
            return Ok(());
        }
        let Some(parts) = context.extensions.get::<http::request::Parts>() else {
            return Ok(());
        };
        let (view, _) = self.caller_view(context);
        let Some(def) = view.get(&request.name) else {
            return Ok(());
        };
        if def.param_headers.is_empty() {
            return Ok(());
        }
        check(
            &def.param_headers,
            &parts.headers,
            request.arguments.as_ref(),
        )
        .map_err(|problem| McpError::new(ErrorCode::HEADER_MISMATCH, problem, None))
    }
}

/// Each annotated argument against its header: both absent, or both present and equal
/// (the header decoded). The first disagreement, as the error message.
pub(crate) fn check(
    params: &[ParamHeader],
    headers: &http::HeaderMap,
    arguments: Option<&JsonObject>,
) -> Result<(), String> {
    for param in params {
        let lookup = format!(
            "{}{}",
            header::PARAM_PREFIX,
            param.name.to_ascii_lowercase()
        );
        let shown = || format!("Mcp-Param-{}", param.name);
        let mut values = headers.get_all(lookup.as_str()).iter();
        let raw = match (values.next(), values.next()) {
            (None, _) => None,
            (Some(_), Some(_)) => {
                return Err(format!(
                    "Header mismatch: {} is sent more than once",
                    shown()
                ));
            }
            (Some(value), None) => Some(value.to_str().map_err(|_| {
                format!(
                    "Header mismatch: {} holds characters outside visible ASCII; send such a \
                     value as =?base64?…?=",
                    shown()
                )
            })?),
        };
        let body = arguments
            .and_then(|arguments| value_at(arguments, &param.path))
            .and_then(scalar_text);
        let property = param.property();
        match (raw, body) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(format!(
                    "Header mismatch: {} is sent, and the argument {property:?} is absent",
                    shown()
                ));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "Header mismatch: the argument {property:?} is given, and its header {} \
                     is missing",
                    shown()
                ));
            }
            (Some(raw), Some(body)) => {
                let Some(sent) = header::param_value(raw) else {
                    return Err(format!(
                        "Header mismatch: {} is not valid =?base64?…?= (standard Base64 with \
                         its padding, of UTF-8 text)",
                        shown()
                    ));
                };
                if sent != body {
                    return Err(format!(
                        "Header mismatch: {} does not match the argument {property:?}",
                        shown()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The value at `path` (property names) in `arguments`, if every step is there.
fn value_at<'a>(arguments: &'a JsonObject, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(arguments.get(first)?, |value, key| value.get(key))
}

/// A scalar argument as its header writes it; `None` for `null` (as if absent) and for
/// arrays and objects, which no header carries (the schema refuses them anyway).
fn scalar_text(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(text) => Some(Cow::Borrowed(text)),
        Value::Bool(true) => Some(Cow::Borrowed("true")),
        Value::Bool(false) => Some(Cow::Borrowed("false")),
        Value::Number(number) => Some(Cow::Owned(number.to_string())),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use http::{HeaderMap, HeaderName, HeaderValue};
    use serde_json::json;

    use super::*;
    use crate::definition::param_headers::param_headers;

    fn params() -> Vec<ParamHeader> {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "location": {"type": "object", "properties": {
                "zone": {"type": "string", "x-mcp-header": "Zone"}
            }},
            "note": {"type": "string"}
        }});
        param_headers(schema.as_object().unwrap()).unwrap()
    }

    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        map
    }

    fn run(pairs: &[(&str, &[u8])], arguments: Value) -> Result<(), String> {
        check(&params(), &headers(pairs), arguments.as_object())
    }

    #[test]
    fn matching_headers_of_every_scalar_type_pass() {
        let arguments = json!({"region": "Hello", "priority": 3, "dry_run": false,
            "location": {"zone": "eu-1"}, "note": "not mirrored"});
        let sent: &[(&str, &[u8])] = &[
            ("Mcp-Param-Region", b"Hello"),
            ("mcp-param-priority", b"3"),
            ("MCP-PARAM-DRY-RUN", b"false"),
            ("Mcp-Param-Zone", b"eu-1"),
        ];
        assert_eq!(run(sent, arguments), Ok(()));
        // Nothing annotated is given, and no header: nothing to compare.
        assert_eq!(run(&[], json!({"note": "x"})), Ok(()));
        assert_eq!(check(&params(), &HeaderMap::new(), None), Ok(()));
        // `null` counts as absent.
        assert_eq!(run(&[], json!({"region": null})), Ok(()));
    }

    #[test]
    fn base64_values_are_decoded_and_compared() {
        let arguments = json!({"region": "Hello"});
        assert_eq!(
            run(
                &[("Mcp-Param-Region", b"=?base64?SGVsbG8=?=")],
                arguments.clone()
            ),
            Ok(())
        );
        let wrong = run(
            &[("Mcp-Param-Region", b"=?base64?SGVsbG9v?=")],
            arguments.clone(),
        );
        assert_eq!(
            wrong,
            Err("Header mismatch: Mcp-Param-Region does not match the argument \"region\"".into())
        );
        // Non-ASCII and surrounding blanks travel wrapped.
        let arguments = json!({"region": " Zürich "});
        assert_eq!(
            run(
                &[("Mcp-Param-Region", b"=?base64?IFrDvHJpY2gg?=")],
                arguments
            ),
            Ok(())
        );
    }

    #[test]
    fn invalid_base64_is_refused() {
        let arguments = json!({"region": "Hello"});
        for bad in [
            &b"=?base64?SGVsbG8?="[..], // padding missing
            b"=?base64?SGVs!!!bG8=?=",  // outside the alphabet
            b"=?base64?SGVsbG8=?=?=",   // trailing garbage inside the wrapper
            b"=?base64?_-8=?=",         // the URL-safe alphabet
            b"=?base64?/w==?=",         // not UTF-8
        ] {
            let problem = run(&[("Mcp-Param-Region", bad)], arguments.clone()).unwrap_err();
            assert_eq!(
                problem,
                "Header mismatch: Mcp-Param-Region is not valid =?base64?…?= (standard Base64 \
                 with its padding, of UTF-8 text)",
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn a_value_without_the_whole_wrapper_is_literal() {
        for literal in ["SGVsbG8=", "=?base64?SGVsbG8=", "SGVsbG8=?=", "=?base64?="] {
            let arguments = json!({"region": literal});
            assert_eq!(
                run(&[("Mcp-Param-Region", literal.as_bytes())], arguments),
                Ok(()),
                "{literal}"
            );
        }
        // ... and compared as written.
        assert!(
            run(
                &[("Mcp-Param-Region", b"SGVsbG8=")],
                json!({"region": "Hello"})
            )
            .is_err()
        );
    }

    #[test]
    fn a_missing_header_or_one_without_its_argument_is_refused() {
        assert_eq!(
            run(&[], json!({"region": "Hello"})),
            Err(
                "Header mismatch: the argument \"region\" is given, and its header \
                 Mcp-Param-Region is missing"
                    .into()
            )
        );
        assert_eq!(
            run(&[], json!({"location": {"zone": "eu-1"}})),
            Err(
                "Header mismatch: the argument \"location.zone\" is given, and its header \
                 Mcp-Param-Zone is missing"
                    .into()
            )
        );
        assert_eq!(
            run(&[("Mcp-Param-Priority", b"1")], json!({})),
            Err(
                "Header mismatch: Mcp-Param-Priority is sent, and the argument \"priority\" \
                 is absent"
                    .into()
            )
        );
        assert!(run(&[("Mcp-Param-Region", b"x")], json!({"region": null})).is_err());
        assert!(check(&params(), &headers(&[("Mcp-Param-Region", b"x")]), None).is_err());
        // A header nobody declared is none of the server's business.
        assert_eq!(run(&[("Mcp-Param-Other", b"x")], json!({})), Ok(()));
    }

    #[test]
    fn a_duplicate_header_is_refused_even_when_one_value_matches() {
        let sent: &[(&str, &[u8])] = &[
            ("Mcp-Param-Region", b"Hello"),
            ("mcp-param-region", b"Hello"),
        ];
        assert_eq!(
            run(sent, json!({"region": "Hello"})),
            Err("Header mismatch: Mcp-Param-Region is sent more than once".into())
        );
        assert!(run(sent, json!({})).is_err());
    }

    #[test]
    fn values_are_compared_exactly() {
        for (sent, arguments) in [
            (&b"hello"[..], json!({"region": "Hello"})),
            (b"03", json!({"priority": 3})),
            (b"False", json!({"dry_run": false})),
            (b"true", json!({"dry_run": false})),
        ] {
            let name = match arguments
                .as_object()
                .unwrap()
                .keys()
                .next()
                .unwrap()
                .as_str()
            {
                "region" => "Mcp-Param-Region",
                "priority" => "Mcp-Param-Priority",
                _ => "Mcp-Param-Dry-Run",
            };
            assert!(
                run(&[(name, sent)], arguments.clone()).is_err(),
                "{arguments}"
            );
        }
        let problem = run(
            &[("Mcp-Param-Region", b"Z\xc3\xbcrich")],
            json!({"region": "Zürich"}),
        );
        assert_eq!(
            problem,
            Err(
                "Header mismatch: Mcp-Param-Region holds characters outside visible ASCII; send \
                 such a value as =?base64?…?="
                    .into()
            )
        );
    }

    /// Through the HTTP endpoint, stateless, with tokens: a caller that may see the tool
    /// gets 400 with -32020 for a bad header; one that may not gets the unknown-tool answer,
    /// byte for byte, whatever the headers; earlier revisions are not checked.
    #[tokio::test]
    async fn over_http_a_hidden_tool_answers_like_an_unknown_one_whatever_its_headers() {
        use http_body_util::BodyExt;
        use tower_service::Service;

        use crate::PermissionSet;
        use crate::definition::ToolDef;
        use crate::output::result::ToolResult;
        use crate::server::{HttpOptions, Server, TokenTable};

        let deploy = ToolDef::builder("deploy")
            .description("Deploy.")
            .permissions(["ADMIN"])
            .input_schema(json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}
            }}))
            .handler(|_args, _ctx| async { Ok(ToolResult::text("deployed")) })
            .build()
            .unwrap();
        let registry = crate::ToolRegistry::builder()
            .include_linked(false)
            .tool(deploy)
            .build()
            .unwrap();
        let tokens = TokenTable::new([
            ("admin-token", PermissionSet::new(["ADMIN"])),
            ("reader-token", PermissionSet::new(["READ"])),
        ]);
        let mut service =
            Server::new(registry).http_service(HttpOptions::default().stateless().tokens(tokens));
        let mut post = async |token: &str, version: &str, name: &str, region: Option<&str>| {
            let mut meta = json!({});
            if version == "2026-07-28" {
                meta = json!({
                    "io.modelcontextprotocol/protocolVersion": version,
                    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {}
                });
            }
            let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": name, "arguments": {"region": "Hello"}, "_meta": meta}});
            let mut request = http::Request::post("/mcp")
                .header("host", "localhost")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("authorization", format!("Bearer {token}"))
                .header("mcp-protocol-version", version)
                .header("mcp-method", "tools/call")
                .header("mcp-name", name);
            if let Some(region) = region {
                request = request.header("mcp-param-region", region);
            }
            let request = request
                .body(http_body_util::Full::new(bytes::Bytes::from(
                    body.to_string(),
                )))
                .unwrap();
            let response = service.call(request).await.unwrap();
            let status = response.status().as_u16();
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            let text = String::from_utf8(bytes.to_vec()).unwrap();
            // The JSON reply, or the last `data:` of an event stream.
            let json = text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|line| !line.is_empty())
                .unwrap_or(&text)
                .to_string();
            (
                status,
                serde_json::from_str::<Value>(&json).unwrap_or(Value::String(text)),
            )
        };
        let modern = "2026-07-28";
        let (status, body) =
            post("admin-token", modern, "deploy", Some("=?base64?SGVsbG8=?=")).await;
        assert_eq!(
            (status, &body["result"]["content"][0]["text"]),
            (200, &json!("deployed")),
            "{body}"
        );
        for bad in [Some("=?base64?SGVsbG8?="), Some("Bye"), None] {
            let (status, body) = post("admin-token", modern, "deploy", bad).await;
            assert_eq!(status, 400, "{bad:?}: {body}");
            assert_eq!(body["error"]["code"], json!(-32020), "{bad:?}: {body}");
        }
        // The reader cannot see `deploy`: the same answer as for a tool that does not exist.
        let (_, unknown) = post("reader-token", modern, "nothing", Some("Hello")).await;
        for bad in [Some("=?base64?SGVsbG8?="), Some("Bye"), None, Some("Hello")] {
            let (status, hidden) = post("reader-token", modern, "deploy", bad).await;
            let (unknown_status, unknown) = post("reader-token", modern, "nothing", bad).await;
            assert_eq!(status, unknown_status, "{bad:?}");
            let message = |body: &Value| {
                body["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .replace("nothing", "deploy")
            };
            assert_eq!(
                hidden["error"]["code"], unknown["error"]["code"],
                "{bad:?}: {hidden}"
            );
            assert_eq!(hidden["error"]["code"], json!(-32602), "{bad:?}: {hidden}");
            assert_eq!(message(&hidden), message(&unknown), "{bad:?}");
        }
        assert_eq!(unknown["error"]["code"], json!(-32602), "{unknown}");
        // Before 2026-07-28 no header is checked.
        let (status, body) = post("admin-token", "2025-11-25", "deploy", Some("Bye")).await;
        assert_eq!(
            (status, &body["result"]["content"][0]["text"]),
            (200, &json!("deployed")),
            "{body}"
        );
    }
}
