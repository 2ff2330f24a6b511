//! The validator against an independent implementation (the `jsonschema` crate, a
//! dev-dependency only): the same answer for every schema and value of a hand-written
//! corpus covering each keyword, and of many generated at random; plus the messages,
//! pointers and schema problems this crate promises.

use serde_json::{Value, json};

use super::Schema;
use super::check::MAX_CHAIN;

fn reference(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|error| panic!("the reference refuses {schema}: {error}"))
}

/// Both implementations agree on `value`: validity, and where the problems are. A problem
/// may be reported at the member at fault or at the array or object holding it (`items:
/// false` is one problem of the array here, one per extra item there), so each side's
/// pointers must each lie on a path with one of the other side's.
fn agree(schema: &Value, ours: &Schema, theirs: &jsonschema::Validator, value: &Value) {
    let valid = theirs.is_valid(value);
    assert_eq!(
        ours.is_valid(value),
        valid,
        "schema {schema}\nvalue {value}"
    );
    let problems = ours.problems(value, usize::MAX);
    assert_eq!(
        problems.total == 0,
        valid,
        "schema {schema}\nvalue {value}\n{problems:?}"
    );
    assert_eq!(problems.total, problems.listed.len());
    let our_pointers: Vec<String> = problems.listed.into_iter().map(|p| p.pointer).collect();
    let their_pointers: Vec<String> = theirs
        .iter_errors(value)
        .map(|error| error.instance_path().as_str().to_owned())
        .collect();
    let related = |a: &str, b: &str| {
        let within = |inner: &str, outer: &str| {
            inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        within(a, b) || within(b, a)
    };
    for (one, other) in [
        (&our_pointers, &their_pointers),
        (&their_pointers, &our_pointers),
    ] {
        for pointer in one {
            assert!(
                other.iter().any(|theirs| related(pointer, theirs)),
                "schema {schema}\nvalue {value}\nours {our_pointers:?}\ntheirs {their_pointers:?}"
            );
        }
    }
}

fn check_corpus(cases: &[(Value, Vec<Value>)]) {
    for (schema, values) in cases {
        let ours = Schema::compile(schema).unwrap_or_else(|error| panic!("{schema}: {error}"));
        let theirs = reference(schema);
        for value in values {
            agree(schema, &ours, &theirs, value);
        }
    }
}

/// Values of every JSON type, some of them nested, to try against each schema.
fn assorted() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(-1),
        json!(1.0),
        json!(1.5),
        json!(-7.25),
        json!(1e20),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(""),
        json!("a"),
        json!("abc"),
        json!("ABC"),
        json!("héllo"),
        json!("123"),
        json!([]),
        json!([1]),
        json!([1, 2, 3]),
        json!([1, 1]),
        json!([1, 1.0]),
        json!(["a", 1, null]),
        json!([[1], [1.0]]),
        json!({}),
        json!({"a": 1}),
        json!({"a": "x", "b": 2}),
        json!({"b": [1, 2], "c": {"d": null}}),
        json!({"aa": 1, "ab": 2, "x-1": true}),
        json!({"a": {"a": {"a": {}}}}),
        json!({"name": "n", "count": 3, "extra": false}),
    ]
}

