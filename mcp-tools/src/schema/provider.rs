//! Tool input schemas as model providers accept them. An MCP client hands a tool's
//! `inputSchema` to its model's API, and each API accepts its own part of JSON Schema:
//! OpenAI's strict function calling wants every object closed and every property
//! required, Gemini takes a subset of the OpenAPI 3.0 schema object (`nullable: true`,
//! not `"type": ["T", "null"]`), Anthropic takes JSON Schema as it is. [`adapt`] finds
//! what a provider refuses and rewrites what can be rewritten without changing what the
//! tool accepts; `docs/providers.md` lists each provider's rules with their sources.
//!
//! A rewritten schema is for listing only: the registry keeps validating arguments against
//! the original (see `ToolRegistryBuilder::schemas_for`). The rewrites never let the model
//! send a value the original refuses, except where a keyword is dropped (the server still
//! checks it and answers with a validation error naming it) and a `null` for an optional
//! argument that had none ([`Adapted::absent_when_null`]: the registry takes it as the
//! argument left out); they may stop the model from sending a value the original accepts
//! (an unknown key, for OpenAI).
//!
//! ```
//! use mcp_toolbelt::schema::provider::{adapt, Provider};
//! let schema = serde_json::json!({"type": "object", "properties": {
//!     "limit": {"type": ["integer", "null"], "description": "At most this many"}}});
//! let adapted = adapt(Provider::Gemini, schema.as_object().unwrap());
//! assert!(adapted.is_acceptable());
//! assert_eq!(adapted.schema["properties"]["limit"]["type"], "integer");
//! assert_eq!(adapted.schema["properties"]["limit"]["nullable"], true);
//! ```

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use super::JsonObject;

/// A model provider whose API takes tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI function calling with `strict: true` (Structured Outputs).
    OpenAi,
    /// Anthropic's Messages API (`input_schema`).
    Anthropic,
    /// Google's Gemini API and Vertex AI (`parameters`, an OpenAPI 3.0 subset).
    Gemini,
}

impl Provider {
    /// Every provider, in the order the command line lists them.
    pub const ALL: [Provider; 3] = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini];

    /// The provider's name on the command line: `openai`, `anthropic`, `gemini`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A provider name that is not one of [`Provider::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProvider(pub String);

impl fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown provider {:?}; expected openai, anthropic or gemini",
            self.0
        )
    }
}

impl std::error::Error for UnknownProvider {}

impl FromStr for Provider {
    type Err = UnknownProvider;

    /// ```
    /// use mcp_toolbelt::schema::provider::Provider;
    /// assert_eq!("gemini".parse::<Provider>(), Ok(Provider::Gemini));
    /// assert!("bard".parse::<Provider>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Provider, UnknownProvider> {
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProvider(s.to_string()))
    }
}

/// Which rule a [`ProviderFinding`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The tool's name is outside the provider's name pattern (renaming is the author's
    /// call: never rewritten).
    ToolName,
    /// A property's name is outside the provider's pattern (Gemini; never rewritten).
    PropertyName,
    /// `"type": ["T", "null"]` or an `anyOf` of a schema and `{"type": "null"}` (Gemini:
    /// rewritten as `T` with `nullable: true`).
    NullableUnion,
    /// A `type` array of several non-null types (Gemini; never rewritten).
    TypeUnion,
    /// An object without `additionalProperties: false` (OpenAI strict: added), or with a
    /// schema for it, a map (never rewritten).
    AdditionalProperties,
    /// A property missing from `required` (OpenAI strict: made required, and nullable if it
    /// was not; `null` then stands for "absent". Inside an argument only when it already
    /// admits `null`).
    OptionalProperty,
    /// A keyword the provider does not take: dropped when the server's validator still
    /// enforces it or it only annotates, otherwise never rewritten.
    Keyword,
    /// A `format` value the provider does not list (dropped; the server still checks it).
    Format,
    /// A `oneOf` of `const`s (rewritten: `anyOf` for OpenAI, a string `enum` for Gemini).
    ConstUnion,
    /// A boolean schema (`true`: anything), which the provider cannot express.
    AnyValue,
}

impl Rule {
    /// A short code for the rule, as `tools check --provider` prints it.
    pub fn code(self) -> &'static str {
        match self {
            Rule::ToolName => "tool-name",
            Rule::PropertyName => "property-name",
            Rule::NullableUnion => "nullable-union",
            Rule::TypeUnion => "type-union",
            Rule::AdditionalProperties => "additional-properties",
            Rule::OptionalProperty => "optional-property",
            Rule::Keyword => "keyword",
            Rule::Format => "format",
            Rule::ConstUnion => "const-union",
            Rule::AnyValue => "any-value",
        }
    }
}

