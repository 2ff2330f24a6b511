//! Typed elicitation: the form a tool asks the client's user to fill in, described by a
//! Rust type, and the user's answer as that type.
//!
//! [`ToolContext::elicit_as::<T>`](crate::ToolContext::elicit_as) sends
//! `elicitation/create` with a `requestedSchema` generated from `T` and returns an
//! [`Elicitation<T>`]. The protocol allows only a *flat* form: an object whose fields are
//! strings (`minLength`, `maxLength`, `format` one of `email`, `uri`, `date`, `date-time`),
//! numbers or integers (`minimum`, `maximum`), booleans, string enums (single choice), and
//! arrays of string enums (multiple choice, MCP 2025-11-25 and later).
//! [`requested_schema_for`] builds that schema and refuses any other shape, naming the
//! field and why; call it in a unit test to check a form type before any client sees it.
//!
//! In Rust terms: a struct of `String`, integers, floats, `bool`, unit-variant enums and
//! `Vec`/`HashSet` of such enums, each possibly in an `Option` (an `Option` field is not
//! required). Doc comments become the fields' descriptions; a variant's doc comment (or
//! `#[schemars(title = "…")]`) becomes its title in the form.
//!
//! ```
//! use mcp_toolbelt::elicitation::requested_schema_for;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "lowercase")]
//! enum Size { Small, Large }
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Order {
//!     /// How many
//!     count: u8,
//!     size: Size,
//!     note: Option<String>,
//! }
//!
//! let schema = requested_schema_for::<Order>().unwrap();
//! assert_eq!(schema["properties"]["size"], serde_json::json!({"type": "string", "enum": ["small", "large"]}));
//! assert_eq!(schema["properties"]["count"]["maximum"], 255);
//! assert_eq!(schema["required"], serde_json::json!(["count", "size"]));
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Nested { order: Order }
//! let refused = requested_schema_for::<Nested>().unwrap_err();
//! assert_eq!(refused.field(), Some("order"));
//! ```

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::output::error::ToolError;
use crate::poison::RwLockIgnoringPoison;
use crate::schema::{JsonObject, input_schema_for};

/// The user's answer to a typed elicitation: the form filled in, or why not.
///
/// ```
/// use mcp_toolbelt::elicitation::Elicitation;
/// let answer: Elicitation<u32> = Elicitation::Accepted(3);
/// assert_eq!(answer.accepted(), Some(3));
/// assert_eq!(Elicitation::<u32>::Declined.accepted(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user submitted the form (`action: "accept"`); the content as `T`.
    Accepted(T),
    /// The user explicitly refused (`action: "decline"`).
    Declined,
    /// The user dismissed the form without choosing (`action: "cancel"`).
    Cancelled,
}

impl<T> Elicitation<T> {
    /// The submitted value, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accepted(value) => Some(value),
            Elicitation::Declined | Elicitation::Cancelled => None,
        }
    }

    /// Read an `elicitation/create` result (`{action, content?}`) as `T`.
    ///
    /// # Errors
    ///
    /// An `upstream_error` [`ToolError`] when the action is not one of `accept`, `decline`,
    /// `cancel`, or the accepted content does not deserialize into `T` (the client sent
    /// content that does not match the requested schema).
    ///
    /// ```
    /// use mcp_toolbelt::elicitation::Elicitation;
    /// let answer = serde_json::json!({"action": "accept", "content": {"n": 2}});
    /// #[derive(Debug, PartialEq, serde::Deserialize)]
    /// struct N { n: u8 }
    /// assert_eq!(Elicitation::<N>::from_result(answer).unwrap(), Elicitation::Accepted(N { n: 2 }));
    /// let wrong = serde_json::json!({"action": "accept", "content": {"n": "two"}});
    /// assert!(Elicitation::<N>::from_result(wrong).unwrap_err().message().contains("does not match"));
    /// ```
    pub fn from_result(result: Value) -> Result<Elicitation<T>, ToolError>
    where
        T: DeserializeOwned,
    {
        let Value::Object(mut result) = result else {
            return Err(ToolError::upstream(format!(
                "the client's elicitation result is not an object: {result}"
            )));
        };
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = result
                    .remove("content")
                    .unwrap_or_else(|| Value::Object(Map::new()));
                serde_json::from_value(content)
                    .map(Elicitation::Accepted)
                    .map_err(|err| {
                        ToolError::upstream(format!(
                            "the client's elicitation answer does not match the requested form ({}): {err}",
                            std::any::type_name::<T>()
                        ))
                    })
            }
            Some("decline") => Ok(Elicitation::Declined),
            Some("cancel") => Ok(Elicitation::Cancelled),
            _ => Err(ToolError::upstream(format!(
                "the client's elicitation result has no valid action (accept, decline, cancel): {}",
                Value::Object(result)
            ))),
        }
    }
}

