//! [`ContentBlock`]: one piece of what a tool returns or a prompt message carries — text,
//! an image, audio, an embedded resource or a link to one.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::output::resource_content::ResourceContent;

/// One block of a tool result or prompt message.
///
/// Image and audio data are base64 text, as the protocol carries them. The block
/// serializes to its MCP wire form.
///
/// ```
/// use mcp_toolbelt::ContentBlock;
/// let text = ContentBlock::text("hello");
/// assert_eq!(text.as_text(), Some("hello"));
/// let image = ContentBlock::image("aGVsbG8=", "image/png");
/// assert_eq!(image.as_text(), None);
/// assert_eq!(serde_json::to_value(&image).unwrap()["mimeType"], "image/png");
/// let embedded = ContentBlock::embedded_text("file:///a.txt", "inside");
/// assert_eq!(serde_json::to_value(&embedded).unwrap()["resource"]["text"], "inside");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentBlock {
    pub(crate) body: Content,
}

/// The kinds of content block (crate-internal so new kinds and fields stay additive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Content {
    Text(String),
    Image { data: String, mime_type: String },
    Audio { data: String, mime_type: String },
    Resource(ResourceContent),
    ResourceLink(ResourceLink),
}

/// A link to a resource, as a [`ContentBlock::resource_link`] carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceLink {
    pub(crate) uri: String,
    pub(crate) name: String,
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock {
            body: Content::Text(text.into()),
        }
    }

    /// An image block from base64 data.
    pub fn image(base64_data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
        ContentBlock {
            body: Content::Image {
                data: base64_data.into(),
                mime_type: mime_type.into(),
            },
        }
    }

    /// An audio block from base64 data.
    pub fn audio(base64_data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
        ContentBlock {
            body: Content::Audio {
                data: base64_data.into(),
                mime_type: mime_type.into(),
            },
        }
    }

    /// An embedded resource; give `contents` a URI with [`ResourceContent::with_uri`].
    ///
    /// ```
    /// use mcp_toolbelt::output::ResourceContent;
    /// use mcp_toolbelt::ContentBlock;
    /// let block = ContentBlock::resource(
    ///     ResourceContent::text("body").with_uri("memo://1").with_mime_type("text/markdown"),
    /// );
    /// assert_eq!(serde_json::to_value(&block).unwrap()["resource"]["uri"], "memo://1");
    /// ```
    pub fn resource(contents: ResourceContent) -> ContentBlock {
        ContentBlock {
            body: Content::Resource(contents.with_default_mime()),
        }
    }

    /// An embedded text resource at `uri`.
    pub fn embedded_text(uri: impl Into<String>, text: impl Into<String>) -> ContentBlock {
        ContentBlock::resource(ResourceContent::text(text).with_uri(uri))
    }

    /// A link to the resource `uri` called `name` (the client may read it later).
    ///
    /// ```
    /// let link = mcp_toolbelt::ContentBlock::resource_link("memo://1", "note 1");
    /// assert_eq!(serde_json::to_value(&link).unwrap()["type"], "resource_link");
    /// ```
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> ContentBlock {
        ContentBlock {
            body: Content::ResourceLink(ResourceLink {
                uri: uri.into(),
                name: name.into(),
            }),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match &self.body {
            Content::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The embedded resource of a resource block.
    pub fn as_resource(&self) -> Option<&ResourceContent> {
        match &self.body {
            Content::Resource(contents) => Some(contents),
            _ => None,
        }
    }

    /// The MIME type of an image, audio or embedded resource block, when it has one.
    pub fn mime_type(&self) -> Option<&str> {
        match &self.body {
            Content::Image { mime_type, .. } | Content::Audio { mime_type, .. } => Some(mime_type),
            Content::Resource(contents) => contents.mime_type(),
            Content::Text(_) | Content::ResourceLink(_) => None,
        }
    }

    /// Mutable text of a text block (middleware such as the size limit trims it).
    pub(crate) fn text_mut(&mut self) -> Option<&mut String> {
        match &mut self.body {
            Content::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match &self.body {
            Content::Text(text) => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                let kind = if matches!(self.body, Content::Image { .. }) {
                    "image"
                } else {
                    "audio"
                };
                map.serialize_entry("type", kind)?;
                map.serialize_entry("data", data)?;
                map.serialize_entry("mimeType", mime_type)?;
            }
            Content::Resource(contents) => {
                map.serialize_entry("type", "resource")?;
                map.serialize_entry("resource", contents)?;
            }
            Content::ResourceLink(link) => {
                map.serialize_entry("type", "resource_link")?;
                map.serialize_entry("uri", &link.uri)?;
                map.serialize_entry("name", &link.name)?;
            }
        }
        map.end()
    }
}