/// One place in a tool's definition that a provider refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderFinding {
    /// The JSON pointer of the schema node within the input schema (`""`: the root; for
    /// [`Rule::ToolName`] also `""`).
    pub pointer: String,
    /// Which rule.
    pub rule: Rule,
    /// What is wrong, and what the rewrite does or the author should do.
    pub detail: String,
    /// Whether [`adapt`] rewrites it while keeping what the tool accepts.
    pub rewritable: bool,
}

impl fmt::Display for ProviderFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        let how = if self.rewritable {
            "rewritable"
        } else {
            "must be fixed"
        };
        write!(f, "{at}: {} ({how}): {}", self.rule.code(), self.detail)
    }
}

/// A schema as a provider takes it, with every finding on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Adapted {
    /// The schema with every rewritable finding rewritten (the rest left as they were).
    pub schema: JsonObject,
    /// Every finding, rewritten or not, in document order.
    pub findings: Vec<ProviderFinding>,
    /// Arguments (root properties) the rewrite made nullable although the original schema
    /// refuses `null` for them (OpenAI strict: an optional argument with a default). A
    /// server listing this schema must take a `null` there as the argument left out;
    /// `ToolRegistryBuilder::schemas_for` does.
    pub absent_when_null: Vec<String>,
}

impl Adapted {
    /// True when every finding was rewritten: the provider takes [`Adapted::schema`].
    pub fn is_acceptable(&self) -> bool {
        self.findings.iter().all(|f| f.rewritable)
    }
}

/// The findings about a tool's name for `provider` (empty when it is accepted).
///
/// ```
/// use mcp_toolbelt::schema::provider::{name_findings, Provider};
/// assert!(name_findings(Provider::OpenAi, "files_read").is_empty());
/// assert_eq!(name_findings(Provider::OpenAi, "files.read").len(), 1);
/// // Gemini takes dots, but not a leading digit.
/// assert!(name_findings(Provider::Gemini, "files.read").is_empty());
/// assert_eq!(name_findings(Provider::Gemini, "2fa_check").len(), 1);
/// ```
pub fn name_findings(provider: Provider, name: &str) -> Vec<ProviderFinding> {
    let (accepted, rule) = match provider {
        Provider::OpenAi | Provider::Anthropic => {
            (crate::names::is_portable(name), "^[a-zA-Z0-9_-]{1,64}$")
        }
        Provider::Gemini => (
            gemini_name(name, |c| c == '.' || c == '-'),
            "a letter or `_` first, then letters, digits, `_`, `.` or `-`, at most 64",
        ),
    };
    if accepted {
        return Vec::new();
    }
    vec![ProviderFinding {
        pointer: String::new(),
        rule: Rule::ToolName,
        detail: format!("{provider} takes tool names matching {rule}; rename the tool"),
        rewritable: false,
    }]
}

/// Gemini's name rule: a letter or `_` first, then letters, digits, `_` or what `extra`
/// allows, 64 characters at most.
fn gemini_name(name: &str, extra: impl Fn(char) -> bool) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || extra(c))
}

/// What a provider does with a keyword it finds in a schema node.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Taken as it is (subschemas under it are walked).
    Yes,
    /// Not taken; dropping it keeps what the tool accepts (the server still enforces it,
    /// or it only annotates).
    Drop,
    /// Not taken, and dropping it would change what the model is told to send.
    Refuse,
}

/// Keywords whose only job is to annotate, or to narrow values in a way the server's
/// validator still checks after the listed schema drops them.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
];

/// Gemini's schema fields (Vertex AI `Schema`, an OpenAPI 3.0 subset).
const GEMINI: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "default",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "properties",
    "propertyOrdering",
    "required",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
];

/// Assertions Gemini does not take that the server's validator keeps enforcing.
const GEMINI_DROPPED: &[&str] = &[
    "additionalProperties",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
];

/// The `format` values Gemini documents.
const GEMINI_FORMATS: &[&str] = &["float", "double", "int32", "int64", "enum", "date-time"];

