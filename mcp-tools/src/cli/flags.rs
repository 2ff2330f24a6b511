//! One command-line flag per input-schema property, and the flags' values back to the
//! tool's JSON arguments.
//!
//! Flags carry strings, integers, numbers and booleans, enums as possible values, and
//! arrays of those as repeatable flags. What a flag cannot carry (objects, nested arrays,
//! unions — the properties [`cli_inexpressible`] names) is passed through `--json`.

use std::collections::BTreeSet;
use std::sync::Arc;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Arg, ArgAction, ArgMatches};
use serde_json::{Map, Number, Value};

use super::command;
use crate::definition::tool::ToolDef;
use crate::registry::report::{cli_inexpressible, const_members};

/// The id of the `--json [ARGS]` argument of tool commands and `call`.
pub(crate) const JSON_ARG: &str = "json";

/// An enum member and its description.
type Member = (Value, Option<String>);

/// The scalar type a flag value converts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    String,
    Integer,
    Number,
    Boolean,
}

impl Scalar {
    fn value_name(self, choice: bool) -> &'static str {
        if choice {
            return "CHOICE";
        }
        match self {
            Scalar::String => "STRING",
            Scalar::Integer => "INTEGER",
            Scalar::Number => "NUMBER",
            Scalar::Boolean => "BOOL",
        }
    }
}

/// One flag of a tool command.
#[derive(Debug, Clone)]
pub(crate) struct Flag {
    /// The JSON property the flag sets.
    pub(crate) property: String,
    /// The flag's long name (kebab-case of the property).
    pub(crate) long: String,
    scalar: Scalar,
    /// Enum members and their descriptions, when the property is an enum.
    choices: Option<Vec<Member>>,
    /// An array property: the flag repeats.
    many: bool,
    /// Clap rejects the command without this flag: the schema requires the property. An
    /// optional flag left out sends nothing (the tool applies its default), so the command
    /// line and a client calling with the same arguments get the same result.
    required: bool,
    help: Option<String>,
}

/// A property that has no flag, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonOnly {
    pub(crate) property: String,
    pub(crate) reason: String,
}

/// The flags of one tool, and the properties only `--json` can set.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolFlags {
    pub(crate) flags: Vec<Flag>,
    pub(crate) json_only: Vec<JsonOnly>,
}

impl ToolFlags {
    /// The flags of `def`; `reserved` holds long names already taken (global flags,
    /// `--help`, `--json`).
    pub(crate) fn of(def: &ToolDef, reserved: &BTreeSet<String>) -> ToolFlags {
        let schema = def.input_schema();
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let inexpressible: BTreeSet<String> = cli_inexpressible(def).into_iter().collect();
        let mut out = ToolFlags::default();
        let mut taken = reserved.clone();
        let properties = schema.get("properties").and_then(Value::as_object);
        let mut entries: Vec<(&String, &Value)> = properties.into_iter().flatten().collect();
        entries.sort_by_key(|(name, _)| name.as_str());
        for (property, spec) in entries {
            let json_only = |reason: String| JsonOnly {
                property: property.clone(),
                reason,
            };
            if inexpressible.contains(property) {
                out.json_only.push(json_only(
                    "its type is an object, a nested array or a union".into(),
                ));
                continue;
            }
            let Some(long) = long_name(property) else {
                out.json_only
                    .push(json_only("its name cannot be a flag name".into()));
                continue;
            };
            if !taken.insert(long.clone()) {
                out.json_only.push(json_only(format!(
                    "its flag --{long} is taken by another flag"
                )));
                continue;
            }
            match Flag::new(property, long, spec, required.contains(property.as_str())) {
                Some(flag) => out.flags.push(flag),
                None => out
                    .json_only
                    .push(json_only("its schema has no flag form".into())),
            }
        }
        // Flags clap requires first, then by name: a stable order whatever the map's order.
        out.flags.sort_by_key(|flag| !flag.required);
        out
    }

    /// The clap arguments: one per flag, then `--json [ARGS]`.
    pub(crate) fn args(&self) -> Vec<Arg> {
        let mut args: Vec<Arg> = self.flags.iter().map(Flag::arg).collect();
        args.push(json_arg());
        args
    }

