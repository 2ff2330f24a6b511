//! The compiled form of a schema: one [`Node`] per subschema, in a flat list, pointing at
//! each other by index (so a `$ref` cycle is just an index that comes round again).

use regex_lite::Regex;
use serde_json::{Number, Value};

/// A subschema's place in [`Schema::nodes`](super::Schema).
pub(super) type NodeId = usize;

/// The root schema's id.
pub(super) const ROOT: NodeId = 0;

/// One subschema.
#[derive(Debug)]
pub(super) enum Node {
    /// `true` (anything) or `false` (nothing).
    Always(bool),
    Keywords(Box<Keywords>),
}

/// The keywords of an object schema that validate; annotations are not kept.
#[derive(Debug, Default)]
pub(super) struct Keywords {
    /// `$ref`, resolved.
    pub(super) reference: Option<NodeId>,
    pub(super) types: Option<Types>,
    /// `enum`.
    pub(super) one_of_values: Option<Vec<Value>>,
    /// `const`.
    pub(super) constant: Option<Value>,

    pub(super) minimum: Option<Bound>,
    pub(super) maximum: Option<Bound>,
    pub(super) multiple_of: Option<Number>,

    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    pub(super) pattern: Option<Pattern>,
    /// Only formats [`format::checker`](super::format::checker) checks are kept.
    pub(super) format: Option<Format>,

    pub(super) prefix_items: Vec<NodeId>,
    /// `items` (or, in drafts before 2020-12, `additionalItems` after an `items` array).
    pub(super) items: Option<NodeId>,
    pub(super) contains: Option<NodeId>,
    pub(super) min_contains: Option<u64>,
    pub(super) max_contains: Option<u64>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) unique_items: bool,
    pub(super) unevaluated_items: Option<NodeId>,

    /// `properties`, sorted by name.
    pub(super) properties: Vec<(String, NodeId)>,
    pub(super) pattern_properties: Vec<(Pattern, NodeId)>,
    pub(super) additional_properties: Option<NodeId>,
    pub(super) property_names: Option<NodeId>,
    pub(super) required: Vec<String>,
    pub(super) dependent_required: Vec<(String, Vec<String>)>,
    pub(super) dependent_schemas: Vec<(String, NodeId)>,
    pub(super) min_properties: Option<u64>,
    pub(super) max_properties: Option<u64>,
    pub(super) unevaluated_properties: Option<NodeId>,

    pub(super) all_of: Vec<NodeId>,
    pub(super) any_of: Vec<NodeId>,
    pub(super) one_of: Vec<NodeId>,
    pub(super) not: Option<NodeId>,
    pub(super) condition: Option<Condition>,
}

impl Keywords {
    /// The subschemas applied to the same instance as this one (not to its members).
    pub(super) fn in_place(&self) -> impl Iterator<Item = NodeId> + '_ {
        let condition = self.condition.iter().flat_map(|condition| {
            [Some(condition.test), condition.then, condition.otherwise]
                .into_iter()
                .flatten()
        });
        self.reference
            .into_iter()
            .chain(self.all_of.iter().copied())
            .chain(self.any_of.iter().copied())
            .chain(self.one_of.iter().copied())
            .chain(self.not)
            .chain(condition)
            .chain(self.dependent_schemas.iter().map(|(_, id)| *id))
    }
}

/// `minimum`/`exclusiveMinimum` or `maximum`/`exclusiveMaximum`: the tighter of the two a
/// schema gives.
#[derive(Debug, Clone)]
pub(super) struct Bound {
    pub(super) limit: Number,
    pub(super) exclusive: bool,
}

/// `if`, `then`, `else`.
#[derive(Debug)]
pub(super) struct Condition {
    pub(super) test: NodeId,
    pub(super) then: Option<NodeId>,
    pub(super) otherwise: Option<NodeId>,
}

/// A format's name (for messages) and its check.
#[derive(Debug)]
pub(super) struct Format {
    pub(super) name: String,
    pub(super) conforms: fn(&str) -> bool,
}

/// A compiled regular expression with the text it came from (for messages).
#[derive(Debug)]
pub(super) struct Pattern {
    pub(super) regex: Regex,
    pub(super) source: String,
}

/// A set of JSON Schema type names, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Types(u8);

impl Types {
    /// The type names, in the bit order.
    pub(super) const NAMES: [&'static str; 7] = [
        "array", "boolean", "integer", "null", "number", "object", "string",
    ];

    pub(super) fn empty() -> Types {
        Types(0)
    }

    pub(super) fn named(name: &str) -> Option<Types> {
        Types::NAMES
            .iter()
            .position(|known| *known == name)
            .map(|bit| Types(1 << bit))
    }

    pub(super) fn with(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }

    pub(super) fn has_any(self, other: Types) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether `value` has one of the types (`integer` takes whole numbers written `1.0`,
    /// `number` takes integers).
    pub(super) fn admit(self, value: &Value) -> bool {
        // Bits in the order of `NAMES`.
        const ARRAY: u8 = 1;
        const BOOLEAN: u8 = 1 << 1;
        const INTEGER: u8 = 1 << 2;
        const NULL: u8 = 1 << 3;
        const NUMBER: u8 = 1 << 4;
        const OBJECT: u8 = 1 << 5;
        const STRING: u8 = 1 << 6;
        let bit = match value {
            Value::Null => NULL,
            Value::Bool(_) => BOOLEAN,
            Value::String(_) => STRING,
            Value::Array(_) => ARRAY,
            Value::Object(_) => OBJECT,
            Value::Number(number) => {
                return self.0 & NUMBER != 0
                    || (self.0 & INTEGER != 0 && super::value::is_integral(number));
            }
        };
        self.0 & bit != 0
    }

    /// The names in the set, in order.
    pub(super) fn names(self) -> impl Iterator<Item = &'static str> {
        Types::NAMES
            .into_iter()
            .enumerate()
            .filter(move |(bit, _)| self.0 & (1 << bit) != 0)
            .map(|(_, name)| name)
    }
}