/// What OpenAI's strict mode takes.
const OPENAI: &[&str] = &[
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// Assertions and annotations OpenAI's strict mode does not list that the server's
/// validator keeps enforcing.
const OPENAI_DROPPED: &[&str] = &[
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "default",
];

/// The `format` values OpenAI's strict mode documents.
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// How deep [`adapt`] walks (schemas come from the author's code; this keeps a
/// pathological one from exhausting the stack).
const MAX_DEPTH: usize = 64;

impl Provider {
    fn keep(self, key: &str) -> Keep {
        let (taken, dropped) = match self {
            Provider::Anthropic => return Keep::Yes,
            Provider::OpenAi => (OPENAI, OPENAI_DROPPED),
            Provider::Gemini => (GEMINI, GEMINI_DROPPED),
        };
        if taken.contains(&key) {
            Keep::Yes
        } else if dropped.contains(&key) || ANNOTATIONS.contains(&key) || key.starts_with("x-") {
            Keep::Drop
        } else {
            Keep::Refuse
        }
    }

    fn formats(self) -> &'static [&'static str] {
        match self {
            Provider::OpenAi => OPENAI_FORMATS,
            Provider::Gemini => GEMINI_FORMATS,
            Provider::Anthropic => &[],
        }
    }
}

/// `schema` as `provider` takes it, and every finding. A finding that cannot be rewritten
/// leaves its node as it was; [`Adapted::is_acceptable`] tells whether any is left.
pub fn adapt(provider: Provider, schema: &JsonObject) -> Adapted {
    let mut walk = Walk {
        provider,
        findings: Vec::new(),
        absent_when_null: Vec::new(),
    };
    let mut root = Value::Object(schema.clone());
    if provider != Provider::Anthropic {
        walk.node(&mut root, String::new(), 0);
    }
    let Value::Object(schema) = root else {
        unreachable!("the root stays an object")
    };
    Adapted {
        schema,
        findings: walk.findings,
        absent_when_null: walk.absent_when_null,
    }
}

struct Walk {
    provider: Provider,
    findings: Vec<ProviderFinding>,
    /// Root properties made nullable that were not ([`Adapted::absent_when_null`]).
    absent_when_null: Vec<String>,
}

/// `spec` admitting `null` too: `{"anyOf": [spec, {"type": "null"}]}`, its description
/// kept outside.
fn nullable(mut spec: Value) -> Value {
    let mut wrapper = JsonObject::new();
    if let Some(description) = spec.as_object_mut().and_then(|s| s.remove("description")) {
        wrapper.insert("description".into(), description);
    }
    wrapper.insert(
        "anyOf".into(),
        Value::Array(vec![spec, serde_json::json!({"type": "null"})]),
    );
    Value::Object(wrapper)
}

/// `pointer` extended by one reference token (RFC 6901 escaping).
fn child(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// True when `schema` admits `null` (a `null` type, or a null branch of an `anyOf`/`oneOf`).
fn admits_null(schema: &Value) -> bool {
    let null_type = |s: &Value| match s.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => false,
    };
    null_type(schema)
        || ["anyOf", "oneOf"].iter().any(|key| {
            schema
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(null_type))
        })
}

impl Walk {
    fn push(&mut self, pointer: &str, rule: Rule, rewritable: bool, detail: String) {
        self.findings.push(ProviderFinding {
            pointer: pointer.to_string(),
            rule,
            detail,
            rewritable,
        });
    }

    fn node(&mut self, value: &mut Value, pointer: String, depth: usize) {
        let map = match value {
            Value::Object(map) => map,
            Value::Bool(_) => {
                self.push(
                    &pointer,
                    Rule::AnyValue,
                    false,
                    format!(
                        "a boolean schema cannot be written for {}; give the value a type (a `serde_json::Value` field has none)",
                        self.provider
                    ),
                );
                return;
            }
            _ => return,
        };
        if depth > MAX_DEPTH {
            self.push(
                &pointer,
                Rule::Keyword,
                false,
                format!("nested deeper than {MAX_DEPTH} schemas; not checked further"),
            );
            return;
        }
        if self.provider == Provider::Gemini {
            self.gemini_unions(map, &pointer);
        }
        self.const_union(map, &pointer);
        self.keywords(map, &pointer);
        if self.provider == Provider::Gemini {
            self.gemini_property_names(map, &pointer);
        }
        self.children(map, &pointer, depth);
        // After the children, so their findings point into the schema as written.
        if self.provider == Provider::OpenAi {
            self.strict_object(map, &pointer);
        }
    }