/// Why a type cannot be an elicitation form: the field (`None`: the type as a whole) and
/// the reason.
///
/// ```
/// let err = mcp_toolbelt::elicitation::requested_schema_for::<Vec<String>>().unwrap_err();
/// assert_eq!(err.field(), None);
/// assert!(err.to_string().contains("flat object"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormError {
    type_name: &'static str,
    field: Option<String>,
    reason: String,
}

impl FormError {
    /// The field that cannot be asked for, or `None` when the type as a whole is refused.
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// Why.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for FormError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(
                f,
                "{} cannot be an elicitation form: field `{field}` {}",
                self.type_name, self.reason
            ),
            None => write!(
                f,
                "{} cannot be an elicitation form: {}",
                self.type_name, self.reason
            ),
        }
    }
}

impl std::error::Error for FormError {}

/// The `requestedSchema` of an elicitation whose answer deserializes into `T`: `T`'s
/// JSON Schema (as for tool arguments), checked against what elicitation allows and
/// rewritten to its flat form (enums inlined, an `Option`'s `null` dropped, integer
/// formats such as `uint8` left out, variant docs turned into titles). Computed once per
/// type.
///
/// # Errors
///
/// A [`FormError`] naming the field when `T` is not a flat struct of strings, numbers,
/// integers, booleans, string enums and arrays of string enums (see the
/// [module docs](self)).
pub fn requested_schema_for<T: JsonSchema + 'static>() -> Result<Arc<JsonObject>, FormError> {
    type Cache = RwLock<HashMap<TypeId, Result<Arc<JsonObject>, FormError>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(known) = cache.read_ignoring_poison().get(&id) {
        return known.clone();
    }
    let made = flat_form(input_schema_for::<T>())
        .map(Arc::new)
        .map_err(|(field, reason)| FormError {
            type_name: std::any::type_name::<T>(),
            field,
            reason,
        });
    cache.write_ignoring_poison().insert(id, made.clone());
    made
}

/// A refusal: the field (`None`: the root) and why.
type Refusal = (Option<String>, String);

/// Schema keywords that only annotate and are left out of the form.
const DROPPED: [&str; 5] = [
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// The string formats elicitation allows.
const FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];

/// The flat form of a generated object schema, or why it has none.
fn flat_form(root: JsonObject) -> Result<JsonObject, Refusal> {
    let root_refusal = |reason: String| Err((None, reason));
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return root_refusal(
            "the requested schema must be a flat object (a struct with named fields)".into(),
        );
    }
    let mut form = JsonObject::new();
    form.insert("type".into(), "object".into());
    let mut properties = JsonObject::new();
    for (key, value) in root {
        match key.as_str() {
            "type" => {}
            "title" | "description" => {
                form.insert(key, value);
            }
            "required" => {
                form.insert(key, value);
            }
            "properties" => {
                let Value::Object(fields) = value else {
                    return root_refusal("its `properties` is not an object".into());
                };
                properties = fields;
            }
            "additionalProperties" => {}
            "$defs" => {
                return root_refusal(
                    "its schema keeps `$ref`s (a recursive type); a form must be flat".into(),
                );
            }
            other if DROPPED.contains(&other) => {}
            other => {
                return root_refusal(format!(
                    "its schema uses `{other}` (e.g. `#[serde(flatten)]` of an enum, or an untagged struct), which elicitation does not allow; a form is a flat object"
                ));
            }
        }
    }
    let mut flat = JsonObject::new();
    for (name, schema) in properties {
        let field = primitive(schema).map_err(|reason| (Some(name.clone()), reason))?;
        flat.insert(name, Value::Object(field));
    }
    form.insert("properties".into(), Value::Object(flat));
    Ok(form)
}