    /// The tool's arguments from parsed flags: the `--json` object (if any) with every
    /// given flag set over it.
    pub(crate) fn arguments(&self, matches: &ArgMatches) -> Map<String, Value> {
        let mut arguments = json_input(matches);
        for flag in &self.flags {
            if let Some(value) = flag.value(matches) {
                arguments.insert(flag.property.clone(), value);
            }
        }
        arguments
    }
}

/// The arguments `def`'s command would call it with, given the words after the command
/// (`args`): what the generated CLI converts, from the schema's flags and `--json`; a
/// usage error as text. The fuzz targets' way in (`mcp_toolbelt::__private`).
pub fn command_line_arguments(
    def: &ToolDef,
    args: &[String],
) -> Result<Map<String, Value>, String> {
    let flags = ToolFlags::of(def, &command::reserved_longs(&[]));
    let matches = clap::Command::new(def.name().to_string())
        .args(flags.args())
        .try_get_matches_from(std::iter::once(def.name()).chain(args.iter().map(String::as_str)))
        .map_err(|error| error.to_string())?;
    Ok(flags.arguments(&matches))
}

/// `--json [ARGS]`: with a value, the arguments as a JSON object; without one, print the
/// whole result as JSON. May be given twice (`--json '{..}' --json`).
pub(crate) fn json_arg() -> Arg {
    Arg::new(JSON_ARG)
        .long("json")
        .value_name("ARGS")
        .num_args(0..=1)
        .default_missing_value("")
        .action(ArgAction::Append)
        .value_parser(parse_json_arg)
        .help("Arguments as a JSON object (flags override its keys); without a value, print the whole CallToolResult as JSON")
}

/// `""` (bare `--json`) is `Null`; anything else must be a JSON object.
fn parse_json_arg(text: &str) -> Result<Value, String> {
    if text.is_empty() {
        return Ok(Value::Null);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(Value::Object(object)),
        Ok(other) => Err(format!(
            "expected a JSON object of arguments, got {}",
            kind_of(&other)
        )),
        Err(err) => Err(format!("expected a JSON object of arguments: {err}")),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// True when a bare `--json` asked for the whole result as JSON.
pub(crate) fn wants_json_output(matches: &ArgMatches) -> bool {
    matches
        .get_many::<Value>(JSON_ARG)
        .is_some_and(|mut values| values.any(Value::is_null))
}

/// The merged `--json` objects (later ones win key by key).
pub(crate) fn json_input(matches: &ArgMatches) -> Map<String, Value> {
    let mut arguments = Map::new();
    for value in matches.get_many::<Value>(JSON_ARG).into_iter().flatten() {
        if let Value::Object(object) = value {
            arguments.extend(object.clone());
        }
    }
    arguments
}

/// `max_results` / `maxResults` → `max-results`; `None` when the name cannot be a flag.
pub(crate) fn long_name(property: &str) -> Option<String> {
    let valid = !property.is_empty()
        && property
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && property.starts_with(|c: char| c.is_ascii_alphanumeric());
    if !valid {
        return None;
    }
    let mut long = String::with_capacity(property.len() + 4);
    let mut previous_lower = false;
    for c in property.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            long.push('-');
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        long.push(if c == '_' {
            '-'
        } else {
            c.to_ascii_lowercase()
        });
    }
    Some(long)
}

/// The one non-null type of `spec`: `"integer"` or `["integer", "null"]`.
fn single_type(spec: &Value) -> Option<&str> {
    match spec.get("type")? {
        Value::String(t) => Some(t),
        Value::Array(types) => {
            let named: Vec<&str> = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            (named.len() == 1).then(|| named[0])
        }
        _ => None,
    }
}

/// `anyOf: [T, {type: null}]` (how `Option<T>` of a composite type comes out) → `T`.
fn unwrap_nullable(spec: &Value) -> &Value {
    let Some(variants) = spec.get("anyOf").and_then(Value::as_array) else {
        return spec;
    };
    let non_null: Vec<&Value> = variants
        .iter()
        .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    match non_null.as_slice() {
        [only] => unwrap_nullable(only),
        _ => spec,
    }
}

/// The scalar type and enum members of a non-array spec.
fn scalar_shape(spec: &Value) -> Option<(Scalar, Option<Vec<Member>>)> {
    let spec = unwrap_nullable(spec);
    let members: Option<Vec<Member>> = match spec.get("enum").and_then(Value::as_array) {
        Some(members) => Some(
            members
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| (v.clone(), None))
                .collect(),
        ),
        None => const_members(spec),
    };
    let Some(members) = members else {
        return Some((scalar_named(single_type(spec)?)?, None));
    };
    if members.is_empty() {
        return None;
    }
    let all = |test: fn(&Value) -> bool| members.iter().all(|(v, _)| test(v));
    let scalar = if all(Value::is_boolean) {
        Scalar::Boolean
    } else if all(|v| v.is_i64() || v.is_u64()) {
        Scalar::Integer
    } else if all(Value::is_number) {
        Scalar::Number
    } else {
        Scalar::String
    };
    Some((scalar, Some(members)))
}