    /// Gemini: `"type": ["T", "null"]` and `anyOf: [S, {"type": "null"}]` become `T`/`S`
    /// with `nullable: true`; other type arrays are reported.
    fn gemini_unions(&mut self, map: &mut JsonObject, pointer: &str) {
        if let Some(Value::Array(types)) = map.get("type") {
            let named: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            let nullable = named.len() < types.len();
            match named.as_slice() {
                [single] => {
                    let single = single.clone();
                    map.insert("type".into(), single);
                    if nullable {
                        map.insert("nullable".into(), Value::Bool(true));
                    }
                    self.push(
                        pointer,
                        Rule::NullableUnion,
                        true,
                        "a type array becomes one type with `nullable: true`".into(),
                    );
                }
                _ => self.push(
                    pointer,
                    Rule::TypeUnion,
                    false,
                    "a value of several types cannot be written for gemini; use one type (or an enum of variants)".into(),
                ),
            }
        }
        let Some(Value::Array(branches)) = map.get("anyOf") else {
            return;
        };
        let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
        let others: Vec<&Value> = branches.iter().filter(|b| !is_null(b)).collect();
        if others.len() + 1 != branches.len() || others.len() != 1 {
            return;
        }
        // The field's own words (outside) win over the type's (inside).
        let annotation = |key: &str| key == "description" || key == "title";
        let other = others[0].as_object().map(|other| {
            let mut other = other.clone();
            other.retain(|key, _| !(annotation(key) && map.contains_key(key)));
            other
        });
        let Some(other) = other.filter(|o| !o.keys().any(|key| map.contains_key(key))) else {
            self.push(
                pointer,
                Rule::NullableUnion,
                false,
                "an `anyOf` with null whose other branch cannot be merged into its parent; write `Option<T>` of a plain type".into(),
            );
            return;
        };
        map.remove("anyOf");
        map.extend(other);
        map.insert("nullable".into(), Value::Bool(true));
        self.push(
            pointer,
            Rule::NullableUnion,
            true,
            "an `anyOf` of a schema and null becomes that schema with `nullable: true`".into(),
        );
    }

    /// A `oneOf` of distinct `const`s (what schemars writes for an enum with documented
    /// variants): exactly one branch matches any value, so `anyOf` (OpenAI) or a string
    /// `enum` (Gemini) accepts the same values.
    fn const_union(&mut self, map: &mut JsonObject, pointer: &str) {
        if self.provider == Provider::Anthropic {
            return;
        }
        if self.provider == Provider::Gemini
            && let Some(Value::String(only)) = map.get("const")
        {
            let only = only.clone();
            map.remove("const");
            map.insert("enum".into(), Value::Array(vec![Value::String(only)]));
            self.push(
                pointer,
                Rule::ConstUnion,
                true,
                "a string `const` becomes a one-value `enum`".into(),
            );
        }
        let Some(Value::Array(branches)) = map.get("oneOf") else {
            return;
        };
        let consts: Option<Vec<Value>> = branches.iter().map(|b| b.get("const").cloned()).collect();
        let Some(consts) = consts else { return };
        let distinct = consts
            .iter()
            .enumerate()
            .all(|(i, c)| !consts[..i].contains(c));
        if consts.is_empty() || !distinct {
            return;
        }
        match self.provider {
            Provider::Gemini if consts.iter().all(Value::is_string) => {
                map.remove("oneOf");
                map.insert("type".into(), "string".into());
                map.insert("enum".into(), Value::Array(consts));
                self.push(
                    pointer,
                    Rule::ConstUnion,
                    true,
                    "a `oneOf` of constants becomes a string `enum` (the variants' descriptions are not listed)".into(),
                );
            }
            Provider::OpenAi => {
                let branches = map.remove("oneOf").unwrap_or_default();
                map.insert("anyOf".into(), branches);
                self.push(
                    pointer,
                    Rule::ConstUnion,
                    true,
                    "a `oneOf` of distinct constants becomes an `anyOf` (the same values)".into(),
                );
            }
            _ => {}
        }
    }

