//! Arguments mirrored into HTTP headers (SEP-2243): a property of a tool's input schema
//! annotated `"x-mcp-header": "Region"` is sent by clients on streamable HTTP both in the
//! body and as the header `Mcp-Param-Region`, so that intermediaries can route on it
//! without reading the body. [`ToolDef`](super::ToolDef)'s build checks every annotation
//! here, once, and keeps the list the server checks each call's headers against.
//!
//! The rules: the annotation is a non-empty HTTP token (RFC 9110 §5.6.2), unique among
//! the tool's annotations ignoring case, on a property reached from the root through
//! `properties` alone (nested objects included; never the root, and never inside `items`,
//! `anyOf`, `$defs`, …), whose `type` is `"string"`, `"integer"` or `"boolean"` (not
//! `"number"`, and not a list of types such as a nullable `["string", "null"]`). Clients
//! that follow the SEP drop a tool whose annotations break these rules from the list.

use serde_json::Value;

use crate::schema::JsonObject;

/// The schema keyword naming the header a property is mirrored into.
pub(crate) const KEYWORD: &str = "x-mcp-header";

/// One annotated property: where its value sits in the arguments and its header's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// Property names from the arguments object down to the value (`["location", "region"]`).
    pub(crate) path: Box<[String]>,
    /// The header name after `Mcp-Param-`, as the schema writes it.
    pub(crate) name: String,
}

impl ParamHeader {
    /// The property's path as the problems name it (`location.region`).
    pub(crate) fn property(&self) -> String {
        self.path.join(".")
    }
}

/// What `#[arg(header = "Name")]` puts on its argument's schema: `"x-mcp-header": "Name"`,
/// and for an `Option` argument the one type without `null` (a header carries a value or
/// is absent; clients following SEP-2243 refuse a nullable annotated property). The
/// argument stays optional: it is not in `required`.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct MirroredHeader(pub &'static str);

impl schemars::transform::Transform for MirroredHeader {
    fn transform(&mut self, schema: &mut schemars::Schema) {
        let Some(object) = schema.as_object_mut() else {
            return;
        };
        not_null(object);
        object.insert(KEYWORD.into(), Value::String(self.0.into()));
    }
}

/// `object` (a property's schema) without `null` among its values: `["string", "null"]`
/// becomes `"string"`, `null` leaves `enum`, and `anyOf: [S, {"type": "null"}]` becomes S.
fn not_null(object: &mut JsonObject) {
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|ty| ty != "null");
        if let [single] = types.as_slice() {
            let single = single.clone();
            object.insert("type".into(), single);
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
    let null = serde_json::json!({"type": "null"});
    let Some(Value::Array(choices)) = object.get("anyOf") else {
        return;
    };
    let rest: Vec<&Value> = choices.iter().filter(|choice| **choice != null).collect();
    if let ([Value::Object(only)], 2) = (rest.as_slice(), choices.len()) {
        let only = only.clone();
        object.remove("anyOf");
        for (key, value) in only {
            object.entry(key).or_insert(value);
        }
        not_null(object);
    }
}

/// True for a character an HTTP token may hold (RFC 9110 §5.6.2 `tchar`).
pub(crate) fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// A node of the schema still to look at, and whether it is a property reached from the
/// root through `properties` alone (then with its path).
struct Pending<'a> {
    schema: &'a JsonObject,
    /// JSON pointer of the node, for problems off the `properties` chain.
    pointer: String,
    /// `Some(path)`: a property on the chain; `None`: the root or anywhere else.
    path: Option<Vec<&'a str>>,
}

/// Keywords whose values are instance data or property names, never subschemas.
const NOT_SCHEMAS: &[&str] = &[
    "default",
    "const",
    "enum",
    "examples",
    "required",
    "dependentRequired",
    KEYWORD,
];

/// Keywords whose value maps names to subschemas (besides `properties`).
const SCHEMA_MAPS: &[&str] = &[
    "$defs",
    "definitions",
    "dependencies",
    "dependentSchemas",
    "patternProperties",
];

