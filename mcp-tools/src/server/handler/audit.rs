//! The handler's side of the audit log (feature `audit`): what a call's line needs from
//! the request, taken before the call runs, and written with the outcome once it is
//! answered. Only calls that reach a tool, a resource or a prompt the caller can see get
//! a line: a call of a hidden or unknown one writes nothing, so no name another caller
//! could see, and this one cannot, is ever written.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use rmcp::ErrorData as McpError;
use rmcp::model::NumberOrString;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use super::McpHandler;
use crate::Caller;
use crate::definition::ResourceAddress;
use crate::definition::ToolDef;
use crate::output::error::ErrorKind;
use crate::server::AuditLog;
use crate::server::audit::{
    ArgumentsDigest, Entry, Outcome, kept_arguments, object_digest, value_digest,
};
use crate::server::protocol::known_version;
use crate::server::telemetry::session_id;

/// A call being audited: what its line says besides the outcome.
pub(super) struct Audited {
    log: AuditLog,
    method: &'static str,
    target: Arc<str>,
    digest: ArgumentsDigest,
    kept: Option<Map<String, Value>>,
    caller: Caller,
    request_id: NumberOrString,
    session: Option<String>,
    protocol_version: Option<Cow<'static, str>>,
    started: Instant,
}

impl Audited {
    /// Write the line: the call ended with `answer` (`tool_error`: the kind of a tool's
    /// `isError` result).
    pub(super) fn finish<T>(self, answer: &Result<T, McpError>, tool_error: Option<ErrorKind>) {
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
        self.log.record(&Entry {
            method: self.method,
            target: &self.target,
            caller: &self.caller,
            request_id: &self.request_id,
            session: self.session.as_deref(),
            protocol_version: self.protocol_version.as_deref(),
            outcome,
            duration: self.started.elapsed(),
            digest: &self.digest,
            kept: self.kept,
        });
    }
}

impl McpHandler {
    /// The start of an audited call of `target`, when the server keeps an audit log.
    fn audit_start(
        &self,
        context: &RequestContext<RoleServer>,
        method: &'static str,
        target: Arc<str>,
        digest: ArgumentsDigest,
        kept: Option<Map<String, Value>>,
    ) -> Option<Audited> {
        let log = self.shared.audit.clone()?;
        Some(Audited {
            log,
            method,
            target,
            digest,
            kept,
            caller: self.caller(context),
            request_id: context.id.clone(),
            session: session_id(context).map(str::to_string),
            protocol_version: context.protocol_version().map(|version| {
                known_version(&version)
                    .map_or_else(|| Cow::Owned(version.to_string()), Cow::Borrowed)
            }),
            started: Instant::now(),
        })
    }

    /// A `tools/call` of `def`, the tool as the caller's view found it, to audit: `None`
    /// without an audit log, or when the caller cannot see the tool (`def` is `None`: it is
    /// answered as unknown, with no line). `name` is the tool's name, shared.
    pub(super) fn audit_tool(
        &self,
        context: &RequestContext<RoleServer>,
        def: Option<&ToolDef>,
        name: &Arc<str>,
        arguments: Option<&Map<String, Value>>,
    ) -> Option<Audited> {
        self.shared.audit.as_ref()?;
        let def = def?;
        let kept = arguments.and_then(|object| kept_arguments(object, def.audit_kept()));
        self.audit_start(
            context,
            "tools/call",
            name.clone(),
            object_digest(arguments),
            kept,
        )
    }

    /// A `resources/read` of `uri` to audit (`None`: no audit log, or a resource the caller
    /// cannot read). A fixed resource's URI is the server's own and is written as the
    /// target; a template's variables are the client's arguments, so a templated URI is
    /// written as its template, the URI itself only in the digest.
    pub(super) fn audit_resource(
        &self,
        context: &RequestContext<RoleServer>,
        uri: &str,
    ) -> Option<Audited> {
        self.shared.audit.as_ref()?;
        let def = self.caller_view(context).0.resource_for(uri)?;
        let target = match def.address() {
            ResourceAddress::Fixed(fixed) => Arc::from(fixed.as_str()),
            ResourceAddress::Template(template) => Arc::from(template.as_str()),
        };
        let digest = value_digest(&Value::String(uri.to_string()));
        self.audit_start(context, "resources/read", target, digest, None)
    }

    /// A `prompts/get` of `name` to audit (`None`: no audit log, or a prompt the caller
    /// cannot get).
    pub(super) fn audit_prompt(
        &self,
        context: &RequestContext<RoleServer>,
        name: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Option<Audited> {
        self.shared.audit.as_ref()?;
        let def = self.caller_view(context).0.prompt_def(name)?;
        self.audit_start(
            context,
            "prompts/get",
            Arc::from(def.name()),
            object_digest(arguments),
            None,
        )
    }
}
