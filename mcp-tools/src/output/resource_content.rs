//! What a resource fn returns: [`ResourceContent`] pieces, through [`IntoResourceContents`].

use base64::Engine;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::output::error::ToolError;
use crate::output::json::Json;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    Text(String),
    Blob(Vec<u8>),
}

/// One piece of a resource's contents: text or bytes, with an optional MIME type and URI.
///
/// The MIME type defaults to the resource's `mime_type`, else to `text/plain` (text),
/// `application/json` ([`ResourceContent::json`]) or `application/octet-stream` (bytes);
/// the URI defaults to the one that was read.
///
/// ```
/// use mcp_toolbelt::output::ResourceContent;
/// let page = ResourceContent::text("= Welcome =").with_mime_type("text/x-trac-wiki");
/// let image = ResourceContent::blob(vec![0x89, b'P', b'N', b'G']).with_mime_type("image/png");
/// let data = ResourceContent::json(&serde_json::json!({"id": 1})).unwrap();
/// assert_eq!(data.as_text(), Some("{\"id\":1}"));
/// assert_eq!(image.as_bytes(), Some(&[0x89, b'P', b'N', b'G'][..]));
/// assert_eq!(page.mime_type(), Some("text/x-trac-wiki"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContent {
    uri: Option<String>,
    mime_type: Option<String>,
    fallback_mime: &'static str,
    body: Body,
}

impl ResourceContent {
    /// Text contents.
    pub fn text(text: impl Into<String>) -> ResourceContent {
        ResourceContent {
            uri: None,
            mime_type: None,
            fallback_mime: "text/plain",
            body: Body::Text(text.into()),
        }
    }

    /// Binary contents (sent base64-encoded as a `blob`).
    pub fn blob(bytes: impl Into<Vec<u8>>) -> ResourceContent {
        ResourceContent {
            uri: None,
            mime_type: None,
            fallback_mime: "application/octet-stream",
            body: Body::Blob(bytes.into()),
        }
    }

    /// `value` as compact JSON text (`application/json` unless the resource says otherwise).
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<ResourceContent, ToolError> {
        let text = serde_json::to_string(value)
            .map_err(|e| ToolError::internal(format!("cannot serialize resource contents: {e}")))?;
        Ok(ResourceContent {
            fallback_mime: "application/json",
            ..ResourceContent::text(text)
        })
    }

    /// Set the MIME type of this piece.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Set the URI of this piece (for a resource made of several sub-resources).
    pub fn with_uri(mut self, uri: impl Into<String>) -> Self {
        self.uri = Some(uri.into());
        self
    }

    /// The text, for text contents.
    pub fn as_text(&self) -> Option<&str> {
        match &self.body {
            Body::Text(text) => Some(text),
            Body::Blob(_) => None,
        }
    }

    /// The bytes, for binary contents.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match &self.body {
            Body::Blob(bytes) => Some(bytes),
            Body::Text(_) => None,
        }
    }

    /// The MIME type set on this piece, if any.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// The URI set on this piece, if any (always set on contents a registry read).
    pub fn uri(&self) -> Option<&str> {
        self.uri.as_deref()
    }

    /// This piece as read from `uri`: its URI and MIME type filled in (the resource's
    /// `mime_type`, else the kind's default).
    pub(crate) fn resolved(mut self, uri: &str, mime_type: Option<&str>) -> ResourceContent {
        if self.uri.is_none() {
            self.uri = Some(uri.to_string());
        }
        if self.mime_type.is_none() {
            self.mime_type = Some(mime_type.unwrap_or(self.fallback_mime).to_string());
        }
        self
    }

    /// This piece with its MIME type defaulted by kind (`text/plain`, `application/json`,
    /// `application/octet-stream`) when none was set.
    pub(crate) fn with_default_mime(self) -> ResourceContent {
        let uri = self.uri.clone().unwrap_or_default();
        self.resolved(&uri, None)
    }

    /// The bytes of binary contents as base64 (how the protocol carries them).
    pub(crate) fn blob_base64(&self) -> Option<String> {
        self.as_bytes()
            .map(|bytes| base64::engine::general_purpose::STANDARD.encode(bytes))
    }
}

/// Contents serialize to the protocol's form: `uri`, `mimeType`, and `text` or a base64
/// `blob`.
///
/// ```
/// let piece = mcp_toolbelt::output::ResourceContent::blob(vec![1, 2, 3]).with_uri("demo://bytes");
/// let wire = serde_json::to_value(&piece).unwrap();
/// assert_eq!(wire["blob"], "AQID");
/// assert_eq!(wire["uri"], "demo://bytes");
/// ```
impl Serialize for ResourceContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("uri", self.uri.as_deref().unwrap_or_default())?;
        if let Some(mime_type) = &self.mime_type {
            map.serialize_entry("mimeType", mime_type)?;
        }
        match &self.body {
            Body::Text(text) => map.serialize_entry("text", text)?,
            Body::Blob(_) => map.serialize_entry("blob", &self.blob_base64())?,
        }
        map.end()
    }
}

/// Conversion of a resource fn's return value into its contents.
///
/// Implemented for `String` and `&'static str` (text), `Vec<u8>` (bytes), [`Json<T>`]
/// (compact JSON text), [`ResourceContent`], `Vec<ResourceContent>` and `Result<T, E>` where
/// `T: IntoResourceContents` and `E: Into<ToolError>`.
///
/// ```
/// use mcp_toolbelt::output::IntoResourceContents;
/// use mcp_toolbelt::Json;
/// let contents = Json(serde_json::json!({"ok": true})).into_resource_contents().unwrap();
/// assert_eq!(contents[0].as_text(), Some("{\"ok\":true}"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an #[mcp_resource] fn",
    label = "not resource contents",
    note = "return String, &'static str, Vec<u8>, Json<T>, ResourceContent, Vec<ResourceContent>, or Result<T, E> of these"
)]
pub trait IntoResourceContents {
    /// Convert; an `Err` becomes a JSON-RPC error answer to `resources/read`.
    fn into_resource_contents(self) -> Result<Vec<ResourceContent>, ToolError>;
}

impl IntoResourceContents for ResourceContent {
    fn into_resource_contents(self) -> Result<Vec<ResourceContent>, ToolError> {
        Ok(vec![self])
    }
}

impl IntoResourceContents for Vec<ResourceContent> {
    fn into_resource_contents(self) -> Result<Vec<ResourceContent>, ToolError> {
        Ok(self)
    }
}

impl IntoResourceContents for String {
    fn into_resource_contents(self) -> Result<Vec<ResourceContent>, ToolError> {
        Ok(vec![ResourceContent::text(self)])
    }
}

impl IntoResourceContents for &'static str {
    fn into_resource_contents(self) -> Result<Vec<ResourceContent>, ToolError> {
        Ok(vec![ResourceContent::text(self)])
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_resource_contents(self) -> Result<Vec<ResourceContent>, ToolError> {
        Ok(vec![ResourceContent::blob(self)])
    }
}

impl<T: Serialize> IntoResourceContents for Json<T> {
    fn into_resource_contents(self) -> Result<Vec<ResourceContent>, ToolError> {
        Ok(vec![ResourceContent::json(&self.0)?])
    }
}

impl<T: IntoResourceContents, E: Into<ToolError>> IntoResourceContents for Result<T, E> {
    fn into_resource_contents(self) -> Result<Vec<ResourceContent>, ToolError> {
        self.map_err(Into::into)?.into_resource_contents()
    }
}
