//! [`Json`]: a value sent as structured JSON (a tool's `structuredContent`, a resource's
//! JSON text).

/// Structured output: a tool returning `Json<T>` sends `T` as `structuredContent` (plus a
/// text copy), and its `outputSchema` is `T`'s JSON schema.
///
/// ```
/// use mcp_toolbelt::output::IntoToolResult;
/// use mcp_toolbelt::Json;
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Ticket { id: u32 }
/// let result = Json(Ticket { id: 3 }).into_tool_result().unwrap();
/// assert_eq!(result.structured_content().unwrap()["id"], 3);
/// assert!(<Json<Ticket> as IntoToolResult>::output_schema().is_some());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);