#[test]
fn each_keyword_matches_the_reference() {
    let schemas = [
        json!(true),
        json!(false),
        json!({}),
        json!({"type": "string"}),
        json!({"type": "integer"}),
        json!({"type": "number"}),
        json!({"type": ["integer", "null"]}),
        json!({"type": ["array", "object"]}),
        json!({"type": "boolean"}),
        json!({"type": "null"}),
        json!({"enum": ["a", 1, null, [1], {"a": 1}]}),
        json!({"enum": []}),
        json!({"const": 1}),
        json!({"const": {"a": 1}}),
        json!({"const": [1, 1]}),
        json!({"minimum": 1}),
        json!({"maximum": 1.5}),
        json!({"exclusiveMinimum": 1}),
        json!({"exclusiveMaximum": 0}),
        json!({"minimum": 0, "exclusiveMinimum": 0}),
        json!({"maximum": 2, "exclusiveMaximum": 3}),
        json!({"multipleOf": 2}),
        json!({"multipleOf": 0.5}),
        json!({"multipleOf": 0.01}),
        json!({"minLength": 2}),
        json!({"maxLength": 3}),
        json!({"maxLength": 4, "minLength": 4}),
        json!({"pattern": "^[a-z]+$"}),
        json!({"pattern": "b"}),
        json!({"pattern": "\\d"}),
        json!({"minItems": 2}),
        json!({"maxItems": 1}),
        json!({"uniqueItems": true}),
        json!({"uniqueItems": false}),
        json!({"items": {"type": "integer"}}),
        json!({"items": false}),
        json!({"prefixItems": [{"type": "integer"}, {"type": "integer"}]}),
        json!({"prefixItems": [{"const": 1}], "items": false}),
        json!({"prefixItems": [true], "items": {"type": "string"}}),
        json!({"contains": {"type": "string"}}),
        json!({"contains": {"const": 1}, "minContains": 2}),
        json!({"contains": {"const": 1}, "maxContains": 1}),
        json!({"contains": {"const": 1}, "minContains": 0}),
        json!({"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}),
        json!({"properties": {"a": true}, "additionalProperties": false}),
        json!({"properties": {"a": true}, "additionalProperties": {"type": "integer"}}),
        json!({"patternProperties": {"^a": {"type": "integer"}}}),
        json!({"patternProperties": {"^a": true}, "additionalProperties": false}),
        json!({"propertyNames": {"maxLength": 1}}),
        json!({"propertyNames": {"pattern": "^[a-z]+$"}}),
        json!({"required": ["a"]}),
        json!({"required": ["a", "b"]}),
        json!({"minProperties": 1}),
        json!({"maxProperties": 1}),
        json!({"dependentRequired": {"a": ["b"]}}),
        json!({"dependentSchemas": {"a": {"required": ["b"]}}}),
        json!({"allOf": [{"type": "integer"}, {"minimum": 1}]}),
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        json!({"oneOf": [{"type": "integer"}, {"minimum": 0}]}),
        json!({"not": {"type": "string"}}),
        json!({"if": {"type": "integer"}, "then": {"minimum": 1}, "else": {"type": "string"}}),
        json!({"if": {"minimum": 1}, "then": {"multipleOf": 2}}),
        json!({"else": {"type": "string"}}),
        json!({"then": false}),
        json!({"properties": {"a": {"type": "integer"}}, "unevaluatedProperties": false}),
        json!({"allOf": [{"properties": {"a": true}}], "unevaluatedProperties": false}),
        json!({"anyOf": [{"properties": {"a": true}}, {"properties": {"b": true}}],
            "unevaluatedProperties": {"type": "integer"}}),
        json!({"oneOf": [{"required": ["a"], "properties": {"a": true}}, {"required": ["b"]}],
            "unevaluatedProperties": false}),
        json!({"if": {"properties": {"a": {"const": 1}}}, "unevaluatedProperties": false}),
        // A subschema that fails evaluates nothing: its `properties` do not count.
        json!({"anyOf": [{"properties": {"a": true}, "required": ["zzz"]}, true],
            "unevaluatedProperties": false}),
        json!({"prefixItems": [true], "unevaluatedItems": false}),
        json!({"allOf": [{"prefixItems": [true, true]}], "unevaluatedItems": {"type": "integer"}}),
        json!({"contains": {"type": "integer"}, "unevaluatedItems": false}),
        json!({"$defs": {"int": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/int"}}}),
        json!({"definitions": {"s": {"type": "string"}}, "items": {"$ref": "#/definitions/s"}}),
        json!({"$defs": {"tree": {"type": "object", "properties": {"a": {"$ref": "#/$defs/tree"}},
            "additionalProperties": false}}, "$ref": "#/$defs/tree"}),
        json!({"properties": {"a": {"$ref": "#"}}, "required": []}),
        json!({"$defs": {"x": {"$anchor": "num", "type": "number"}}, "items": {"$ref": "#num"}}),
        json!({"$defs": {"a b": {"type": "integer"}}, "items": {"$ref": "#/$defs/a%20b"}}),
        json!({"$defs": {"a/b": {"type": "integer"}}, "items": {"$ref": "#/$defs/a~1b"}}),
        json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "object"}},
            "properties": {"a": false}}),
        json!({"format": "int32"}),
        json!({"format": "no-such-format"}),
        json!({"description": "d", "title": "t", "default": 1, "examples": [1], "$comment": "c",
            "deprecated": true, "readOnly": true, "x-custom": {"type": "string"}}),
    ];
    let cases: Vec<(Value, Vec<Value>)> = schemas
        .into_iter()
        .map(|schema| (schema, assorted()))
        .collect();
    check_corpus(&cases);
}

/// The input schemas schemars writes for tool arguments, with values near their edges.
#[test]
fn schemas_schemars_writes_match_the_reference() {
    let ticket = json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string", "minLength": 1, "maxLength": 80},
            "priority": {"type": "string", "enum": ["low", "high"]},
            "hours": {"type": "number", "format": "double", "minimum": 0, "maximum": 1000},
            "copies": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
            "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "urgent": {"type": ["boolean", "null"]},
            "when": {"anyOf": [{"type": "object", "properties": {"day": {"type": "integer"}},
                "required": ["day"]}, {"type": "null"}]},
            "kind": {"oneOf": [{"type": "string", "const": "bug"},
                {"type": "object", "properties": {"other": {"type": "string"}},
                 "required": ["other"], "additionalProperties": false}]},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": false, "minItems": 2, "maxItems": 2},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "meta": {"type": "object", "additionalProperties": {"type": "integer", "format": "int32"}}
        },
        "required": ["summary", "priority"],
        "additionalProperties": false
    });
    let valid = json!({"summary": "s", "priority": "low"});
    let with = |key: &str, value: Value| {
        let mut arguments = valid.clone();
        arguments[key] = value;
        arguments
    };
    let values = vec![
        valid.clone(),
        json!({}),
        json!(null),
        json!([]),
        json!({"summary": "s"}),
        with("summary", json!("")),
        with("summary", json!("x".repeat(81))),
        with("summary", json!(5)),
        with("priority", json!("urgent")),
        with("hours", json!(1.5)),
        with("hours", json!(-0.5)),
        with("hours", json!("1")),
        with("copies", json!(255)),
        with("copies", json!(256)),
        with("copies", json!(2.0)),
        with("copies", json!(2.5)),
        with("labels", json!(["a", 1])),
        with("labels", json!(["a", "b", "c", "d"])),
        with("urgent", json!(null)),
        with("urgent", json!("yes")),
        with("when", json!({"day": 1})),
        with("when", json!({})),
        with("when", json!(null)),
        with("kind", json!("bug")),
        with("kind", json!("feature")),
        with("kind", json!({"other": "x"})),
        with("kind", json!({"other": "x", "more": 1})),
        with("pair", json!([1, "a"])),
        with("pair", json!([1, 2])),
        with("pair", json!([1, "a", 3])),
        with("tags", json!(["a", "a"])),
        with("tags", json!(["a", "b"])),
        with("meta", json!({"a": 1, "b": 2.5})),
        with("meta", json!({"a": 3_000_000_000u64})),
        with("unknown", json!(1)),
    ];
    check_corpus(&[(ticket, values)]);
}