/// One field's schema as an elicitation primitive, or why it is none.
fn primitive(schema: Value) -> Result<JsonObject, String> {
    let Value::Object(mut schema) = schema else {
        return Err("accepts any value; a form field must be a string, number, integer, boolean or string enum".into());
    };
    unwrap_option(&mut schema);
    if schema.contains_key("$ref") {
        return Err("refers to its own type (a recursive type); a form must be flat".into());
    }
    if let Some(one_of) = schema.remove("oneOf").or_else(|| schema.remove("anyOf")) {
        let choices = titled_choices(&one_of)?;
        schema.insert("type".into(), "string".into());
        return finish(schema, Kind::Choice(choices));
    }
    let kind = match schema.get("type").and_then(Value::as_str) {
        Some("string") | None if schema.contains_key("enum") || schema.contains_key("const") => {
            Kind::Enum(enum_values(&mut schema)?)
        }
        Some("string") => Kind::String,
        Some("number" | "integer") => Kind::Number,
        Some("boolean") => Kind::Boolean,
        Some("array") => Kind::Array,
        Some("object") => {
            return Err("is a nested object; a form is flat: strings, numbers, integers, booleans and string enums only".into());
        }
        Some(other) => return Err(format!("has type `{other}`, which a form cannot ask for")),
        None => match schema.get("type") {
            Some(types) => {
                return Err(format!(
                    "may be any of the types {types}; a form field has one type"
                ));
            }
            None => return Err("has no type (it accepts any value); a form field must be a string, number, integer, boolean or string enum".into()),
        },
    };
    finish(schema, kind)
}

/// What a field is, once its `Option` is unwrapped.
enum Kind {
    String,
    Number,
    Boolean,
    /// A string enum without titles: its values.
    Enum(Vec<Value>),
    /// A string enum with titles: `{const, title}` objects.
    Choice(Vec<Value>),
    Array,
}

