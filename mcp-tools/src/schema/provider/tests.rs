//! Each rule's finding and rewrite, on schemas schemars generates and on hand-written
//! ones; and that every rewritten schema accepts the same sample arguments (the crate's own
//! validator) as the original.

use serde_json::{Value, json};

use super::{Provider, Rule, adapt, name_findings};
use crate::call::validate::ArgumentValidator;
use crate::schema::{JsonObject, input_schema_for};

/// A filter mode; its variants are documented, so schemars writes a `oneOf` of consts.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Mode {
    /// Match the whole text.
    Exact,
    /// Match a prefix.
    Prefix,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Inner {
    /// A label.
    label: String,
    /// A weight.
    weight: Option<f64>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Args {
    /// The text.
    query: String,
    /// At most this many.
    limit: Option<u32>,
    /// How to match.
    mode: Option<Mode>,
    /// Nested.
    inner: Option<Inner>,
}

fn args_schema() -> JsonObject {
    input_schema_for::<Args>()
}

fn object(value: Value) -> JsonObject {
    value.as_object().unwrap().clone()
}

fn rules(provider: Provider, schema: &JsonObject) -> Vec<(String, Rule, bool)> {
    adapt(provider, schema)
        .findings
        .into_iter()
        .map(|f| (f.pointer, f.rule, f.rewritable))
        .collect()
}

/// Samples that carry no `null`: Gemini's `nullable` is OpenAPI's keyword, which a JSON
/// Schema validator ignores, so nulls are compared only where the rewrite keeps JSON
/// Schema's own null types (OpenAI).
fn samples_without_null() -> Vec<Value> {
    vec![
        json!({"query": "a"}),
        json!({"query": "a", "limit": 3, "mode": "prefix"}),
        json!({"query": "a", "inner": {"label": "x", "weight": 1.5}}),
        json!({"query": "a", "mode": "fuzzy"}),
        json!({"query": "a", "limit": -1}),
        json!({"query": "a", "limit": 4294967296u64}),
        json!({"limit": 3}),
        json!({"query": 5}),
        json!({"query": "a", "inner": {"weight": 1.0}}),
        json!({"query": "a", "inner": {"label": 7}}),
        json!({"query": "a", "extra": true}),
    ]
}

fn accepts(schema: &JsonObject, sample: &Value) -> bool {
    ArgumentValidator::compile(schema)
        .unwrap()
        .check("t", sample)
        .is_ok()
}

#[test]
fn gemini_rewrites_nullable_unions_and_const_unions() {
    let adapted = adapt(Provider::Gemini, &args_schema());
    assert!(adapted.is_acceptable(), "{:#?}", adapted.findings);
    let limit = &adapted.schema["properties"]["limit"];
    assert_eq!(limit["type"], "integer");
    assert_eq!(limit["nullable"], true);
    // `format: uint32` is not one Gemini lists: dropped, `minimum: 0` stays.
    assert!(limit.get("format").is_none());
    assert_eq!(limit["minimum"], 0);
    let mode = &adapted.schema["properties"]["mode"];
    assert_eq!(
        mode["nullable"],
        true,
        "{:#}",
        args_schema()["properties"]["mode"]
    );
    assert_eq!(mode["type"], "string");
    assert_eq!(mode["enum"], json!(["exact", "prefix"]));
    let inner = &adapted.schema["properties"]["inner"];
    assert_eq!(inner["type"], "object");
    assert_eq!(inner["nullable"], true);
    assert!(inner.get("additionalProperties").is_none());
    assert!(adapted.schema.get("additionalProperties").is_none());
    let found = rules(Provider::Gemini, &args_schema());
    assert!(found.contains(&("/properties/limit".into(), Rule::NullableUnion, true)));
    assert!(found.contains(&("/properties/limit".into(), Rule::Format, true)));
    assert!(found.contains(&("/properties/mode".into(), Rule::ConstUnion, true)));
    assert!(
        found.contains(&("".into(), Rule::Keyword, true)),
        "{found:?}"
    );
}

#[test]
fn gemini_reports_what_it_cannot_rewrite() {
    let schema = object(json!({"type": "object", "properties": {
        "either": {"type": ["string", "integer"]},
        "2nd": {"type": "string"},
        "any": true,
        "tree": {"$ref": "#/$defs/Node"},
        "all": {"allOf": [{"type": "string"}, {"minLength": 2}]}
    }, "$defs": {"Node": {"type": "object"}}}));
    let adapted = adapt(Provider::Gemini, &schema);
    assert!(!adapted.is_acceptable());
    let found = rules(Provider::Gemini, &schema);
    for expected in [
        ("/properties/either", Rule::TypeUnion),
        ("/properties/2nd", Rule::PropertyName),
        ("/properties/any", Rule::AnyValue),
        ("/properties/tree", Rule::Keyword),
        ("/properties/all", Rule::Keyword),
        ("", Rule::Keyword),
    ] {
        assert!(
            found.contains(&(expected.0.into(), expected.1, false)),
            "{expected:?} not in {found:?}"
        );
    }
    // What it could not rewrite is left as it was.
    assert_eq!(
        adapted.schema["properties"]["either"]["type"],
        json!(["string", "integer"])
    );
}

#[test]
fn gemini_turns_a_string_const_into_an_enum() {
    let schema = object(json!({"type": "object", "properties": {"kind": {"const": "file"}}}));
    let adapted = adapt(Provider::Gemini, &schema);
    assert!(adapted.is_acceptable());
    assert_eq!(
        adapted.schema["properties"]["kind"]["enum"],
        json!(["file"])
    );
    assert!(adapted.schema["properties"]["kind"].get("const").is_none());
}

#[test]
fn openai_strict_closes_objects_and_requires_nullable_properties() {
    let adapted = adapt(Provider::OpenAi, &args_schema());
    assert!(adapted.is_acceptable(), "{:#?}", adapted.findings);
    let schema = &adapted.schema;
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["required"],
        json!(["query", "inner", "limit", "mode"])
    );
    assert_eq!(schema["properties"]["inner"]["additionalProperties"], false);
    assert_eq!(
        schema["properties"]["inner"]["required"],
        json!(["label", "weight"])
    );
    // The const union became an anyOf; `type: ["integer", "null"]` stays (strict takes it).
    assert!(schema["properties"]["mode"].get("oneOf").is_none());
    assert_eq!(
        schema["properties"]["limit"]["type"],
        json!(["integer", "null"])
    );
    let found = rules(Provider::OpenAi, &args_schema());
    assert!(found.contains(&("/properties/limit".into(), Rule::OptionalProperty, true)));
    assert!(found.contains(&("/properties/limit".into(), Rule::Format, true)));
    assert!(found.contains(&(
        "/properties/inner/properties/weight".into(),
        Rule::OptionalProperty,
        true
    )));
}

