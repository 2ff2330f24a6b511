//! A cheap first look at a call's arguments, for the input schemas most tools have: an
//! object of scalar arguments (strings, integers, numbers, booleans, null, optionally one
//! of a few values or within integer bounds). Such a schema is read into a [`FlatSchema`]
//! without compiling it, and arguments it can vouch for need no compiled validator.
//!
//! It only ever says "valid" or "cannot tell": anything else — a value it does not
//! recognise, a failing check, a keyword outside the subset — goes to the compiled
//! validator (`validate.rs`, `json_schema`), which also writes every error message. So the
//! answers and their texts are the validator's; the reading is only quicker (about 900
//! instructions less per call of quickstart's `echo`), and the first call of a tool whose
//! arguments are valid does not pay for compiling its schema (about 23,000 for `echo`'s).
//!
//! The subset is chosen so that a schema read here is also one the compiled validator
//! accepts: each keyword's value must have the meta-schema's shape, or the schema is not
//! read.

use serde_json::Value;

use crate::call::json_schema;
use crate::schema::JsonObject;

/// An object schema whose properties are all scalars.
#[derive(Debug)]
pub(crate) struct FlatSchema {
    properties: Vec<(String, Scalar)>,
    required: Vec<String>,
    /// `additionalProperties`: `false` refuses keys not in `properties`.
    additional: bool,
}

/// The checks on one scalar argument.
#[derive(Debug)]
struct Scalar {
    /// Bits of [`TYPES`]; `0`: the schema names no type (anything goes).
    types: u8,
    /// `enum`: the value must equal one of these (compared as JSON values).
    one_of: Option<Vec<Value>>,
    minimum: Option<i128>,
    maximum: Option<i128>,
}

/// The JSON types a scalar may have, one bit each.
const TYPES: [&str; 5] = ["string", "integer", "number", "boolean", "null"];

/// Keywords that only annotate (no effect on validation), with the value shape the
/// meta-schema demands (`None`: any value).
fn annotation(key: &str, value: &Value) -> bool {
    match key {
        "description" | "title" => value.is_string(),
        "default" => true,
        "examples" => value.is_array(),
        "deprecated" | "readOnly" | "writeOnly" => value.is_boolean(),
        _ => false,
    }
}

impl FlatSchema {
    /// Read `schema` when it is in the subset; `None` otherwise.
    pub(crate) fn read(schema: &JsonObject) -> Option<FlatSchema> {
        let mut flat = FlatSchema {
            properties: Vec::new(),
            required: Vec::new(),
            additional: true,
        };
        let mut typed = false;
        for (key, value) in schema {
            match key.as_str() {
                "type" if value == "object" => typed = true,
                "properties" => {
                    for (name, property) in value.as_object()? {
                        flat.properties
                            .push((name.clone(), Scalar::read(property.as_object()?)?));
                    }
                }
                "required" => flat.required = unique_strings(value)?,
                "additionalProperties" => flat.additional = value.as_bool()?,
                _ if annotation(key, value) => {}
                _ => return None,
            }
        }
        typed.then_some(flat)
    }

    /// True when `arguments` certainly satisfy the schema; `false`: cannot tell.
    pub(crate) fn vouches_for(&self, arguments: &Value) -> bool {
        let Value::Object(arguments) = arguments else {
            return false;
        };
        self.required
            .iter()
            .all(|name| arguments.contains_key(name))
            && arguments.iter().all(|(name, value)| {
                match self.properties.iter().find(|(known, _)| known == name) {
                    Some((_, scalar)) => scalar.vouches_for(value),
                    None => self.additional && !value.is_array() && !value.is_object(),
                }
            })
    }
}

impl Scalar {
    fn read(schema: &JsonObject) -> Option<Scalar> {
        let mut scalar = Scalar {
            types: 0,
            one_of: None,
            minimum: None,
            maximum: None,
        };
        for (key, value) in schema {
            match key.as_str() {
                "type" => scalar.types = types(value)?,
                "enum" => scalar.one_of = Some(scalars(value)?),
                "minimum" => scalar.minimum = Some(integer(value)?),
                "maximum" => scalar.maximum = Some(integer(value)?),
                // Formats the validator does not check, such as the numeric ones schemars
                // writes (`uint8`, `double`): annotations.
                "format" if !json_schema::checks_format(value.as_str()?) => {}
                _ if annotation(key, value) => {}
                _ => return None,
            }
        }
        Some(scalar)
    }