/// Random schemas and values, from a fixed seed: both implementations answer the same.
#[test]
fn generated_schemas_match_the_reference() {
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    for _ in 0..3_000 {
        let schema = random.schema(3);
        let ours = Schema::compile(&schema).unwrap_or_else(|error| panic!("{schema}: {error}"));
        let theirs = reference(&schema);
        for _ in 0..12 {
            let value = random.value(3);
            agree(&schema, &ours, &theirs, &value);
        }
    }
}

/// A small deterministic generator (xorshift64*).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize].clone()
    }

    fn value(&mut self, depth: u32) -> Value {
        let kinds = if depth == 0 { 6 } else { 8 };
        match self.below(kinds) {
            0 => Value::Null,
            1 => Value::Bool(self.below(2) == 0),
            2 => json!(self.below(7) as i64 - 2),
            3 => self.pick(&[json!(0.5), json!(2.0), json!(-1.5), json!(1e3), json!(3.25)]),
            4 | 5 => json!(self.pick(&["", "a", "b", "ab", "ba", "abc", "1", "é"])),
            6 => Value::Array((0..self.below(4)).map(|_| self.value(depth - 1)).collect()),
            _ => Value::Object(
                (0..self.below(4))
                    .map(|_| {
                        (
                            self.pick(&["a", "b", "c", "ab"]).to_owned(),
                            self.value(depth - 1),
                        )
                    })
                    .collect(),
            ),
        }
    }

    fn schema(&mut self, depth: u32) -> Value {
        if depth == 0 || self.below(6) == 0 {
            return match self.below(8) {
                0 => json!(true),
                1 => json!(false),
                _ => self.leaf(),
            };
        }
        let mut schema = serde_json::Map::new();
        for _ in 0..1 + self.below(3) {
            let (key, value) = self.applicator(depth);
            schema.insert(key.to_owned(), value);
        }
        if self.below(2) == 0
            && let Value::Object(leaf) = self.leaf()
        {
            schema.extend(leaf);
        }
        Value::Object(schema)
    }

    fn schemas(&mut self, depth: u32) -> Value {
        Value::Array(
            (0..1 + self.below(3))
                .map(|_| self.schema(depth - 1))
                .collect(),
        )
    }

    fn applicator(&mut self, depth: u32) -> (&'static str, Value) {
        let names = ["a", "b", "c"];
        match self.below(15) {
            0 => ("allOf", self.schemas(depth)),
            1 => ("anyOf", self.schemas(depth)),
            2 => ("oneOf", self.schemas(depth)),
            3 => ("not", self.schema(depth - 1)),
            4 => ("if", self.schema(depth - 1)),
            5 => ("then", self.schema(depth - 1)),
            6 => ("else", self.schema(depth - 1)),
            7 => ("items", self.schema(depth - 1)),
            8 => ("prefixItems", self.schemas(depth)),
            9 => ("contains", self.schema(depth - 1)),
            10 => {
                let properties = (0..1 + self.below(3))
                    .map(|_| (self.pick(&names).to_owned(), self.schema(depth - 1)))
                    .collect();
                ("properties", Value::Object(properties))
            }
            11 => ("additionalProperties", self.schema(depth - 1)),
            12 => ("patternProperties", json!({"^a": self.schema(depth - 1)})),
            13 => ("unevaluatedProperties", self.schema(depth - 1)),
            _ => ("unevaluatedItems", self.schema(depth - 1)),
        }
    }

    fn leaf(&mut self) -> Value {
        match self.below(16) {
            0 => {
                json!({"type": self.pick(&["null", "boolean", "integer", "number", "string", "array", "object"])})
            }
            1 => json!({"type": ["integer", "string"]}),
            2 => json!({"enum": [1, "a", null, [1], {"a": 1}]}),
            3 => json!({"const": self.value(1)}),
            4 => json!({"minimum": self.below(4) as i64 - 1}),
            5 => json!({"exclusiveMaximum": 1.5}),
            6 => json!({"multipleOf": self.pick(&[json!(2), json!(0.5), json!(1.5)])}),
            7 => json!({"minLength": self.below(3)}),
            8 => json!({"maxLength": self.below(3)}),
            9 => json!({"pattern": self.pick(&["^a", "b$", "\\d", "^$"])}),
            10 => json!({"minItems": self.below(3), "maxItems": 1 + self.below(3)}),
            11 => json!({"uniqueItems": true}),
            12 => json!({"required": [self.pick(&["a", "b"])]}),
            13 => json!({"minProperties": self.below(3), "maxProperties": 1 + self.below(3)}),
            14 => json!({"dependentRequired": {"a": ["b"]}}),
            _ => json!({"propertyNames": {"maxLength": 1}}),
        }
    }
}