#[test]
fn openai_strict_makes_arguments_with_defaults_nullable_and_reports_the_rest() {
    let schema = object(json!({"type": "object", "properties": {
        "count": {"type": "integer", "default": 5, "description": "How many"},
        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        "name": {"type": "string", "minLength": 1},
        "filter": {"type": "object", "properties": {"depth": {"type": "integer", "default": 1}},
                   "required": []}
    }, "required": ["name", "tags", "filter"]}));
    let adapted = adapt(Provider::OpenAi, &schema);
    assert!(!adapted.is_acceptable());
    let found = rules(Provider::OpenAi, &schema);
    // An argument with a default: listed required and nullable; the registry takes its
    // null as "left out".
    assert!(found.contains(&("/properties/count".into(), Rule::OptionalProperty, true)));
    assert_eq!(adapted.absent_when_null, ["count"]);
    assert_eq!(
        adapted.schema["properties"]["count"],
        json!({"description": "How many", "anyOf": [{"type": "integer"}, {"type": "null"}]})
    );
    assert_eq!(
        adapted.schema["required"],
        json!(["name", "tags", "filter", "count"])
    );
    // Inside an argument it stays the author's to fix (the server would have to rewrite
    // nested values).
    assert!(found.contains(&(
        "/properties/filter/properties/depth".into(),
        Rule::OptionalProperty,
        false
    )));
    assert!(found.contains(&("/properties/count".into(), Rule::Keyword, true)));
    assert!(found.contains(&("/properties/tags".into(), Rule::AdditionalProperties, false)));
    assert!(found.contains(&("/properties/name".into(), Rule::Keyword, true)));
    assert!(found.contains(&("".into(), Rule::AdditionalProperties, true)));
    // With the null taken as absent, the tool accepts the same calls.
    let original = schema.clone();
    let listed = adapted.schema;
    let call = json!({"name": "a", "tags": {}, "filter": {"depth": 2}, "count": null});
    assert!(accepts(&listed, &call));
    let mut as_served = call.clone();
    as_served.as_object_mut().unwrap().remove("count");
    assert!(accepts(&original, &as_served));
    assert!(!accepts(&original, &call));
}