    /// Every keyword the provider does not take: dropped when that keeps the meaning,
    /// reported otherwise; unlisted `format` values dropped.
    fn keywords(&mut self, map: &mut JsonObject, pointer: &str) {
        let provider = self.provider;
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            match provider.keep(&key) {
                Keep::Yes => {}
                Keep::Drop => {
                    map.remove(&key);
                    self.push(
                        pointer,
                        Rule::Keyword,
                        true,
                        format!("`{key}` is not taken by {provider}; dropped from the listed schema (the server still checks it)"),
                    );
                }
                Keep::Refuse => self.push(
                    pointer,
                    Rule::Keyword,
                    false,
                    format!("`{key}` is not taken by {provider} and dropping it would change what the model is asked to send; restructure the argument type"),
                ),
            }
        }
        if let Some(Value::String(format)) = map.get("format")
            && !provider.formats().contains(&format.as_str())
        {
            let format = format.clone();
            map.remove("format");
            self.push(
                pointer,
                Rule::Format,
                true,
                format!("format {format:?} is not listed by {provider}; dropped from the listed schema (the server still checks it)"),
            );
        }
    }

    /// OpenAI strict mode: every object closed, every property required (an optional one
    /// must admit `null`, which then stands for "absent").
    fn strict_object(&mut self, map: &mut JsonObject, pointer: &str) {
        let is_object = map.get("type").is_some_and(|t| {
            t == "object"
                || t.as_array()
                    .is_some_and(|ts| ts.iter().any(|t| t == "object"))
        }) || map.contains_key("properties");
        if !is_object {
            return;
        }
        match map.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            None | Some(Value::Bool(true)) => {
                map.insert("additionalProperties".into(), Value::Bool(false));
                self.push(
                    pointer,
                    Rule::AdditionalProperties,
                    true,
                    "`additionalProperties: false` added (the model may no longer send keys the schema does not name)".into(),
                );
            }
            Some(_) => self.push(
                pointer,
                Rule::AdditionalProperties,
                false,
                "a map (an object with a schema for any key) cannot be strict; use a struct or an array of pairs".into(),
            ),
        }
        let required: Vec<String> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let Some(Value::Object(properties)) = map.get("properties") else {
            return;
        };
        let mut added = Vec::new();
        for (name, spec) in properties {
            if required.contains(name) {
                continue;
            }
            let at = child(&child(pointer, "properties"), name);
            if admits_null(spec) {
                added.push(Value::String(name.clone()));
                self.push(
                    &at,
                    Rule::OptionalProperty,
                    true,
                    "made required; it admits null, which the model sends for \"absent\"".into(),
                );
            } else if pointer.is_empty() {
                added.push(Value::String(name.clone()));
                self.absent_when_null.push(name.clone());
                self.push(
                    &at,
                    Rule::OptionalProperty,
                    true,
                    "made required and nullable; a registry built with `schemas_for` takes a null here as the argument left out (its default)".into(),
                );
            } else {
                self.push(
                    &at,
                    Rule::OptionalProperty,
                    false,
                    "optional and not nullable inside an argument; strict mode wants every property required: make it `Option<T>` (null then means absent)".into(),
                );
            }
        }
        if pointer.is_empty()
            && let Some(Value::Object(properties)) = map.get_mut("properties")
        {
            for name in &self.absent_when_null {
                if let Some(spec) = properties.get_mut(name) {
                    *spec = nullable(std::mem::take(spec));
                }
            }
        }
        if !added.is_empty() {
            let mut all: Vec<Value> = required.into_iter().map(Value::String).collect();
            all.extend(added);
            map.insert("required".into(), Value::Array(all));
        }
    }

    /// Gemini: property names must start with a letter or `_` and hold only letters,
    /// digits and `_`, 64 at most.
    fn gemini_property_names(&mut self, map: &JsonObject, pointer: &str) {
        let Some(Value::Object(properties)) = map.get("properties") else {
            return;
        };
        for name in properties.keys() {
            if !gemini_name(name, |_| false) {
                self.push(
                    &child(&child(pointer, "properties"), name),
                    Rule::PropertyName,
                    false,
                    "gemini takes property names of letters, digits and `_` (not first a digit), at most 64; rename it (`#[serde(rename)]` renames the argument too)".into(),
                );
            }
        }
    }

    /// Walk the subschemas of the keywords that stayed.
    fn children(&mut self, map: &mut JsonObject, pointer: &str, depth: usize) {
        let provider = self.provider;
        for key in ["properties", "$defs", "definitions"] {
            if provider.keep(key) != Keep::Yes {
                continue;
            }
            if let Some(Value::Object(entries)) = map.get_mut(key) {
                let base = child(pointer, key);
                for (name, sub) in entries.iter_mut() {
                    self.node(sub, child(&base, name), depth + 1);
                }
            }
        }
        for key in ["items", "additionalProperties"] {
            match map.get_mut(key) {
                Some(sub @ Value::Object(_)) => self.node(sub, child(pointer, key), depth + 1),
                Some(Value::Array(subs)) if key == "items" => {
                    let base = child(pointer, key);
                    for (i, sub) in subs.iter_mut().enumerate() {
                        self.node(sub, child(&base, &i.to_string()), depth + 1);
                    }
                }
                _ => {}
            }
        }
        if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
            let base = child(pointer, "anyOf");
            for (i, sub) in branches.iter_mut().enumerate() {
                self.node(sub, child(&base, &i.to_string()), depth + 1);
            }
        }
    }
}

#[cfg(test)]
mod tests;