#[test]
fn messages_say_what_was_expected_and_what_came() {
    let cases = [
        (
            json!({"type": "string"}),
            json!(42),
            "",
            "42 is not of type \"string\"",
        ),
        (
            json!({"type": ["integer", "null"]}),
            json!("x"),
            "",
            "\"x\" is not of types \"integer\", \"null\"",
        ),
        (
            json!({"required": ["summary"]}),
            json!({}),
            "",
            "\"summary\" is a required property",
        ),
        (
            json!({"properties": {"a": true}, "additionalProperties": false}),
            json!({"a": 1, "b": 2, "c": 3}),
            "",
            "Additional properties are not allowed ('b', 'c' were unexpected)",
        ),
        (
            json!({"enum": ["low", "high"]}),
            json!("urgent"),
            "",
            "\"urgent\" is not one of \"low\" or \"high\"",
        ),
        (
            json!({"enum": [1, 2, 3]}),
            json!(4),
            "",
            "4 is not one of 1, 2 or 3",
        ),
        (
            json!({"minimum": 0}),
            json!(-1),
            "",
            "-1 is less than the minimum of 0",
        ),
        (
            json!({"exclusiveMinimum": 0}),
            json!(0),
            "",
            "0 is less than or equal to the minimum of 0",
        ),
        (
            json!({"maximum": 100}),
            json!(101),
            "",
            "101 is greater than the maximum of 100",
        ),
        (
            json!({"multipleOf": 2}),
            json!(7),
            "",
            "7 is not a multiple of 2",
        ),
        (
            json!({"minLength": 1}),
            json!(""),
            "",
            "\"\" is shorter than 1 character",
        ),
        (
            json!({"maxLength": 2}),
            json!("abc"),
            "",
            "\"abc\" is longer than 2 characters",
        ),
        (
            json!({"pattern": "^[0-9]+$"}),
            json!("12a"),
            "",
            "\"12a\" does not match \"^[0-9]+$\"",
        ),
        (
            json!({"maxItems": 1}),
            json!([1, 2]),
            "",
            "[1,2] has more than 1 item",
        ),
        (
            json!({"minItems": 3}),
            json!([1, 2]),
            "",
            "[1,2] has less than 3 items",
        ),
        (
            json!({"maxProperties": 1}),
            json!({"a": 1, "b": [2]}),
            "",
            "{\"a\":1,\"b\":[2]} has more than 1 property",
        ),
        (
            json!({"minProperties": 3}),
            json!({"a": 1}),
            "",
            "{\"a\":1} has less than 3 properties",
        ),
        (
            json!({"uniqueItems": true}),
            json!([1, 1.0]),
            "",
            "[1,1.0] has non-unique elements",
        ),
        (json!({"const": "a"}), json!("b"), "", "\"a\" was expected"),
        (
            json!({"properties": {"a": {"items": {"type": "string"}}}}),
            json!({"a": ["x", 1]}),
            "/a/1",
            "1 is not of type \"string\"",
        ),
        (
            json!({"properties": {"a/b~": {"type": "string"}}}),
            json!({"a/b~": 1}),
            "/a~1b~0",
            "1 is not of type \"string\"",
        ),
        (
            json!({"properties": {"a": true}, "unevaluatedProperties": false}),
            json!({"a": 1, "b": 2}),
            "",
            "Unevaluated properties are not allowed ('b' was unexpected)",
        ),
        (
            json!({"propertyNames": {"maxLength": 1}, "properties": {"x": {"type": "object"}}}),
            json!({"x": {}, "long": 1}),
            "",
            "\"long\" is longer than 1 character",
        ),
        (json!(false), json!(1), "", "False schema does not allow 1"),
        // Only one branch is for the value's type: its problems are the answer.
        (
            json!({"anyOf": [{"type": "object", "properties": {"day": {"type": "integer"}}},
                {"type": "null"}]}),
            json!({"day": "x"}),
            "/day",
            "\"x\" is not of type \"integer\"",
        ),
        (
            json!({"$defs": {"other": {"type": "object", "required": ["other"]}},
                "oneOf": [{"type": "string", "const": "bug"}, {"$ref": "#/$defs/other"}]}),
            json!({}),
            "",
            "\"other\" is a required property",
        ),
        // Several (or none) are: one problem says no branch took it.
        (
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            json!(true),
            "",
            "true is not valid under any of the schemas listed in the 'anyOf' keyword",
        ),
        (
            json!({"oneOf": [{"type": "string", "minLength": 3}, {"type": "string", "pattern": "^a"}]}),
            json!("b"),
            "",
            "\"b\" is not valid under any of the schemas listed in the 'oneOf' keyword",
        ),
    ];
    for (schema, value, pointer, message) in cases {
        let problems = Schema::compile(&schema).unwrap().problems(&value, 10);
        assert_eq!(problems.total, 1, "{schema} {value}: {problems:?}");
        assert_eq!(problems.listed[0].pointer, pointer, "{schema} {value}");
        assert_eq!(problems.listed[0].message, message, "{schema} {value}");
    }
}