    fn vouches_for(&self, value: &Value) -> bool {
        // Only scalars: what it vouches for nests no deeper than the arguments object, so
        // the depth limit (validate.rs) has nothing to add.
        if value.is_array() || value.is_object() {
            return false;
        }
        let type_ok = self.types == 0
            || TYPES.iter().enumerate().any(|(bit, name)| {
                self.types & (1 << bit) != 0
                    && match *name {
                        "string" => value.is_string(),
                        // Whole numbers written as such; `1.0` is left to the validator.
                        "integer" => value.is_i64() || value.is_u64(),
                        "number" => value.is_number(),
                        "boolean" => value.is_boolean(),
                        _ => value.is_null(),
                    }
            });
        let listed = self
            .one_of
            .as_ref()
            .is_none_or(|values| values.contains(value));
        let within = match (self.minimum, self.maximum) {
            (None, None) => true,
            // Bounds apply to numbers only; compared exactly when the value is whole.
            (minimum, maximum) => match value {
                Value::Number(_) => integer(value).is_some_and(|n| {
                    minimum.is_none_or(|m| n >= m) && maximum.is_none_or(|m| n <= m)
                }),
                _ => true,
            },
        };
        type_ok && listed && within
    }
}

/// `type`: one known type name, or a non-empty list of distinct ones, as bits of [`TYPES`].
fn types(value: &Value) -> Option<u8> {
    let bit = |name: &Value| {
        let position = TYPES.iter().position(|t| name == *t)?;
        Some(1u8 << position)
    };
    match value {
        Value::Array(names) if !names.is_empty() => names.iter().try_fold(0u8, |bits, name| {
            let next = bit(name)?;
            (bits & next == 0).then_some(bits | next)
        }),
        single => bit(single),
    }
}

/// `enum` of scalar values only (so a value equal to one is a scalar too).
fn scalars(value: &Value) -> Option<Vec<Value>> {
    let values = value.as_array()?;
    values
        .iter()
        .all(|v| !v.is_array() && !v.is_object())
        .then(|| values.clone())
}

/// `required`: distinct strings (the meta-schema's `uniqueItems`).
fn unique_strings(value: &Value) -> Option<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for name in value.as_array()? {
        let name = name.as_str()?;
        if names.iter().any(|seen| seen == name) {
            return None;
        }
        names.push(name.to_string());
    }
    Some(names)
}