#[test]
fn anthropic_takes_json_schema_as_it_is() {
    let schema = args_schema();
    let adapted = adapt(Provider::Anthropic, &schema);
    assert!(adapted.findings.is_empty());
    assert_eq!(adapted.schema, schema);
}

#[test]
fn every_provider_names_its_name_rule() {
    for provider in Provider::ALL {
        assert!(name_findings(provider, "notes_search").is_empty());
        let long = "a".repeat(65);
        assert_eq!(name_findings(provider, &long)[0].rule, Rule::ToolName);
        assert!(!name_findings(provider, "notes search")[0].rewritable);
    }
    assert_eq!(name_findings(Provider::Anthropic, "notes.search").len(), 1);
    assert!(name_findings(Provider::Gemini, "notes.search").is_empty());
    assert_eq!(name_findings(Provider::Gemini, "-notes").len(), 1);
}

/// `sample` with every optional property it leaves out sent as `null` instead (what a
/// model following the strict schema sends).
fn absent_as_null(sample: &Value) -> Value {
    let mut sample = sample.clone();
    if let Some(map) = sample.as_object_mut() {
        for key in ["limit", "mode", "inner"] {
            map.entry(key).or_insert(Value::Null);
        }
        if let Some(inner) = map.get_mut("inner").and_then(Value::as_object_mut) {
            inner.entry("weight").or_insert(Value::Null);
        }
    }
    sample
}

#[test]
fn rewritten_schemas_keep_what_the_tool_accepts() {
    let original = args_schema();
    // Gemini and Anthropic: whatever the tool accepts, the listed schema allows; it allows
    // more only where a keyword was dropped (the server still refuses those).
    for provider in [Provider::Gemini, Provider::Anthropic] {
        let listed = adapt(provider, &original).schema;
        for sample in samples_without_null() {
            if accepts(&original, &sample) {
                assert!(accepts(&listed, &sample), "{provider}: {sample}");
            }
        }
    }
    let gemini = adapt(Provider::Gemini, &original).schema;
    let only_listed: Vec<Value> = samples_without_null()
        .into_iter()
        .filter(|s| accepts(&gemini, s) && !accepts(&original, s))
        .collect();
    // `additionalProperties: false` dropped: the listed schema no longer names unknown
    // keys as refused.
    assert_eq!(only_listed, [json!({"query": "a", "extra": true})]);
    // OpenAI strict: the model must send every property, `null` for an absent one; the
    // tool accepts exactly those calls it accepted with the property left out.
    let strict = adapt(Provider::OpenAi, &original).schema;
    for sample in samples_without_null() {
        if accepts(&strict, &sample) {
            assert!(accepts(&original, &sample), "{sample}");
        }
        let filled = absent_as_null(&sample);
        assert_eq!(
            accepts(&original, &sample),
            accepts(&strict, &filled),
            "{sample} as {filled}"
        );
        assert_eq!(accepts(&original, &sample), accepts(&original, &filled));
    }
}

#[test]
fn findings_print_with_their_pointer_rule_and_fix() {
    let found = adapt(
        Provider::Gemini,
        &object(json!({"type": "object", "properties": {
        "a/b": {"type": ["string", "integer"]}}})),
    )
    .findings;
    let union = found.iter().find(|f| f.rule == Rule::TypeUnion).unwrap();
    let text = union.to_string();
    assert!(
        text.starts_with("/properties/a~1b: type-union (must be fixed): "),
        "{text}"
    );
}

#[test]
fn provider_names_round_trip() {
    for provider in Provider::ALL {
        assert_eq!(provider.name().parse::<Provider>(), Ok(provider));
    }
    assert_eq!(
        "claude".parse::<Provider>().unwrap_err().to_string(),
        "unknown provider \"claude\"; expected openai, anthropic or gemini"
    );
}