/// `Option<T>`'s schema as `T`'s: `"type": [t, "null"]` becomes `t`, an `anyOf`/`oneOf` of a
/// schema and `{"type": "null"}` becomes that schema (the outer description kept), and a
/// `null` default goes.
fn unwrap_option(schema: &mut JsonObject) {
    if let Some(Value::Array(types)) = schema.get("type") {
        let rest: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if rest.len() == 1 && rest.len() < types.len() {
            let only = rest[0].clone();
            schema.insert("type".into(), only);
        }
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = schema.get(keyword) else {
            continue;
        };
        let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
        if branches.len() == 2 && branches.iter().any(is_null) {
            let inner = branches.iter().find(|b| !is_null(b)).cloned();
            schema.remove(keyword);
            if let Some(Value::Object(inner)) = inner {
                for (key, value) in inner {
                    schema.entry(key).or_insert(value);
                }
            }
            break;
        }
    }
    if schema.get("default") == Some(&Value::Null) {
        schema.remove("default");
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

/// The values of a string enum (`enum`, or one `const`).
fn enum_values(schema: &mut JsonObject) -> Result<Vec<Value>, String> {
    let values = match (schema.remove("enum"), schema.remove("const")) {
        (Some(Value::Array(values)), None) => values,
        (None, Some(value)) => vec![value],
        _ => return Err("has an enum the form cannot show".into()),
    };
    if values.is_empty() || !values.iter().all(Value::is_string) {
        return Err(
            "is an enum of values that are not all strings; a form's choices are strings".into(),
        );
    }
    Ok(values)
}

/// The `{const, title}` choices of a `oneOf`/`anyOf` of string constants (schemars' form of
/// an enum whose variants have docs or titles).
fn titled_choices(branches: &Value) -> Result<Vec<Value>, String> {
    let refuse = || {
        Err("is a choice of schemas that are not all string constants (an enum with data, or an untagged enum); a form's choices are strings".to_string())
    };
    let Value::Array(branches) = branches else {
        return refuse();
    };
    let mut choices = Vec::new();
    for branch in branches {
        let Value::Object(branch) = branch else {
            return refuse();
        };
        if branch
            .get("type")
            .is_some_and(|t| t.as_str() != Some("string"))
        {
            return refuse();
        }
        let mut branch = branch.clone();
        let Ok(values) = enum_values(&mut branch) else {
            return refuse();
        };
        let title = branch
            .get("title")
            .or_else(|| branch.get("description"))
            .and_then(Value::as_str)
            .map(|t| t.trim().to_string());
        for value in values {
            let title = match (&title, value.as_str()) {
                (Some(title), _) if !title.is_empty() => title.clone(),
                (_, Some(text)) => text.to_string(),
                _ => return refuse(),
            };
            choices.push(serde_json::json!({ "const": value, "title": title }));
        }
    }
    if choices.is_empty() {
        return refuse();
    }
    Ok(choices)
}

/// The field's form schema: its kind's keywords, the common ones (`title`, `description`,
/// `default`), and a refusal for any other keyword that would change what is accepted.
fn finish(mut schema: JsonObject, kind: Kind) -> Result<JsonObject, String> {
    let mut out = JsonObject::new();
    let allowed: &[&str] = match &kind {
        Kind::String => &["minLength", "maxLength", "format"],
        Kind::Number => &["minimum", "maximum"],
        Kind::Boolean | Kind::Enum(_) | Kind::Choice(_) => &[],
        Kind::Array => &["minItems", "maxItems", "items"],
    };
    let type_name = schema.remove("type");
    for (key, value) in schema {
        match key.as_str() {
            "title" | "description" | "default" => {
                out.insert(key, value);
            }
            "format" if matches!(kind, Kind::Number) => {} // int32, uint8, double: the range says it
            "format" if !value.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                return Err(format!(
                    "has the string format {value}; a form allows only {}",
                    FORMATS.join(", ")
                ));
            }
            "uniqueItems" if matches!(kind, Kind::Array) => {} // a set: the answer deserializes into one
            "items" if matches!(kind, Kind::Array) => {
                out.insert(key, multi_select_items(value)?);
            }
            other if allowed.contains(&other) => {
                out.insert(key, value);
            }
            other if DROPPED.contains(&other) => {}
            other => {
                return Err(format!(
                    "uses the schema keyword `{other}`, which a form field cannot carry"
                ));
            }
        }
    }
    match kind {
        Kind::Enum(values) => {
            out.insert("type".into(), "string".into());
            out.insert("enum".into(), Value::Array(values));
        }
        Kind::Choice(choices) => {
            out.insert("type".into(), "string".into());
            out.insert("oneOf".into(), Value::Array(choices));
        }
        Kind::Array if !out.contains_key("items") => {
            return Err(
                "is an array without items; a form's arrays are multiple choices of string enums"
                    .into(),
            );
        }
        _ => {
            out.insert("type".into(), type_name.unwrap_or(Value::Null));
        }
    }
    Ok(out)
}

/// The `items` of a multiple choice: `{type: string, enum}` or `{anyOf: [{const, title}]}`.
fn multi_select_items(items: Value) -> Result<Value, String> {
    let not_enum = || {
        "is an array of something other than a string enum; a form's arrays are multiple choices (a `Vec` or set of a unit-variant enum)".to_string()
    };
    let Value::Object(mut items) = items else {
        return Err(not_enum());
    };
    if let Some(one_of) = items.remove("oneOf").or_else(|| items.remove("anyOf")) {
        let choices = titled_choices(&one_of).map_err(|_| not_enum())?;
        return Ok(serde_json::json!({ "anyOf": choices }));
    }
    if items.contains_key("enum") || items.contains_key("const") {
        if items.get("type").is_some_and(|t| t != "string") {
            return Err(not_enum());
        }
        let values = enum_values(&mut items).map_err(|_| not_enum())?;
        return Ok(serde_json::json!({ "type": "string", "enum": values }));
    }
    Err(not_enum())
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Plain {
        Red,
        Green,
    }

    #[derive(Debug, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
    enum Titled {
        /// Ship it now
        Now,
        #[schemars(title = "Tomorrow morning")]
        Later,
    }

    /// A form with every shape elicitation allows.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)] // read through the schema only
    struct Every {
        /// Your e-mail
        #[schemars(email, length(min = 3, max = 60))]
        email: String,
        age: u8,
        ratio: f64,
        subscribe: bool,
        colour: Plain,
        when: Titled,
        nickname: Option<String>,
        maybe_colour: Option<Plain>,
        maybe_when: Option<Titled>,
        colours: Vec<Plain>,
        whens: HashSet<Titled>,
        #[serde(default = "ten")]
        count: i32,
    }

    fn ten() -> i32 {
        10
    }

    #[test]
    fn a_flat_struct_becomes_the_flat_form() {
        let form = requested_schema_for::<Every>().unwrap();
        let fields = &form["properties"];
        assert_eq!(
            fields["email"],
            json!({"type": "string", "format": "email", "minLength": 3, "maxLength": 60, "description": "Your e-mail"})
        );
        assert_eq!(
            fields["age"],
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        assert_eq!(fields["ratio"], json!({"type": "number"}));
        assert_eq!(fields["subscribe"], json!({"type": "boolean"}));
        assert_eq!(
            fields["colour"],
            json!({"type": "string", "enum": ["red", "green"]})
        );
        assert_eq!(
            fields["when"],
            json!({"type": "string", "oneOf": [
                {"const": "Now", "title": "Ship it now"},
                {"const": "Later", "title": "Tomorrow morning"},
            ]})
        );
        assert_eq!(fields["maybe_when"], fields["when"]);
        assert_eq!(fields["nickname"], json!({"type": "string"}));
        assert_eq!(fields["maybe_colour"], fields["colour"]);
        assert_eq!(
            fields["colours"],
            json!({"type": "array", "items": {"type": "string", "enum": ["red", "green"]}})
        );
        assert_eq!(
            fields["whens"],
            json!({"type": "array", "items": {"anyOf": [
                {"const": "Now", "title": "Ship it now"},
                {"const": "Later", "title": "Tomorrow morning"},
            ]}})
        );
        assert_eq!(fields["count"], json!({"type": "integer", "default": 10}));
        // Option and defaulted fields are not required; the flat form keeps nothing else.
        assert_eq!(
            form["required"],
            json!([
                "email",
                "age",
                "ratio",
                "subscribe",
                "colour",
                "when",
                "colours",
                "whens"
            ])
        );
        assert!(!crate::schema::has_refs(&form), "{form:?}");
        assert_eq!(
            form["description"],
            "A form with every shape elicitation allows."
        );
        let keys: Vec<&String> = form.keys().collect();
        assert_eq!(keys, ["description", "properties", "required", "type"]);
    }

    #[test]
    fn an_option_field_keeps_its_description() {
        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Doc {
            /// Pick one
            colour: Option<Plain>,
        }
        let form = requested_schema_for::<Doc>().unwrap();
        assert_eq!(
            form["properties"]["colour"],
            json!({"type": "string", "enum": ["red", "green"], "description": "Pick one"})
        );
    }

    /// `T` is refused, naming `field` (`None`: the type as a whole), for a reason that
    /// contains `why`.
    fn assert_refused<T: JsonSchema + 'static>(field: Option<&str>, why: &str) {
        let err = requested_schema_for::<T>().unwrap_err();
        assert!(
            err.to_string().starts_with(std::any::type_name::<T>()),
            "{err}"
        );
        assert_eq!(err.field(), field, "{err}");
        assert!(err.reason().contains(why), "{err}");
    }

    #[test]
    fn every_other_shape_is_refused_naming_the_field() {
        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Inner {
            a: u8,
        }
        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Nested {
            ok: bool,
            inner: Inner,
        }
        assert_refused::<Nested>(Some("inner"), "nested object");

        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Map {
            labels: BTreeMap<String, String>,
        }
        assert_refused::<Map>(Some("labels"), "nested object");

        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Strings {
            tags: Vec<String>,
        }
        assert_refused::<Strings>(Some("tags"), "array of something other than a string enum");

        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        enum WithData {
            Text(String),
            Number(u32),
        }
        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Tagged {
            value: WithData,
        }
        assert_refused::<Tagged>(Some("value"), "not all string constants");

        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Anything {
            extra: Value,
        }
        assert_refused::<Anything>(Some("extra"), "any value");

        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Patterned {
            #[schemars(regex(pattern = r"^[a-z]+$"))]
            slug: String,
        }
        assert_refused::<Patterned>(Some("slug"), "`pattern`");

        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Formatted {
            #[schemars(extend("format" = "uuid"))]
            id: String,
        }
        assert_refused::<Formatted>(Some("id"), "\"uuid\"");

        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Node {
            name: String,
            next: Option<Box<Node>>,
        }
        assert_refused::<Node>(Some("next"), "recursive");

        assert_refused::<String>(None, "flat object");

        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        #[serde(untagged)]
        enum Either {
            A { a: u8 },
            B { b: bool },
        }
        assert_refused::<Either>(None, "flat object");
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Name {
        name: String,
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Optional {
        note: Option<String>,
    }

    #[test]
    fn the_answer_is_read_as_the_type() {
        let accepted = json!({"action": "accept", "content": {"name": "Ada"}});
        assert_eq!(
            Elicitation::<Name>::from_result(accepted).unwrap(),
            Elicitation::Accepted(Name { name: "Ada".into() })
        );
        assert_eq!(
            Elicitation::<Name>::from_result(json!({"action": "decline"})).unwrap(),
            Elicitation::Declined
        );
        assert_eq!(
            Elicitation::<Name>::from_result(json!({"action": "cancel"})).unwrap(),
            Elicitation::Cancelled
        );
        // Accepting a form of optional fields without content is an empty answer.
        assert_eq!(
            Elicitation::<Optional>::from_result(json!({"action": "accept"})).unwrap(),
            Elicitation::Accepted(Optional { note: None })
        );
    }

    #[test]
    fn an_answer_that_does_not_fit_is_an_upstream_error() {
        for (answer, expected) in [
            (
                json!({"action": "accept", "content": {"name": 7}}),
                "does not match the requested form",
            ),
            (json!({"action": "accept"}), "missing field `name`"),
            (json!({"action": "maybe"}), "no valid action"),
            (json!("accept"), "not an object"),
        ] {
            let err = Elicitation::<Name>::from_result(answer).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::Upstream);
            assert!(err.message().contains(expected), "{}", err.message());
        }
    }
}