#[test]
fn a_huge_value_is_shown_cut_short_and_problems_past_the_limit_are_counted() {
    let schema = Schema::compile(&json!({"items": {"type": "string"}})).unwrap();
    let problems = schema.problems(&Value::Array(vec![json!(1); 1000]), 10);
    assert_eq!((problems.listed.len(), problems.total), (10, 1000));
    let long = Schema::compile(&json!({"type": "integer"})).unwrap();
    let message = &long.problems(&json!("x".repeat(1_000_000)), 10).listed[0].message;
    assert!(message.len() < 300, "{} bytes", message.len());
    assert!(message.ends_with("is not of type \"integer\""), "{message}");
    assert!(message.contains('…'));
    let short = Schema::compile(&json!({"maxLength": 3})).unwrap();
    let message = &short.problems(&json!("é".repeat(500_000)), 10).listed[0].message;
    assert!(message.len() < 300, "{} bytes", message.len());
    assert_eq!(message.matches('…').count(), 1, "{message}");
    assert!(message.starts_with("\"éé"), "{message}");
    assert!(
        message.ends_with("é… is longer than 3 characters"),
        "{message}"
    );
}

#[test]
fn unique_items_of_a_long_array_are_compared_by_value() {
    let schema = Schema::compile(&json!({"uniqueItems": true})).unwrap();
    let distinct: Vec<Value> = (0..10_000).map(|n| json!({"n": n})).collect();
    assert!(schema.is_valid(&Value::Array(distinct.clone())));
    let mut repeated = distinct;
    repeated.push(json!({"n": 17.0}));
    assert!(!schema.is_valid(&Value::Array(repeated)));
    // Only a whole number is written without its fraction: 1.5 is not 1.
    let mut numbers: Vec<Value> = (0..20).map(|n| json!(n)).collect();
    numbers.push(json!(1.5));
    assert!(schema.is_valid(&Value::Array(numbers)));
}

#[test]
fn schemas_it_cannot_check_are_refused_with_the_place_and_the_reason() {
    let cases = [
        (
            json!(5),
            "a schema must be an object or a boolean",
            "the schema's root",
        ),
        (
            json!({"type": "strnig"}),
            "\"type\" must be a type name",
            "/type",
        ),
        (
            json!({"type": ["string", "string"]}),
            "distinct type names",
            "/type",
        ),
        (
            json!({"properties": {"a": {"minLength": -1}}}),
            "non-negative integer",
            "/properties/a/minLength",
        ),
        (json!({"multipleOf": 0}), "above 0", "/multipleOf"),
        (json!({"pattern": "("}), "does not compile", "/pattern"),
        (json!({"required": "a"}), "an array of strings", "/required"),
        (json!({"anyOf": []}), "non-empty", "/anyOf"),
        (
            json!({"items": {"$ref": "#/$defs/missing"}}),
            "points at nothing",
            "/items/$ref",
        ),
        (
            json!({"$ref": "other.json#/a"}),
            "outside the schema",
            "/$ref",
        ),
        (
            json!({"$dynamicRef": "#x"}),
            "not supported",
            "/$dynamicRef",
        ),
        (
            json!({"properties": {"a": {"$id": "x"}}}),
            "not supported",
            "/properties/a/$id",
        ),
        (
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
            "$ref": "#/$defs/a"}),
            "$ref cycle",
            "",
        ),
        (json!({"$ref": "#"}), "$ref cycle", ""),
        // Definitions are compiled even when nothing refers to them.
        (
            json!({"$defs": {"unused": {"type": 5}}}),
            "\"type\" must be",
            "/$defs/unused/type",
        ),
        (
            json!({"definitions": {"unused": {"minLength": "2"}}}),
            "non-negative integer",
            "/definitions/unused/minLength",
        ),
        // Only the exclusive bounds have draft 4's boolean form.
        (json!({"minimum": true}), "a number", "/minimum"),
        (json!({"maximum": false}), "a number", "/maximum"),
    ];
    for (schema, reason, place) in cases {
        let error = Schema::compile(&schema).unwrap_err();
        assert!(error.contains(reason), "{schema}: {error}");
        assert!(error.contains(place), "{schema}: {error}");
    }
    // A recursive schema that descends into the value is fine.
    let tree = json!({"properties": {"child": {"$ref": "#"}}, "additionalProperties": false});
    let schema = Schema::compile(&tree).unwrap();
    assert!(schema.is_valid(&json!({"child": {"child": {}}})));
    assert!(!schema.is_valid(&json!({"child": {"child": {"x": 1}}})));
}