fn scalar_named(name: &str) -> Option<Scalar> {
    match name {
        "string" => Some(Scalar::String),
        "integer" => Some(Scalar::Integer),
        "number" => Some(Scalar::Number),
        "boolean" => Some(Scalar::Boolean),
        _ => None,
    }
}

impl Flag {
    fn new(property: &str, long: String, spec: &Value, required: bool) -> Option<Flag> {
        let inner = unwrap_nullable(spec);
        let (scalar, choices, many) = if single_type(inner) == Some("array") {
            let (scalar, choices) = scalar_shape(inner.get("items")?)?;
            (scalar, choices, true)
        } else {
            let (scalar, choices) = scalar_shape(spec)?;
            (scalar, choices, false)
        };
        let default = spec.get("default").or_else(|| inner.get("default"));
        let description = spec
            .get("description")
            .or_else(|| inner.get("description"))
            .and_then(Value::as_str)
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty());
        let help = match (description, default) {
            (Some(d), Some(v)) => Some(format!("{d} [default: {}]", show_value(v))),
            (None, Some(v)) => Some(format!("[default: {}]", show_value(v))),
            (d, None) => d,
        };
        Some(Flag {
            property: property.to_string(),
            long,
            scalar,
            choices,
            many,
            required,
            help,
        })
    }

    fn id(&self) -> String {
        format!("arg:{}", self.property)
    }

    fn arg(&self) -> Arg {
        let mut arg = Arg::new(self.id())
            .long(self.long.clone())
            .value_name(self.scalar.value_name(self.choices.is_some()))
            .required(self.required)
            .action(if self.many {
                ArgAction::Append
            } else {
                ArgAction::Set
            });
        if self.long != self.property {
            arg = arg.alias(self.property.clone());
        }
        if let Some(help) = &self.help {
            arg = arg.help(help.clone());
        }
        match (&self.choices, self.scalar) {
            (Some(choices), _) => arg.value_parser(choice_parser(choices)),
            (None, Scalar::Boolean) => {
                let arg = arg.value_parser(
                    PossibleValuesParser::new(["true", "false"])
                        .map(|text| Value::Bool(text == "true")),
                );
                if self.many {
                    arg
                } else {
                    arg.num_args(0..=1).default_missing_value("true")
                }
            }
            (None, Scalar::Integer) => arg.allow_negative_numbers(true).value_parser(parse_integer),
            (None, Scalar::Number) => arg.allow_negative_numbers(true).value_parser(parse_number),
            // A string value may start with '-' (`--args -l`, `--query -status`).
            (None, Scalar::String) => arg.allow_hyphen_values(true).value_parser(|text: &str| {
                Ok::<Value, std::convert::Infallible>(Value::String(text.to_string()))
            }),
        }
    }

    fn value(&self, matches: &ArgMatches) -> Option<Value> {
        let id = self.id();
        if self.many {
            matches
                .get_many::<Value>(&id)
                .map(|values| Value::Array(values.cloned().collect()))
        } else {
            matches.get_one::<Value>(&id).cloned()
        }
    }
}

/// Possible values of an enum (with their descriptions as help), converted back to the
/// member they show.
fn choice_parser(choices: &[Member]) -> impl TypedValueParser<Value = Value> {
    let members: Arc<Vec<(String, Value)>> = Arc::new(
        choices
            .iter()
            .map(|(member, _)| (show_value(member), member.clone()))
            .collect(),
    );
    let names: Vec<PossibleValue> = choices
        .iter()
        .map(|(member, help)| {
            let value = PossibleValue::new(show_value(member));
            match help {
                Some(help) => value.help(help.clone()),
                None => value,
            }
        })
        .collect();
    PossibleValuesParser::new(names).map(move |text| {
        members
            .iter()
            .find(|(shown, _)| *shown == text)
            .map(|(_, member)| member.clone())
            .unwrap_or(Value::String(text))
    })
}