/// Every `x-mcp-header` annotation of `schema` (a tool's input schema), checked; the first
/// problem found names its property (or, off the `properties` chain, its JSON pointer).
/// Walks the schema from a work list, so no depth of nesting can exhaust the stack.
pub(crate) fn param_headers(schema: &JsonObject) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    let mut work = vec![Pending {
        schema,
        pointer: String::new(),
        path: None,
    }];
    while let Some(node) = work.pop() {
        if let Some(annotation) = node.schema.get(KEYWORD) {
            found.push(annotated(&node, annotation)?);
        }
        for (key, value) in node.schema {
            let key = key.as_str();
            if NOT_SCHEMAS.contains(&key) {
                continue;
            }
            let pointer = format!("{}/{}", node.pointer, escape(key));
            if key == "properties" || SCHEMA_MAPS.contains(&key) {
                let Value::Object(map) = value else { continue };
                for (name, sub) in map {
                    let Value::Object(sub) = sub else { continue };
                    // Only `properties` continues the chain, and only from a node on it.
                    let path = match (&node.path, key == "properties") {
                        (Some(path), true) => {
                            Some(path.iter().copied().chain([name.as_str()]).collect())
                        }
                        (None, true) if node.pointer.is_empty() => Some(vec![name.as_str()]),
                        _ => None,
                    };
                    work.push(Pending {
                        schema: sub,
                        pointer: format!("{pointer}/{}", escape(name)),
                        path,
                    });
                }
                continue;
            }
            match value {
                Value::Object(sub) => work.push(Pending {
                    schema: sub,
                    pointer,
                    path: None,
                }),
                Value::Array(items) => {
                    for (at, item) in items.iter().enumerate() {
                        if let Value::Object(sub) = item {
                            work.push(Pending {
                                schema: sub,
                                pointer: format!("{pointer}/{at}"),
                                path: None,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    // The walk is depth-first from a stack: put the annotations in the schema's order.
    found.sort_by(|a: &ParamHeader, b| a.path.cmp(&b.path));
    for (at, header) in found.iter().enumerate() {
        if let Some(first) = found[..at]
            .iter()
            .find(|other| other.name.eq_ignore_ascii_case(&header.name))
        {
            return Err(format!(
                "property {:?}: x-mcp-header {:?} is already the header of property {:?} \
                 (header names are compared ignoring case); give each its own",
                header.property(),
                header.name,
                first.property()
            ));
        }
    }
    Ok(found)
}

/// The annotation `annotation` of `node`, checked.
fn annotated(node: &Pending<'_>, annotation: &Value) -> Result<ParamHeader, String> {
    let Some(path) = &node.path else {
        if node.pointer.is_empty() {
            return Err(
                "x-mcp-header annotates the schema root; put it on a property instead".into(),
            );
        }
        return Err(format!(
            "x-mcp-header at {:?} is not on a property reached from the root through \
             `properties` alone (not inside items, anyOf, $defs, …); move it to such a property",
            node.pointer
        ));
    };
    let property = path.join(".");
    let Value::String(name) = annotation else {
        return Err(format!(
            "property {property:?}: x-mcp-header must be a string (the header name after \
             `Mcp-Param-`), got {annotation}"
        ));
    };
    if name.is_empty() {
        return Err(format!(
            "property {property:?}: x-mcp-header is empty; give the header name after `Mcp-Param-`"
        ));
    }
    if let Some(bad) = name.chars().find(|c| !is_token_char(*c)) {
        return Err(format!(
            "property {property:?}: x-mcp-header {name:?} is not an HTTP token ({bad:?} is not \
             allowed); use letters, digits and !#$%&'*+-.^_`|~"
        ));
    }
    match node.schema.get("type") {
        Some(Value::String(ty)) if matches!(ty.as_str(), "string" | "integer" | "boolean") => {}
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => {
            return Err(format!(
                "property {property:?}: x-mcp-header needs one type (string, integer or \
                 boolean), and {} is nullable; leave the property out of `required` instead",
                Value::Array(types.clone())
            ));
        }
        other => {
            let got = other.map_or_else(|| "no type".to_string(), |ty| format!("type {ty}"));
            return Err(format!(
                "property {property:?}: x-mcp-header applies to properties of type string, \
                 integer or boolean, and this one has {got}"
            ));
        }
    }
    Ok(ParamHeader {
        path: path.iter().map(|step| step.to_string()).collect(),
        name: name.clone(),
    })
}

/// `key` as a JSON pointer step.
fn escape(key: &str) -> std::borrow::Cow<'_, str> {
    if key.contains(['~', '/']) {
        key.replace('~', "~0").replace('/', "~1").into()
    } else {
        key.into()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::definition::ToolDef;
    use crate::output::result::ToolResult;

    fn build(schema: Value) -> Result<ToolDef, crate::definition::DefError> {
        ToolDef::builder("deploy")
            .description("Deploy.")
            .input_schema(schema)
            .handler(|_args, _ctx| async { Ok(ToolResult::text("ok")) })
            .build()
    }

    fn problem(schema: Value) -> String {
        let error = build(schema).expect_err("the annotation is refused");
        assert_eq!(error.item(), "tool \"deploy\"");
        error.problem().to_string()
    }

    fn headers(schema: Value) -> Vec<(String, String)> {
        build(schema)
            .unwrap()
            .param_headers
            .iter()
            .map(|h| (h.property(), h.name.clone()))
            .collect()
    }

    #[test]
    fn annotations_on_scalar_properties_are_kept_in_schema_order() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
                "location": {"type": "object", "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"}
                }},
                "plain": {"type": "number"},
                // A property named like the keyword, and the keyword as data: neither is
                // an annotation.
                "x-mcp-header": {"type": "string", "default": "x", "examples": [{"x-mcp-header": 1}]}
            },
            "dependentRequired": {"x-mcp-header": ["region"]}
        });
        assert_eq!(
            headers(schema),
            [
                ("dry_run".to_string(), "Dry-Run".to_string()),
                ("location.zone".to_string(), "Zone".to_string()),
                ("priority".to_string(), "Priority".to_string()),
                ("region".to_string(), "Region".to_string()),
            ]
        );
        assert!(headers(json!({"type": "object"})).is_empty());
    }

    #[test]
    fn a_bad_name_is_refused_naming_the_property() {
        for (name, expected) in [
            (json!(""), "property \"region\": x-mcp-header is empty"),
            (
                json!("Re gion"),
                "is not an HTTP token (' ' is not allowed)",
            ),
            (json!("Région"), "is not an HTTP token"),
            (json!("a:b"), "is not an HTTP token (':' is not allowed)"),
            (
                json!(7),
                "property \"region\": x-mcp-header must be a string",
            ),
        ] {
            let schema = json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": name}
            }});
            let problem = problem(schema);
            assert!(problem.contains(expected), "{name}: {problem}");
        }
    }

    #[test]
    fn a_header_name_twice_ignoring_case_is_refused() {
        let problem = problem(json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "object", "properties": {"c": {"type": "string", "x-mcp-header": "REGION"}}}
        }}));
        assert_eq!(
            problem,
            "property \"b.c\": x-mcp-header \"REGION\" is already the header of property \"a\" \
             (header names are compared ignoring case); give each its own"
        );
    }

    #[test]
    fn only_string_integer_and_boolean_properties_take_a_header() {
        for (ty, expected) in [
            (json!({"type": "number"}), "this one has type \"number\""),
            (json!({"type": "object"}), "this one has type \"object\""),
            (
                json!({"type": "array", "items": {"type": "string"}}),
                "type \"array\"",
            ),
            (json!({"enum": ["a", "b"]}), "this one has no type"),
            (
                json!({"type": ["string", "null"]}),
                "is nullable; leave the property out of `required`",
            ),
            (
                json!({"type": ["string", "integer"]}),
                "type [\"string\",\"integer\"]",
            ),
        ] {
            let mut property = ty.clone();
            property["x-mcp-header"] = json!("Region");
            let problem = problem(json!({"type": "object", "properties": {"region": property}}));
            assert!(
                problem.starts_with("property \"region\": x-mcp-header"),
                "{problem}"
            );
            assert!(problem.contains(expected), "{ty}: {problem}");
        }
    }

    #[test]
    fn annotations_off_the_properties_chain_are_refused_with_their_place() {
        let root = problem(json!({"type": "object", "x-mcp-header": "Root"}));
        assert!(root.contains("annotates the schema root"), "{root}");
        for (schema, pointer) in [
            (
                json!({"type": "object", "properties": {"list": {"type": "array",
                    "items": {"type": "string", "x-mcp-header": "Item"}}}}),
                "/properties/list/items",
            ),
            (
                json!({"type": "object", "anyOf": [{"properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}}}]}),
                "/anyOf/0/properties/region",
            ),
            (
                json!({"type": "object", "$defs": {"Loc": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}}}}}),
                "/$defs/Loc/properties/region",
            ),
            (
                json!({"type": "object", "dependentSchemas": {"tenant": {"properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}}}}}),
                "/dependentSchemas/tenant/properties/region",
            ),
            (
                json!({"type": "object", "patternProperties": {"^a/b$": {
                    "type": "string", "x-mcp-header": "Region"}}}),
                "/patternProperties/^a~1b$",
            ),
            (
                json!({"type": "object", "properties": {"loc": {"type": "object",
                    "additionalProperties": {"type": "string", "x-mcp-header": "Region"}}}}),
                "/properties/loc/additionalProperties",
            ),
        ] {
            let problem = problem(schema.clone());
            assert!(
                problem.contains(&format!("x-mcp-header at {pointer:?} is not on a property")),
                "{schema}: {problem}"
            );
        }
    }

    #[test]
    fn deep_schemas_do_not_exhaust_the_stack() {
        let mut schema = json!({"type": "string", "x-mcp-header": "Deep"});
        for _ in 0..2_000 {
            // By hand: `json!` would serialize the inner value, recursively.
            let mut properties = JsonObject::new();
            properties.insert("a".into(), schema);
            let mut object = JsonObject::new();
            object.insert("type".into(), "object".into());
            object.insert("properties".into(), Value::Object(properties));
            schema = Value::Object(object);
        }
        let found = param_headers(schema.as_object().unwrap()).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path.len(), 2_000);
        // serde_json's own drop of so deep a value recurses: leak it, as a test may.
        std::mem::forget(schema);
    }

    #[test]
    fn token_characters() {
        assert!("Mcp-Param_1.x~'`|^!#$%&*+".chars().all(is_token_char));
        for bad in [' ', '"', '(', ',', ';', ':', 'é', '\t', '/', '=', '?', '@'] {
            assert!(!is_token_char(bad), "{bad:?}");
        }
    }
}