/// Formats: the reference's answers on strings of every kind, but where this crate differs
/// on purpose: it checks `idn-email` and `idn-hostname` (the reference, built without its
/// `idna` feature, takes any string there), and a `regex` is one `regex_lite` compiles (no
/// look-around, no `\p{…}` classes), the engine `pattern` uses.
#[test]
fn formats_match_the_reference() {
    let texts = [
        "2024-02-29",
        "2023-02-29",
        "23:59:60Z",
        "15:59:60-08:00",
        "22:59:60Z",
        "12:00:00",
        "12:00:00.123+01:00",
        "1998-12-31T23:59:60Z",
        "1963-06-19t08:30:06z",
        "2024-02-29T24:00:00Z",
        "P4DT12H30M5S",
        "P1Y2D",
        "P2W",
        "PT",
        "P1Y2W",
        "P",
        "P1M2Y",
        "PT1.5S",
        "joe.bloggs@example.com",
        "\"joe bloggs\"@example.com",
        "joe@[127.0.0.1]",
        "joe@[IPv6:::1]",
        "a@b",
        ".a@b",
        "jöe@example.com",
        "a@b.c.",
        "www.example.com",
        "héllo.com",
        "-a",
        "a.",
        "a..b",
        "host_name",
        "xn--4gbwdl.xn--wgbh1c",
        "192.168.0.1",
        "087.10.0.1",
        "1.1.1.1.",
        "::1",
        "::ffff:192.168.0.1",
        "fe80::1%eth0",
        "1::2::3",
        "2001:db8:0:0:1:0:0:1",
        "http://foo.bar/?baz=qux#quux",
        "//foo.bar/?baz=qux#quux",
        "/abc",
        "abc",
        "http://[2001:db8::7]/c=GB?objectClass?one",
        "mailto:John.Doe@example.com",
        "http://example.com:80a",
        "http://ex.com/%zz",
        "http://ex.com/a#b#c",
        "http://ex.com/ü",
        "http://ƒøø.ßår/?∂éœ=πîx#πîüx",
        "http://user:pw@host:8080/p%20q",
        "ldap://[v7.fe80::1]/",
        "https://[@example.org/test.txt",
        "http://a b",
        "file:///etc/passwd",
        "x:",
        "",
        "#frag",
        "a:b:c d",
        "1:2",
        "../x?y",
        "{var.name}",
        "{term:0}",
        "/{+path}{?q,lang*}",
        "2EB8AA08-AA98-11EA-B4AA-73B441D16380",
        "/foo/bar~",
        "/~2",
        "0#",
        "1-1/x",
        "01/a",
        "^(abc]",
        "a{2,1}",
        "^[a-z]+$",
    ];
    let beyond_regex_lite = ["(?<=a)b", "\\p{L}"];
    for format in [
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uri-template",
        "uuid",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    ] {
        let schema = json!({"format": format});
        let (ours, theirs) = (Schema::compile(&schema).unwrap(), reference(&schema));
        for text in texts {
            agree(&schema, &ours, &theirs, &json!(text));
        }
    }
    let regex = Schema::compile(&json!({"format": "regex"})).unwrap();
    let reference_regex = reference(&json!({"format": "regex"}));
    for text in beyond_regex_lite {
        assert!(
            !regex.is_valid(&json!(text)) && reference_regex.is_valid(&json!(text)),
            "{text}"
        );
    }
}

/// `$defs` `a0` … `a{length}`, each a `$ref` to the next, the last `last`.
fn ref_chain(length: usize, last: Value) -> Value {
    let mut defs = serde_json::Map::new();
    for index in 0..length {
        defs.insert(
            format!("a{index}"),
            json!({"$ref": format!("#/$defs/a{}", index + 1)}),
        );
    }
    defs.insert(format!("a{length}"), last);
    json!({"$defs": defs, "$ref": "#/$defs/a0"})
}

/// Run `check` on a thread with the stack size of a default Rust (and tokio worker) thread.
fn on_a_default_stack<T: Send + 'static>(check: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(check)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn the_stack_a_schema_uses_is_bounded_when_compiled_and_when_checked() {
    // Compiling is not recursive: a chain of 10,000 `$ref`s compiles on a small stack.
    let long = ref_chain(10_000, json!({"type": "string"}));
    let compiled = std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(move || Schema::compile(&long).is_ok())
        .unwrap()
        .join()
        .unwrap();
    assert!(compiled);

    // A recursive schema, as schemars writes an `Option<Box<Self>>` field, over arguments
    // as deep as they may be: checked, on a thread's usual stack.
    let tree = json!({"type": "object", "additionalProperties": false,
        "properties": {"child": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}});
    let nest =
        |levels: usize, leaf: Value| (0..levels).fold(leaf, |inner, _| json!({"child": inner}));
    let schema = Schema::compile(&tree).unwrap();
    let (valid, problems) = on_a_default_stack(move || {
        let valid = schema.is_valid(&nest(99, json!(null)));
        (
            valid,
            schema.problems(&nest(99, json!({"x": 1})), 10).listed,
        )
    });
    assert!(valid);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].pointer, "/child".repeat(99));

    // A schema that takes many steps per level of the arguments runs out of steps, and
    // says so, rather than out of stack.
    let steep = ref_chain(150, json!({"items": {"$ref": "#/$defs/a0"}}));
    let schema = Schema::compile(&steep).unwrap();
    let (valid, problems) = on_a_default_stack(move || {
        let deep = json!([[[["x"]]]]);
        (schema.is_valid(&deep), schema.problems(&deep, 10).listed)
    });
    assert!(!valid);
    assert!(
        problems[0].message.contains("deeper than 400 subschemas"),
        "{problems:?}"
    );
}

/// The limit on steps is exact: a chain of subschemas exactly as long as it is checked, one
/// step longer is refused. (`ref_chain(length, …)` puts its last schema `length + 1` steps
/// from the root.)
#[test]
fn a_chain_of_subschemas_as_long_as_the_limit_is_checked() {
    let at = |length: usize| {
        let schema = Schema::compile(&ref_chain(length, json!({"type": "string"}))).unwrap();
        on_a_default_stack(move || (schema.is_valid(&json!("x")), schema.is_valid(&json!(1))))
    };
    assert_eq!(at(MAX_CHAIN - 1), (true, false));
    assert_eq!(at(MAX_CHAIN), (false, false));
}

/// Patterns are regex-lite's: `\d`, `\w` and `\s` are ASCII classes (ECMA-262's `\d` and
/// `\w` are too; its `\s` also takes Unicode spaces), `.` is one character.
#[test]
fn pattern_classes_are_ascii() {
    for (pattern, text, matches) in [
        ("^\\d$", "3", true),
        ("^\\d$", "٣", false),
        ("^\\w$", "é", false),
        ("^\\s$", "\u{a0}", false),
        ("^.$", "é", true),
    ] {
        let schema = Schema::compile(&json!({"pattern": pattern})).unwrap();
        assert_eq!(
            schema.is_valid(&json!(text)),
            matches,
            "{pattern} on {text:?}"
        );
    }
}

