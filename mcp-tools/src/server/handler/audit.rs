//! The handler's side of the audit log (feature `audit`): what a call's line needs from
//! the request, taken before the call runs, and written with the outcome once it is
//! answered. Only calls that reach a tool, a resource or a prompt the caller can see get
//! a line: a call of a hidden or unknown one writes nothing, so no name another caller
//! could see, and this one cannot, is ever written.

use std::time::Instant;

use rmcp::ErrorData as McpError;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use super::McpHandler;
use crate::definition::ResourceAddress;
use crate::definition::ToolDef;
use crate::output::error::ErrorKind;
use crate::server::AuditLog;
use crate::server::audit::{
    ArgumentsDigest, Entry, Outcome, kept_arguments, object_digest, value_digest,
};
use crate::server::copied_text::{CopiedRequestId, CopiedText};
use crate::server::protocol::{http_caller, shared_version};
use crate::server::telemetry::session_id;

/// A call being audited (the server keeps an audit log): what its line says of the call
/// that the request does not (the caller, ids and protocol version are read from the
/// request when the line is written).
pub(super) struct Audited<'a> {
    log: &'a AuditLog,
    method: &'static str,
    target: CopiedText,
    digest: ArgumentsDigest,
    kept: Option<Map<String, Value>>,
}

impl McpHandler {
    /// Write `audited`'s line: the call `context` started at `started` (its
    /// observation's clock) ended with `answer` (`tool_error`: the kind of a tool's
    /// `isError` result).
    pub(super) fn audit_finish<T>(
        &self,
        audited: Audited<'_>,
        context: &RequestContext<RoleServer>,
        started: Instant,
        answer: &Result<T, McpError>,
        tool_error: Option<ErrorKind>,
    ) {
        let outcome = match (answer, tool_error) {
            (Ok(_), None) => Outcome::Ok,
            (Ok(_), Some(kind)) => Outcome::ToolError(kind),
            (Err(error), _) => Outcome::ProtocolError(
                error.code.0,
                error
                    .data
                    .as_ref()
                    .and_then(|data| data.get("kind"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
            ),
        };
        let caller = self
            .caller_of(http_caller(context))
            .unwrap_or(&crate::caller::LOCAL);
        audited.log.record(Entry {
            method: audited.method,
            target: audited.target,
            subject: caller.subject().map(CopiedText::new),
            client_id: caller.client_id().map(CopiedText::new),
            request_id: CopiedRequestId::new((&context.id).into()),
            session: session_id(context).map(CopiedText::new),
            protocol_version: context.protocol_version().map(shared_version),
            outcome,
            duration: started.elapsed(),
            digest: audited.digest,
            kept: audited.kept,
        });
    }

    /// A `tools/call` of `def`, the tool as the caller's view found it, to audit: `None`
    /// without an audit log, or when the caller cannot see the tool (`def` is `None`: it is
    /// answered as unknown, with no line).
    pub(super) fn audit_tool(
        &self,
        def: Option<&ToolDef>,
        arguments: Option<&Map<String, Value>>,
    ) -> Option<Audited<'_>> {
        let log = self.shared.audit.as_ref()?;
        let def = def?;
        Some(Audited {
            log,
            method: "tools/call",
            target: CopiedText::new(def.name()),
            digest: object_digest(arguments),
            kept: arguments.and_then(|object| kept_arguments(object, def.audit_kept())),
        })
    }

    /// A `resources/read` of `uri` to audit (`None`: no audit log, or a resource the caller
    /// cannot read). A fixed resource's URI is the server's own and is written as the
    /// target; a template's variables are the client's arguments, so a templated URI is
    /// written as its template, the URI itself only in the digest.
    pub(super) fn audit_resource(
        &self,
        context: &RequestContext<RoleServer>,
        uri: &str,
    ) -> Option<Audited<'_>> {
        let log = self.shared.audit.as_ref()?;
        let def = self.caller_view(context).0.resource_for(uri)?;
        let target = match def.address() {
            ResourceAddress::Fixed(fixed) => CopiedText::new(fixed.as_str()),
            ResourceAddress::Template(template) => CopiedText::new(template.as_str()),
        };
        Some(Audited {
            log,
            method: "resources/read",
            target,
            digest: value_digest(&Value::String(uri.to_string())),
            kept: None,
        })
    }

    /// A `prompts/get` of `name` to audit (`None`: no audit log, or a prompt the caller
    /// cannot get).
    pub(super) fn audit_prompt(
        &self,
        context: &RequestContext<RoleServer>,
        name: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Option<Audited<'_>> {
        let log = self.shared.audit.as_ref()?;
        let def = self.caller_view(context).0.prompt_def(name)?;
        Some(Audited {
            log,
            method: "prompts/get",
            target: CopiedText::new(def.name()),
            digest: object_digest(arguments),
            kept: None,
        })
    }
}