/// A JSON number that is a whole number written without a fraction.
fn integer(value: &Value) -> Option<i128> {
    let number = value.as_number()?;
    number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::FlatSchema;
    use crate::call::validate::ArgumentValidator;

    fn object(value: Value) -> crate::schema::JsonObject {
        value.as_object().cloned().unwrap()
    }

    /// Schemas in the subset: what schemars writes for scalar arguments, and edge cases.
    fn flat_schemas() -> Vec<Value> {
        vec![
            json!({"type": "object", "additionalProperties": false}),
            json!({"type": "object"}),
            json!({"type": "object", "additionalProperties": false,
                "properties": {"message": {"type": "string", "description": "The text"}},
                "required": ["message"]}),
            json!({"type": "object", "additionalProperties": false,
                "properties": {
                    "steps": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 1000},
                    "delay_ms": {"type": "integer", "format": "uint64", "minimum": 0,
                        "maximum": 10000, "default": 100}},
                "required": ["steps"]}),
            json!({"type": "object", "additionalProperties": true,
                "properties": {
                    "label": {"type": ["string", "null"], "default": null},
                    "ratio": {"type": "number", "format": "double"},
                    "flag": {"type": "boolean", "deprecated": true},
                    "mode": {"type": "string", "enum": ["fast", "slow"]},
                    "level": {"enum": [1, 2, "three", null]},
                    "any": {"description": "no type"},
                    "signed": {"type": "integer", "minimum": -5, "maximum": 18446744073709551615u64}}}),
        ]
    }

    /// Schemas outside the subset (left to the compiled validator), valid or not.
    fn other_schemas() -> Vec<Value> {
        vec![
            json!({"type": "object", "properties": {"n": {"type": "strnig"}}}),
            json!({"type": "object", "properties": {"n": {"type": []}}}),
            json!({"type": "object", "properties": {"n": {"type": ["string", "string"]}}}),
            json!({"type": "object", "required": ["a", "a"]}),
            json!({"type": "object", "required": "a"}),
            json!({"type": "object", "description": 5}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "properties": {"s": {"type": "string", "format": "email"}}}),
            json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 2}}}),
            json!({"type": "object", "properties": {"n": {"type": "number", "minimum": 0.5}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}),
            json!({"type": "object", "properties": {"e": {"enum": [[1], {"a": 1}]}}}),
            json!({"type": ["object", "null"]}),
            json!({"type": "object", "$defs": {}}),
            json!({"properties": {"n": {"type": "string"}}}),
        ]
    }

    /// Arguments to try against every schema: right, wrong, and borderline.
    fn instances() -> Vec<Value> {
        let mut all = vec![
            json!({}),
            json!(null),
            json!([]),
            json!("text"),
            json!({"message": "hello"}),
            json!({"message": 42}),
            json!({"message": "hello", "extra": 1}),
            json!({"message": "hello", "extra": {"deep": [1]}}),
            json!({"steps": 1}),
            json!({"steps": 0}),
            json!({"steps": 1000, "delay_ms": 10000}),
            json!({"steps": 1001}),
            json!({"steps": 5.0}),
            json!({"steps": 5.5}),
            json!({"steps": -1}),
            json!({"steps": "5"}),
            json!({"delay_ms": 5}),
            json!({"signed": -5}),
            json!({"signed": -6}),
            json!({"signed": 18446744073709551615u64}),
            json!({"signed": 1e30}),
            json!({"label": null, "ratio": 1, "flag": false, "mode": "fast", "level": 2}),
            json!({"label": 3, "ratio": "1", "flag": "no", "mode": "medium", "level": 2.0}),
            json!({"level": "three", "any": [1, {"x": null}]}),
            json!({"level": null, "any": "x", "mode": null}),
        ];
        // Nested deeper than the arguments may be (validate.rs's depth limit): the flat
        // reading must never vouch for it, under a known name or an unknown one.
        let mut deep = json!([]);
        for _ in 0..crate::call::validate::MAX_DEPTH {
            deep = json!([deep]);
        }
        all.push(json!({"message": "hello", "extra": deep.clone()}));
        all.push(deep);
        // Every value above also appears as the value of each known property name.
        let values: Vec<Value> = all.clone();
        for name in [
            "message", "steps", "label", "mode", "level", "any", "signed",
        ] {
            for value in &values {
                all.push(json!({ name: value }));
            }
        }
        all
    }

    /// Whatever the flat reading vouches for, the compiled validator accepts; and a schema
    /// it reads is a valid schema.
    #[test]
    fn it_vouches_only_for_what_the_compiled_validator_accepts() {
        let mut vouched = 0;
        for schema in flat_schemas().into_iter().chain(other_schemas()) {
            let schema = object(schema);
            let compiled = ArgumentValidator::compile(&schema);
            let Some(flat) = FlatSchema::read(&schema) else {
                continue;
            };
            let compiled = compiled
                .unwrap_or_else(|problem| panic!("read an invalid schema {schema:?}: {problem}"));
            for instance in instances() {
                if flat.vouches_for(&instance) {
                    vouched += 1;
                    assert!(
                        compiled.check("t", &instance).is_ok(),
                        "vouched for {instance} against {schema:?}"
                    );
                }
            }
        }
        assert!(vouched > 50, "vouched for only {vouched} cases");
    }

    #[test]
    fn it_reads_scalar_object_schemas_and_nothing_else() {
        for schema in flat_schemas() {
            assert!(
                FlatSchema::read(&object(schema.clone())).is_some(),
                "{schema}"
            );
        }
        for schema in other_schemas() {
            assert!(
                FlatSchema::read(&object(schema.clone())).is_none(),
                "{schema}"
            );
        }
    }

    #[test]
    fn it_vouches_for_valid_scalars_and_leaves_the_rest() {
        let schema = object(flat_schemas()[3].clone());
        let flat = FlatSchema::read(&schema).unwrap();
        assert!(flat.vouches_for(&json!({"steps": 3})));
        assert!(flat.vouches_for(&json!({"steps": 1000, "delay_ms": 0})));
        for unsure in [
            json!({}),
            json!({"steps": 0}),
            json!({"steps": 3, "other": true}),
            json!({"steps": 3.0}),
            json!({"steps": "3"}),
            json!(null),
        ] {
            assert!(!flat.vouches_for(&unsure), "{unsure}");
        }
    }

    /// The reading exists to spare the validator for the arguments most calls send: it
    /// must vouch for them (what it turns down costs a compiled check, not a wrong answer,
    /// so only this test sees it): every scalar type, negative and beyond-`i64` integers,
    /// and schemas carrying annotations at the root and on properties.
    #[test]
    fn it_vouches_for_the_common_valid_arguments() {
        let typed = FlatSchema::read(&object(flat_schemas()[4].clone())).unwrap();
        for valid in [
            json!({"label": null, "ratio": 1.5, "flag": true, "mode": "fast", "level": 2}),
            json!({"label": "x", "ratio": -3, "flag": false, "level": "three"}),
            json!({"signed": -5}),
            json!({"signed": 18446744073709551615u64}),
            json!({"any": "x", "unknown": 1}),
        ] {
            assert!(typed.vouches_for(&valid), "{valid}");
        }
        let annotated = json!({
            "type": "object",
            "title": "Arguments",
            "description": "The echo tool's arguments",
            "examples": [{"message": "hi"}],
            "properties": {"message": {"type": "string", "examples": ["hi"], "title": "Message"}},
            "required": ["message"],
        });
        let annotated = FlatSchema::read(&object(annotated)).expect("annotations are read");
        assert!(annotated.vouches_for(&json!({"message": "hi"})));
    }
}