/// A subschema that fails evaluates nothing: besides its own problem, the properties it
/// names are reported as unevaluated, as the reference reports them.
#[test]
fn a_failed_subschema_leaves_its_properties_unevaluated() {
    let schema = json!({"allOf": [{"properties": {"a": true}, "required": ["zzz"]}],
        "unevaluatedProperties": false});
    let value = json!({"a": 1});
    let ours: Vec<(String, String)> = Schema::compile(&schema)
        .unwrap()
        .problems(&value, 10)
        .listed
        .into_iter()
        .map(|problem| (problem.pointer, problem.message))
        .collect();
    let theirs: Vec<(String, String)> = reference(&schema)
        .iter_errors(&value)
        .map(|error| (error.instance_path().as_str().to_owned(), error.to_string()))
        .collect();
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), 2, "{ours:?}");
}

/// A value in a message is cut at 200 bytes, on a character boundary, with `…` only when
/// something was left out: exactly at the edges of that limit.
#[test]
fn a_value_is_cut_exactly_at_the_limit_and_only_when_longer() {
    let schema = Schema::compile(&json!({"maxLength": 1})).unwrap();
    let message = |text: &str| schema.problems(&json!(text), 1).listed[0].message.clone();
    let a = |count: usize| "a".repeat(count);
    let said = |shown: String| format!("{shown} is longer than 1 character");
    // 200 bytes with its quotes: whole, no mark.
    assert_eq!(message(&a(198)), said(format!("\"{}\"", a(198))));
    // 201 bytes: the first 200, then the mark.
    assert_eq!(message(&a(199)), said(format!("\"{}…", a(199))));
    // The 200th byte inside a two-byte character: cut before that character.
    let straddling = format!("{}é{}", a(198), "b".repeat(5));
    assert_eq!(message(&straddling), said(format!("\"{}…", a(198))));
    // A long text is copied only in part before it is shown, also on a boundary (the 208th
    // byte is inside `é`).
    let long = format!("{}é{}", a(207), "b".repeat(10));
    assert_eq!(message(&long), said(format!("\"{}…", a(199))));
}

/// The values an `enum` allows are listed until the list passes 400 bytes, then counted.
#[test]
fn a_long_list_of_allowed_values_stops_after_400_bytes() {
    // Each shown in 199 bytes: two make 400 with the comma between them, not yet past it.
    let allowed: Vec<String> = ['a', 'b', 'c', 'd']
        .map(|c| c.to_string().repeat(197))
        .into();
    let schema = Schema::compile(&json!({ "enum": allowed })).unwrap();
    let message = schema.problems(&json!(1), 1).listed[0].message.clone();
    let [a, b, c, _] = [0, 1, 2, 3].map(|i| format!("\"{}\"", allowed[i]));
    assert_eq!(
        message,
        format!("1 is not one of {a}, {b}, {c} … (4 in all)")
    );
}

/// Forms of older drafts that tool schemas still use: `dependencies` (draft 7: required
/// names or a schema), `items` as an array with `additionalItems`, boolean
/// `exclusiveMinimum`/`exclusiveMaximum` (draft 4), and an `$id` at the root.
#[test]
fn older_drafts_forms_are_checked() {
    let cases = [
        (
            json!({"dependencies": {"a": ["b"]}}),
            vec![json!({"a": 1, "b": 2}), json!({"b": 2})],
            vec![json!({"a": 1})],
        ),
        (
            json!({"dependencies": {"a": {"required": ["c"]}}}),
            vec![json!({"a": 1, "c": 2}), json!({})],
            vec![json!({"a": 1})],
        ),
        (
            json!({"items": [{"type": "integer"}], "additionalItems": false}),
            vec![json!([]), json!([1])],
            vec![json!(["x"]), json!([1, 2])],
        ),
        (
            json!({"items": [{"type": "integer"}], "additionalItems": {"type": "string"}}),
            vec![json!([1, "x", "y"])],
            vec![json!([1, 2])],
        ),
        (
            json!({"minimum": 1, "exclusiveMinimum": true, "maximum": 3, "exclusiveMaximum": true}),
            vec![json!(2)],
            vec![json!(1), json!(3)],
        ),
        (
            json!({"minimum": 1, "exclusiveMinimum": false}),
            vec![json!(1)],
            vec![json!(0)],
        ),
        (
            json!({"$id": "https://example.com/tool-input", "type": "string"}),
            vec![json!("x")],
            vec![json!(1)],
        ),
    ];
    takes_and_refuses(cases);
}

