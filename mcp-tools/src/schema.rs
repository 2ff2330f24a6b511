//! JSON schemas that clients can read: generated with schemars (JSON Schema 2020-12),
//! subschemas inlined (many clients reject `$ref`), no `$schema` or root `title` noise.

pub mod provider;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use crate::poison::RwLockIgnoringPoison;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// A JSON object: tool arguments, schemas, structured content (the same type as
/// `serde_json::Map<String, Value>`).
pub type JsonObject = serde_json::Map<String, Value>;

/// The settings every tool schema is generated with.
fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    })
}

/// The schema of `T` as a client-ready object. Only the schemars call depends on `T`; the
/// rest is [`client_ready`], compiled once rather than once per tool.
fn generate<T: JsonSchema + ?Sized>(settings: SchemaSettings) -> JsonObject {
    client_ready(settings.into_generator().into_root_schema_for::<T>())
}

/// A root schema as an object without `$schema` or a root `title`.
fn client_ready(schema: schemars::Schema) -> JsonObject {
    let mut object = match schema.to_value() {
        Value::Object(object) => object,
        Value::Bool(true) => JsonObject::new(),
        other => {
            let mut object = JsonObject::new();
            object.insert("not".into(), Value::Bool(other == Value::Bool(false)));
            object
        }
    };
    object.remove("$schema");
    object.remove("title");
    object
}

/// The input schema of an arguments type (what `#[mcp_tool]` uses for its hidden args
/// struct, and for an `#[args]` parameter).
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args { /// How many
///     count: u32, label: Option<String> }
/// let schema = mcp_toolbelt::schema::input_schema_for::<Args>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["count"]));
/// assert!(!schema.contains_key("$schema") && !schema.contains_key("title"));
/// ```
pub fn input_schema_for<T: JsonSchema + ?Sized>() -> JsonObject {
    generate::<T>(settings().for_deserialize())
}

/// The output schema of a structured result type. The protocol wants an object: a type
/// whose schema is not an object is wrapped as `{"result": …}` (and so is its value, see
/// [`wraps_output`]).
///
/// ```
/// let schema = mcp_toolbelt::schema::output_schema_for::<Vec<u32>>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["result"]));
/// ```
pub fn output_schema_for<T: JsonSchema + ?Sized>() -> JsonObject {
    wrapped_output(generate::<T>(settings().for_serialize()))
}

/// An output schema as the protocol wants it: an object, else wrapped as `{"result": …}`.
fn wrapped_output(schema: JsonObject) -> JsonObject {
    if is_object_schema(&schema) {
        return schema;
    }
    let mut wrapper = JsonObject::new();
    wrapper.insert("type".into(), "object".into());
    let mut properties = JsonObject::new();
    properties.insert("result".into(), Value::Object(schema));
    wrapper.insert("properties".into(), Value::Object(properties));
    wrapper.insert("required".into(), serde_json::json!(["result"]));
    wrapper
}

/// True when a root schema says `"type": "object"`.
pub fn is_object_schema(schema: &JsonObject) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// True when values of `T` are sent wrapped as `{"result": value}` (its schema is not an
/// object). Computed once per type.
///
/// ```
/// assert!(mcp_toolbelt::schema::wraps_output::<String>());
/// ```
pub fn wraps_output<T: JsonSchema + ?Sized + 'static>() -> bool {
    wraps_output_of(TypeId::of::<T>(), || {
        generate::<T>(settings().for_serialize())
    })
}

/// [`wraps_output`] for the type `id`, whose output schema `schema` makes when not cached
/// (the cache lookup is compiled once, not once per output type).
fn wraps_output_of(id: TypeId, schema: fn() -> JsonObject) -> bool {
    static CACHE: OnceLock<RwLock<HashMap<TypeId, bool>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(wraps) = cache.read_ignoring_poison().get(&id) {
        return *wraps;
    }
    let wraps = !is_object_schema(&schema());
    cache.write_ignoring_poison().insert(id, wraps);
    wraps
}

/// True when a schema still holds `$ref`s (only recursive types keep them); clients such as
/// Copilot CLI or Cursor may reject it.
pub fn has_refs(schema: &JsonObject) -> bool {
    fn walk(value: &Value) -> bool {
        match value {
            Value::Object(map) => map.contains_key("$ref") || map.values().any(walk),
            Value::Array(items) => items.iter().any(walk),
            _ => false,
        }
    }
    schema.contains_key("$defs") || schema.values().any(walk)
}