/// A value as typed on a command line: strings bare, everything else as JSON.
fn show_value(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn parse_integer(text: &str) -> Result<Value, String> {
    text.parse::<i64>()
        .map(Value::from)
        .or_else(|_| text.parse::<u64>().map(Value::from))
        .map_err(|_| "expected an integer".to_string())
}

fn parse_number(text: &str) -> Result<Value, String> {
    if let Ok(integer) = text.parse::<i64>() {
        return Ok(Value::from(integer));
    }
    text.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map(Value::Number)
        .ok_or_else(|| "expected a finite number".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::tool::ToolDef;
    use crate::output::result::ToolResult;
    use serde_json::json;

    fn def(schema: Value) -> ToolDef {
        ToolDef::builder("demo_tool")
            .description("A tool for flag tests.")
            .input_schema(schema)
            .handler(|_args, _ctx| async { Ok(ToolResult::empty()) })
            .build()
            .unwrap()
    }

    fn parse(flags: &ToolFlags, args: &[&str]) -> Result<Map<String, Value>, clap::Error> {
        let command = clap::Command::new("t").args(flags.args());
        let matches =
            command.try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))?;
        Ok(flags.arguments(&matches))
    }

    #[test]
    fn long_names_are_kebab_case() {
        assert_eq!(long_name("max_results").as_deref(), Some("max-results"));
        assert_eq!(long_name("maxResults").as_deref(), Some("max-results"));
        assert_eq!(long_name("id").as_deref(), Some("id"));
        assert_eq!(long_name("$ref"), None);
        assert_eq!(long_name("-x"), None);
        assert_eq!(long_name("a b"), None);
    }

    #[test]
    fn values_convert_by_schema_type() {
        let tool = def(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "loud": {"type": "boolean", "default": false},
                "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "level": {"enum": [1, 2, 3]},
                "note": {"type": ["string", "null"]}
            },
            "required": ["text"]
        }));
        let flags = ToolFlags::of(&tool, &BTreeSet::new());
        assert!(flags.json_only.is_empty());
        let args = parse(
            &flags,
            &[
                "--text", "hi", "--count", "-3", "--ratio", "0.5", "--loud", "--tags", "a",
                "--tags", "b", "--mode", "slow", "--level", "2", "--note", "n",
            ],
        )
        .unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"text": "hi", "count": -3, "ratio": 0.5, "loud": true, "tags": ["a", "b"],
                   "mode": "slow", "level": 2, "note": "n"})
        );
        // Optional flags left out send nothing: the tool applies the schema's default.
        let args = parse(&flags, &["--text", "x"]).unwrap();
        assert_eq!(Value::Object(args), json!({"text": "x"}));
        let args = parse(&flags, &["--text", "x", "--loud=false"]).unwrap();
        assert_eq!(args["loud"], json!(false));
    }

    #[test]
    fn the_command_line_follows_the_schema_and_fills_nothing() {
        // A boolean and an array the schema requires are required flags, like any other:
        // the command line never sends a value the schema does not state.
        let tool = def(json!({
            "type": "object",
            "properties": {
                "force": {"type": "boolean"},
                "ids": {"type": "array", "items": {"type": "integer"}}
            },
            "required": ["force", "ids"]
        }));
        let flags = ToolFlags::of(&tool, &BTreeSet::new());
        assert_eq!(
            parse(&flags, &["--ids", "1"]).unwrap_err().kind(),
            clap::error::ErrorKind::MissingRequiredArgument
        );
        let args = parse(&flags, &["--force", "--ids", "1", "--ids", "2"]).unwrap();
        assert_eq!(Value::Object(args), json!({"force": true, "ids": [1, 2]}));
        let help = clap::Command::new("t")
            .args(flags.args())
            .render_help()
            .to_string();
        assert!(help.contains("--force"), "{help}");
    }

    #[test]
    fn bad_values_are_usage_errors() {
        let tool = def(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "text": {"type": "string"}
            },
            "required": ["text"]
        }));
        let flags = ToolFlags::of(&tool, &BTreeSet::new());
        let kind = |args: &[&str]| parse(&flags, args).unwrap_err().kind();
        assert_eq!(
            kind(&["--text", "x", "--count", "many"]),
            clap::error::ErrorKind::ValueValidation
        );
        assert_eq!(
            kind(&["--text", "x", "--ratio", "inf"]),
            clap::error::ErrorKind::ValueValidation
        );
        assert_eq!(
            kind(&["--text", "x", "--mode", "medium"]),
            clap::error::ErrorKind::InvalidValue
        );
        assert_eq!(
            kind(&["--count", "1"]),
            clap::error::ErrorKind::MissingRequiredArgument
        );
        let err = parse(&flags, &["--text", "x", "--count", "many"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected an integer"), "{err}");
    }

    #[test]
    fn objects_and_reserved_names_go_through_json() {
        let tool = def(json!({
            "type": "object",
            "properties": {
                "filter": {"type": "object", "properties": {"a": {"type": "string"}}},
                "log_level": {"type": "string"},
                "json": {"type": "string"},
                "name": {"type": "string"}
            }
        }));
        let reserved: BTreeSet<String> = ["json", "help", "log-level"].map(String::from).into();
        let flags = ToolFlags::of(&tool, &reserved);
        let json_only: Vec<&str> = flags
            .json_only
            .iter()
            .map(|j| j.property.as_str())
            .collect();
        assert_eq!(json_only, ["filter", "json", "log_level"]);
        let args = parse(
            &flags,
            &[
                "--json",
                r#"{"filter": {"a": "b"}, "name": "from-json"}"#,
                "--name",
                "flag",
            ],
        )
        .unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"filter": {"a": "b"}, "name": "flag"})
        );
        let err = parse(&flags, &["--json", "[1]"]).unwrap_err().to_string();
        assert!(
            err.contains("expected a JSON object of arguments, got an array"),
            "{err}"
        );
    }

    #[test]
    fn bare_json_asks_for_json_output() {
        let flags = ToolFlags::default();
        let command = clap::Command::new("t").args(flags.args());
        let bare = command
            .clone()
            .try_get_matches_from(["t", "--json"])
            .unwrap();
        assert!(wants_json_output(&bare));
        assert!(json_input(&bare).is_empty());
        let both = command
            .clone()
            .try_get_matches_from(["t", "--json", r#"{"a":1}"#, "--json"])
            .unwrap();
        assert!(wants_json_output(&both));
        assert_eq!(json_input(&both)["a"], 1);
        let input = command.try_get_matches_from(["t", "--json", "{}"]).unwrap();
        assert!(!wants_json_output(&input));
    }

    #[test]
    fn documented_enums_are_choices() {
        // What schemars writes for an enum whose variants have doc comments.
        let tool = def(json!({
            "type": "object",
            "properties": {
                "priority": {"type": "array", "items": {"oneOf": [
                    {"type": "string", "const": "low", "description": "Some day"},
                    {"type": "string", "const": "high", "description": "Now"}
                ]}},
                "size": {"anyOf": [
                    {"oneOf": [{"const": 1, "description": "one"}, {"const": 2}]},
                    {"type": "null"}
                ]}
            }
        }));
        assert!(cli_inexpressible(&tool).is_empty());
        let flags = ToolFlags::of(&tool, &BTreeSet::new());
        assert!(flags.json_only.is_empty());
        let args = parse(
            &flags,
            &["--priority", "high", "--priority", "low", "--size", "2"],
        )
        .unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"priority": ["high", "low"], "size": 2})
        );
        assert!(parse(&flags, &["--size", "3"]).is_err());
        let help = clap::Command::new("t")
            .args(flags.args())
            .render_long_help()
            .to_string();
        assert!(help.contains("high: Now"), "{help}");
    }

    #[test]
    fn defaults_and_descriptions_reach_the_help() {
        let tool = def(json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "description": "Most results", "default": 10}
            }
        }));
        let flags = ToolFlags::of(&tool, &BTreeSet::new());
        let help = clap::Command::new("t")
            .args(flags.args())
            .render_help()
            .to_string();
        assert!(help.contains("--limit <INTEGER>"), "{help}");
        assert!(help.contains("Most results [default: 10]"), "{help}");
        // The default is the tool's to apply: nothing is sent for an absent flag.
        assert!(parse(&flags, &[]).unwrap().is_empty());
    }
}