/// Each schema compiles, takes its valid values and refuses its invalid ones.
fn takes_and_refuses(cases: impl IntoIterator<Item = (Value, Vec<Value>, Vec<Value>)>) {
    for (schema, valid, invalid) in cases {
        let compiled = Schema::compile(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        for value in valid {
            assert!(compiled.is_valid(&value), "{schema} refused {value}");
        }
        for value in invalid {
            assert!(!compiled.is_valid(&value), "{schema} took {value}");
        }
    }
}

/// Less common but valid forms: an `$anchor` inside an array of subschemas, a `$ref` that is
/// the root's `$id` alone (the whole schema), a count written as `2.0`, and both a numeric
/// exclusive and an inclusive bound (the tighter one holds).
#[test]
fn anchors_whole_schema_refs_float_counts_and_paired_bounds() {
    takes_and_refuses([
        (
            json!({"anyOf": [{"type": "object"}, {"$anchor": "number", "type": "integer"}],
                "properties": {"a": {"$ref": "#number"}}}),
            vec![json!({"a": 1}), json!(5)],
            vec![json!({"a": "x"}), json!("x")],
        ),
        (
            json!({"$id": "https://example.com/node", "type": "object",
                "properties": {"child": {"$ref": "https://example.com/node"}},
                "additionalProperties": false}),
            vec![json!({"child": {"child": {}}})],
            vec![json!({"child": {"other": 1}})],
        ),
        (
            json!({"maxLength": 2.0}),
            vec![json!("ab")],
            vec![json!("abc")],
        ),
        (
            json!({"minimum": 1, "exclusiveMinimum": 3}),
            vec![json!(4)],
            vec![json!(2), json!(3)],
        ),
        (
            json!({"minimum": 5, "exclusiveMinimum": 3}),
            vec![json!(5)],
            vec![json!(4)],
        ),
        (
            json!({"maximum": 9, "exclusiveMaximum": 3}),
            vec![json!(2)],
            vec![json!(3), json!(5)],
        ),
    ]);
    let error = Schema::compile(&json!({"maxLength": 2.5})).unwrap_err();
    assert!(error.contains("non-negative integer"), "{error}");
}

/// A `$ref` may name the schema by the `$id` at its root, as well as by `#` alone.
#[test]
fn a_ref_may_name_the_schema_by_its_root_id() {
    let schema = Schema::compile(&json!({
        "$id": "https://example.com/tool-input",
        "$defs": {"name": {"type": "string"}},
        "properties": {
            "full": {"$ref": "https://example.com/tool-input#/$defs/name"},
            "short": {"$ref": "#/$defs/name"},
        },
    }))
    .unwrap();
    assert!(schema.is_valid(&json!({"full": "a", "short": "b"})));
    assert!(!schema.is_valid(&json!({"full": 1})));
    assert!(!schema.is_valid(&json!({"short": 1})));
}

/// Dates and times at the edges the reference's corpus above leaves out: the last day of a
/// February in a common year, offsets of 23 hours and of 59 minutes, a leap second under an
/// offset with minutes, and nothing after `Z`.
#[test]
fn date_and_time_edges() {
    takes_and_refuses([
        (
            json!({"format": "date"}),
            vec![json!("2023-02-28"), json!("2024-02-29")],
            vec![json!("2023-02-29"), json!("2023-02-00")],
        ),
        (
            json!({"format": "time"}),
            vec![
                json!("12:00:00+23:00"),
                json!("12:00:00-00:59"),
                json!("23:29:60-00:30"),
                json!("00:29:60+00:30"),
            ],
            vec![
                json!("12:00:00Zx"),
                json!("12:00:00+24:00"),
                json!("12:00:00+00:60"),
                json!("23:29:60+00:30"),
            ],
        ),
    ]);
}

/// E-mail addresses with a quoted local part (RFC 5321: printable ASCII, `"` and `\` only
/// after a backslash; `idn-email` also takes characters beyond ASCII but controls), and the
/// local part's 64-byte limit.
#[test]
fn quoted_local_parts_and_the_local_part_limit() {
    let local = |length: usize| format!("{}@example.com", "a".repeat(length));
    takes_and_refuses([
        (
            json!({"format": "email"}),
            vec![
                json!(r#""john doe"@example.com"#),
                json!(r#""a\"b"@example.com"#),
                json!(r#""a\\b"@example.com"#),
                json!(local(64)),
            ],
            vec![
                json!(r#""a"b"@example.com"#),
                json!(r#""a\"@example.com"#),
                json!("\"tab\there\"@example.com"),
                json!("\"jöhn\"@example.com"),
                json!(local(65)),
            ],
        ),
        (
            json!({"format": "idn-email"}),
            vec![
                json!("\"jöhn\"@example.com"),
                json!(r#""a\"b"@example.com"#),
            ],
            vec![
                json!("\"a\u{85}b\"@example.com"),
                json!("\"a\u{7}b\"@example.com"),
                json!(r#""a"b"@example.com"#),
            ],
        ),
    ]);
}

/// A URI's host may be an IPv6 address or an RFC 3986 IPvFuture address in brackets
/// (`v`, hex digits, `.`, then unreserved, sub-delims or `:`), nothing else.
#[test]
fn bracketed_hosts_are_ipv6_or_future_addresses() {
    takes_and_refuses([(
        json!({"format": "uri"}),
        vec![
            json!("http://[v1.fe]/"),
            json!("http://[V1F.a:b]:8080/x"),
            json!("http://[::1]:80/"),
        ],
        vec![
            json!("http://[1.2.3.4]/"),
            json!("http://[v.fe]/"),
            json!("http://[vx.fe]/"),
            json!("http://[v1.]/"),
            json!("http://[v1fe]/"),
            json!("http://[v1.f e]/"),
        ],
    )]);
}

/// An RFC 6570 variable name's `%` escape takes two hex digits.
#[test]
fn a_template_variables_escape_takes_two_hex_digits() {
    takes_and_refuses([(
        json!({"format": "uri-template"}),
        vec![json!("/x/{%4F}"), json!("/x/{a.b%2c}")],
        vec![json!("/x/{%4g}"), json!("/x/{%g4}"), json!("/x/{a%4}")],
    )]);
}
