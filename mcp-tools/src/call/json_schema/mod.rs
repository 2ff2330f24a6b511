//! The JSON Schema validator for tool arguments: JSON Schema 2020-12 (with the earlier
//! drafts' `items` arrays, `additionalItems`, `dependencies`, `definitions` and boolean
//! `exclusiveMinimum`/`exclusiveMaximum`), formats asserted, compiled into a flat list of
//! nodes (no meta-schema document to load, no trait objects).
//!
//! Not supported, and refused when a schema is compiled (so `tools check` names them):
//! `$ref`s outside the schema document, `$id` below the root, `$dynamicRef` and
//! `$recursiveRef`. `pattern` and `patternProperties` use `regex_lite`'s syntax (no
//! look-around or back-references; `\d`, `\w` and `\s` are ASCII classes).

mod check;
mod compile;
mod format;
mod node;
mod value;

#[cfg(test)]
mod tests;

use serde_json::Value;

use check::{Checker, Report};
use node::{Node, ROOT};

/// A compiled schema.
#[derive(Debug)]
pub(crate) struct Schema {
    nodes: Vec<Node>,
    /// Some node has `unevaluatedProperties` or `unevaluatedItems`, so a check keeps what
    /// each subschema evaluated.
    tracks_evaluation: bool,
}

/// One reason a value does not match a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The JSON pointer of the value at fault (empty for the whole value).
    pub(crate) pointer: String,
    pub(crate) message: String,
}

/// The problems of a value: the first few written out, all counted.
#[derive(Debug)]
pub(crate) struct Problems {
    pub(crate) listed: Vec<Problem>,
    pub(crate) total: usize,
}

/// Whether the validator checks strings against format `name` (others are annotations).
pub(crate) fn checks_format(name: &str) -> bool {
    format::checker(name).is_some()
}

impl Schema {
    /// Compile `schema`; fails with what is wrong with it and where.
    pub(crate) fn compile(schema: &Value) -> Result<Schema, String> {
        let nodes = compile::compile(schema)?;
        let tracks_evaluation = nodes.iter().any(|node| match node {
            Node::Keywords(keywords) => {
                keywords.unevaluated_properties.is_some() || keywords.unevaluated_items.is_some()
            }
            Node::Always(_) => false,
        });
        Ok(Schema {
            nodes,
            tracks_evaluation,
        })
    }

    /// Whether `value` matches.
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.checker().run(ROOT, value, &mut Report::quiet())
    }

    /// Why `value` does not match: every problem counted, the first `limit` written out.
    pub(crate) fn problems(&self, value: &Value, limit: usize) -> Problems {
        let mut report = Report::listing(limit);
        self.checker().run(ROOT, value, &mut report);
        Problems {
            listed: report.listed,
            total: report.total,
        }
    }

    fn checker(&self) -> Checker<'_> {
        Checker {
            nodes: &self.nodes,
            track: self.tracks_evaluation,
        }
    }
}
